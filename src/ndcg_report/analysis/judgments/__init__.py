"""Judgment sets compared: label agreement, system orders, verdicts and queries under each set.

`compare_judgments` (comparison.py) takes every system evaluated under every set and returns a
JudgmentComparison (plain data, `to_dict()` for summary.json's `judgments`); sets.py aligns and fills
sets and refuses sets that cannot be compared; figures.py draws the confusion matrix and the scatter.
"""
