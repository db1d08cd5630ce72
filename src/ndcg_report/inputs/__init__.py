"""Reading and checking inputs: runs, qrels, topics and corpora, their columns and (qid, docid) keys."""
