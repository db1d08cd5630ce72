"""Binary preference (bpref): how few judged nonrelevant documents rank above each relevant one.

trec_eval 10's `bpref` and `gm_bpref` (m_bpref.c, m_gm_bpref.c; Buckley and Voorhees, SIGIR 2004).
Only judged documents count: an unjudged document, and one with a negative label (trec_eval's
"in the pool, not judged"), is skipped. For one query with R documents judged relevant (label >= the
relevance level) and N judged nonrelevant (0 <= label < the level), each relevant document retrieved
adds 1 - min(n, R) / min(N, R), n the judged nonrelevant documents ranked above it (1 when n is 0);
bpref is that sum over R. Nothing judged relevant gives 0 (`no_relevant="skip"` leaves such a query
out of the mean); a relevant document not retrieved adds 0.

`gm_bpref` is bpref per query averaged by its geometric mean, exp(mean(log(max(bpref, 0.00001)))),
printed overall only, as trec_eval does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import Computation, Family

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays


def bpref(arrays: PassArrays, k: None) -> np.ndarray:
    """bpref of every query (0 where nothing is judged relevant)."""
    import numpy as np

    query, _, _ = arrays.relevant
    nonrel_above, _ = arrays.before_relevant
    num_rel, num_nonrel = arrays.num_rel[query], arrays.num_nonrel[query]
    with np.errstate(invalid="ignore", divide="ignore"):  # min(N, R) is 0 only where nothing is above
        share = np.minimum(nonrel_above, num_rel) / np.minimum(num_nonrel, num_rel)
    added = np.where(nonrel_above > 0, 1.0 - share, 1.0)
    return arrays.over_num_rel(np.bincount(query, weights=added, minlength=arrays.n_queries))


BPREF = Computation(
    Family(name="Bpref", kind="binary", trec="bpref", aliases=("bpref",),
           definition="each relevant document retrieved adds 1 - (judged nonrelevant documents above it, at most R) "
                      "/ min(judged nonrelevant, R); the sum / R"),
    bpref,
)
GM_BPREF = Computation(
    Family(name="gm_bpref", kind="binary", trec="gm_bpref", summary="geometric_mean", per_query=False,
           definition="bpref"),
    bpref,
)
