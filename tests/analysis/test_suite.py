"""The suite across collections: each cell is its collection's own report number and verdict, the mean
and mean rank over collections by hand, a missing system is missing (never 0), the tests over
collections against scipy, scikit-posthocs and Demšar's (JMLR 2006) worked examples, the power rule,
bad input, the display and the figures."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scikit_posthocs
from scipy import stats
from statsmodels.stats.multitest import multipletests

from ndcg_report import ParameterError, compare_runs, compare_suite
from ndcg_report.analysis.results import verdicts
from ndcg_report.stats.across_collections import (
    NO_POWER, across_collections, critical_difference, nemenyi_pvalues, rank_groups, wilcoxon_min_pvalue,
)

RESAMPLES = 300
MEASURES = "nDCG@10 AP"


def generated(seed: int, qualities: dict[str, float], n_queries: int = 30) -> dict:
    """compare_runs arguments of a generated collection: per query 3 judged documents (labels 0-2)
    among 12 retrieved; a system of higher quality scores the relevant ones higher. The baseline is
    the system named BM25."""
    rng = np.random.default_rng(seed)
    qids = np.repeat([f"g{seed}-{i}" for i in range(n_queries)], 12)
    docids = np.tile([f"d{j}" for j in range(12)], n_queries)
    labels = np.where(np.tile(np.arange(12), n_queries) < 3, rng.choice([0, 1, 2], size=12 * n_queries), 0)
    judged = np.tile(np.arange(12), n_queries) < 3
    qrels = pd.DataFrame({"qid": qids[judged], "docid": docids[judged], "rel": labels[judged].astype(float)})
    shared = rng.standard_normal(12 * n_queries)
    runs = {name: pd.DataFrame({"qid": qids, "docid": docids,
                                "score": quality * labels + shared + rng.standard_normal(12 * n_queries)})
            for name, quality in qualities.items()}
    baseline = runs.pop("BM25")
    return {"runs": runs, "qrels": qrels, "baseline": baseline, "baseline_name": "BM25"}


@pytest.fixture(scope="module")
def dl19_experiment(dl19):
    folder = dl19["qrels"].parent
    runs = {"monoT5": dl19["monot5"], "RRF": folder / "rrf.bm25-monot5.dl19.run.gz",
            "Interpolation": folder / "interp.bm25-monot5.dl19.run.gz"}
    return compare_runs(runs, dl19["qrels"], dl19["bm25"], baseline_name="BM25", measures=MEASURES, rel_level=2,
                        n_resamples=RESAMPLES)


@pytest.fixture(scope="module")
def suite(dl19_experiment):
    """DL 2019 (an Experiment), and two generated collections (compare_runs arguments), the second
    without Interpolation."""
    return compare_suite({
        "dl19": dl19_experiment,
        "gen-a": generated(1, {"monoT5": 1.5, "RRF": 1.0, "Interpolation": 0.2, "BM25": 0.5}),
        "gen-b": generated(2, {"monoT5": 0.4, "RRF": 1.2, "BM25": 0.6}),
    }, measures=MEASURES, n_resamples=RESAMPLES)


def test_each_cell_is_its_collections_own_report_number_and_verdict(suite):
    assert suite.collections == ("dl19", "gen-a", "gen-b")
    assert suite.systems == ("monoT5", "RRF", "Interpolation", "BM25")
    cells = suite.cells.set_index(["collection", "system", "measure"])
    checked = 0
    for collection, experiment in suite.experiments.items():
        for label in experiment.labels:
            for system in experiment.systems:
                row = cells.loc[(collection, system, label)]
                assert row["mean"] == experiment.leaderboard.at[system, label]
                assert suite.table.at[(label, system), collection] == experiment.leaderboard.at[system, label]
                if system == "BM25":
                    assert row["role"] == "baseline" and pd.isna(row["delta"]) and pd.isna(row["significant"])
                    continue
                own = experiment.comparison_row(system, label)
                assert (row["n"], row["delta"], row["p_holm"]) == (own["n"], own["delta"], own["holm_randomization_pvalue"])
                assert (row["ci_low"], row["ci_high"]) == (own["family_ci_low"], own["family_ci_high"])
                assert row["significant"] == (experiment.significance.at[system, label] != 0)
                assert suite.significance.at[(label, system), collection] == experiment.significance.at[system, label]
                checked += 1
        # the mark is the collection's report verdict line
        for line, system in zip(verdicts(experiment), experiment.names):
            mark = suite.significance.at[("nDCG@10", system), collection]
            assert ("significantly better" in line) == (mark == 1) and ("significantly worse" in line) == (mark == -1)
    assert checked == (3 + 3 + 2) * 2
    marks = suite.significance.loc["nDCG@10"]
    assert int((marks == 1).sum().sum()) >= 3 and int((marks == -1).sum().sum()) >= 1  # both kinds of mark occur


def test_mean_over_collections_and_mean_rank_by_hand(suite):
    boards = {name: e.leaderboard["nDCG@10"] for name, e in suite.experiments.items()}
    table = suite.table.loc["nDCG@10"]
    # Interpolation is in dl19 and gen-a only: its mean is over those two, and says so
    assert table.at["Interpolation", "mean"] == pytest.approx((boards["dl19"]["Interpolation"] +
                                                               boards["gen-a"]["Interpolation"]) / 2, abs=1e-15)
    assert table.at["Interpolation", "collections"] == 2 and table.at["monoT5", "collections"] == 3
    assert table.at["RRF", "mean"] == pytest.approx(sum(board["RRF"] for board in boards.values()) / 3, abs=1e-15)
    # mean rank over the collections that have every system (dl19, gen-a): 1 = the highest mean
    ranks = {name: [] for name in suite.systems}
    for collection in ("dl19", "gen-a"):
        ordered = sorted(suite.systems, key=lambda name: -boards[collection][name])
        for position, name in enumerate(ordered, start=1):
            ranks[name].append(position)
    for name in suite.systems:
        assert table.at[name, "mean_rank"] == pytest.approx(np.mean(ranks[name]), abs=1e-15)
    assert (table["ranked_on"] == 2).all()
    # wins/ties/losses: the system's mean against the baseline's, over the collections it is in
    for name in suite.names:
        present = [c for c in suite.collections if name in boards[c].index]
        wins = sum(boards[c][name] > boards[c]["BM25"] for c in present)
        losses = sum(boards[c][name] < boards[c]["BM25"] for c in present)
        assert (table.at[name, "wins"], table.at[name, "ties"], table.at[name, "losses"]) == (wins, 0, losses)
    assert pd.isna(table.at["BM25", "wins"])


def test_a_missing_system_is_missing_never_zero(suite):
    assert math.isnan(suite.table.at[("nDCG@10", "Interpolation"), "gen-b"])
    assert pd.isna(suite.significance.at[("nDCG@10", "Interpolation"), "gen-b"])
    row = suite.cells.set_index(["collection", "system", "measure"]).loc[("gen-b", "Interpolation", "AP")]
    assert pd.isna(row["n"]) and row[["mean", "delta", "ci_low", "ci_high", "p_holm"]].isna().all()
    assert pd.isna(row["significant"])
    csv = suite.cells.to_csv(index=False).splitlines()
    assert "gen-b,Interpolation,run,AP,,,,,,,," in csv and csv[0] == (
        "collection,system,role,measure,n,mean,delta,ci_low,ci_high,ci_level,p_holm,significant")
    assert suite.tests.wilcoxon.at["Interpolation", "collections"] == 2
    html = suite._repr_html_()
    interpolation = html[html.index("<th class=\"text\">Interpolation</th>"):].split("</tr>")[0]
    assert interpolation.count("<td class=\"num\">–</td>") == 1 and "(2 of 3) *" in interpolation


def test_a_mean_over_fewer_collections_is_marked_with_a_note(suite):
    html = suite._repr_html_()
    rows = {name: html[html.index(f"<th class=\"text\">{name}</th>"):].split("</tr>")[0]
            for name in ("monoT5", "Interpolation")}
    mean = suite.table.at[("nDCG@10", "Interpolation"), "mean"]
    assert f"{mean:.4f} (2 of 3) *" in rows["Interpolation"]
    assert f"{suite.table.at[('nDCG@10', 'monoT5'), 'mean']:.4f} (3)</td>" in rows["monoT5"] and "*" not in rows["monoT5"]
    assert ("* Interpolation: the mean over the collections the system is in, fewer than the 3; not comparable "
            "with a mean over all 3") in html


def test_a_mark_and_an_interval_that_disagree_are_named_in_the_figure_s_caption(suite):
    """A filled marker (the randomization test after Holm) whose bootstrap interval includes 0, or a
    hollow one whose interval excludes 0, is named; the cells decide which, checked by hand."""
    from types import SimpleNamespace

    from ndcg_report.analysis.tables.blocks import mark_interval_disagreements
    from ndcg_report.analysis.tables.suite_page import figures

    rows = pd.DataFrame({"collection": ["a", "a", "b", "b"], "system": ["X", "Y", "X", "BM25"],
                         "role": ["run", "run", "run", "baseline"], "measure": "AP",
                         "delta": [0.02, 0.05, -0.04, np.nan], "ci_low": [-0.01, 0.01, -0.08, np.nan],
                         "ci_high": [0.05, 0.09, -0.01, np.nan], "significant": [True, True, False, pd.NA]})
    assert mark_interval_disagreements(rows, "collection", "AP") == ["X in a", "X in b"]
    cells = suite.cells[(suite.cells["measure"] == "nDCG@10") & (suite.cells["role"] == "run")].dropna(subset=["delta"])
    odd = [f"{s} in {c}" for s, c, low, high, sig in cells[["system", "collection", "ci_low", "ci_high",
                                                             "significant"]].itertuples(index=False)
           if (low > 0 or high < 0) != bool(sig)]
    assert mark_interval_disagreements(suite.cells, "collection", "nDCG@10") == odd
    caption = figures(SimpleNamespace(suite=suite))[0][0]
    assert caption.startswith("nDCG@10: each system's delta against BM25 per collection, with the interval of its "
                              "collection's verdict")
    assert (f"({', '.join(odd)}: filled with an interval that includes 0" in caption) == bool(odd)


def test_the_display_escapes_names_and_says_what_the_marks_are(dl19_experiment):
    suite = compare_suite({"dl19": dl19_experiment, "<i>gen</i>": generated(3, {"<b>sys": 1.0, "BM25": 0.5})},
                          measures=MEASURES, n_resamples=RESAMPLES)
    html = suite._repr_html_()
    assert "<b>sys" not in html and "&lt;b&gt;sys" in html and "&lt;i&gt;gen&lt;/i&gt;" in html
    assert "▲" in html and "no power" in html and "Holm over that collection&#x27;s systems" in html
    assert repr(suite).startswith("Suite(4 system(s) against 'BM25' on 2 collection(s)")


def six_collections() -> dict:
    qualities = [{"monoT5": 1.4, "RRF": 1.0, "Interpolation": 0.7, "BM25": 0.5},
                 {"monoT5": 1.2, "RRF": 1.1, "Interpolation": 0.4, "BM25": 0.6},
                 {"monoT5": 0.9, "RRF": 1.3, "Interpolation": 0.8, "BM25": 0.4},
                 {"monoT5": 1.5, "RRF": 0.9, "BM25": 0.7},
                 {"monoT5": 1.1, "RRF": 1.2, "Interpolation": 0.9, "BM25": 0.3},
                 {"monoT5": 1.3, "RRF": 0.8, "Interpolation": 0.5, "BM25": 0.6}]
    return {f"c{i}": generated(10 + i, q, n_queries=25) for i, q in enumerate(qualities)}


@pytest.fixture(scope="module")
def six():
    return compare_suite(six_collections(), measures=MEASURES, n_resamples=100)


def test_wilcoxon_and_friedman_over_collections_equal_scipy(six):
    means = six.means("nDCG@10")
    test = six.tests
    raw = []
    for name in six.names:
        both = means.loc[[name, "BM25"]].T.dropna()
        expected = stats.wilcoxon(both[name] - both["BM25"], zero_method="zsplit")
        assert test.wilcoxon.at[name, "statistic"] == expected.statistic
        assert test.wilcoxon.at[name, "pvalue"] == expected.pvalue
        assert test.wilcoxon.at[name, "collections"] == len(both)
        raw.append(expected.pvalue)
    np.testing.assert_allclose(test.wilcoxon["p_holm"], multipletests(raw, method="holm")[1], rtol=1e-12)
    complete = means.T.dropna()  # c3 lacks Interpolation: Friedman runs over the other five
    assert test.ranked == ("c0", "c1", "c2", "c4", "c5") and list(complete.index) == list(test.ranked)
    expected = stats.friedmanchisquare(*(complete[name] for name in complete.columns))
    assert (test.friedman_statistic, test.friedman_pvalue) == (expected.statistic, expected.pvalue)
    assert test.friedman_verdict in ("differ", "no difference") and test.has_power
    # 6 collections and 3 systems: even 6 wins of 6 (p 2/2**6) would miss Holm's first step (0.05 / 3), and
    # Interpolation's 5 collections cannot go below p 0.0625: no Wilcoxon verdict, only Friedman's
    assert set(test.wilcoxon["verdict"]) == {NO_POWER}
    assert test.wilcoxon["min_pvalue"].tolist() == [2 / 2 ** 6, 2 / 2 ** 6, 2 / 2 ** 5]


def test_with_fewer_than_five_collections_no_test_gives_a_verdict(six):
    four = compare_suite({name: e for name, e in list(six.experiments.items())[:4]})
    test = four.tests
    assert test.friedman_verdict == NO_POWER and not test.has_power
    assert set(test.wilcoxon["verdict"]) == {NO_POWER}
    assert test.wilcoxon["pvalue"].notna().all()  # the numbers are there; the verdict is withheld
    assert "no power" in test.summary() and "at least 5 collections" in test.summary()
    assert not test.differ("monoT5", "BM25")


def test_the_power_rule_is_the_smallest_p_value_the_test_can_give():
    assert wilcoxon_min_pvalue(5) == stats.wilcoxon([1.0, 2, 3, 4, 5]).pvalue == 0.0625
    assert wilcoxon_min_pvalue(6) == stats.wilcoxon([1.0, 2, 3, 4, 5, 6]).pvalue == 0.03125
    rng = np.random.default_rng(0)
    systems = ["A", "B", "C", "base"]
    # three systems against the baseline: Holm's first step tests at 0.05 / 3, which 2/2**6 misses and 2/2**7 meets
    for n, wilcoxon_verdict, friedman_verdict in ((4, NO_POWER, NO_POWER), (5, NO_POWER, "differ"),
                                                  (6, NO_POWER, "differ"), (7, "better", "differ")):
        means = pd.DataFrame(rng.random((n, 4)) * 0.1 + [0.9, 0.6, 0.3, 0.0], columns=systems)  # A always first
        test = across_collections(means, "base")
        assert set(test.wilcoxon["verdict"]) == {wilcoxon_verdict}, n
        assert test.friedman_verdict == friedman_verdict, n
    one = across_collections(pd.DataFrame({"A": np.arange(6.0) + 1, "base": np.zeros(6)}), "base")
    assert one.wilcoxon.at["A", "verdict"] == "better" and one.friedman_verdict == "needs 3 systems"


# Demšar (2006), Table 2: AUC of C4.5 with m = 0 and cf tuned (C4.5) and with m tuned too (C4.5+m) on 14 data sets
DEMSAR_TABLE_2 = pd.DataFrame({
    "C4.5": [0.763, 0.599, 0.954, 0.628, 0.882, 0.936, 0.661, 0.583, 0.775, 1.000, 0.940, 0.619, 0.972, 0.957],
    "C4.5+m": [0.768, 0.591, 0.971, 0.661, 0.888, 0.931, 0.668, 0.583, 0.838, 1.000, 0.962, 0.666, 0.981, 0.978],
}, index=["adult (sample)", "breast cancer", "breast cancer wisconsin", "cmc", "ionosphere", "iris", "liver disorders",
          "lung cancer", "lymphography", "mushroom", "primary tumor", "rheum", "voting", "wine"])


def test_wilcoxon_reproduces_demsars_worked_example():
    d = (DEMSAR_TABLE_2["C4.5+m"] - DEMSAR_TABLE_2["C4.5"]).round(3).to_numpy()
    ranks = stats.rankdata(np.abs(d))  # zero differences split evenly between the signs
    r_plus = ranks[d > 0].sum() + ranks[d == 0].sum() / 2
    r_minus = ranks[d < 0].sum() + ranks[d == 0].sum() / 2
    assert (r_plus, r_minus) == (93, 12)  # the paper's R+ and R-: T = min = 12 < 21, the critical value at N = 14
    test = across_collections(DEMSAR_TABLE_2.round(3), "C4.5")
    row = test.wilcoxon.loc["C4.5+m"]
    assert row["statistic"] == 12 and row["pvalue"] < 0.05 and row["verdict"] == "better"
    assert (row["wins"], row["ties"], row["losses"]) == (10, 2, 2)


# Demšar (2006), Table 5(a): q_alpha of the Nemenyi test for k = 2..10 classifiers
Q_05 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
Q_10 = [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]
# ranks of four systems on 14 collections whose mean ranks are the paper's Section 3.2.4 example
DEMSAR_RANKS = [(1, 4, 2, 3), (4, 2, 3, 1), (4, 1, 3, 2), (4, 1, 3, 2), (3, 1, 4, 2), (4, 1, 2, 3), (4, 1, 3, 2),
                (1, 4, 3, 2), (3, 1, 4, 2), (2, 4, 3, 1), (4, 3, 2, 1), (2, 1, 4, 3), (4, 3, 2, 1), (4, 1, 2.5, 2.5)]


def test_the_nemenyi_critical_difference_is_demsars():
    for k, (q05, q10) in enumerate(zip(Q_05, Q_10), start=2):
        assert critical_difference(k, 6, 0.05) / math.sqrt(k * (k + 1) / 36) == pytest.approx(q05, abs=1e-3)
        assert critical_difference(k, 6, 0.10) / math.sqrt(k * (k + 1) / 36) == pytest.approx(q10, abs=1e-3)
    names = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]
    means = 1 - pd.DataFrame(DEMSAR_RANKS, columns=names) / 10  # rank 1 = the highest mean
    test = across_collections(means, "C4.5")
    assert test.mean_ranks.round(3).tolist() == [3.143, 2.000, 2.893, 1.964]
    r, n, k = test.mean_ranks.to_numpy(), 14, 4
    chi2 = 12 * n / (k * (k + 1)) * (np.sum(r ** 2) - k * (k + 1) ** 2 / 4)
    assert round(chi2, 2) == 9.28 and round((n - 1) * chi2 / (n * (k - 1) - chi2), 2) == 3.69  # the paper's numbers
    assert round(test.critical_difference, 2) == 1.25 and test.q_alpha == pytest.approx(2.569, abs=6e-4)
    # at 0.05 no two differ (the largest gap, 3.143 - 1.964 = 1.179, is under 1.25): one group of all four
    assert test.groups == (("C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5"),)
    at_10 = across_collections(means, "C4.5", alpha=0.10)
    assert round(at_10.critical_difference, 2) == 1.12
    assert at_10.groups == (("C4.5+m+cf", "C4.5+m", "C4.5+cf"), ("C4.5+cf", "C4.5"))


def test_nemenyi_pvalues_equal_scikit_posthocs():
    rng = np.random.default_rng(7)
    means = pd.DataFrame(rng.random((12, 5)) + np.linspace(0, 0.6, 5), columns=list("ABCDE"))
    test = across_collections(means, "A")
    expected = scikit_posthocs.posthoc_nemenyi_friedman(means)
    np.testing.assert_allclose(test.nemenyi_pvalues.loc[list("ABCDE"), list("ABCDE")], expected, rtol=1e-6, atol=1e-12)
    for first in "ABCDE":
        for second in "ABCDE":
            gap = abs(test.mean_ranks[first] - test.mean_ranks[second])
            assert (test.nemenyi_pvalues.at[first, second] < 0.05) == (gap > test.critical_difference)


def test_rank_groups_are_the_maximal_runs_within_the_critical_difference():
    ranks = pd.Series({"a": 1.0, "b": 1.5, "c": 2.4, "d": 3.0, "e": 4.5})
    assert rank_groups(ranks, 1.0) == (("a", "b"), ("b", "c"), ("c", "d"))
    assert rank_groups(ranks, 0.4) == ()
    assert rank_groups(ranks, float("nan")) == ()
    assert nemenyi_pvalues(ranks, 0).isna().sum().sum() == 20


BAD = [
    ({"x": {"runs": {}, "qrels": "q", "baseline": "b"}}, {}, "collection 'x': give at least one run to compare with the baseline"),
    ({"x": {"runs": {"a": "r"}, "baseline": "b"}}, {}, "collection 'x': no 'qrels' given"),
    ({"x": {"runs": {"a": "r"}, "qrels": "q", "baseline": "b", "colour": 1}}, {}, "collection 'x': unknown argument 'colour'"),
    ({"mean": {"runs": {"a": "r"}, "qrels": "q", "baseline": "b"}}, {}, "a collection is named 'mean'"),
    ({}, {}, "give at least one collection"),
    ({"x": 5}, {}, "collection 'x': give an Experiment or a mapping"),
]


@pytest.mark.parametrize(("collections", "options", "message"), BAD, ids=[message for _, _, message in BAD])
def test_bad_suite_input_is_one_line_naming_the_collection_and_the_fix(collections, options, message):
    with pytest.raises(ParameterError) as caught:
        compare_suite(collections, **options)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_systems_and_baselines_that_do_not_fit_the_suite_are_refused(suite, dl19_experiment):
    experiments = dict(suite.experiments)
    with pytest.raises(ParameterError, match="^system 'ColBERT' is in no collection; the systems are 'monoT5', 'RRF'"):
        compare_suite(experiments, systems=["monoT5", "ColBERT"])
    chosen = compare_suite(experiments, systems=["RRF", "monoT5"])
    assert chosen.systems == ("RRF", "monoT5", "BM25") and chosen.cells["system"].nunique() == 3
    other = compare_suite({"gen": generated(4, {"monoT5": 1.0, "BM25": 0.5}) | {"baseline_name": "bm25"}})
    with pytest.raises(ParameterError, match="baselines are named 'BM25' \\(dl19\\), 'bm25' \\(gen\\); give baseline_name="):
        compare_suite({"dl19": dl19_experiment, "gen": other.experiments["gen"]})
    renamed = compare_suite({"dl19": dl19_experiment, "gen": other.experiments["gen"]}, baseline_name="BM25")
    assert renamed.table.at[("nDCG@10", "BM25"), "gen"] == other.experiments["gen"].leaderboard.at["bm25", "nDCG@10"]
    with pytest.raises(ParameterError, match="collection 'dl19': a system under test is named 'monoT5'"):
        compare_suite({"dl19": dl19_experiment, "gen": other.experiments["gen"]}, baseline_name="monoT5")
    with pytest.raises(ParameterError, match="^collection 'gen': "):
        compare_suite({"gen": generated(5, {"monoT5": 1.0, "BM25": 0.5})}, measures="nDCG@x")


def test_the_figures_draw_each_present_cell_and_the_mean_ranks(suite, six):
    figure = suite.plot_deltas("AP")
    ax = figure.axes[0]
    markers = [line for line in ax.get_lines() if line.get_marker() not in (None, "None", "")]
    assert sum(len(line.get_xdata()) for line in markers) == 3 + 3 + 2  # one per system present in a collection
    filled = sum(len(line.get_xdata()) for line in markers if line.get_markerfacecolor() != "white")
    assert filled == int(suite.cells.query("measure == 'AP'")["significant"].sum())
    assert [tick.get_text() for tick in ax.get_xticklabels()] == ["dl19", "gen-a", "gen-b"]
    diagram = six.plot_critical_difference()
    texts = [text.get_text() for text in diagram.axes[0].texts]
    for name, rank in six.tests.mean_ranks.items():
        assert f"{name} ({rank:.2f})" in texts
    assert f"CD = {six.tests.critical_difference:.2f}" in texts


def test_a_measure_one_collection_lacks_is_missing_there(dl19_experiment):
    suite = compare_suite({"dl19": dl19_experiment, "gen": generated(6, {"monoT5": 1.0, "BM25": 0.5})},
                          systems=["monoT5"], measures="nDCG@10", n_resamples=RESAMPLES)
    assert [m.label for m in suite.measures] == ["nDCG@10", "AP"] and suite.headline.label == "nDCG@10"
    ap = suite.table.loc["AP"]
    assert math.isnan(ap.at["monoT5", "gen"]) and ap.at["monoT5", "collections"] == 1
    assert ap.at["monoT5", "mean"] == dl19_experiment.leaderboard.at["monoT5", "AP"]
    assert suite.across("AP").ranked == ("dl19",) and suite.across("nDCG@10").ranked == ("dl19", "gen")


def test_the_tests_as_plain_json(six):
    import json

    record = six.tests.record()
    json.dumps(record, allow_nan=False)
    assert record["friedman"]["collections"] == list(six.tests.ranked)
    assert record["posthoc"]["test"] == "Nemenyi" and record["posthoc"]["critical_difference"] == six.tests.critical_difference
    assert [row["system"] for row in record["wilcoxon"]["systems"]] == list(six.names)
    assert record["wilcoxon"]["systems"][0]["verdict"] == NO_POWER
    assert record["posthoc"]["pvalues"]["monoT5"]["monoT5"] == 1.0


def test_a_system_named_like_another_collections_baseline_is_missing_there_not_that_baseline(dl19_experiment):
    other = generated(8, {"monoT5": 1.0, "BM25": 0.5}) | {"baseline_name": "RRF"}  # its baseline is named RRF
    suite = compare_suite({"dl19": dl19_experiment, "gen": other}, baseline_name="Baseline", n_resamples=RESAMPLES)
    assert suite.systems == ("monoT5", "RRF", "Interpolation", "Baseline")
    table = suite.table.loc["nDCG@10"]
    assert math.isnan(table.at["RRF", "gen"]) and table.at["RRF", "dl19"] == dl19_experiment.leaderboard.at["RRF", "nDCG@10"]
    assert table.at["Baseline", "gen"] == suite.experiments["gen"].leaderboard.at["RRF", "nDCG@10"]
    assert table.at["Baseline", "dl19"] == dl19_experiment.leaderboard.at["BM25", "nDCG@10"]
