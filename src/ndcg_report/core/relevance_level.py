"""Queries the relevance level leaves with nothing relevant to the binary measures, and their warning.

A judged query whose labels are all above 0 but below the relevance level (float grades with the
default level 1) has something relevant to nDCG and nothing relevant to the binary measures (R, P,
RR, AP, ...): with no_relevant='skip' those leave it out of their means, so they average over fewer
queries than nDCG; with 'zero' they score it 0. The report's data checks say so
(analysis.checks); `evaluate` and `compare_runs` warn of it once per call, on the same condition.
"""

from __future__ import annotations

import warnings

from ndcg_report.core.evaluation import Evaluation
from ndcg_report.core.measures.names import level_text


class RelevanceLevelWarning(UserWarning):
    """Some judged queries have positive labels, none at the relevance level: the binary measures
    find nothing relevant there (`warnings.filterwarnings("ignore", category=...)` silences it)."""


def binary_nothing_relevant(evaluation: Evaluation) -> int:
    """How many judged queries have a positive label but none at the relevance level, when binary
    measures are asked for (else 0): the condition of the report's warning and of the API's."""
    if not any(measure.kind == "binary" for measure in evaluation.measures):
        return 0
    return max(0, evaluation.counts.below_level - evaluation.counts.no_relevant)


def relevance_level_warning(evaluation: Evaluation, caller: str) -> str:
    """The warning's text for `caller` ('evaluate', 'compare_runs'); '' when there is nothing to say."""
    queries = binary_nothing_relevant(evaluation)
    if not queries:
        return ""
    level = level_text(evaluation.rel_level)
    binary = ", ".join(sorted({measure.measure for measure in evaluation.measures if measure.kind == "binary"}))
    graded = any(measure.kind == "graded" for measure in evaluation.measures)
    if evaluation.no_relevant == "skip":
        effect = ("they average over fewer queries than nDCG" if graded else "they leave them out of their means")
        effect += " (no_relevant='skip')"
    else:
        effect = "they score them 0 (no_relevant='zero')"
    return (f"{caller}: {queries} of the {evaluation.counts.in_qrels} judged queries {'has' if queries == 1 else 'have'} "
            f"labels above 0 but none "
            f">= {level} (rel_level), so the binary measures ({binary}) find nothing relevant there and {effect}; "
            f"give a lower rel_level to count those labels relevant")


def warn_relevance_level(evaluation: Evaluation, caller: str, stacklevel: int = 3) -> None:
    """warnings.warn the relevance level's warning (RelevanceLevelWarning), if any, at the caller's caller."""
    text = relevance_level_warning(evaluation, caller)
    if text:
        warnings.warn(text, RelevanceLevelWarning, stacklevel=stacklevel)
