"""The seeded resampling statistics, on scipy.stats: the paired randomization test and the
percentile bootstrap interval of a mean. Each takes its own generator (see streams.stream)."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np
from scipy import stats

_ELEMENTS_PER_BATCH = 1 << 21  # resampled values held at once: bounds memory to ~16 MB


def randomization_pvalue(d: np.ndarray, rng: np.random.Generator, n_resamples: int) -> float:
    """Two-sided paired randomization test of mean(d) = 0: Monte Carlo over random sign flips.

    Same null and p-value, (b + 1) / (R + 1), as permutation_test(permutation_type='samples'),
    whose per-query loop takes seconds at 7,000 queries; this one is vectorised.
    """
    def flipped(size: tuple[int, ...]) -> np.ndarray:
        return np.where(rng.integers(0, 2, size, dtype=bool), d, -d)

    result = stats.monte_carlo_test(
        (d,), (flipped,), np.mean, vectorized=True, n_resamples=n_resamples, batch=_batch(len(d)), axis=-1,
    )
    return float(result.pvalue)


def bootstrap_mean_interval(
    values: np.ndarray, rng: np.random.Generator, n_resamples: int, confidence: float,
) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(values) (BCa is undefined on all-equal values);
    (mean, mean) for fewer than two values or all equal, (nan, nan) for none."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        return float("nan"), float("nan")
    if len(values) < 2 or np.all(values == values[0]):
        return float(values.mean()), float(values.mean())
    result = stats.bootstrap(
        (values,), np.mean, n_resamples=n_resamples, batch=_batch(len(values)), vectorized=True,
        confidence_level=confidence, method="percentile", **_rng_argument(stats.bootstrap, rng),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def _batch(n_values: int) -> int:
    return max(1, _ELEMENTS_PER_BATCH // max(1, n_values))


def _rng_argument(function: Callable, rng: np.random.Generator) -> dict[str, np.random.Generator]:
    """scipy >= 1.15 seeds through `rng`, older releases through `random_state`."""
    name = "rng" if "rng" in inspect.signature(function).parameters else "random_state"
    return {name: rng}
