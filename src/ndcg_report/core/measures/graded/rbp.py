"""Rank-biased precision (rbp) at persistence 0.9, and its residual for the unjudged documents.

trec_eval 10's `rbp` and `rbp_resid` (m_rbp.c, m_rbp_resid.c; Moffat and Zobel, ACM TOIS 2008), at
trec_eval's default persistence p = 0.9 (ir_measures' RBP defaults to 0.8: not the same measure).
rbp = (1 - p) * the sum over the documents retrieved at rank i (from 0) of gain * p**i, the gain the
label, linear, whatever `--gain`, divided by the query's largest label when that is above 1 (gains
normalised to [0, 1]: m_rbp.c leaves its min and max uninitialised; trec_eval 10 as built behaves as
min 0, max the largest label); a label <= 0 or an unjudged document gains nothing. Nothing with a
positive label gives 0 (`no_relevant="skip"` leaves such a query out of the mean).

rbp_resid is what rbp could still gain if every unjudged document retrieved (no qrels line, or a
negative label) had gain 1: p**num_ret + (1 - p) * the sum of p**i over them, 0 when there is none
(and for a query the run lacks). It does not depend on what is relevant: every query is averaged.
p**i is made as trec_eval makes it, multiplied up one rank at a time; rbp_resid's sum over the
unjudged is all ranks' less the judged ones', equal to trec_eval's to within 1e-15.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import Computation, Family

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays

PERSISTENCE = 0.9  # m_rbp.c's default p


def _powers(arrays: PassArrays) -> np.ndarray:
    """p**i for i from 0 to the deepest rank retrieved, as cur_p *= p makes them."""
    import numpy as np

    deepest = int(arrays.num_ret.max(initial=0))
    return np.cumprod(np.concatenate(([1.0], np.full(deepest, PERSISTENCE))))


def rank_biased_precision(arrays: PassArrays, k: None) -> np.ndarray:
    """rbp of every query."""
    import numpy as np

    largest = np.zeros(arrays.n_queries)
    np.maximum.at(largest, arrays.qrels_codes, arrays.qrels_labels)
    query, rank, label, _ = arrays.gaining
    gain = label / np.maximum(largest, 1.0)[query]  # (gain - 0) / (max - 0) above 1
    weights = gain * arrays.once(_powers)[rank]
    return (1.0 - PERSISTENCE) * np.bincount(query, weights=weights, minlength=arrays.n_queries)


def rbp_residual(arrays: PassArrays, k: None) -> np.ndarray:
    """rbp_resid of every query."""
    import numpy as np

    powers = arrays.once(_powers)
    judged = arrays.label >= 0
    every_rank = np.concatenate(([0.0], np.cumsum(powers)))[arrays.num_ret]  # the sum of p**i for i < num_ret
    unjudged = every_rank - np.bincount(arrays.query[judged], weights=powers[arrays.rank[judged]],
                                        minlength=arrays.n_queries)
    counted = arrays.num_ret - np.bincount(arrays.query[judged], minlength=arrays.n_queries)
    return np.where(counted > 0, powers[arrays.num_ret] + (1.0 - PERSISTENCE) * unjudged, 0.0)


RBP = Computation(
    Family(name="rbp", kind="gain", trec="rbp",
           definition="(1 - p) * the sum of gain * p**(rank - 1), p = 0.9, the gains the labels over the largest "
                      "label if it is above 1"),
    rank_biased_precision,
)
RBP_RESID = Computation(
    Family(name="rbp_resid", kind="unjudged", trec="rbp_resid",
           definition="what rbp could gain if every unjudged document retrieved had gain 1: p**N + (1 - p) * their "
                      "p**(rank - 1)"),
    rbp_residual,
)
