"""The seeded resampling statistics on scipy.stats: paired randomization test and bootstrap intervals.

The bootstrap interval is the percentile interval of a mean. Each takes its own generator (see streams.stream).

Up to LARGE_N values both are Monte Carlo over every value. Above it, `randomization_test` and
`mean_interval` use the statistics' normal limits (stats.limits) wherever the first correction
term is far below the Monte Carlo error, and otherwise resample only the values that matter:
the non-zero differences (a zero's sign changes nothing), or the values that differ from the most
common one (`sparse_bootstrap_interval`, the same distribution as resampling them all).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator

import numpy as np
from scipy import stats

from ndcg_report.stats.limits import (
    MAX_SKEW_SHIFT, MIN_EFFECTIVE_COUNT, bootstrap_skew_shift, normal_mean_interval, sign_flip_effective_count,
    sign_flip_pvalue,
)

LARGE_N = 5_000  # above this many values, the limits replace Monte Carlo where they are accurate
MONTE_CARLO = "monte carlo"
NORMAL_LIMIT = "normal limit"
_ELEMENTS_PER_BATCH = 1 << 21  # resampled values held at once: bounds memory to ~16 MB
SMALL_RESAMPLE = 128  # below this many values a bootstrap's positions are drawn as int32 (resampled_positions)


def pvalue_floor(n_resamples: int, sides: int = 2, multiplier: int = 1) -> float:
    """The smallest p-value Monte Carlo over n_resamples gives, (0 + 1) / (R + 1) per side (a two-sided
    p doubles the smaller one-sided, as scipy's monte_carlo_test does), times a correction's multiplier
    (Holm's largest, the family's size): a p-value there says only that the true one is at most that."""
    return multiplier * sides / (n_resamples + 1)


def randomization_pvalue(d: np.ndarray, rng: np.random.Generator, n_resamples: int) -> float:
    """Two-sided paired randomization test of mean(d) = 0: Monte Carlo over random sign flips.

    Same null and p-value, (b + 1) / (R + 1), as permutation_test(permutation_type='samples'),
    whose per-query loop takes seconds at 7,000 queries; this one is vectorised.
    """
    def flipped(size: tuple[int, ...]) -> np.ndarray:  # np.where(flips, d, -d), five times faster: d times +-1.0
        signs = rng.integers(0, 2, size, dtype=bool).astype(np.float64)
        signs *= 2.0
        signs -= 1.0
        signs *= d  # exact: each value is d or -d, bit for bit
        return signs

    result = stats.monte_carlo_test(
        (d,), (flipped,), np.mean, vectorized=True, n_resamples=n_resamples, batch=_batch(len(d)), axis=-1,
    )
    return float(result.pvalue)


def bootstrap_mean_interval(
    values: np.ndarray, rng: np.random.Generator, n_resamples: int, confidence: float,
) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(values) (BCa is undefined on all-equal values);
    (mean, mean) for fewer than two values or all equal, (nan, nan) for none."""
    return bootstrap_mean_intervals(values, rng, n_resamples, (confidence,))[0]


def bootstrap_mean_intervals(
    values: np.ndarray, rng: np.random.Generator, n_resamples: int, confidences: tuple[float, ...],
) -> list[tuple[float, float]]:
    """bootstrap_mean_interval at each confidence level, all from the same resamples."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        return [(float("nan"), float("nan"))] * len(confidences)
    if len(values) < 2 or np.all(values == values[0]):
        return [(float(values.mean()), float(values.mean()))] * len(confidences)
    means = bootstrap_means(values, rng, n_resamples, _batch(len(values)))
    found = [percentile_interval(means, confidences[0])]
    for confidence in confidences[1:]:
        alpha = (1 - confidence) / 2
        low, high = np.percentile(means, [100 * alpha, 100 * (1 - alpha)])
        found.append((float(low), float(high)))
    return found


def resampled_positions(n: int, rng: np.random.Generator, n_resamples: int, batch: int | None = None) -> Iterator[np.ndarray]:
    """The positions scipy.stats.bootstrap draws to resample n values n_resamples times, batch by batch (None:
    all at once), each batch rng.integers(0, n, (batch, n)): its resamples to the bit.

    Below SMALL_RESAMPLE values they are drawn as int32: numpy draws the same numbers for int32 as for int64
    below 2**32 (one bounded 32-bit draw each), and half the memory to fault in makes a resampling of 43
    values a third faster; above, int64 as scipy (an int32 index is cast again as it is read: twice slower
    at 400 values).
    """
    dtype = np.int32 if n < SMALL_RESAMPLE else np.int64
    step = batch or n_resamples or 1
    for start in range(0, n_resamples, step):
        yield rng.integers(0, n, (min(step, n_resamples - start), n), dtype=dtype)


def bootstrap_means(values: np.ndarray, rng: np.random.Generator, n_resamples: int, batch: int) -> np.ndarray:
    """The mean of each resample of values (resampled_positions): scipy.stats.bootstrap's distribution of np.mean."""
    means = [np.mean(values[positions] if positions.dtype == np.int32 else np.take(values, positions), axis=-1)
             for positions in resampled_positions(len(values), rng, n_resamples, batch)]
    return np.concatenate(means) if means else np.empty(0)


def percentile_interval(distribution: np.ndarray, confidence: float) -> tuple[float, float]:
    """scipy.stats.bootstrap's percentile interval of a bootstrap distribution drawn as it draws them: handed to
    it as an earlier result's (bootstrap_result), with nothing more to draw (n_resamples=0)."""
    result = stats.bootstrap((np.zeros(2),), np.mean, n_resamples=0, vectorized=True, confidence_level=confidence,
                             method="percentile", bootstrap_result=_Distribution(distribution))
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


class _Distribution:
    """A bootstrap distribution in the shape scipy.stats.bootstrap takes an earlier result's."""

    def __init__(self, distribution: np.ndarray) -> None:
        self.bootstrap_distribution = distribution


def randomization_test(
    d: np.ndarray, rng: np.random.Generator, n_resamples: int, large_n: int = LARGE_N,
) -> tuple[float, str]:
    """(two-sided p-value of mean(d) = 0 under random sign flips, how it was computed).

    Up to large_n differences: randomization_pvalue over all of them. Above: the normal limit if
    the non-zero differences are worth MIN_EFFECTIVE_COUNT equal ones, else randomization_pvalue
    over the non-zero differences alone (the same test: a zero's sign changes no sum).
    """
    d = np.asarray(d, dtype=np.float64)
    if len(d) <= large_n:
        return randomization_pvalue(d, rng, n_resamples), MONTE_CARLO
    nonzero = d[d != 0]
    if len(nonzero) == 0:
        return 1.0, MONTE_CARLO
    if sign_flip_effective_count(nonzero) >= MIN_EFFECTIVE_COUNT:
        return sign_flip_pvalue(nonzero), NORMAL_LIMIT
    return randomization_pvalue(nonzero, rng, n_resamples), MONTE_CARLO


def mean_interval(
    values: np.ndarray, rng: np.random.Generator, n_resamples: int, confidence: float, large_n: int = LARGE_N,
) -> tuple[float, float, str]:
    """(low, high, how it was computed) of the percentile bootstrap interval of mean(values).

    Up to large_n values: bootstrap_mean_interval. Above: the normal limit where skewness moves the
    percentile ends by at most MAX_SKEW_SHIFT standard errors, else sparse_bootstrap_interval.
    """
    intervals, method = mean_intervals(values, rng, n_resamples, (confidence,), large_n)
    return (*intervals[0], method)


def mean_intervals(
    values: np.ndarray, rng: np.random.Generator, n_resamples: int, confidences: tuple[float, ...],
    large_n: int = LARGE_N,
) -> tuple[list[tuple[float, float]], str]:
    """mean_interval at each confidence level (the same resamples for all), and how they were computed:
    the normal limit only where it is accurate at every level."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) <= large_n:
        return bootstrap_mean_intervals(values, rng, n_resamples, confidences), MONTE_CARLO
    if all(bootstrap_skew_shift(values, confidence) <= MAX_SKEW_SHIFT for confidence in confidences):
        return [normal_mean_interval(values, confidence) for confidence in confidences], NORMAL_LIMIT
    return sparse_bootstrap_intervals(values, rng, n_resamples, confidences), MONTE_CARLO


def sparse_bootstrap_interval(
    values: np.ndarray, rng: np.random.Generator, n_resamples: int, confidence: float,
) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(values), resampling only the m values that differ from
    the most common one: of n draws with replacement, Binomial(n, m/n) land among them, uniformly;
    the rest draw the common value. Same distribution as resampling all n; costs m, not n, per resample."""
    return sparse_bootstrap_intervals(values, rng, n_resamples, (confidence,))[0]


def sparse_bootstrap_intervals(
    values: np.ndarray, rng: np.random.Generator, n_resamples: int, confidences: tuple[float, ...],
) -> list[tuple[float, float]]:
    """sparse_bootstrap_interval at each confidence level, from the same resamples."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    distinct, counts = np.unique(values, return_counts=True)
    common = distinct[np.argmax(counts)]
    others = values[values != common] - common
    if len(others) == 0:
        return [(float(common), float(common))] * len(confidences)
    means = np.empty(n_resamples)
    batch = _batch(len(others))
    for start in range(0, n_resamples, batch):
        hits = rng.binomial(n, len(others) / n, size=min(batch, n_resamples - start))
        picks = others[rng.integers(0, len(others), size=int(hits.sum()))]
        ends = np.cumsum(hits)
        sums = np.concatenate([[0.0], np.cumsum(picks)])
        means[start:start + len(hits)] = (sums[ends] - sums[ends - hits]) / n
    found = []
    for confidence in confidences:
        alpha = (1 - confidence) / 2
        low, high = np.percentile(means, [100 * alpha, 100 * (1 - alpha)])
        found.append((float(common + low), float(common + high)))
    return found


def _batch(n_values: int) -> int:
    return max(1, _ELEMENTS_PER_BATCH // max(1, n_values))


def _rng_argument(function: Callable, rng: np.random.Generator) -> dict[str, np.random.Generator]:
    """scipy >= 1.15 seeds through `rng`, older releases through `random_state`."""
    name = "rng" if "rng" in inspect.signature(function).parameters else "random_state"
    return {name: rng}
