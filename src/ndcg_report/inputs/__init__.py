"""Reading and checking inputs: TREC runs, qrels, topics and corpora, their columns and (qid, docid) keys."""
