"""The measures: their names and parsing, the table of families, and one module per family.

names.py holds the Measure key and the parsing of names; registry.py the one table of families
(FAMILIES) and trec_eval's printing order; family.py what a family row is; pass_arrays.py what one
evaluation pass shares among the families. The families themselves are grouped by kind, each
module one family (or a few close ones) in the manner of trec_eval's m_*.c files, its definition
and edge cases in its docstring: binary/ (a label >= the relevance level is relevant), graded/
(the labels as gains) and retrieved/ (the counts and the set measures).
"""
