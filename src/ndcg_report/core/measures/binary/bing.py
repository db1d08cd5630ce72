"""Binary G (binG): each relevant document discounted by the nonrelevant ones above it.

trec_eval 10's `binG` (m_binG.c; an experimental measure of 2008, G with binary gains). A document
is relevant when its label >= the relevance level; anything else retrieved (unjudged too) is not.
For one query, each relevant document retrieved adds 1 / log2(2 + the documents above it that are
not relevant), and binG is that sum over num_rel, the documents judged relevant. Nothing judged
relevant, or none retrieved, gives 0 (`no_relevant="skip"` leaves a query with nothing relevant out
of the mean).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import Computation, Family

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays


def binary_g(arrays: PassArrays, k: None) -> np.ndarray:
    """binG of every query, each term 1 / log2(3 + i - rel_so_far) as m_binG.c writes it."""
    import numpy as np

    query, rank, relevant_above = arrays.relevant
    added = 1.0 / np.log2((3 + rank - (relevant_above + 1)).astype(np.float64))
    return arrays.over_num_rel(np.bincount(query, weights=added, minlength=arrays.n_queries))


BING = Computation(
    Family(name="binG", kind="binary", trec="binG",
           definition="each relevant document retrieved adds 1 / log2(2 + the documents above it not "
                      "relevant); the sum / R"),
    binary_g,
)
