"""The binary measures: a document is relevant when its label >= the relevance level (-l).

One module per family (or a few close ones), in the manner of trec_eval's m_*.c files: average
precision, precision and recall at k, R-precision, reciprocal rank, success, and the rest of
trec_eval's ranked binary measures.
"""
