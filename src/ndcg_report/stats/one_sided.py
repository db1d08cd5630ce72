"""The gate's one-sided paired randomization tests (is AFTER worse? better?), on scipy.stats.permutation_test.

The test is scipy's permutation_test (permutation_type='samples': each delta's sign flipped) on the
non-zero deltas alone: a zero's sign changes no sum, so the null distribution is the same, and a night
where few queries moved is tested exactly (scipy enumerates every sign pattern when 2**n <= n_resamples).
Both directions come from one null distribution, as scipy computes each from it: one resampling, not two.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy import stats

from ndcg_report.stats.resampling import _rng_argument

_ELEMENTS_PER_BATCH = 1 << 21  # sign patterns held at once: bounds memory to ~32 MB, whatever the query count


def one_sided_pvalues(deltas: np.ndarray, rng: np.random.Generator, n_resamples: int) -> tuple[float, float]:
    """(p of 'worse', p of 'better'): of mean(deltas) = 0 against mean < 0 and against mean > 0, under random
    sign flips of the non-zero deltas, from one null distribution: each what scipy.stats.permutation_test
    (permutation_type='samples', alternative 'less' or 'greater') gives on that rng. (1.0, 1.0) when no
    delta is non-zero (nothing moved, nothing to test)."""
    moved = np.asarray(deltas, dtype=np.float64)
    moved = moved[moved != 0]
    if len(moved) == 0:
        return 1.0, 1.0
    result = stats.permutation_test(
        (moved,), np.mean, permutation_type="samples", vectorized=True, n_resamples=n_resamples,
        alternative="less", batch=max(1, _ELEMENTS_PER_BATCH // (2 * len(moved))),
        **_rng_argument(stats.permutation_test, rng),
    )
    null, observed = np.asarray(result.null_distribution), float(result.statistic)
    exact = n_resamples >= 2 ** len(moved)  # scipy enumerates every sign pattern: no +1 adjustment
    adjustment = 0 if exact else 1
    gamma = abs(np.finfo(np.float64).eps * 100 * observed)  # scipy's tolerance for theoretically equal values
    greater = (np.count_nonzero(null >= observed - gamma) + adjustment) / (len(null) + adjustment)
    return float(result.pvalue), float(min(max(greater, 0.0), 1.0))
