"""nDCG at the R levels (Rndcg): nDCG averaged at each place where the ideal ranking's gain drops.

trec_eval 10's `Rndcg` (m_Rndcg.c; experimental). Gains are the labels, linear, whatever `--gain`
(trec_eval's default gains). For one query, the R levels are the places b (from 1) where the ideal
ranking of its positive labels moves to a smaller gain (to 0 past its end, at b = K, its length):
with 5 documents of gain 3, 3 of gain 2 and 10 of gain 1, b = 5, 8 and 18. Rndcg is the mean over
them of DCG(b) / IDCG(b), both summed over the first b places (the run's DCG stops at its end), and,
when the run is longer than K + 1, of the whole run's DCG over the whole IDCG too (m_Rndcg.c's loops
skip that point for a run of exactly K + 1 documents). Nothing judged
relevant at the relevance level gives 0, as trec_eval returns early there (`no_relevant="skip"`
leaves such a query out of the mean); at `-l 0` a query whose labels are all 0 is 0 here where
trec_eval divides 0 by 0 (and prints -nan).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import Computation, Family

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays


def ndcg_at_r_levels(arrays: PassArrays, k: None) -> np.ndarray:
    """Rndcg of every query."""
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import block_starts, prefix_sums

    n = arrays.n_queries
    ideal_query, ideal_place, ideal_gain = arrays.ideal_labels
    ideal_terms, ideal_so_far, start = arrays.ideal_dcg_so_far
    drops = np.ones(len(ideal_query), dtype=bool)  # the last place of each run of one gain in the ideal
    drops[:-1] = (ideal_query[1:] != ideal_query[:-1]) | (ideal_gain[1:] != ideal_gain[:-1])
    level_query, level_place = ideal_query[drops], ideal_place[drops] + 1  # b: nDCG over the first b places
    query, rank, _, terms = arrays.gaining
    dcg_before = np.concatenate(([0.0], prefix_sums(query, terms)))  # [i + 1]: the DCG through line i
    span = int(max(rank.max(initial=0), level_place.max(initial=0))) + 1
    first_below = np.searchsorted(query * span + rank, level_query * span + level_place)  # the first line at rank >= b
    dcg_at = np.where(first_below > block_starts(query, n)[level_query], dcg_before[first_below], 0.0)
    total = np.bincount(level_query, weights=dcg_at / ideal_so_far[drops], minlength=n)
    places = np.diff(start)
    longer = (places > 0) & (arrays.num_ret > places + 1)  # and at the run's end, past the last level
    with np.errstate(invalid="ignore", divide="ignore"):
        total = np.where(longer, total + np.bincount(query, weights=terms, minlength=n)
                         / np.bincount(ideal_query, weights=ideal_terms, minlength=n), total)
    levels = np.bincount(level_query, minlength=n) + longer
    return np.divide(total, levels, out=np.zeros(n), where=(arrays.num_rel > 0) & (levels > 0))


RNDCG = Computation(
    Family(name="Rndcg", kind="binary", trec="Rndcg",
           definition="nDCG averaged at the places where the ideal ranking's gain drops (and at the run's end)"),
    ndcg_at_r_levels,
)
