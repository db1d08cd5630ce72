"""Reciprocal rank: 1 / the rank of the first relevant document retrieved, 0 if there is none.

trec_eval 10's `recip_rank` (m_recip_rank.c): a document is relevant when its label >= the relevance
level; a query whose run holds no relevant document has 0, and so does one with nothing judged
relevant (`no_relevant="skip"` leaves it out of the mean). RR@k (MS MARCO's MRR@10; not in
trec_eval: its name `recip_rank_cut` is ours) is 0 unless the first relevant document is in the top
k; a cut-off past the end of the run is the same as none.
"""

from __future__ import annotations

from ndcg_report.core.measures.family import Family

RR = Family("RR", "binary", "optional", "recip_rank", "recip_rank_cut", False, (), ("mrr", "recip_rank"),
            "1 / the rank of the first relevant document (0 if none is retrieved, or none in the top k)")
