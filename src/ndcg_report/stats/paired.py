"""Systems against a baseline: paired per-query values of every measure, tests, intervals, Holm.

Tests, intervals and effect sizes are per (system, measure, cut-off), with Holm's adjustment over the
systems compared with the baseline on one (measure, cut-off) at a time (so a verdict never depends on how
many measures or cut-offs were asked for), and the matching Bonferroni-adjusted interval.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats

from ndcg_report.core.measures.names import Measure, cutoff_dtype
from ndcg_report.core.evaluation import Evaluation
from ndcg_report.errors import ParameterError
from ndcg_report.stats.resampling import LARGE_N, MONTE_CARLO, mean_intervals, randomization_test
from ndcg_report.stats.streams import stream

COLUMNS = (
    "n", "run_mean", "baseline_mean", "run_median", "baseline_median", "delta", "relative_delta",
    "wins", "ties", "losses", "t_statistic", "t_pvalue", "wilcoxon_statistic", "wilcoxon_pvalue",
    "randomization_pvalue", "ci_low", "ci_high", "effect_size",
    "holm_t_pvalue", "holm_wilcoxon_pvalue", "holm_randomization_pvalue",
    "family_size", "family_confidence", "family_ci_low", "family_ci_high", "randomization_method", "ci_method",
)
TESTS = ("t", "wilcoxon", "randomization")
VERDICT_COLUMNS = ("n", "run_mean", "baseline_mean", "delta", "randomization_pvalue", "holm_randomization_pvalue",
                   "family_size", "randomization_method")  # compare_systems(verdicts_only=True)
N_RESAMPLES = 10_000
CONFIDENCE = 0.95
ALPHA = 0.05  # the significance level of the verdicts and letters


def check_comparable(run: Evaluation, baseline: Evaluation) -> None:
    """Raise ParameterError unless both were evaluated with the same measures and policies."""
    if run.measures != baseline.measures:
        raise ParameterError(f"run and baseline measures differ: {', '.join(run.labels)} vs {', '.join(baseline.labels)}")
    for policy in ("gain", "missing", "no_relevant", "rel_level", "identical_ids"):
        if getattr(run, policy) != getattr(baseline, policy):
            raise ParameterError(f"run and baseline were evaluated with different {policy} settings")


def paired_values(run: Evaluation, baseline: Evaluation, measure: Measure) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(qids, run values, baseline values) of one measure over the queries averaged in both for it,
    in the evaluations' (trec_eval's) qid order. Raises ParameterError as check_comparable does."""
    check_comparable(run, baseline)
    j = run.column(measure)
    if np.array_equal(run.qids, baseline.qids):  # evaluated against the same qrels: rows line up
        both = run.averaged[:, j] & baseline.averaged[:, j]
        return run.qids[both], run.values[both, j], baseline.values[both, j]
    x_table, y_table = run.table(measure), baseline.table(measure)
    common = x_table.index.intersection(y_table.index, sort=False)
    common = common[sorted(range(len(common)), key=lambda i: common[i].encode("utf-8"))]
    return (np.asarray(common, dtype=object), x_table.loc[common].to_numpy(np.float64)[:, 0],
            y_table.loc[common].to_numpy(np.float64)[:, 0])


def paired_scores(run: Evaluation, baseline: Evaluation) -> pd.DataFrame:
    """Long frame (qid, measure, k, run, baseline, delta = run - baseline): per measure, the queries
    averaged in both, in qid order; measures in evaluation order."""
    frames = []
    for measure in run.measures:
        qids, x, y = paired_values(run, baseline, measure)
        frames.append(pd.DataFrame({"qid": qids.astype(str), "measure": measure.measure,
                                    "k": pd.array([measure.k] * len(qids), dtype=cutoff_dtype(run.measures)),
                                    "run": x, "baseline": y, "delta": x - y}))
    return pd.concat(frames, ignore_index=True)


def stream_label(measure: Measure) -> str:
    """What a measure's random streams are named by: nDCG by its cut-off alone ('10', 'all'), as every
    statistic was before other measures existed (so its numbers stay the same), the rest by label."""
    if measure.measure == "nDCG":
        return "all" if measure.k is None else str(measure.k)
    return measure.label


def compare_systems(
    systems: Mapping[str, Evaluation],
    baseline: Evaluation,
    baseline_name: str = "baseline",
    seed: int = 42,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    large_n: int = LARGE_N,
    verdicts_only: bool = False,
) -> pd.DataFrame:
    """Every system against the baseline: one row per (system, measure, k) with the COLUMNS statistics.

    The index is (system, measure, k), systems in the given order, measures in evaluation order.
    Each (system, measure, k) draws its randomization test and bootstrap from its own stream,
    derived from (seed, system, baseline_name, measure): a number never changes when systems or
    measures are added or removed. Holm's adjustment runs over the systems for one (measure, k)
    (its family), separately for each test; family_ci_* is the bootstrap interval of the delta at
    the Bonferroni-adjusted level 1 - (1 - confidence) / family_size, the interval that matches a
    family-wise test. Above large_n paired queries the randomization test and the bootstrap use
    their normal limits where accurate (see stats.resampling); the *_method columns say which.
    verdicts_only: only what a verdict needs (VERDICT_COLUMNS: the means, the delta and the randomization
    test, Holm-adjusted), each from the same stream, so with the same values as the full table's.
    """
    if not systems:
        raise ParameterError("give at least one system to compare with the baseline")
    family_size = len(systems)
    family_confidence = 1 - (1 - confidence) / family_size
    rows = []
    for name, evaluation in systems.items():
        try:
            pairs = {measure: paired_values(evaluation, baseline, measure) for measure in evaluation.measures}
        except ParameterError as exc:
            raise ParameterError(f"{name!r} against {baseline_name!r}: {exc}") from None
        if not any(len(qids) for qids, _, _ in pairs.values()):
            raise ParameterError(f"{name!r} against {baseline_name!r}: no query is averaged in both the run and "
                                 "the baseline")
        for measure, (_, x, y) in pairs.items():
            label = stream_label(measure)
            flips = stream(seed, "randomization", name, baseline_name, label)
            found = verdict_statistics(x, y, flips, n_resamples, large_n) if verdicts_only else compare_arrays(
                x, y, flip_rng=flips, boot_rng=stream(seed, "bootstrap", name, baseline_name, label),
                n_resamples=n_resamples, confidence=confidence, large_n=large_n,
                family_confidence=family_confidence)
            rows.append({"system": name, "measure": measure.measure, "k": measure.k, **found,
                         "family_size": family_size, "family_confidence": family_confidence})
    table = pd.DataFrame(rows)
    table["k"] = pd.array(table["k"], dtype=cutoff_dtype(m for e in systems.values() for m in e.measures))
    for test in ("randomization",) if verdicts_only else TESTS:
        table[f"holm_{test}_pvalue"] = table.groupby(["measure", "k"], sort=False, dropna=False)[
            f"{test}_pvalue"].transform(lambda p: holm(p.to_numpy()))
    table = table.set_index(["system", "measure", "k"])
    return table[list(VERDICT_COLUMNS if verdicts_only else COLUMNS)]


def verdict_statistics(x: np.ndarray, y: np.ndarray, flip_rng: np.random.Generator, n_resamples: int = N_RESAMPLES,
                       large_n: int = LARGE_N) -> dict[str, float | str]:
    """compare_arrays' values of VERDICT_COLUMNS (no Holm), drawing the randomization test from flip_rng as it does."""
    if len(x) == 0:
        return {"n": 0, "run_mean": np.nan, "baseline_mean": np.nan, "delta": np.nan, "randomization_pvalue": np.nan,
                "randomization_method": MONTE_CARLO}
    d = x - y
    p, method = randomization_test(d, flip_rng, n_resamples, large_n)
    return {"n": len(d), "run_mean": float(x.mean()), "baseline_mean": float(y.mean()), "delta": float(d.mean()),
            "randomization_pvalue": p, "randomization_method": method}


def compare(
    run: Evaluation,
    baseline: Evaluation,
    seed: int = 42,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    run_name: str = "run",
    baseline_name: str = "baseline",
) -> pd.DataFrame:
    """One system against the baseline: one row per measure (index (measure, k), evaluation order)
    with the COLUMNS statistics (compare_systems with one system: Holm over a family of one)."""
    return compare_systems({run_name: run}, baseline, baseline_name, seed, n_resamples, confidence).loc[run_name]


def compare_arrays(
    x: np.ndarray, y: np.ndarray, flip_rng: np.random.Generator, boot_rng: np.random.Generator,
    n_resamples: int = N_RESAMPLES, confidence: float = CONFIDENCE, large_n: int = LARGE_N,
    family_confidence: float | None = None,
) -> dict[str, float | str]:
    """Every statistic but the Holm ones, for paired per-query scores x (run) and y (baseline); the
    interval at family_confidence too (family_ci_*, from the same resamples) if given.

    If all deltas are 0, test statistics are NaN and p-values 1.0; with one query, NaN; with none, NaN
    throughout (n 0).
    """
    verdict = verdict_statistics(x, y, flip_rng, n_resamples, large_n)
    if len(x) == 0:
        return {**{name: np.nan for name in COLUMNS if name not in ("family_size", "family_confidence")},
                **verdict, "wins": 0, "ties": 0, "losses": 0, "ci_method": MONTE_CARLO}
    d = x - y
    n = len(d)
    differs = bool(np.any(d != 0))
    testable = differs and n > 1
    no_test = np.nan if differs else 1.0
    t = stats.ttest_rel(x, y) if testable else None
    w = stats.wilcoxon(x, y) if testable else None  # zero_method='wilcox': zero deltas dropped
    baseline_mean = float(y.mean())
    levels = (confidence,) if family_confidence in (None, confidence) else (confidence, family_confidence)
    intervals, ci_method = (mean_intervals(d, boot_rng, n_resamples, levels, large_n) if n > 1
                            else ([(np.nan, np.nan)] * len(levels), MONTE_CARLO))
    sd = float(d.std(ddof=1)) if n > 1 else np.nan
    return {
        **verdict,
        "run_median": float(np.median(x)), "baseline_median": float(np.median(y)),
        "relative_delta": float(d.mean()) / baseline_mean if baseline_mean != 0 else np.nan,
        "wins": int((d > 0).sum()), "ties": int((d == 0).sum()), "losses": int((d < 0).sum()),
        "t_statistic": float(t.statistic) if t is not None else np.nan,
        "t_pvalue": float(t.pvalue) if t is not None else no_test,
        "wilcoxon_statistic": float(w.statistic) if w is not None else np.nan,
        "wilcoxon_pvalue": float(w.pvalue) if w is not None else no_test,
        "ci_low": intervals[0][0], "ci_high": intervals[0][1],
        "family_ci_low": intervals[-1][0], "family_ci_high": intervals[-1][1],
        "effect_size": float(d.mean()) / sd if sd > 0 else np.nan,  # Cohen's d_z
        "ci_method": ci_method,
    }


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values; NaN entries stay NaN and do not count.

    statsmodels' multipletests(method="holm") computes the same (the tests check it), but runs a full
    gc.collect() on every call: 40 ms each, most of a report's statistics. So the step-down is here:
    the i-th smallest of m p-values times (m - i), made monotone, at most 1.
    """
    adjusted = np.full(len(pvalues), np.nan)
    finite = np.flatnonzero(np.isfinite(pvalues))
    if len(finite):
        order = finite[np.argsort(pvalues[finite], kind="stable")]
        steps = pvalues[order] * np.arange(len(order), 0, -1)
        adjusted[order] = np.minimum(np.maximum.accumulate(steps), 1.0)
    return adjusted


def significance_signs(comparisons: pd.DataFrame, alpha: float, n_measures: int) -> np.ndarray:
    """Systems x measures of a compare_systems table (its rows in order): +1 significantly above the baseline,
    -1 below, 0 neither (the sign of the delta where the Holm-adjusted randomization p-value is below alpha)."""
    signs = np.sign(comparisons["delta"].to_numpy()) * (comparisons["holm_randomization_pvalue"].to_numpy() < alpha)
    return signs.astype(int).reshape(-1, n_measures)
