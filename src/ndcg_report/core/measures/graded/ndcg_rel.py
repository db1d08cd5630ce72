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

    from ndcg_report.core.measures.pass_arrays import prefix_sums

    n = arrays.n_queries
    ideal_terms, ideal_so_far, start = arrays.ideal_dcg_so_far
    places = np.diff(start)
    query, rank, _, terms = arrays.gaining
    dcg_so_far = prefix_sums(query, terms)
    at_each = dcg_so_far / ideal_so_far[start[query] + np.minimum(rank, places[query] - 1)]
    total = np.bincount(query, weights=at_each, minlength=n)
    missed = places - np.bincount(query, minlength=n)
    dcg = np.bincount(query, weights=terms, minlength=n)
    ideal = np.bincount(arrays.ideal_labels[0], weights=ideal_terms, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):  # no ideal: 0 / 0, left out below as m_ndcg_rel.c does
        total = total + missed * dcg / ideal
    return np.divide(total, places, out=np.zeros(n), where=total > 0)


NDCG_REL = Computation(
    Family(name="ndcg_rel", kind="gain", trec="ndcg_rel",
           definition="nDCG at each document with a positive label (at the run's end for each one missed), averaged "
                      "over them"),
    ndcg_over_relevant,
)
