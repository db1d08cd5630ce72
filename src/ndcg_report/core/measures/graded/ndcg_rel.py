"""nDCG averaged over the relevant documents (ndcg_rel): at each one retrieved, at the end if missed.

trec_eval 10's `ndcg_rel` (m_ndcg_rel.c; experimental). Gains are the labels, linear, whatever
`--gain` (trec_eval's default gains); a document is relevant here when its gain is > 0. For one
query with K judgements of positive gain: each such document retrieved at rank i (from 0) adds
DCG(i) / IDCG(min(i, K - 1)), both summed through that place (the DCG over the run, the IDCG over
the ideal ranking of the labels, as ndcg.py's); each of the K that the run misses adds the whole
run's DCG over the whole IDCG; ndcg_rel is that sum over K. Nothing with a positive label gives 0
(`no_relevant="skip"` leaves such a query out of the mean).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import Computation, Family

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays


def ndcg_over_relevant(arrays: PassArrays, k: None) -> np.ndarray:
    """ndcg_rel of every query."""
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import block_starts, prefix_sums

    ideal_query, ideal_place, ideal_gain = arrays.ideal_labels
    ideal_terms = ideal_gain / np.log2(ideal_place + 2.0)
    ideal_so_far = prefix_sums(ideal_query, ideal_terms)
    places = np.bincount(ideal_query, minlength=arrays.n_queries)
    start = block_starts(ideal_query, arrays.n_queries)
    gaining = arrays.label > 0
    query, rank, gain = arrays.query[gaining], arrays.rank[gaining], arrays.label[gaining]
    terms = gain / np.log2(rank + 2.0)
    dcg_so_far = prefix_sums(query, terms)
    at_each = dcg_so_far / ideal_so_far[start[query] + np.minimum(rank, places[query] - 1)]
    total = np.bincount(query, weights=at_each, minlength=arrays.n_queries)
    missed = places - np.bincount(query, minlength=arrays.n_queries)
    dcg = np.bincount(query, weights=terms, minlength=arrays.n_queries)
    ideal = np.bincount(ideal_query, weights=ideal_terms, minlength=arrays.n_queries)
    with np.errstate(invalid="ignore", divide="ignore"):  # no ideal: 0 / 0, left out below as m_ndcg_rel.c does
        total = total + missed * dcg / ideal
    return np.divide(total, places, out=np.zeros(arrays.n_queries), where=total > 0)


NDCG_REL = Computation(
    Family("ndcg_rel", "gain", "none", "ndcg_rel", None, True, (), (),
           "nDCG at each relevant document retrieved (the whole run's for each one missed), averaged over them"),
    ndcg_over_relevant,
)
