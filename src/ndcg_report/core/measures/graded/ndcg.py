"""nDCG: the run's discounted cumulative gain over the ideal ranking's, at a cut-off or overall.

trec_eval 10's `ndcg` and `ndcg_cut` (m_ndcg.c, m_ndcg_cut.c; Järvelin and Kekäläinen, ACM TOIS
2002). For one query, in trec_eval's order (core/ranking.py):

- DCG@k: the sum of gain / log2(rank + 1) over the first k documents retrieved (rank from 1). The
  gain is the document's qrels label (linear, trec_eval's), or 2**label - 1 with the exponential
  gain (not trec_eval's: its names are ours, `ndcg_exp`, `ndcg_exp_cut`); a label <= 0 and an
  unjudged document add nothing. The labels are gains whatever the relevance level.
- IDCG@k: the same sum over the query's judgements sorted by gain, descending: the ideal comes from
  the qrels, never from the run.
- nDCG@k = DCG@k / IDCG@k; without a cut-off (`nDCG`, trec_eval's `ndcg`) the whole ranking
  against the whole ideal.

Edge cases, as trec_eval: nothing relevant (no label > 0, IDCG = 0) gives 0 (`no_relevant="skip"`
leaves such a query out of the mean); a cut-off past the end of the run sums what was retrieved,
while IDCG@k still runs to k, so a short run is not rewarded for stopping early.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import TREC_EVAL_CUTOFFS, Computation, Family

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays


def dcg(arrays: PassArrays, k: int | None) -> np.ndarray:
    """The run's DCG@k of every query (exponential gains scaled per query: see PassArrays.scale)."""
    return arrays.below("dcg", k)


def normalised(dcg: np.ndarray, idcg: np.ndarray) -> np.ndarray:
    """DCG / IDCG, 0 where IDCG is 0 (nothing relevant)."""
    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return np.where(idcg > 0, dcg / idcg, 0.0)


def ndcg_at(arrays: PassArrays, k: int | None) -> np.ndarray:
    """nDCG@k of every query."""
    return normalised(dcg(arrays, k), arrays.below("ideal_dcg", k))


NDCG = Computation(
    Family(name="nDCG", kind="graded", cutoff="optional", trec="ndcg", trec_cut="ndcg_cut",
           trec_defaults=TREC_EVAL_CUTOFFS, aliases=("ndcg",),
           definition="DCG@k (each document's gain / log2(rank + 1), summed over the top k) over IDCG@k, the same "
                      "sum over the ideal ranking of the judgements"),
    ndcg_at, sums=("dcg", "ideal_dcg"), dcg=dcg,
)
