"""Large-sample limits of the resampling statistics, and when they are accurate.

Over many queries, the sign-flip randomization distribution of a mean difference, the bootstrap
distribution of a mean and the permutation distribution of the systems' mean NDCG are sums of
many independent terms: by the central limit theorem they tend to normal laws whose variances
are known exactly. Each limit comes with the size of its first correction term, so callers use it
only where that term is far below the Monte Carlo error of 10,000 resamples.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

MIN_EFFECTIVE_COUNT = 10_000  # sign flips, permutations: near p = 0.05 the limit is within 1.2e-3 of the exact
# p-value even for differences of +-1 only (a lattice), half the standard error of 10,000 resamples (2.2e-3)
MAX_SKEW_SHIFT = 0.01  # bootstrap: the limit's ends within 1% of a standard error of the percentile ones
# (10,000 resamples place a 2.5% quantile with a standard error of 2.7% of a standard error)


def sign_flip_pvalue(d: np.ndarray) -> float:
    """Two-sided p-value of mean(d) = 0 under random sign flips, in the normal limit: the flipped
    sum has mean 0 and variance sum(d**2), so p = 2 * sf(|sum(d)| / sqrt(sum(d**2))). 1.0 if d is all 0."""
    d = np.asarray(d, dtype=np.float64)
    spread = float(np.sqrt(np.sum(d * d)))
    if spread == 0:
        return 1.0
    return float(min(1.0, 2 * stats.norm.sf(abs(float(np.sum(d))) / spread)))


def effective_count(weights: np.ndarray) -> float:
    """(sum w)**2 / sum(w**2) of non-negative weights: how many equal terms a sum of independent
    terms with these variances is worth (the count of non-zero weights if they are all equal)."""
    weights = np.asarray(weights, dtype=np.float64)
    total = float(weights.sum())
    return total * total / float(np.sum(weights * weights)) if total > 0 else 0.0


def sign_flip_effective_count(d: np.ndarray) -> float:
    """effective_count of the flipped terms' variances d**2: the normal limit of the sign-flip test
    has a relative kurtosis of -2 / this, its first correction term."""
    d = np.asarray(d, dtype=np.float64)
    return effective_count(d * d)


def normal_mean_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """The normal limit of the percentile bootstrap interval of mean(values): mean +- z * sd / sqrt(n),
    sd with ddof = 0 (the bootstrap distribution's own)."""
    values = np.asarray(values, dtype=np.float64)
    mean = float(values.mean())
    half = float(stats.norm.ppf((1 + confidence) / 2)) * float(values.std()) / np.sqrt(len(values))
    return mean - half, mean + half


def bootstrap_skew_shift(values: np.ndarray, confidence: float) -> float:
    """How far, in standard errors, the percentile bootstrap's ends lie from the normal limit's to
    first order (Hall 1992, Edgeworth expansion): |skewness| * (z**2 - 1) / (6 * sqrt(n)). 0 for
    all-equal values."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) < 2 or np.all(values == values[0]):
        return 0.0
    z = float(stats.norm.ppf((1 + confidence) / 2))
    return abs(float(stats.skew(values))) * (z * z - 1) / (6 * np.sqrt(len(values)))


def range_variance(scores: np.ndarray) -> float:
    """Variance of each system's mean under random permutation of every query's scores across the
    systems (queries x systems): sum over queries of s/(s-1) * var(row) / n**2 (var with ddof = 0)."""
    scores = np.asarray(scores, dtype=np.float64)
    n, systems = scores.shape
    return float(systems / (systems - 1) * scores.var(axis=1).sum() / (n * n))


def range_pvalues(scores: np.ndarray) -> np.ndarray:
    """Randomized Tukey HSD p-values of every pair of columns of scores (queries x systems), in the
    limit: the permuted means tend to a normal vector with covariance c (I - J/s), whose range is
    sqrt(c) times the range of s independent standard normals, so p = studentized_range.sf(gap /
    sqrt(c), s, df = inf). Symmetric, diagonal 1; all 1 if no query's scores differ."""
    scores = np.asarray(scores, dtype=np.float64)
    systems = scores.shape[1]
    means = scores.mean(axis=0)
    gaps = np.abs(means[:, None] - means[None, :])
    scale = np.sqrt(range_variance(scores))
    if scale == 0:
        pvalues = np.ones((systems, systems))
    else:
        pvalues = np.clip(stats.studentized_range.sf(gaps / scale, systems, np.inf), 0.0, 1.0)
    np.fill_diagonal(pvalues, 1.0)
    return pvalues


def range_effective_count(scores: np.ndarray) -> float:
    """effective_count of the queries' variances across the systems: how many equal queries the
    permutation distribution is worth (queries whose systems agree count for nothing)."""
    return effective_count(np.asarray(scores, dtype=np.float64).var(axis=1))
