"""Statistics over per-query NDCG: paired comparisons with a baseline, multiple-system tests, seeded streams."""
