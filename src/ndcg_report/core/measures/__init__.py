"""The measures: their names and parsing, the table of families, and one module per family.

names.py holds the Measure key and the parsing of names; registry.py the one table of families
(FAMILIES) and trec_eval's printing order; family.py what a family row is; each other module one
family (or a few close ones) in the manner of trec_eval's m_*.c files: its definition and edge
cases in its docstring, and its Family row.
"""
