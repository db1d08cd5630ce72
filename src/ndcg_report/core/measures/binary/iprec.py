"""Interpolated precision at recall levels, and its average over the 11 standard levels.

trec_eval 10's `iprec_at_recall` and `11pt_avg` (m_iprec_at_recall.c, m_11pt_avg.c). A document is
relevant when its label >= the relevance level. For one query with R documents judged relevant and
Rr of them retrieved, the level x stands for the c-th relevant document, c = round(x * R) (half away
from zero, trec_eval 10's lround; trec_eval 9 rounded up from .1). IPrec@x is the largest precision
(relevant so far / rank) at the c-th relevant document retrieved or any later one (the best of them
all for c = 0); 0 when c > Rr (that recall is never reached), when nothing is relevant and for a
query the run lacks. The bare family takes trec_eval's levels 0, 0.1, ..., 1 (never -k); names
print with two decimals (`iprec_at_recall_0.10`).

`11pt_avg` is the mean of IPrec at those 11 levels (summed from 1 down to 0, as trec_eval adds
them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import Computation, Family

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays

ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)  # trec_eval's default levels


def interpolated_precision(arrays: PassArrays, level: float) -> np.ndarray:
    """IPrec@level of every query; the 11 standard levels made once for all of them."""
    if level in ELEVEN_POINTS:
        return arrays.once(_eleven_points)[ELEVEN_POINTS.index(level)]
    return _at_level(arrays, level)


def _eleven_points(arrays: PassArrays) -> list[np.ndarray]:
    return [_at_level(arrays, level) for level in ELEVEN_POINTS]


def _at_level(arrays: PassArrays, level: float) -> np.ndarray:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import group_max

    query, rank, relevant_above = arrays.relevant
    cut = _lround(level * arrays.num_rel)
    reached = relevant_above + 1 >= np.maximum(cut, 1)[query]  # the c-th relevant document and later ones
    precision = (relevant_above[reached] + 1.0) / (rank[reached] + 1.0)
    best = group_max(query[reached], precision, arrays.n_queries)
    return np.where(cut <= arrays.num_rel_ret, best, 0.0)


def _lround(values: np.ndarray) -> np.ndarray:
    """C's lround of non-negative values: to the nearest whole number, halves away from zero."""
    import numpy as np

    whole = np.floor(values)
    return (whole + (values - whole >= 0.5)).astype(np.int64)


def eleven_point_average(arrays: PassArrays, k: None) -> np.ndarray:
    """11pt_avg of every query."""
    total = 0.0
    for column in reversed(arrays.once(_eleven_points)):
        total = total + column
    return total / len(ELEVEN_POINTS)


IPREC = Computation(
    Family(name="IPrec", kind="binary", cutoff="required", trec_cut="iprec_at_recall", trec_defaults=ELEVEN_POINTS,
           fractional=True,
           definition="the best precision at or after the relevant document that reaches recall X "
                      "(the round(X R)-th), X from 0 to 1; 0 if that recall is never reached"),
    interpolated_precision,
)
ELEVEN_PT_AVG = Computation(
    Family(name="11pt_avg", kind="binary", trec="11pt_avg",
           definition="IPrec averaged over the recall levels 0, 0.1, ..., 1"),
    eleven_point_average,
)
