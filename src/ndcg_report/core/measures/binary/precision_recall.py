"""Precision and recall at k: the relevant documents in the top k, over k or over num_rel.

trec_eval 10's `P` and `recall` (m_P.c, m_recall.c); a document is relevant when its label >= the
relevance level (`-l`), an unjudged one is not. For one query:

- P@k = (relevant documents in the top k) / k. A cut-off past the end of the run counts the missing
  documents as not relevant: k stays the divisor (a run of 15 documents, 4 relevant, has P@20 = 0.2).
- R@k = (relevant documents in the top k) / num_rel, the documents judged relevant; 0 when nothing
  is judged relevant (`no_relevant="skip"` leaves such a query out of the mean).

Both need a cut-off; a bare `P` or `recall` takes trec_eval's defaults, 5, 10, 15, 20, 30, 100,
200, 500, 1000 (or `-k`).

`relative_P` (m_rel_P.c) is P@k over the largest it can be: the relevant documents in the top k
over min(k, num_rel), precision up to R and recall past it; 0 when nothing is judged relevant. Same
cut-offs. ir_measures has no name for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import TREC_EVAL_CUTOFFS, Computation, Family

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays


def precision_at(arrays: PassArrays, k: int | None) -> np.ndarray:
    """P@k of every query."""
    return arrays.below("relevant_count", k) / k


def recall_at(arrays: PassArrays, k: int | None) -> np.ndarray:
    """R@k of every query (0 where nothing is judged relevant)."""
    return arrays.over_num_rel(arrays.below("relevant_count", k))


P = Computation(
    Family(name="P", kind="binary", cutoff="required", trec_cut="P", trec_defaults=TREC_EVAL_CUTOFFS,
           aliases=("precision",),
           definition="relevant documents in the top k / k (k, not the number retrieved)"),
    precision_at, sums=("relevant_count",),
)
R = Computation(
    Family(name="R", kind="binary", cutoff="required", trec_cut="recall", trec_defaults=TREC_EVAL_CUTOFFS,
           aliases=("recall",),
           definition="relevant documents in the top k / R (0 if nothing is judged relevant)"),
    recall_at, sums=("relevant_count",),
)


def relative_precision_at(arrays: PassArrays, k: int | None) -> np.ndarray:
    """relative_P@k of every query (0 where nothing is judged relevant)."""
    import numpy as np

    found = arrays.below("relevant_count", k)
    best = np.minimum(k, arrays.num_rel)
    return np.divide(found, best, out=np.zeros(arrays.n_queries), where=arrays.num_rel > 0)


RELATIVE_P = Computation(
    Family(name="relative_P", kind="binary", cutoff="required", trec_cut="relative_P",
           trec_defaults=TREC_EVAL_CUTOFFS,
           definition="relevant documents in the top k / min(k, R)"),
    relative_precision_at, sums=("relevant_count",),
)
