"""The gate's one-sided paired randomization test (is AFTER worse? better?), on scipy.stats.permutation_test.

The test is scipy's permutation_test (permutation_type='samples': each delta's sign flipped) on the
non-zero deltas alone: a zero's sign changes no sum, so the null distribution is the same, and a night
where few queries moved is tested exactly (scipy enumerates every sign pattern when 2**n <= n_resamples).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy import stats

from ndcg_report.stats.resampling import _rng_argument

_ELEMENTS_PER_BATCH = 1 << 21  # sign patterns held at once: bounds memory to ~32 MB, whatever the query count


def one_sided_pvalue(deltas: np.ndarray, rng: np.random.Generator, n_resamples: int,
                     alternative: Literal["less", "greater"]) -> float:
    """p-value of mean(deltas) = 0 against mean < 0 ('less') or > 0 ('greater'), under random sign flips
    of the non-zero deltas (scipy.stats.permutation_test, permutation_type='samples'); 1.0 when none is
    non-zero (nothing moved, nothing to test)."""
    moved = np.asarray(deltas, dtype=np.float64)
    moved = moved[moved != 0]
    if len(moved) == 0:
        return 1.0
    result = stats.permutation_test(
        (moved,), np.mean, permutation_type="samples", vectorized=True, n_resamples=n_resamples,
        alternative=alternative, batch=max(1, _ELEMENTS_PER_BATCH // (2 * len(moved))),
        **_rng_argument(stats.permutation_test, rng),
    )
    return float(result.pvalue)
