"""Reciprocal rank: 1 / the rank of the first relevant document retrieved, 0 if there is none.

trec_eval 10's `recip_rank` (m_recip_rank.c): a document is relevant when its label >= the relevance
level; a query whose run holds no relevant document has 0, and so does one with nothing judged
relevant (`no_relevant="skip"` leaves it out of the mean). RR@k (MS MARCO's MRR@10; not in
trec_eval: its name `recip_rank_cut` is ours) is 0 unless the first relevant document is in the top
k; a cut-off past the end of the run is the same as none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import Computation, Family

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays


def first_relevant(arrays: PassArrays) -> np.ndarray:
    """Per query: the rank (0-based) of the first relevant document retrieved, -1 if none is."""
    import numpy as np

    query, rank, before = arrays.relevant
    first = np.full(arrays.n_queries, -1)
    first[query[before == 0]] = rank[before == 0]
    return first


def reciprocal_rank(arrays: PassArrays, k: int | None) -> np.ndarray:
    """RR@k of every query (k None: RR)."""
    import numpy as np

    first = arrays.once(first_relevant)  # one for every cut-off of RR
    reached = (first >= 0) & ((first < k) if k is not None else True)
    return np.divide(1.0, first + 1.0, out=np.zeros(arrays.n_queries), where=reached)


RR = Computation(
    Family(name="RR", kind="binary", cutoff="optional", trec="recip_rank", trec_cut="recip_rank_cut",
           trec_eval_has=False, aliases=("mrr", "recip_rank"),
           definition="1 / the rank of the first relevant document (0 if none is retrieved, or none in the top k: "
                      "MS MARCO's MRR@10)"),
    reciprocal_rank,
)
