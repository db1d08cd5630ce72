"""The BM25 baseline: built with bm25s from a corpus and topics, cached by content."""
