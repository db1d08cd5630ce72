"""Statistics over per-query values: paired comparisons, multiple-system tests, seeded streams."""
