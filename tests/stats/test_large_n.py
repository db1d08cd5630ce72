"""Statistics over many queries: the large-sample limits against exact distributions, when each is
used (the threshold lowered through a parameter), and a many-query experiment's numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import signal, stats

from ndcg_report import compare_runs
from ndcg_report.stats.limits import (
    MIN_EFFECTIVE_COUNT, bootstrap_skew_shift, normal_mean_interval, range_pvalues, sign_flip_effective_count,
    sign_flip_pvalue,
)
from ndcg_report.stats.resampling import (
    bootstrap_mean_interval, mean_interval, randomization_pvalue, randomization_test, sparse_bootstrap_interval,
)
from ndcg_report.stats.streams import stream
from ndcg_report.stats.tukey_hsd import randomized_tukey_hsd, tukey_hsd


def exact_sign_flip_pvalue(d: np.ndarray) -> float:
    """P(|sum of s_i d_i| >= |sum d|) over all sign patterns, for whole-number d: the distribution of
    the flipped sum is the convolution of each value's 2 * Binomial(count, 1/2) - count steps."""
    pmf, offset = np.array([1.0]), 0
    for value, count in zip(*np.unique(np.abs(d[d != 0]).astype(int), return_counts=True)):
        steps = np.zeros(2 * value * count + 1)
        steps[:: 2 * value] = stats.binom.pmf(np.arange(count + 1), count, 0.5)
        pmf, offset = signal.fftconvolve(pmf, steps), offset - value * count
    sums = np.arange(len(pmf)) + offset
    return float(pmf[np.abs(sums) >= abs(int(d.sum()))].sum())


def test_sign_flip_limit_is_within_half_a_monte_carlo_error_of_the_exact_test():
    rng = np.random.default_rng(5)
    for values in ([-1, 1], [-3, -2, -1, 0, 1, 2, 3]):
        d = rng.choice(values, size=20_000).astype(float)
        d[:300] = np.abs(d[:300])  # a small shift: p near 0.05
        assert sign_flip_effective_count(d) >= MIN_EFFECTIVE_COUNT
        exact = exact_sign_flip_pvalue(d)
        assert 0.001 < exact < 0.3
        assert sign_flip_pvalue(d) == pytest.approx(exact, abs=1.2e-3)  # a Monte Carlo p's sd here: >= 2e-3
    assert sign_flip_pvalue(np.zeros(10)) == 1.0


def test_bootstrap_limit_and_sparse_bootstrap_equal_the_exact_bootstrap():
    """On 0/1 values the bootstrap mean is Binomial(n, mean) / n exactly: its quantiles are the exact interval."""
    n = 20_000
    common = np.zeros(n)
    common[: n // 5] = 1.0
    exact = stats.binom.ppf([0.025, 0.975], n, 0.2) / n
    se = np.sqrt(0.2 * 0.8 / n)
    assert bootstrap_skew_shift(common, 0.95) <= 0.01
    np.testing.assert_allclose(normal_mean_interval(common, 0.95), exact, atol=0.02 * se + 1 / n)
    rare = np.zeros(n)
    rare[:30] = 1.0  # 30 ones: far from normal, so the sparse bootstrap resamples just those
    assert bootstrap_skew_shift(rare, 0.95) > 0.01
    exact = stats.binom.ppf([0.025, 0.975], n, 30 / n) / n
    np.testing.assert_allclose(sparse_bootstrap_interval(rare, stream(1, "b"), 10_000, 0.95), exact, atol=2 / n)
    shifted = rare + 0.25  # the most common value need not be 0
    np.testing.assert_allclose(sparse_bootstrap_interval(shifted, stream(1, "b"), 10_000, 0.95), exact + 0.25, atol=2 / n)


def test_the_limits_are_used_above_large_n_only_where_accurate():
    rng = np.random.default_rng(11)
    d = rng.choice([-0.5, -0.2, 0.0, 0.3, 0.6], size=30_000)
    # up to large_n: Monte Carlo over every value, exactly as before
    assert randomization_test(d, stream(3, "r"), 500, large_n=30_000) == (randomization_pvalue(d, stream(3, "r"), 500), "monte carlo")
    assert mean_interval(d, stream(3, "b"), 500, 0.95, large_n=30_000) == (
        *bootstrap_mean_interval(d, stream(3, "b"), 500, 0.95), "monte carlo")
    # above: the limits, for differences spread over many queries
    assert randomization_test(d, stream(3, "r"), 500, large_n=1_000) == (sign_flip_pvalue(d), "normal limit")
    assert mean_interval(d, stream(3, "b"), 500, 0.95, large_n=1_000) == (*normal_mean_interval(d, 0.95), "normal limit")
    # few non-zero differences: Monte Carlo over those alone (zeros' signs change nothing)
    sparse = np.zeros(30_000)
    sparse[:40] = rng.choice([-0.3, 0.5], size=40)
    p, method = randomization_test(sparse, stream(3, "r"), 500, large_n=1_000)
    assert (p, method) == (randomization_pvalue(sparse[:40], stream(3, "r"), 500), "monte carlo")
    low, high, method = mean_interval(sparse, stream(3, "b"), 500, 0.95, large_n=1_000)
    assert (low, high, method) == (*sparse_bootstrap_interval(sparse, stream(3, "b"), 500, 0.95), "monte carlo")
    assert randomization_test(np.zeros(30_000), stream(3, "r"), 500, large_n=1_000) == (1.0, "monte carlo")


def test_tukey_limit_is_the_studentized_range_of_the_permutation_variance():
    rng = np.random.default_rng(2)
    two = rng.random((3_000, 2))
    # two systems: permuting a query's pair flips the sign of its difference, so the limit is the sign flips'
    assert range_pvalues(two)[0, 1] == pytest.approx(sign_flip_pvalue(two[:, 0] - two[:, 1]), rel=1e-9)
    four = rng.random((3_000, 4)) * (rng.random((3_000, 1)) < 0.6)
    four[:, 0] += 0.012
    four[:, 1] += 0.006
    monte_carlo = randomized_tukey_hsd(four, stream(1, "t"), 4_000)
    limit = range_pvalues(four)
    assert limit.min() < 0.05 and np.all(np.abs(limit - monte_carlo) < 3 * np.sqrt(limit * (1 - limit) / 4_000) + 1e-3)
    np.testing.assert_array_equal(limit, limit.T)
    assert np.all(np.diag(limit) == 1)


def test_tukey_uses_the_limit_above_large_n_only_where_accurate():
    rng = np.random.default_rng(4)
    spread = rng.random((30_000, 3))
    assert tukey_hsd(spread, stream(1, "t"), 200, large_n=30_000)[1] == "monte carlo"
    np.testing.assert_array_equal(tukey_hsd(spread, stream(1, "t"), 200, large_n=30_000)[0],
                                  randomized_tukey_hsd(spread, stream(1, "t"), 200))
    pvalues, method = tukey_hsd(spread, stream(1, "t"), 200, large_n=1_000)
    assert method == "studentized range limit"
    np.testing.assert_array_equal(pvalues, range_pvalues(spread))
    few = np.zeros((12_000, 3))
    few[:50] = rng.random((50, 3))  # 50 queries where the systems differ: permute only those
    pvalues, method = tukey_hsd(few, stream(1, "t"), 200, large_n=1_000)
    assert method == "monte carlo"
    np.testing.assert_array_equal(pvalues, randomized_tukey_hsd(few[:50], stream(1, "t"), 200))


def click_like(n_queries: int, qualities: dict[str, float], seed: int = 0) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Runs of 10 documents per query and qrels of one or two judged documents (mostly label 1)."""
    rng = np.random.default_rng(seed)
    qids = np.repeat([f"q{i}" for i in range(n_queries)], 2)
    qrels = pd.DataFrame({"qid": qids, "docid": np.tile(["r0", "r1"], n_queries),
                          "rel": rng.choice([0.0, 1.0, 2.0], size=2 * n_queries, p=[0.4, 0.5, 0.1])})
    shared = rng.standard_normal(2 * n_queries)
    runs = {}
    for name, quality in qualities.items():
        scores = np.concatenate([np.where(qrels["rel"] > 0, quality + shared, 0.0) + rng.standard_normal(2 * n_queries),
                                 rng.standard_normal(8 * n_queries)])
        runs[name] = pd.DataFrame({"qid": np.concatenate([qids, np.repeat(qids[::2], 8)]),
                                   "docid": np.concatenate([qrels["docid"], np.tile([f"n{j}" for j in range(8)], n_queries)]),
                                   "score": scores})
    return runs, qrels


def test_a_many_query_experiment_uses_the_limits_and_keeps_each_number_its_own():
    runs, qrels = click_like(40_000, {"A": 1.0, "B": 0.6, "C": 0.3, "base": 0.3})
    options = dict(baseline_name="base", cutoffs="1,10", n_resamples=500, large_n=2_000)
    experiment = compare_runs({"A": runs["A"], "B": runs["B"]}, qrels, runs["base"], **options)
    c = experiment.comparisons
    methods = []
    for name, measure, k in c.index:
        d = experiment.deltas_at(k)[name].to_numpy()
        nonzero = d[d != 0]
        if sign_flip_effective_count(nonzero) >= MIN_EFFECTIVE_COUNT:
            expected = (sign_flip_pvalue(nonzero), "normal limit")
        else:  # Monte Carlo over the non-zero differences, from the comparison's own stream
            expected = (randomization_pvalue(nonzero, stream(42, "randomization", name, "base", str(k)), 500),
                        "monte carlo")
        assert tuple(c.loc[(name, measure, k), ["randomization_pvalue", "randomization_method"]]) == expected
        assert tuple(c.loc[(name, measure, k), ["ci_low", "ci_high", "ci_method"]]) == (
            *normal_mean_interval(d, 0.95), "normal limit")
        methods.append(expected[1])
    assert set(methods) == {"normal limit", "monte carlo"}  # both paths taken
    x, y = experiment.ndcg_at("10")[["A", "base"]].to_numpy().T
    assert c.at[("A", "nDCG", 10), "t_pvalue"] == pytest.approx(stats.ttest_rel(x, y).pvalue, rel=1e-12)
    assert set(experiment.mean_intervals["method"]) == {"normal limit"}
    assert experiment.pairwise.method == "studentized range limit"
    np.testing.assert_array_equal(experiment.pairwise.pvalues.to_numpy(),
                                  range_pvalues(experiment.ndcg_at("10")[list(experiment.pairwise.names)].to_numpy()))
    # adding a system changes none of A's or B's own numbers
    more = compare_runs({"C": runs["C"], "B": runs["B"], "A": runs["A"]}, qrels, runs["base"], **options)
    own = [column for column in c.columns if not column.startswith(("holm_", "family_"))]  # these are the family's
    assert more.comparisons.loc[c.index, own].equals(c[own])
    # up to large_n nothing changes: Monte Carlo over every query, as for every report of up to 5,000 queries
    small = compare_runs({"A": runs["A"]}, qrels, runs["base"], **{**options, "cutoffs": "1", "large_n": 40_000})
    assert small.comparisons.at[("A", "nDCG", 1), "randomization_pvalue"] == randomization_pvalue(
        small.deltas_at("1")["A"].to_numpy(), stream(42, "randomization", "A", "base", "1"), 500)


def test_per_query_csv_is_what_pandas_writes_for_the_per_query_table(dl19):
    from ndcg_report.analysis import outputs

    rrf = dl19["monot5"].parent / "rrf.bm25-monot5.dl19.run.gz"
    experiment = compare_runs({'mono,T5 "base"': dl19["monot5"], "RRF": rrf}, dl19["qrels"], dl19["bm25"],
                              baseline_name="BM25", cutoffs="1,10,all", missing="skip", n_resamples=10)
    huge = compare_runs({"A": pd.DataFrame({"qid": ["1", "1", "2"], "docid": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]})},
                        pd.DataFrame({"qid": ["1", "1", "2"], "docid": ["a", "b", "b"], "rel": [1100.0, 1.0, 2.0]}),
                        pd.DataFrame({"qid": ["1", "2"], "docid": ["b", "b"], "score": [1.0, 1.0]}),
                        baseline_name="B", gain="exponential", cutoffs="1,2", n_resamples=10)
    assert np.isinf(huge.per_query["dcg"]).any()  # 2**1100: inf, written 'inf' as pandas does
    for each in (experiment, huge):
        report = type("Report", (), {"experiment": each})()  # all per_query_csv_chunks reads
        written = b"".join(bytes(chunk) for chunk in outputs.per_query_csv_chunks(report))
        assert written == each.per_query.to_csv(index=False, lineterminator="\n").encode("utf-8")


def test_the_report_says_which_statistics_used_their_limits():
    from ndcg_report.analysis import results as content

    runs, qrels = click_like(12_000, {"A": 1.0, "B": 0.6, "base": 0.3})
    experiment = compare_runs({"A": runs["A"], "B": runs["B"]}, qrels, runs["base"], baseline_name="base",
                              cutoffs="1,10", n_resamples=200, large_n=2_000)
    c = experiment.comparisons
    note = content.statistics_note(experiment)
    limits = int((c["randomization_method"] == "normal limit").sum())
    assert note.startswith("Over more than 2,000 queries") and f"here {limits} of 4 randomization p-values" in note
    assert "4 of 4 bootstrap CIs of the delta and 6 of 6 bootstrap bands" in note
    assert ("Tukey HSD" in note) == (experiment.pairwise.method == "studentized range limit")
    assert note in content.leaderboard_note(type("Report", (), {"experiment": experiment})())
    assert content.statistics_note(compare_runs({"A": runs["A"]}, qrels, runs["base"], baseline_name="base",
                                                cutoffs="1", n_resamples=200, large_n=20_000)) == ""
