"""R-precision: the relevant documents in the top R over R, R being the documents judged relevant.

trec_eval 10's `Rprec` (m_Rprec.c): the precision at the point where precision equals recall. A
document is relevant when its label >= the relevance level. It has no cut-off of its own: R is the
query's num_rel. Edge cases, as trec_eval: nothing judged relevant (R = 0) gives 0
(`no_relevant="skip"` leaves such a query out of the mean); a run shorter than R counts the missing
documents as not relevant (R stays the divisor).

`Rprec_mult` (m_Rprec_mult.c) is the precision at a multiple m of R: at the cut-off c = floor(m * R
+ 0.9), the relevant documents in the top c over c (a run shorter than c counts the missing ones as
not relevant); 0 when c is 0. The bare family takes trec_eval's multiples 0.2, 0.4, ..., 2 (never
-k), printed with two decimals (`Rprec_mult_0.20`). ir_measures has no name for it.
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
    Family(name="Rprec", kind="binary", trec="Rprec", aliases=("r-prec",),
           definition="relevant documents in the top R / R"),
    r_precision,
)


def r_precision_multiple(arrays: PassArrays, multiple: float) -> np.ndarray:
    """Rprec_mult of every query: the relevant lines in the top c = floor(multiple * R + 0.9), over c."""
    import numpy as np

    cut = np.floor(multiple * arrays.num_rel + 0.9).astype(np.int64)  # C's (long) of a non-negative double
    query, rank, _ = arrays.relevant
    within = np.bincount(query, weights=rank < cut[query], minlength=arrays.n_queries)
    return np.divide(within, cut, out=np.zeros(arrays.n_queries), where=cut > 0)


RPREC_MULT = Computation(
    Family(name="Rprec_mult", kind="binary", cutoff="required", trec_cut="Rprec_mult",
           trec_defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0), fractional=True,
           definition="relevant documents in the top c / c, c = floor(X R + 0.9): the precision at a "
                      "multiple X of R"),
    r_precision_multiple,
)
