"""The NDCG core: ranking within queries, NDCG@k per query and over queries, and its text output formats."""
