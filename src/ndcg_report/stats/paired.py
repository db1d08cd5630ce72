"""Systems against a baseline: paired per-query NDCG@k, tests, intervals and effect sizes per
(system, cut-off), with Holm's adjustment across the whole family of comparisons."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from ndcg_report.core.metrics import Evaluation
from ndcg_report.errors import ParameterError
from ndcg_report.stats.resampling import LARGE_N, MONTE_CARLO, mean_interval, randomization_test
from ndcg_report.stats.streams import stream

COLUMNS = (
    "n", "run_mean", "baseline_mean", "run_median", "baseline_median", "delta", "relative_delta",
    "wins", "ties", "losses", "t_statistic", "t_pvalue", "wilcoxon_statistic", "wilcoxon_pvalue",
    "randomization_pvalue", "ci_low", "ci_high", "effect_size",
    "holm_t_pvalue", "holm_wilcoxon_pvalue", "holm_randomization_pvalue", "randomization_method", "ci_method",
)
TESTS = ("t", "wilcoxon", "randomization")
N_RESAMPLES = 10_000
CONFIDENCE = 0.95


def check_comparable(run: Evaluation, baseline: Evaluation) -> None:
    """Raise ParameterError unless both were evaluated with the same cut-offs and policies."""
    if run.cutoffs != baseline.cutoffs:
        raise ParameterError(f"run and baseline cut-offs differ: {run.cutoffs} vs {baseline.cutoffs}")
    for policy in ("gain", "missing", "no_relevant"):
        if getattr(run, policy) != getattr(baseline, policy):
            raise ParameterError(f"run and baseline were evaluated with different {policy} settings")


def paired_arrays(run: Evaluation, baseline: Evaluation) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(qids, run NDCG, baseline NDCG) of the queries averaged in both: arrays of shape (queries,)
    and (queries, cut-offs), queries in the evaluations' (trec_eval's) order.

    Raises ParameterError if the cut-offs or policies differ, or if no query is averaged in both.
    """
    check_comparable(run, baseline)
    if np.array_equal(run.qids, baseline.qids):  # evaluated against the same qrels: rows line up
        both = run.averaged & baseline.averaged
        qids, x, y = run.qids[both], run.ndcg[both], baseline.ndcg[both]
    else:
        x_table, y_table = run.ndcg_table(), baseline.ndcg_table()
        common = x_table.index.intersection(y_table.index, sort=False)
        order = sorted(range(len(common)), key=lambda i: common[i].encode("utf-8"))
        common = common[order]
        qids = np.asarray(common, dtype=object)
        x, y = x_table.loc[common].to_numpy(np.float64), y_table.loc[common].to_numpy(np.float64)
    if len(qids) == 0:
        raise ParameterError("no query is averaged in both the run and the baseline")
    return qids, x, y


def paired_ndcg(run: Evaluation, baseline: Evaluation) -> pd.DataFrame:
    """Long frame (qid, k, run, baseline, delta = run - baseline) of the queries averaged in both.

    Rows are in cut-off order, then qid order. Raises ParameterError as paired_arrays does.
    """
    qids, x, y = paired_arrays(run, baseline)
    labels = run.labels
    return pd.DataFrame({
        "qid": np.tile(qids.astype(str), len(labels)), "k": np.repeat(labels, len(qids)),
        "run": x.T.ravel(), "baseline": y.T.ravel(), "delta": (x - y).T.ravel(),
    })


def compare_systems(
    systems: Mapping[str, Evaluation],
    baseline: Evaluation,
    baseline_name: str = "baseline",
    seed: int = 42,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    large_n: int = LARGE_N,
) -> pd.DataFrame:
    """Every system against the baseline: one row per (system, k) with the COLUMNS statistics.

    The index is (system, k), systems in the given order, cut-offs in evaluation order. The
    randomization test and the bootstrap of each (system, k) draw from their own stream, derived
    from (seed, system, baseline_name, k): a number never changes when systems or cut-offs are
    added or removed. Holm's adjustment runs across the whole family (every system and every k),
    separately for each test. Above large_n paired queries the randomization test and the
    bootstrap use their normal limits where accurate (see stats.resampling); the *_method
    columns say which.
    """
    if not systems:
        raise ParameterError("give at least one system to compare with the baseline")
    rows = []
    for name, evaluation in systems.items():
        try:
            _, x_all, y_all = paired_arrays(evaluation, baseline)
        except ParameterError as exc:
            raise ParameterError(f"{name!r} against {baseline_name!r}: {exc}") from None
        for column, label in enumerate(evaluation.labels):
            rows.append({"system": name, "k": label, **compare_arrays(
                x_all[:, column], y_all[:, column],
                flip_rng=stream(seed, "randomization", name, baseline_name, label),
                boot_rng=stream(seed, "bootstrap", name, baseline_name, label),
                n_resamples=n_resamples, confidence=confidence, large_n=large_n,
            )})
    table = pd.DataFrame(rows).set_index(["system", "k"])
    for test in TESTS:
        table[f"holm_{test}_pvalue"] = holm(table[f"{test}_pvalue"].to_numpy())
    return table[list(COLUMNS)]


def compare(
    run: Evaluation,
    baseline: Evaluation,
    seed: int = 42,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    run_name: str = "run",
    baseline_name: str = "baseline",
) -> pd.DataFrame:
    """One system against the baseline: one row per cut-off label (index 'k', evaluation order)
    with the COLUMNS statistics, Holm across the k values (compare_systems with one system)."""
    return compare_systems({run_name: run}, baseline, baseline_name, seed, n_resamples, confidence).loc[run_name]


def compare_arrays(
    x: np.ndarray, y: np.ndarray, flip_rng: np.random.Generator, boot_rng: np.random.Generator,
    n_resamples: int = N_RESAMPLES, confidence: float = CONFIDENCE, large_n: int = LARGE_N,
) -> dict[str, float | str]:
    """Every statistic but the Holm ones, for paired per-query scores x (run) and y (baseline).

    If all deltas are 0, test statistics are NaN and p-values 1.0; with one query, NaN.
    """
    d = x - y
    n = len(d)
    differs = bool(np.any(d != 0))
    testable = differs and n > 1
    no_test = np.nan if differs else 1.0
    t = stats.ttest_rel(x, y) if testable else None
    w = stats.wilcoxon(x, y) if testable else None  # zero_method='wilcox': zero deltas dropped
    baseline_mean = float(y.mean())
    ci = mean_interval(d, boot_rng, n_resamples, confidence, large_n) if n > 1 else (np.nan, np.nan, MONTE_CARLO)
    randomization = randomization_test(d, flip_rng, n_resamples, large_n)
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
        "randomization_pvalue": randomization[0],
        "ci_low": ci[0], "ci_high": ci[1],
        "effect_size": float(d.mean()) / sd if sd > 0 else np.nan,  # Cohen's d_z
        "randomization_method": randomization[1], "ci_method": ci[2],
    }


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values (statsmodels); NaN entries stay NaN and do not count."""
    adjusted = np.full(len(pvalues), np.nan)
    finite = np.isfinite(pvalues)
    if finite.any():
        adjusted[finite] = multipletests(pvalues[finite], method="holm")[1]
    return adjusted
