"""Normalized gain (G): each document's gain discounted by how far the run lags the ideal's gain.

trec_eval 10's `G` (m_G.c; an experimental measure of 2008 between AP and nDCG). Gains are the
labels, linear, whatever `--gain` (trec_eval's default gains; a label <= 0 and an unjudged document
gain nothing). For one query, with the ideal ranking its positive labels sorted descending (0 past
its end): at each rank i (from 0), cost(i) sums max(ideal gain, 1) over the ideal's first i + 1
places and got(i) the run's gains over its first i + 1 documents; each document with a gain g adds
g / log2(2 + cost(i) - got(i)), and G is that sum over the ideal's total gain. Nothing with a
positive label gives 0 (`no_relevant="skip"` leaves such a query out of the mean).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import Computation, Family

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays


def normalized_gain(arrays: PassArrays, k: None) -> np.ndarray:
    """G of every query."""
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import prefix_sums

    ideal_query, _, ideal_gain = arrays.ideal_labels
    total = np.bincount(ideal_query, weights=ideal_gain, minlength=arrays.n_queries)  # added largest first
    cost = prefix_sums(ideal_query, np.maximum(ideal_gain, 1.0))  # sum_cost of m_G.c, while the ideal lasts
    start = arrays.ideal_dcg_so_far[2]
    places = np.diff(start)
    query, rank, gain, _ = arrays.gaining  # a line with a positive label has a query with an ideal (places >= 1)
    got = prefix_sums(query, gain)
    spent = cost[start[query] + np.minimum(rank, places[query] - 1)]  # the ideal's place i, or its last
    spent += np.maximum(rank - places[query] + 1, 0)  # and 1 for each place past the ideal's end
    added = gain / np.log2((2.0 + spent) - got)
    found = np.bincount(query, weights=added, minlength=arrays.n_queries)
    return np.divide(found, total, out=np.zeros(arrays.n_queries), where=total > 0)


G = Computation(
    Family(name="G", kind="gain", trec="G",
           definition="each document's gain over log2(2 + the ideal's cost so far - the run's gain so far), summed, "
                      "over the ideal's total gain"),
    normalized_gain,
)
