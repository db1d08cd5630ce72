"""Unjudged documents: nDCG without them (nDCG_judged) and the share of the top k judged.

nDCG_judged (Sakai's nDCG', ir_measures' `nDCG(judged_only=True)`; not trec_eval's: its names
`ndcg_judged`, `ndcg_judged_cut` are ours) is nDCG of the condensed list: the run with its unjudged
documents dropped and the rest ranked again in the same order, against the same ideal as nDCG
(see ndcg.py for the gains, the discount and the edge cases: nothing relevant gives 0; a cut-off
past the condensed list sums what is there).

judged@k, reported beside every measure at its cut-off (`Evaluation.judged`, not a measure one
asks for): the share of the top min(k, num_ret) documents that have a qrels label, whatever the
label; NaN (no value) for a query that retrieved nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import Computation, Family
from ndcg_report.core.measures.graded.ndcg import NDCG, normalised

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays


def condensed_dcg(arrays: PassArrays, k: int | None) -> np.ndarray:
    """DCG@k of every query's condensed list (the judged lines, ranked again)."""
    return arrays.below("condensed_dcg", k)


def ndcg_judged_at(arrays: PassArrays, k: int | None) -> np.ndarray:
    """nDCG_judged@k of every query: the condensed list's DCG@k over the same IDCG@k as nDCG."""
    return normalised(condensed_dcg(arrays, k), arrays.below("ideal_dcg", k))


NDCG_JUDGED = Computation(
    Family(name="nDCG_judged", kind="graded", cutoff="optional", trec="ndcg_judged", trec_cut="ndcg_judged_cut",
           trec_eval_has=False, aliases=("ndcg'",),
           definition="nDCG of the condensed list: the run without its unjudged documents, ranked again (Sakai's "
                      "nDCG')"),
    ndcg_judged_at, sums=("condensed_dcg", "ideal_dcg"), dcg=condensed_dcg, judged_only_of=NDCG.family.name,
)


def judged_share(arrays: PassArrays, depths: tuple[int | None, ...]) -> np.ndarray:
    """judged@k per query (rows) and depth (columns): the judged lines in the top min(k, num_ret) over
    that number, NaN where nothing was retrieved. Reads the judged_count sums at every depth."""
    import numpy as np

    shown = np.minimum(arrays.num_ret[:, None], [np.inf if k is None else k for k in depths])
    judged = np.column_stack([arrays.below("judged_count", k) for k in depths])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(shown > 0, judged / shown, np.nan)
