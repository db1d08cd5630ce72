"""The graded measures: the qrels labels used as gains (nDCG and trec_eval's other gain measures).

One module per family (or a few close ones), in the manner of trec_eval's m_*.c files.
"""
