"""Tables across blocks of queries: the suite (one block per collection) and the query groups of one report."""
