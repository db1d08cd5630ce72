"""The run-vs-baseline comparison: DL19 known values, agreement with scipy, Holm, edge cases, the query
text shown capped."""

from __future__ import annotations

import importlib.resources
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ndcg_report.stats.paired import compare, compare_arrays, holm, paired_scores
from ndcg_report.stats.resampling import randomization_pvalue
from ndcg_report.errors import ParameterError
from ndcg_report.core.evaluation_pass import evaluate
from ndcg_report.inputs.reading import read_qrels, read_run

SMALL = Path(__file__).resolve().parents[1] / "data" / "small"

DL19 = importlib.resources.files("ndcg_report") / "data" / "dl19-passage"
EXPECTED_COLUMNS = [
    "n", "run_mean", "baseline_mean", "run_median", "baseline_median", "delta", "relative_delta",
    "wins", "ties", "losses", "t_statistic", "t_pvalue", "wilcoxon_statistic", "wilcoxon_pvalue",
    "randomization_pvalue", "ci_low", "ci_high", "effect_size",
    "holm_t_pvalue", "holm_wilcoxon_pvalue", "holm_randomization_pvalue",
    "family_size", "family_confidence", "family_ci_low", "family_ci_high", "randomization_method", "ci_method",
]


@pytest.fixture(scope="module")
def dl19():
    """(monoT5 evaluation, BM25 evaluation) on TREC DL 2019 passage, default policies."""
    qrels = read_qrels(DL19 / "qrels.dl19-passage.txt").table
    run = evaluate(read_run(DL19 / "monot5.dl19.run.gz").table, qrels)
    baseline = evaluate(read_run(DL19 / "run.msmarco-v1-passage.bm25-default.dl19.txt.gz").table, qrels)
    return run, baseline


def by_k(table: pd.DataFrame) -> pd.DataFrame:
    """A comparison of nDCG measures alone, indexed by the cut-off."""
    assert set(table.index.get_level_values("measure")) == {"nDCG"}
    return table.droplevel("measure")


@pytest.fixture(scope="module")
def table(dl19):
    return by_k(compare(*dl19))


def per_query(evaluation, label: int) -> pd.Series:
    """NDCG@label of the averaged queries, by qid, straight from the evaluation."""
    return evaluation.table(label).iloc[:, 0].sort_index()


def arrays(dl19, label: str) -> tuple[np.ndarray, np.ndarray]:
    run, baseline = (per_query(e, label) for e in dl19)
    assert list(run.index) == list(baseline.index)
    return run.to_numpy(), baseline.to_numpy()


def test_shape_index_and_columns(dl19, table):
    assert list(table.index) == [1, 3, 5, 10, 20, 100, 1000]
    assert table.index.name == "k"
    assert list(table.columns) == EXPECTED_COLUMNS


def test_dl19_means_and_delta_at_10(table):
    row = table.loc[10]
    assert round(row["run_mean"], 4) == 0.7215
    assert round(row["baseline_mean"], 4) == 0.5058
    assert abs(row["delta"] - (0.7215 - 0.5058)) < 1e-4
    assert row["relative_delta"] == pytest.approx(row["delta"] / row["baseline_mean"], rel=1e-12)


def test_means_and_medians_match_each_evaluations_summary(dl19, table):
    run, baseline = dl19
    np.testing.assert_allclose(table["run_mean"], run.summary["mean"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(table["baseline_mean"], baseline.summary["mean"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(table["run_median"], run.summary["median"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(table["baseline_median"], baseline.summary["median"], rtol=0, atol=1e-12)


def test_wins_ties_losses_add_up_and_match_per_query(dl19, table):
    assert (table["n"] == 43).all()
    assert ((table["wins"] + table["ties"] + table["losses"]) == table["n"]).all()
    for label in table.index:
        x, y = arrays(dl19, label)
        assert table.loc[label, "wins"] == (x > y).sum()
        assert table.loc[label, "ties"] == (x == y).sum()
        assert table.loc[label, "losses"] == (x < y).sum()
    assert table.loc[1, "ties"] > 0  # @1 has ties on DL19, so the split is exercised


def test_t_and_wilcoxon_equal_scipy_on_the_per_query_arrays(dl19, table):
    for label in table.index:
        x, y = arrays(dl19, label)
        t = stats.ttest_rel(x, y)
        w = stats.wilcoxon(x, y)
        row = table.loc[label]
        assert row["t_statistic"] == pytest.approx(t.statistic, abs=1e-12)
        assert row["t_pvalue"] == pytest.approx(t.pvalue, abs=1e-12)
        assert row["wilcoxon_statistic"] == pytest.approx(w.statistic, abs=1e-12)
        assert row["wilcoxon_pvalue"] == pytest.approx(w.pvalue, abs=1e-12)


def test_effect_size_is_mean_over_sample_std_of_deltas(dl19, table):
    for label in table.index:
        x, y = arrays(dl19, label)
        d = x - y
        assert table.loc[label, "effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)


def test_bootstrap_ci_contains_delta_and_depends_on_seed_and_confidence(dl19, table):
    assert (table["ci_low"] < table["delta"]).all()
    assert (table["delta"] < table["ci_high"]).all()
    other_seed = by_k(compare(*dl19, seed=7))
    assert other_seed.loc[10, "ci_low"] != table.loc[10, "ci_low"]
    wider = by_k(compare(*dl19, confidence=0.99))
    assert (wider["ci_low"] < table["ci_low"]).all()
    assert (wider["ci_high"] > table["ci_high"]).all()


def test_same_seed_gives_identical_numbers(dl19, table):
    pd.testing.assert_frame_equal(by_k(compare(*dl19)), table, check_exact=True)


def test_randomization_pvalue_at_10_is_small_but_positive(table):
    assert 0 < table.loc[10, "randomization_pvalue"] < 0.01


def test_randomization_matches_scipy_exact_permutation_test():
    d = np.array([0.31, -0.12, 0.05, 0.2, -0.4, 0.17, 0.09, 0.0, 0.26, -0.03, 0.11, 0.14])
    exact = stats.permutation_test(
        (d,), np.mean, permutation_type="samples", vectorized=True, n_resamples=10_000
    )  # 2**12 sign patterns < 10,000: scipy enumerates them all
    ours = [randomization_pvalue(d, np.random.default_rng(seed), 10_000) for seed in range(10)]
    assert 0.1 < exact.pvalue < 0.9
    # one estimate's sd is about 0.008 here (two-sided = twice the smaller tail); the mean of 10 about 0.0025
    assert np.mean(ours) == pytest.approx(exact.pvalue, abs=0.01)
    assert all(abs(p - exact.pvalue) < 0.035 for p in ours)


def test_holm_against_hand_computed_values():
    adjusted = holm(np.array([0.01, 0.04, 0.03, np.nan]))
    np.testing.assert_allclose(adjusted[:3], [0.03, 0.06, 0.06], rtol=1e-12)
    assert np.isnan(adjusted[3])


def test_one_system_is_a_family_of_one_per_measure(table):
    # the family is the systems compared on one (measure, k): with one system, Holm changes nothing,
    # however many cut-offs were asked for, and the family interval is the interval
    for test in ("t", "wilcoxon", "randomization"):
        np.testing.assert_array_equal(table[f"holm_{test}_pvalue"], table[f"{test}_pvalue"])
    assert (table["family_size"] == 1).all()
    np.testing.assert_array_equal(table["family_ci_low"], table["ci_low"])
    np.testing.assert_array_equal(table["family_ci_high"], table["ci_high"])


def test_run_against_itself_gives_no_difference_without_warnings(dl19):
    run, _ = dl19
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same = by_k(compare(run, run, n_resamples=500))
    assert (same["delta"] == 0).all()
    assert (same["ties"] == same["n"]).all()
    assert (same["wins"] == 0).all() and (same["losses"] == 0).all()
    for test in ("t", "wilcoxon", "randomization"):
        assert (same[f"{test}_pvalue"] == 1.0).all()
        assert (same[f"holm_{test}_pvalue"] == 1.0).all()
    assert same["t_statistic"].isna().all() and same["wilcoxon_statistic"].isna().all()
    assert same["effect_size"].isna().all()
    assert (same["ci_low"] == 0).all() and (same["ci_high"] == 0).all()


def test_swapping_run_and_baseline_on_dl19(dl19, table):
    swapped = by_k(compare(dl19[1], dl19[0]))
    np.testing.assert_array_equal(swapped["delta"], -table["delta"])
    np.testing.assert_array_equal(swapped["wins"], table["losses"])
    np.testing.assert_allclose(swapped["wilcoxon_pvalue"], table["wilcoxon_pvalue"], rtol=1e-12)


unit = st.floats(0, 1, allow_subnormal=False)


@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")  # scipy, on constant deltas
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(unit, unit), min_size=14, max_size=40))  # n <= 13 with ties: slow exact Wilcoxon
def test_swapping_negates_delta_and_swaps_wins_and_losses(pairs):
    x, y = (np.array(column) for column in zip(*pairs))
    forward = compare_arrays(x, y, np.random.default_rng(3), np.random.default_rng(4), 200, 0.95)
    backward = compare_arrays(y, x, np.random.default_rng(3), np.random.default_rng(4), 200, 0.95)
    assert backward["delta"] == -forward["delta"]
    assert (backward["wins"], backward["ties"], backward["losses"]) == (
        forward["losses"], forward["ties"], forward["wins"],
    )
    assert backward["t_pvalue"] == pytest.approx(forward["t_pvalue"], rel=1e-9, nan_ok=True)
    assert backward["wilcoxon_pvalue"] == pytest.approx(forward["wilcoxon_pvalue"], rel=1e-9, nan_ok=True)
    assert backward["ci_low"] == pytest.approx(-forward["ci_high"], abs=1e-12)
    assert backward["ci_high"] == pytest.approx(-forward["ci_low"], abs=1e-12)


def small(run_rows, qrels_rows, **options):
    run = pd.DataFrame(run_rows, columns=["qid", "docid", "score"])
    qrels = pd.DataFrame(qrels_rows, columns=["qid", "docid", "rel"])
    return evaluate(run, qrels, **options)


QRELS = [("q1", "a", 1), ("q2", "b", 2), ("q3", "c", 1)]


def test_paired_scores_are_long_and_count_missing_queries_as_zero():
    run = small([("q1", "a", 1.0), ("q2", "x", 1.0)], QRELS, cutoffs=(1, 5))
    baseline = small([("q1", "x", 2.0), ("q1", "a", 1.0), ("q3", "c", 1.0)], QRELS, cutoffs=(1, 5))
    pairs = paired_scores(run, baseline)
    assert list(pairs.columns) == ["qid", "measure", "k", "run", "baseline", "delta"]
    assert list(pairs["k"]) == [1] * 3 + [5] * 3
    at_1 = pairs[pairs["k"] == 1].set_index("qid")
    assert at_1.loc["q1", "run"] == 1.0 and at_1.loc["q1", "baseline"] == 0.0
    assert at_1.loc["q3", "run"] == 0.0 and at_1.loc["q3", "baseline"] == 1.0  # missing="zero"
    at_5 = pairs[pairs["k"] == 5].set_index("qid")
    assert at_5.loc["q1", "delta"] == pytest.approx(1 - 1 / np.log2(3), abs=1e-12)


def test_missing_skip_pairs_only_queries_averaged_in_both():
    run = small([("q1", "a", 1.0), ("q2", "x", 1.0)], QRELS, cutoffs=(5,), missing="skip")
    baseline = small([("q1", "a", 1.0), ("q3", "c", 1.0)], QRELS, cutoffs=(5,), missing="skip")
    assert sorted(paired_scores(run, baseline)["qid"]) == ["q1"]
    assert by_k(compare(run, baseline, n_resamples=100)).loc[5, "n"] == 1


def test_no_paired_query_raises():
    run = small([("q1", "a", 1.0)], QRELS, cutoffs=(5,), missing="skip")
    baseline = small([("q3", "c", 1.0)], QRELS, cutoffs=(5,), missing="skip")
    with pytest.raises(ParameterError, match="no query"):
        compare(run, baseline)


def test_mismatched_cutoffs_or_policies_raise():
    rows = [("q1", "a", 1.0), ("q2", "b", 1.0)]
    with pytest.raises(ParameterError, match="measures differ"):
        compare(small(rows, QRELS, cutoffs=(1, 5)), small(rows, QRELS, cutoffs=(1, 10)))
    with pytest.raises(ParameterError, match="gain"):
        compare(small(rows, QRELS, cutoffs=(5,)), small(rows, QRELS, cutoffs=(5,), gain="exponential"))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.floats(0, 1), st.just(float("nan")), st.sampled_from([0.0, 1.0, 0.05, 0.01])),
                min_size=1, max_size=30))
def test_holm_equals_statsmodels(pvalues):
    from statsmodels.stats.multitest import multipletests

    p = np.array(pvalues)
    finite = np.isfinite(p)
    expected = np.full(len(p), np.nan)
    if finite.any():
        expected[finite] = multipletests(p[finite], method="holm")[1]
    np.testing.assert_array_equal(holm(p), expected)


def test_a_report_shows_at_most_max_query_text_characters_of_a_query(tmp_path):
    from ndcg_report.analysis.compare import MAX_QUERY_TEXT, compare_runs

    topics = pd.Series({qid: "word " * 100_000
                        for qid in pd.read_csv(SMALL / "topics.txt", sep="\t", header=None, dtype=str)[0]})
    experiment = compare_runs({"monot5": SMALL / "monot5.txt"}, SMALL / "qrels.txt", SMALL / "bm25.txt", topics=topics)
    shown = experiment.topics
    assert shown.str.len().max() == MAX_QUERY_TEXT and shown.iloc[0].endswith("\u2026")
    assert shown.iloc[0][:-1] == topics.iloc[0][:MAX_QUERY_TEXT - 1]
