"""Unjudged at k (unj): the share of the top k that the qrels do not judge.

trec_eval 10's `unj` (m_unjudged.c), a warning sign rather than a measure: high values at small k
say that the run is poorly covered by the judgements. For one query, the documents among the first
k retrieved without a qrels line or with a negative label (trec_eval's "in the pool, not judged"),
over k; a cut-off past the end of the run counts the missing documents as judged (k stays the
divisor; a query the run lacks has 0). It does not depend on what is relevant: every query is
averaged. A bare `unj` takes trec_eval's cut-offs 5, 10 and 20 (or -k). Not ndcg-report's judged@k
(the share of the top min(k, num_ret) with any qrels label, negative ones included). ir_measures
has no name for it (its Judged@k is 1 - unj@k without the negative labels).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import Computation, Family

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays


def unjudged_at(arrays: PassArrays, k: int | None) -> np.ndarray:
    """unj@k of every query."""
    import numpy as np

    judged = arrays.below("judged_count", k) - arrays.below("pool_unjudged_count", k)
    return (np.minimum(arrays.num_ret, k) - judged) / k


UNJ = Computation(
    Family(name="unj", kind="unjudged", cutoff="required", trec_cut="unj", trec_defaults=(5, 10, 20),
           definition="documents in the top k without a judgement (or with a negative label) / k"),
    unjudged_at, sums=("judged_count", "pool_unjudged_count"),
)
