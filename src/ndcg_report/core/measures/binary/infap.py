"""Inferred AP (infAP): average precision estimated from a sample of the pool judged.

trec_eval 10's `infAP` (m_infap.c; Yilmaz and Aslam, CIKM 2006). A document is relevant when its
label >= the relevance level, judged nonrelevant when 0 <= label < the level, in the pool but not
judged when its label is negative, and outside the pool when the qrels lack it. For one query, each
relevant document retrieved at rank j + 1 (j from 0) adds 1 at the top (j = 0), else

    1 / (j + 1) + j / (j + 1) * ((r + n + u) / j) * ((r + eps) / (r + n + 2 eps)),

r, n and u the relevant, judged nonrelevant and pooled-unjudged documents above it and eps =
0.00001 (trec_eval's INFAP_EPSILON); infAP is that sum over num_rel. On ordinary qrels (no negative
label) it is not AP: documents outside the pool above a relevant one lower its precision only
through j. Nothing judged relevant gives 0 (`no_relevant="skip"` leaves such a query out of the
mean).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import Computation, Family

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays

INFAP_EPSILON = 0.00001  # trec_eval.h


def inferred_ap(arrays: PassArrays, k: None) -> np.ndarray:
    """infAP of every query (0 where nothing is judged relevant), each term as m_infap.c computes it."""
    import numpy as np

    query, rank, relevant_above = arrays.relevant
    nonrel_above, pooled_above = arrays.before_relevant
    j = rank.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):  # j = 0: the top document adds 1
        added = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((relevant_above + nonrel_above + pooled_above) / j) * (
            (relevant_above + INFAP_EPSILON) / (relevant_above + nonrel_above + 2 * INFAP_EPSILON))
    added = np.where(rank == 0, 1.0, added)
    return arrays.over_num_rel(np.bincount(query, weights=added, minlength=arrays.n_queries))


INFAP = Computation(
    Family(name="infAP", kind="binary", trec="infAP",
           definition="AP inferred from a judged sample of the pool (Yilmaz and Aslam): a negative label is in the "
                      "pool, not judged"),
    inferred_ap,
)
