"""Randomized Tukey HSD between systems (Carterette, ACM TOIS 2012), the multiple-system test of IR.

Under the null hypothesis that the systems are interchangeable, each query's scores may be
permuted across the systems. For every resample, the scores of each query are permuted
independently and the range (largest minus smallest system mean) is recorded; the p-value of a
pair of systems is the share of resamples whose range reaches the pair's observed gap, counting
the observed arrangement itself: (1 + #{range >= gap}) / (1 + resamples). Comparing every pair
with the distribution of the range is what controls the family-wise error over all pairs.

Above LARGE_N queries, `tukey_hsd` uses the test's limit (stats.limits.range_pvalues: the
studentized range with infinite degrees of freedom, scaled by the exact permutation variance)
when the queries whose systems differ are worth MIN_EFFECTIVE_COUNT equal ones; otherwise it
permutes only those queries (a query whose systems all agree moves no range).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from ndcg_report.stats.limits import MIN_EFFECTIVE_COUNT, range_effective_count, range_pvalues
from ndcg_report.stats.resampling import LARGE_N, MONTE_CARLO

STUDENTIZED_RANGE_LIMIT = "studentized range limit"
TOLERANCE = 1e-12  # a range within this of a gap counts as reaching it (means summed in another order)
_ELEMENTS_PER_BATCH = 1 << 21  # permuted scores held at once: bounds memory to ~30 MB


def permutation_batches(
    rng: np.random.Generator, n_resamples: int, n_queries: int, n_systems: int,
) -> Iterator[np.ndarray]:
    """Random orders of the systems, one per resample and query, in batches of shape
    (resamples in the batch, n_queries, n_systems); drawn in order from rng, so the batches
    concatenated are the same whatever the batch size."""
    batch = max(1, _ELEMENTS_PER_BATCH // max(1, n_queries * n_systems))
    identity = np.arange(n_systems, dtype=np.int16 if n_systems < 2**15 else np.int32)
    for start in range(0, n_resamples, batch):
        size = min(batch, n_resamples - start)
        yield rng.permuted(np.broadcast_to(identity, (size, n_queries, n_systems)), axis=2)


def tukey_hsd_pvalues(scores: np.ndarray, permutations: Iterable[np.ndarray]) -> np.ndarray:
    """Symmetric matrix of randomized Tukey HSD p-values (diagonal 1) of the columns of scores
    (queries x systems), over the given permutations (see permutation_batches)."""
    scores = np.asarray(scores, dtype=np.float64)
    n_queries, n_systems = scores.shape
    if n_queries == 0:
        raise ValueError("no query to compare the systems on")
    ranges = []
    for batch in permutations:
        permuted_means = np.take_along_axis(scores[None, :, :], batch, axis=2).mean(axis=1)
        ranges.append(permuted_means.max(axis=1) - permuted_means.min(axis=1))
    ranges = np.sort(np.concatenate(ranges)) if ranges else np.empty(0)
    means = scores.mean(axis=0)
    gaps = np.abs(means[:, None] - means[None, :])
    reaching = len(ranges) - np.searchsorted(ranges, gaps - TOLERANCE, side="left")
    pvalues = (reaching + 1.0) / (len(ranges) + 1.0)
    np.fill_diagonal(pvalues, 1.0)
    return pvalues


def randomized_tukey_hsd(scores: np.ndarray, rng: np.random.Generator, n_resamples: int = 10_000) -> np.ndarray:
    """p-values of every pair of systems (columns of scores, queries x systems): randomized Tukey HSD."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[1] < 2:
        raise ValueError("give a queries x systems matrix with at least two systems")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1; got {n_resamples}")
    return tukey_hsd_pvalues(scores, permutation_batches(rng, n_resamples, *scores.shape))


def tukey_hsd(
    scores: np.ndarray, rng: np.random.Generator, n_resamples: int = 10_000, large_n: int = LARGE_N,
) -> tuple[np.ndarray, str]:
    """(p-values of every pair of columns of scores, how they were computed): randomized_tukey_hsd
    up to large_n queries; above, its limit where accurate, else permutations of the queries whose
    systems differ."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[1] < 2 or len(scores) <= large_n:  # (randomized_tukey_hsd checks the shape)
        return randomized_tukey_hsd(scores, rng, n_resamples), MONTE_CARLO
    if range_effective_count(scores) >= MIN_EFFECTIVE_COUNT:
        return range_pvalues(scores), STUDENTIZED_RANGE_LIMIT
    differing = scores[np.ptp(scores, axis=1) > 0]
    if len(differing) == 0:  # nothing differs: every gap is 0, which every resample reaches
        return np.ones((scores.shape[1],) * 2), MONTE_CARLO
    return randomized_tukey_hsd(differing, rng, n_resamples), MONTE_CARLO
