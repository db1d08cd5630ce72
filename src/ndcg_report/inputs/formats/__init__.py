"""The readers of runs, qrels and topics, one module per accepted format."""
