"""R-precision: the relevant documents in the top R over R, R being the documents judged relevant.

trec_eval 10's `Rprec` (m_Rprec.c): the precision at the point where precision equals recall. A
document is relevant when its label >= the relevance level. It has no cut-off of its own: R is the
query's num_rel. Edge cases, as trec_eval: nothing judged relevant (R = 0) gives 0
(`no_relevant="skip"` leaves such a query out of the mean); a run shorter than R counts the missing
documents as not relevant (R stays the divisor).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import Computation, Family

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays


def r_precision(arrays: PassArrays, k: None) -> np.ndarray:
    """Rprec of every query: the relevant lines ranked above num_rel, over num_rel."""
    import numpy as np

    query, rank, _ = arrays.relevant
    within = np.bincount(query, weights=rank < arrays.num_rel[query], minlength=arrays.n_queries)
    return arrays.over_num_rel(within)


RPREC = Computation(
    Family("Rprec", "binary", "none", "Rprec", None, True, (), ("r-prec",),
           "relevant documents in the top R, divided by R, the relevant documents judged"),
    r_precision,
)
