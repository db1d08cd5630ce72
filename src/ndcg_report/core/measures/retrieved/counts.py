"""The counts: documents retrieved, judged relevant, and relevant retrieved, per query.

trec_eval 10's `num_ret`, `num_rel` and `num_rel_ret` (m_num_ret.c, m_num_rel.c, m_num_rel_ret.c):
whole numbers, not measures to compare systems on (a report does not take one as its headline). A
document is relevant when its label >= the relevance level; num_ret counts every line of the run's
query, judged or not. They have no cut-off, and every query is averaged whatever the no_relevant
policy. trec_eval's `all` row of a count is its sum over the queries (a query the run lacks retrieved
nothing), but num_rel's, with -c (missing="zero"), counts the judgements with a label > 0 of every
qrels query, whatever the relevance level (m_num_rel.c): 4102 on DL 2019 at -l 2, where the queries'
num_rel at that level add up to 2501.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import Computation, Family

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays


def num_ret(arrays: PassArrays, k: None) -> np.ndarray:
    """The lines each query retrieved, as floats."""
    return arrays.num_ret.astype(float)


def num_rel(arrays: PassArrays, k: None) -> np.ndarray:
    """The judgements of each query with label >= the relevance level, as floats."""
    return arrays.num_rel.astype(float)


def num_rel_ret(arrays: PassArrays, k: None) -> np.ndarray:
    """The relevant lines each query retrieved, as floats."""
    return arrays.below("relevant_count", None).astype(float)


NUM_RET = Computation(Family("NumRet", "count", "none", "num_ret", None, True, (), ("num_ret",),
                             "documents retrieved", summary="sum"), num_ret)
NUM_REL = Computation(Family("NumRel", "count", "none", "num_rel", None, True, (), ("num_rel",),
                             "documents judged relevant (label >= the relevance level)", summary="positive_judgements"),
                      num_rel)
NUM_REL_RET = Computation(Family("NumRelRet", "count", "none", "num_rel_ret", None, True, (), ("num_rel_ret",),
                                 "relevant documents retrieved", summary="sum"), num_rel_ret, sums=("relevant_count",))
