"""Statistics: paired tests against a baseline, multiple-system tests, seeded streams, agreement, rank correlation."""
