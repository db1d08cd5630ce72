"""The measures of what was retrieved, as a set: the counts and trec_eval's set measures.

One module per family (or a few close ones), in the manner of trec_eval's m_*.c files.
"""
