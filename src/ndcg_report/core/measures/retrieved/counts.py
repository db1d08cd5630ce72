"""The counts: queries, documents retrieved, judged relevant, relevant and nonrelevant retrieved.

trec_eval 10's `num_q`, `num_ret`, `num_rel`, `num_rel_ret` and `num_nonrel_judged_ret` (m_num_q.c,
m_num_ret.c, m_num_rel.c, m_num_rel_ret.c, m_num_nonrel_judged_ret.c): whole numbers, not measures
to compare systems on (a report does not take one as its headline). A document is relevant when its
label >= the relevance level, judged nonrelevant when 0 <= label < the level (a negative label is
in the pool but not judged); num_ret counts every line of the run's query, judged or not. num_q is
1 per query, printed overall only: the queries averaged (every qrels query with -c, missing="zero";
those the run has without). They have no cut-off, and every query is averaged whatever the
no_relevant policy. trec_eval's `all` row of a count is its sum over the queries (a query the run lacks retrieved
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


def num_q(arrays: PassArrays, k: None) -> np.ndarray:
    """1.0 for each query."""
    import numpy as np

    return np.ones(arrays.n_queries)


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


def num_nonrel_judged_ret(arrays: PassArrays, k: None) -> np.ndarray:
    """The judged nonrelevant lines each query retrieved (0 <= label < the relevance level), as floats."""
    import numpy as np

    nonrel = (arrays.label >= 0) & (arrays.label < arrays.rel_level)
    return np.bincount(arrays.query[nonrel], minlength=arrays.n_queries).astype(float)


NUM_Q = Computation(Family("NumQ", "count", "none", "num_q", None, True, (), ("num_q",),
                           "queries averaged (1 per query)", summary="sum", per_query=False), num_q)
NUM_NONREL_JUDGED_RET = Computation(
    Family("num_nonrel_judged_ret", "count", "none", "num_nonrel_judged_ret", None, True, (), (),
           "judged nonrelevant documents retrieved (0 <= label < the relevance level)", summary="sum"),
    num_nonrel_judged_ret,
)
