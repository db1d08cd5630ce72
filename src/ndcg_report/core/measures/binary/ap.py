"""Average precision: the precision at each relevant document retrieved, summed, over num_rel.

trec_eval 10's `map`, `map_cut` and `gm_map` (m_map.c, m_map_cut.c, m_gm_map.c). For one query, a
document relevant when its label >= the relevance level: AP@k = the sum, over the relevant
documents retrieved in the top k, of the precision at that document's rank (relevant so far /
rank), divided by num_rel, the documents judged relevant (retrieved or not: a relevant document the
run misses adds 0 to the sum). Without a cut-off (`AP`, trec_eval's `map`) the whole ranking.

Edge cases, as trec_eval: nothing judged relevant gives 0 (`no_relevant="skip"` leaves such a
query out of the mean); a cut-off past the end of the run sums what was retrieved.

`gm_map` is AP per query, averaged over the queries by its geometric mean: exp(mean(log(max(AP,
0.00001)))), trec_eval's MIN_GEO_MEAN keeping a query of AP 0 finite (a query the run lacks counts
as 0.00001 with -c). trec_eval prints it overall only, never per query.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import TREC_EVAL_CUTOFFS, Computation, Family

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays


def average_precision(arrays: PassArrays, k: int | None) -> np.ndarray:
    """AP@k of every query (k None: AP); 0 where nothing is judged relevant."""
    return arrays.over_num_rel(arrays.below("precision_sum", k))


AP = Computation(
    Family(name="AP", kind="binary", cutoff="optional", trec="map", trec_cut="map_cut",
           trec_defaults=TREC_EVAL_CUTOFFS, aliases=("map",),
           definition="the precision at each relevant document retrieved (in the top k), summed, / R"),
    average_precision, sums=("precision_sum",),
)
GM_MAP = Computation(
    Family(name="gm_map", kind="binary", trec="gm_map", summary="geometric_mean", per_query=False,
           definition="AP"),
    average_precision, sums=("precision_sum",),
)
