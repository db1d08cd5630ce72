"""A run against a baseline: paired per-query NDCG@k, tests, intervals and effect sizes per cut-off."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from ndcg_report.errors import ParameterError
from ndcg_report.core.metrics import Evaluation, cutoff_label

COLUMNS = (
    "n", "run_mean", "baseline_mean", "run_median", "baseline_median", "delta", "relative_delta",
    "wins", "ties", "losses", "t_statistic", "t_pvalue", "wilcoxon_statistic", "wilcoxon_pvalue",
    "randomization_pvalue", "ci_low", "ci_high", "effect_size",
    "holm_t_pvalue", "holm_wilcoxon_pvalue", "holm_randomization_pvalue",
)
_TESTS = ("t", "wilcoxon", "randomization")
_BATCH = 500  # resamples drawn at once: bounds memory to _BATCH x queries floats


def paired_ndcg(run: Evaluation, baseline: Evaluation) -> pd.DataFrame:
    """Long frame (qid, k, run, baseline, delta = run - baseline) of the queries averaged in both.

    Rows are in cut-off order, then qid order. Raises ParameterError if the cut-offs or the
    gain/missing/no_relevant policies differ, or if no query is averaged in both.
    """
    if run.cutoffs != baseline.cutoffs:
        raise ParameterError(f"run and baseline cut-offs differ: {run.cutoffs} vs {baseline.cutoffs}")
    for policy in ("gain", "missing", "no_relevant"):
        if getattr(run, policy) != getattr(baseline, policy):
            raise ParameterError(f"run and baseline were evaluated with different {policy} settings")
    long = [
        evaluation.ndcg_table().reset_index().melt(id_vars="qid", var_name="k", value_name=name)
        for evaluation, name in ((run, "run"), (baseline, "baseline"))
    ]
    pairs = long[0].merge(long[1], on=["qid", "k"], how="inner")
    if pairs.empty:
        raise ParameterError("no query is averaged in both the run and the baseline")
    pairs["delta"] = pairs["run"] - pairs["baseline"]
    return pairs


def compare(
    run: Evaluation,
    baseline: Evaluation,
    seed: int = 42,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """One row per cut-off label (index 'k', evaluation order) with the COLUMNS statistics.

    Each k gets its own child of SeedSequence(seed), so results are identical on re-run.
    Holm adjustment runs across the k values, separately for each test.
    """
    pairs = paired_ndcg(run, baseline)
    labels = [cutoff_label(k) for k in run.cutoffs]
    children = np.random.SeedSequence(seed).spawn(len(labels))
    rows = []
    for label, child in zip(labels, children):
        at_k = pairs[pairs["k"] == label]
        x, y = at_k["run"].to_numpy(np.float64), at_k["baseline"].to_numpy(np.float64)
        rows.append({"k": label, **compare_arrays(x, y, child, n_resamples, confidence)})
    table = pd.DataFrame(rows).set_index("k")
    for test in _TESTS:
        table[f"holm_{test}_pvalue"] = holm(table[f"{test}_pvalue"].to_numpy())
    return table[list(COLUMNS)]


def compare_arrays(
    x: np.ndarray, y: np.ndarray, seed: np.random.SeedSequence, n_resamples: int, confidence: float
) -> dict[str, float]:
    """Every per-k statistic but the Holm ones, for paired per-query scores x (run) and y (baseline).

    If all deltas are 0, test statistics are NaN and p-values 1.0; with one query, NaN.
    """
    d = x - y
    n = len(d)
    differs = bool(np.any(d != 0))
    testable = differs and n > 1
    no_test = np.nan if differs else 1.0
    t = stats.ttest_rel(x, y) if testable else None
    w = stats.wilcoxon(x, y) if testable else None  # zero_method='wilcox': zero deltas dropped
    flip_rng, boot_rng = (np.random.default_rng(s) for s in seed.spawn(2))
    baseline_mean = float(y.mean())
    ci = _bootstrap_mean(d, boot_rng, n_resamples, confidence) if n > 1 else (np.nan, np.nan)
    sd = float(d.std(ddof=1)) if n > 1 else np.nan
    return {
        "n": n,
        "run_mean": float(x.mean()), "baseline_mean": baseline_mean,
        "run_median": float(np.median(x)), "baseline_median": float(np.median(y)),
        "delta": float(d.mean()),
        "relative_delta": float(d.mean()) / baseline_mean if baseline_mean != 0 else np.nan,
        "wins": int((d > 0).sum()), "ties": int((d == 0).sum()), "losses": int((d < 0).sum()),
        "t_statistic": float(t.statistic) if t is not None else np.nan,
        "t_pvalue": float(t.pvalue) if t is not None else no_test,
        "wilcoxon_statistic": float(w.statistic) if w is not None else np.nan,
        "wilcoxon_pvalue": float(w.pvalue) if w is not None else no_test,
        "randomization_pvalue": randomization_pvalue(d, flip_rng, n_resamples),
        "ci_low": ci[0], "ci_high": ci[1],
        "effect_size": float(d.mean()) / sd if sd > 0 else np.nan,  # Cohen's d_z
    }


def randomization_pvalue(d: np.ndarray, rng: np.random.Generator, n_resamples: int) -> float:
    """Two-sided paired randomization test of mean(d) = 0: Monte Carlo over random sign flips.

    Same null and p-value, (b + 1) / (R + 1), as permutation_test(permutation_type='samples'),
    whose per-query loop takes seconds at 7,000 queries; this one is vectorised.
    """
    def flipped(size: tuple[int, ...]) -> np.ndarray:
        return np.where(rng.integers(0, 2, size, dtype=bool), d, -d)

    result = stats.monte_carlo_test(
        (d,), (flipped,), np.mean, vectorized=True, n_resamples=n_resamples, batch=_BATCH, axis=-1
    )
    return float(result.pvalue)


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values (statsmodels); NaN entries stay NaN and do not count."""
    adjusted = np.full(len(pvalues), np.nan)
    finite = np.isfinite(pvalues)
    if finite.any():
        adjusted[finite] = multipletests(pvalues[finite], method="holm")[1]
    return adjusted


def _bootstrap_mean(
    d: np.ndarray, rng: np.random.Generator, n_resamples: int, confidence: float
) -> tuple[float, float]:
    """Percentile bootstrap CI of mean(d) (BCa is undefined on all-equal deltas)."""
    result = stats.bootstrap(
        (d,), np.mean, n_resamples=n_resamples, batch=_BATCH, vectorized=True,
        confidence_level=confidence, method="percentile", **_rng_argument(stats.bootstrap, rng),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def _rng_argument(function: Callable, rng: np.random.Generator) -> dict[str, np.random.Generator]:
    """scipy >= 1.15 seeds through `rng`, older releases through `random_state`."""
    name = "rng" if "rng" in inspect.signature(function).parameters else "random_state"
    return {name: rng}
