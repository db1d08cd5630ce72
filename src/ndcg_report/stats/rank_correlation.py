"""Rank correlation of two system orders: Kendall's tau-b and Spearman's rho (scipy.stats), and tau_AP.

Each takes two arrays of scores of the same systems (higher is better): the reference's and the
other's. tau_AP (Yilmaz, Aslam and Robertson, SIGIR 2008) weighs a swap near the top more than one
near the bottom and is asymmetric: the reference is the true order, the other's the one judged.

tau_AP, ties: the paper assumes none. Here a pair the reference ties is never an error (the reference,
the truth, allows either order), and ties in the other's order are averaged over every order of the
tied systems, each equally likely: Urbano and Marrero's tau_AP,a ("The Treatment of Ties in AP
Correlation", ICTIR 2017). Without ties it is the paper's value, and two lists with the same ties
give 1. Closed form, O(n^2); tests/analysis/test_judgments.py checks it against the enumeration of every order.
Each statistic is NaN when it is undefined: fewer than two systems, or one list constant (for tau_AP:
the reference; a constant other list gets the expected value of a random order).
"""

from __future__ import annotations

import math
import warnings

import numpy as np


def kendall_tau_b(reference: np.ndarray, other: np.ndarray) -> float:
    """Kendall's tau-b (scipy.stats.kendalltau, variant 'b'); NaN if undefined."""
    from scipy import stats

    x, y = _pair(reference, other)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(stats.kendalltau(x, y, variant="b").statistic)


def spearman_rho(reference: np.ndarray, other: np.ndarray) -> float:
    """Spearman's rho (scipy.stats.spearmanr, average ranks for ties); NaN if undefined."""
    from scipy import stats

    x, y = _pair(reference, other)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.spearmanr(x, y).statistic)


def tau_ap(reference: np.ndarray, other: np.ndarray) -> float:
    """AP correlation of the other's order against the reference's (scores, higher is better); ties as
    the module's docstring says; NaN for fewer than two systems or a reference that ties them all.

    tau_AP = 2 / (n - 1) * sum over the other's ranks i = 2..n of C(i) / (i - 1), minus 1, C(i) being how
    many of the systems the other ranks above rank i the reference does not rank below it.
    """
    x, y = _pair(reference, other)
    n = len(x)
    if n < 2 or np.ptp(x) == 0:
        return math.nan
    truth = (x[None, :] >= x[:, None]).astype(np.float64)  # truth[i, j]: j above i is no error (the reference agrees)
    total = 0.0
    for i in range(n):
        higher = y > y[i]  # ranked above i by the other whatever the order of ties
        tied = (y == y[i]) & (np.arange(n) != i)
        p, t = int(higher.sum()), int(tied.sum()) + 1  # i's tie group: positions p + 1 .. p + t (1-based)
        positions = p + np.arange(t)  # i's rank - 1 in each place of its group, equally likely
        # E[1 / (rank - 1)] for a system above i's group; E[[j above i] / (rank - 1)] for one in it
        inverse = np.divide(1.0, positions, out=np.zeros(t), where=positions > 0)
        total += truth[i, higher].sum() * inverse.mean()
        if t > 1:
            total += truth[i, tied].sum() * (np.arange(t) / (t - 1) * inverse).mean()
    return float(2.0 / (n - 1) * total - 1.0)


def _pair(reference: np.ndarray, other: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(reference, dtype=np.float64), np.asarray(other, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("give two 1-D arrays of scores of the same systems")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("scores must be finite (a system without a mean is left out before)")
    return x, y


def kendall_tau_b_rows(reference: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row pair (rows: resamples, columns: systems): (concordant - discordant) over
    the root of the pairs untied in each, as scipy.stats.kendalltau's variant 'b'; NaN where a row is constant."""
    x, y = np.asarray(reference, dtype=np.float64), np.asarray(other, dtype=np.float64)
    # systems first, each a contiguous vector over the rows: a system's pairs with those after it at once
    by_system_x, by_system_y = np.ascontiguousarray(np.moveaxis(x, -1, 0)), np.ascontiguousarray(np.moveaxis(y, -1, 0))
    concordant, untied_x, untied_y = (np.zeros(x.shape[:-1], dtype=np.int64) for _ in range(3))
    for i in range(x.shape[-1] - 1):
        sx, sy = _pair_signs(by_system_x[i], by_system_x[i + 1:]), _pair_signs(by_system_y[i], by_system_y[i + 1:])
        concordant += (sx * sy).sum(0, dtype=np.int64)
        untied_x += (sx != 0).sum(0, dtype=np.int64)
        untied_y += (sy != 0).sum(0, dtype=np.int64)
    # every count is a whole number, exact in any order: the value is the float formula's, bit for bit
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = concordant.astype(np.float64) / np.sqrt(untied_x.astype(np.float64) * untied_y)
    missing = np.isnan(x).any(-1) | np.isnan(y).any(-1)  # a mean undefined: its pairs' signs are NaN
    return np.where(missing, np.nan, tau) if missing.any() else tau


def _pair_signs(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """sign(left - right) as int8 (0 where either is NaN: the caller makes those rows NaN)."""
    return (left > right).astype(np.int8) - (left < right).astype(np.int8)


def tau_b_interval(reference: np.ndarray, other: np.ndarray, rng: np.random.Generator, n_resamples: int,
                   confidence: float) -> tuple[float, float]:
    """Percentile bootstrap interval of Kendall's tau-b of the systems' means, resampling queries.

    reference, other: systems x queries scores under each set, NaN where a query is not in that set's mean
    (the same query columns in both). Each resample (scipy.stats.bootstrap over the query positions) takes
    n queries with replacement; a system's mean under a set is the mean of its values over the drawn
    queries that set averages. (NaN, NaN) with fewer than two systems or queries, or a tau undefined."""
    from ndcg_report.stats.resampling import percentile_interval, resampled_positions

    x, y = np.asarray(reference, dtype=np.float64), np.asarray(other, dtype=np.float64)
    n = x.shape[1]
    if x.shape[0] < 2 or n < 2:
        return math.nan, math.nan
    values_x, kept_x = np.nan_to_num(x), np.isfinite(x).astype(np.float64)
    values_y, kept_y = np.nan_to_num(y), np.isfinite(y).astype(np.float64)

    def tau(positions: np.ndarray) -> np.ndarray:
        rows = np.arange(len(positions))[:, None] * n
        drawn = np.bincount((positions + rows).ravel(), minlength=len(positions) * n).reshape(-1, n).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            means_x = drawn @ values_x.T / (drawn @ kept_x.T)
            means_y = drawn @ values_y.T / (drawn @ kept_y.T)
        return kendall_tau_b_rows(means_x, means_y)

    # scipy.stats.bootstrap's resamples of the query positions (one batch) and its percentile interval
    distribution = np.concatenate([tau(positions) for positions in resampled_positions(n, rng, n_resamples)])
    with warnings.catch_warnings():  # every resample alike (two systems, one order): scipy warns, the interval stands
        warnings.simplefilter("ignore")
        return percentile_interval(distribution, confidence)
