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


NUM_RET = Computation(
    Family(name="NumRet", kind="count", trec="num_ret", aliases=("num_ret",), summary="sum",
           definition="N, the documents retrieved"),
    num_ret,
)
NUM_REL = Computation(
    Family(name="NumRel", kind="count", trec="num_rel", aliases=("num_rel",), summary="positive_judgements",
           definition="R, the documents judged relevant"),
    num_rel,
)
NUM_REL_RET = Computation(
    Family(name="NumRelRet", kind="count", trec="num_rel_ret", aliases=("num_rel_ret",), summary="sum",
           definition="Rr, the relevant documents retrieved"),
    num_rel_ret, sums=("relevant_count",),
)


def num_nonrel_judged_ret(arrays: PassArrays, k: None) -> np.ndarray:
    """The judged nonrelevant lines each query retrieved (0 <= label < the relevance level), as floats."""
    import numpy as np

    nonrel = (arrays.label >= 0) & (arrays.label < arrays.rel_level)
    return np.bincount(arrays.query[nonrel], minlength=arrays.n_queries).astype(float)


NUM_Q = Computation(
    Family(name="NumQ", kind="count", trec="num_q", aliases=("num_q",), summary="sum", per_query=False,
           definition="1 (its `all` row: the queries averaged)"),
    num_q,
)
NUM_NONREL_JUDGED_RET = Computation(
    Family(name="num_nonrel_judged_ret", kind="count", trec="num_nonrel_judged_ret", summary="sum",
           definition="judged nonrelevant documents retrieved (0 <= label < the relevance level)"),
    num_nonrel_judged_ret,
)
