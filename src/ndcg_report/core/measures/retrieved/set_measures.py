"""The set measures: the documents retrieved taken as a set, precision, recall, F and utility of it.

trec_eval 10's `set_P`, `set_relative_P`, `set_recall`, `set_map`, `set_F` and `utility` (m_set_P.c,
m_set_rel_P.c, m_set_recall.c, m_set_map.c, m_set_F.c, m_utility.c; with runid and the counts,
trec_eval's `-m set`). For one query, a document relevant when its label >= the relevance level,
with Rr relevant documents among the N retrieved and R judged relevant:

- SetP = Rr / N (0 when nothing is retrieved); SetRelP = Rr / min(N, R) (0 when N or R is 0);
- SetR = Rr / R (0 when R is 0); SetAP = Rr**2 / (N * R), precision times recall (0 when N or R is 0);
- SetF = 2 P R / (P + R) with P = Rr / N and R' = Rr / R, trec_eval's set_F at beta 1 (0 when Rr is 0);
- utility = Rr - (N - Rr), trec_eval's default coefficients (1, -1, 0, 0): a relevant document
  retrieved is worth 1, a nonrelevant one -1; 0 for a query the run lacks (trec_eval sets it so).

`-M N` (max_retrieved) makes them measures of the top N. Nothing judged relevant gives 0 (utility
-N); `no_relevant="skip"` leaves such a query out of the mean. ir_measures' names: SetP,
SetP(relative=True) (SetRelP), SetR, SetAP, SetF.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import Computation, Family

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays


def set_precision(arrays: PassArrays, k: None) -> np.ndarray:
    import numpy as np

    return np.divide(arrays.num_rel_ret, arrays.num_ret, out=np.zeros(arrays.n_queries), where=arrays.num_ret > 0)


def set_relative_precision(arrays: PassArrays, k: None) -> np.ndarray:
    import numpy as np

    best = np.minimum(arrays.num_ret, arrays.num_rel)
    return np.divide(arrays.num_rel_ret, best, out=np.zeros(arrays.n_queries), where=best > 0)


def set_recall(arrays: PassArrays, k: None) -> np.ndarray:
    return arrays.over_num_rel(arrays.num_rel_ret.astype(float))


def set_average_precision(arrays: PassArrays, k: None) -> np.ndarray:
    import numpy as np

    found = arrays.num_rel_ret.astype(float)
    both = (arrays.num_ret > 0) & (arrays.num_rel > 0)
    return np.divide(found * found, arrays.num_ret.astype(float) * arrays.num_rel, out=np.zeros(arrays.n_queries),
                     where=both)


def set_f(arrays: PassArrays, k: None, beta: float = 1.0) -> np.ndarray:
    import numpy as np

    found = arrays.num_rel_ret
    with np.errstate(invalid="ignore", divide="ignore"):
        precision, recall = found / arrays.num_ret, found / arrays.num_rel
        f = (beta + 1.0) * precision * recall / (beta * precision + recall)
    return np.where(found > 0, f, 0.0)


def utility(arrays: PassArrays, k: None) -> np.ndarray:
    """1 * Rr + -1 * (N - Rr) + 0 * (R - Rr) + 0 * (Rr - N - R), in m_utility.c's order."""
    found, retrieved, relevant = arrays.num_rel_ret, arrays.num_ret, arrays.num_rel
    return 1.0 * found + -1.0 * (retrieved - found) + 0.0 * (relevant - found) + 0.0 * (found - retrieved - relevant)


SET_P = Computation(Family(name="SetP", kind="binary", trec="set_P", definition="Rr / N"), set_precision)
SET_REL_P = Computation(Family(name="SetRelP", kind="binary", trec="set_relative_P", definition="Rr / min(N, R)"),
                        set_relative_precision)
SET_R = Computation(Family(name="SetR", kind="binary", trec="set_recall", definition="Rr / R"), set_recall)
SET_AP = Computation(Family(name="SetAP", kind="binary", trec="set_map", definition="Rr**2 / (N R): SetP times SetR"),
                     set_average_precision)
SET_F = Computation(Family(name="SetF", kind="binary", trec="set_F",
                           definition="2 SetP SetR / (SetP + SetR), their harmonic mean (F1)"), set_f)
UTILITY = Computation(Family(name="utility", kind="binary", trec="utility",
                             definition="Rr - (N - Rr): trec_eval's coefficients 1, -1, 0, 0"), utility)
