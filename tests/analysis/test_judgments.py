"""Judgment sets compared: label agreement, rank correlations, compare_judgments, `ndcg-report judges`.

Every statistic is checked against its library (scikit-learn, krippendorff, scipy) or a small case worked
by hand; tau_AP against a plain-Python transcription of its definition (Yilmaz, Aslam and Robertson, SIGIR
2008). The command runs on tests/data/small (8 DL 2019 queries) and tests/data/judges (a simulated second
judge and three more runs, made by tests/data/judges/make_judges.py).
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from ndcg_report.stats import agreement as agreement_module
from ndcg_report.stats.agreement import ROUNDED, coincidence_alpha, label_agreement
from ndcg_report.stats.rank_correlation import kendall_tau_b, spearman_rho, tau_ap

DATA = Path(__file__).resolve().parents[1] / "data"
SMALL, JUDGES = DATA / "small", DATA / "judges"


# --- label agreement ---------------------------------------------------------------------------------


def test_a_small_case_worked_by_hand():
    """ref 1 1 0 0, other 1 0 0 0: p_o 3/4, p_e 1/2 so kappa 1/2; interval alpha 1 - 7/15 = 8/15
    (N = 8 values, mean 3/8, sum of squares 15/8, one disagreement)."""
    result = label_agreement(np.array([1, 1, 0, 0]), np.array([1, 0, 0, 0]))
    assert result.labels == (0, 1) and result.confusion == ((2, 0), (1, 1))
    assert result.observed_agreement == 0.75
    assert result.cohen_kappa == pytest.approx(0.5)
    assert result.alpha_interval == pytest.approx(8 / 15)
    assert result.mean_difference == -0.25  # the other set is stricter
    zero, one = result.per_label
    assert (zero.reference_count, zero.other_count, zero.precision, zero.recall) == (2, 3, 2 / 3, 1.0)
    assert (one.reference_count, one.other_count, one.precision, one.recall) == (2, 1, 1.0, 0.5)
    assert [(b.level, b.reference_relevant, b.other_relevant) for b in result.binary] == [(1, 0.5, 0.25)]
    assert result.binary[0].kappa == pytest.approx(0.5)


LABELS = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=40)


@settings(max_examples=60, deadline=None)
@given(LABELS)
def test_every_statistic_is_its_librarys(pairs):
    reference, other = (np.array(side, dtype=np.float64) for side in zip(*pairs))
    result = label_agreement(reference, other)
    present = sorted(set(reference) | set(other))
    if len(present) == 1:
        assert math.isnan(result.cohen_kappa) and "cohen_kappa" in result.undefined
        return
    axis = list(range(int(min(present)), int(max(present)) + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert result.cohen_kappa == pytest.approx(cohen_kappa_score(reference, other, labels=axis), nan_ok=True)
        for weights in ("linear", "quadratic"):
            expected = cohen_kappa_score(reference, other, labels=axis, weights=weights)
            assert getattr(result, f"weighted_kappa_{weights}") == pytest.approx(expected, nan_ok=True)
    for level in ("ordinal", "interval"):
        expected = krippendorff.alpha(reliability_data=[reference, other], level_of_measurement=level)
        assert getattr(result, f"alpha_{level}") == pytest.approx(expected)
        assert coincidence_alpha(reference, other, level) == pytest.approx(expected)
    assert result.observed_agreement == pytest.approx(np.mean(reference == other))
    for binary in result.binary:
        a, b = (reference >= binary.level).astype(int), (other >= binary.level).astype(int)
        if len(set(a) | set(b)) == 2:
            assert binary.kappa == pytest.approx(cohen_kappa_score(a, b))
        else:
            assert math.isnan(binary.kappa) and f"binary_kappa.{binary.level}" in result.undefined
    assert [b.level for b in result.binary] == [int(v) for v in present[1:]]


def test_weighted_kappa_weighs_by_grade_distance_when_a_grade_is_missing():
    """Labels 0 and 2 only: the axis holds 1 too, so 0 against 2 weighs 2 (linear), not 1."""
    reference, other = np.array([0, 2, 2, 0]), np.array([0, 0, 2, 2])
    result = label_agreement(reference, other)
    assert result.labels == (0, 1, 2)
    assert result.weighted_kappa_linear == pytest.approx(cohen_kappa_score(reference, other, labels=[0, 1, 2],
                                                                           weights="linear"))
    assert result.confusion == ((1, 0, 1), (0, 0, 0), (1, 0, 1))


def test_one_label_only_is_nan_with_a_reason_not_a_crash():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no library warning leaks either
        result = label_agreement(np.array([2, 2, 2]), np.array([2, 2, 2]))
    assert result.observed_agreement == 1.0 and result.confusion == ((3,),)
    for value in (result.cohen_kappa, result.weighted_kappa_linear, result.weighted_kappa_quadratic,
                  result.alpha_ordinal, result.alpha_interval):
        assert math.isnan(value)
    assert result.undefined["cohen_kappa"] == "every shared pair has the label 2 in both sets, so chance agreement is 1"
    assert set(result.undefined) == {"cohen_kappa", "weighted_kappa", "krippendorff_alpha.ordinal",
                                     "krippendorff_alpha.interval"}
    assert result.binary == ()  # no level above the lowest label
    document = result.to_dict()
    assert document["cohen_kappa"] is None and document["krippendorff_alpha"] == {"ordinal": None, "interval": None}
    json.dumps(document, allow_nan=False)


def test_one_shared_pair():
    """(1, 0): no agreement and chance agreement 0, so kappa 0; alpha 0 (D_o = D_e), as the libraries say."""
    result = label_agreement(np.array([1.0]), np.array([0.0]), only_reference=4, only_other=2)
    assert result.shared == 1 and (result.only_reference, result.only_other) == (4, 2)
    assert result.cohen_kappa == 0.0 == cohen_kappa_score([1], [0], labels=[0, 1])
    assert result.alpha_interval == pytest.approx(krippendorff.alpha(reliability_data=[[1.0], [0.0]])) == 0.0
    assert result.binary[0].kappa == 0.0
    agree = label_agreement(np.array([1.0]), np.array([1.0]))
    assert agree.observed_agreement == 1.0 and math.isnan(agree.cohen_kappa)


def test_no_shared_pair_is_nan_throughout():
    result = label_agreement(np.array([]), np.array([]), only_reference=3, only_other=5)
    assert result.shared == 0 and result.confusion == () and result.labels == ()
    assert math.isnan(result.observed_agreement) and math.isnan(result.mean_difference)
    assert result.undefined["cohen_kappa"] == "no pair is judged by both sets"
    assert result.to_dict()["pairs"] == {"shared": 0, "only_reference": 3, "only_other": 5}


def test_float_grades_are_binned_for_the_categorical_statistics_only():
    reference = np.array([0.0, 1.0, 2.0, 3.0, 2.0, 0.0])
    other = np.array([0.5, 1.49, 2.5, 2.51, 1.6, 0.2])  # rounded, halves up: 1 1 3 3 2 0
    result = label_agreement(reference, other)
    assert result.binning == ROUNDED
    assert result.confusion == ((1, 1, 0, 0), (0, 1, 0, 0), (0, 0, 1, 1), (0, 0, 0, 1))
    assert result.cohen_kappa == pytest.approx(cohen_kappa_score([0, 1, 2, 3, 2, 0], [1, 1, 3, 3, 2, 0]))
    assert result.alpha_interval == pytest.approx(krippendorff.alpha(reliability_data=[reference, other]))
    assert result.alpha_ordinal == pytest.approx(krippendorff.alpha(
        reliability_data=[[0, 1, 2, 3, 2, 0], [1, 1, 3, 3, 2, 0]], level_of_measurement="ordinal"))
    assert result.mean_difference == pytest.approx(np.mean(other - reference))
    at_two = next(b for b in result.binary if b.level == 2)  # the values as they are: 1.6 is not >= 2
    assert at_two.other_relevant == pytest.approx(2 / 6) and at_two.reference_relevant == pytest.approx(3 / 6)
    assert label_agreement(np.array([1.0, 2.0]), np.array([1.0, 0.0])).binning == ""  # whole numbers: no binning


def test_large_data_uses_the_coincidence_matrix_with_the_same_alpha(monkeypatch):
    rng = np.random.default_rng(7)
    reference = rng.integers(0, 4, 300).astype(float)
    other = np.clip(reference + rng.integers(-1, 2, 300), 0, 3) + rng.random(300).round(2)
    library = label_agreement(reference, other)
    monkeypatch.setattr(agreement_module, "LIBRARY_CELLS", 0)
    formula = label_agreement(reference, other)
    assert formula.alpha_interval == pytest.approx(library.alpha_interval, rel=1e-12)
    assert formula.alpha_ordinal == pytest.approx(library.alpha_ordinal, rel=1e-12)


# --- rank correlation --------------------------------------------------------------------------------


def paper_tau_ap(truth: list[float], order: list[int]) -> float:
    """Yilmaz et al.'s definition, as written: the other's order (`order`: system indices, best first);
    C(i): the systems above rank i that the truth does not rank below the system at rank i."""
    n, total = len(order), 0.0
    for i in range(1, n):
        correct = sum(1 for j in range(i) if truth[order[j]] >= truth[order[i]])
        total += correct / i
    return 2 / (n - 1) * total - 1


def every_order(scores: list[float]) -> list[tuple[int, ...]]:
    """Every order of the systems by score, best first, the tied ones in every order."""
    return [p for p in itertools.permutations(range(len(scores)))
            if all(scores[p[k]] >= scores[p[k + 1]] for k in range(len(p) - 1))]


def test_tau_ap_by_hand():
    """A > B > C > D; a swap at the top costs more than one at the bottom (Kendall's tau: 2/3 both)."""
    truth = np.array([4.0, 3.0, 2.0, 1.0])
    assert tau_ap(truth, np.array([3.0, 4.0, 2.0, 1.0])) == pytest.approx(1 / 3)
    assert tau_ap(truth, np.array([4.0, 3.0, 1.0, 2.0])) == pytest.approx(7 / 9)
    assert kendall_tau_b(truth, np.array([3.0, 4.0, 2.0, 1.0])) == pytest.approx(2 / 3)
    assert tau_ap(truth, truth) == 1.0 and tau_ap(truth, -truth) == -1.0


SCORES = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=6)


@settings(max_examples=150, deadline=None)
@given(SCORES)
def test_tau_ap_is_the_definition_averaged_over_every_order_of_ties(pairs):
    truth, other = (list(map(float, side)) for side in zip(*pairs))
    if len(set(truth)) == 1:
        assert math.isnan(tau_ap(np.array(truth), np.array(other)))
        return
    orders = every_order(other)
    expected = sum(paper_tau_ap(truth, order) for order in orders) / len(orders)
    assert tau_ap(np.array(truth), np.array(other)) == pytest.approx(expected, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=12, unique=True))
def test_identical_and_reversed_orders(values):
    x = np.array(values)
    assert kendall_tau_b(x, x) == pytest.approx(1.0) and tau_ap(x, x) == pytest.approx(1.0)
    assert spearman_rho(x, x) == pytest.approx(1.0)
    assert kendall_tau_b(x, -x) == pytest.approx(-1.0) and tau_ap(x, -x) == pytest.approx(-1.0)
    y = np.roll(x, 1)
    assert kendall_tau_b(x, y) == pytest.approx(kendall_tau_b(y, x))  # tau-b is symmetric; tau_AP need not be
    assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)
    assert spearman_rho(x, y) == pytest.approx(stats.spearmanr(x, y).statistic)
    assert -1.0 <= tau_ap(x, y) <= 1.0


def test_same_ties_in_both_lists_give_one_and_undefined_cases_nan():
    x = np.array([0.6, 0.6, 0.4, 0.3])
    assert tau_ap(x, x) == 1.0 and kendall_tau_b(x, x) == pytest.approx(1.0)
    assert math.isnan(kendall_tau_b(np.array([1.0, 1.0]), np.array([1.0, 2.0])))
    assert math.isnan(spearman_rho(np.array([0.5]), np.array([0.5])))
    assert math.isnan(tau_ap(np.array([0.5]), np.array([0.5])))
    assert tau_ap(np.array([1.0, 0.0]), np.array([0.3, 0.3])) == 0.0  # a constant other: a random order's expectation


# --- sets, filling, compare_judgments ------------------------------------------------------------------

from ndcg_report.analysis.judgments.comparison import compare_judgments  # noqa: E402
from ndcg_report.analysis.judgments.sets import check_comparable_sets, fill_unjudged, shared_labels  # noqa: E402
from ndcg_report.core.evaluation_pass import evaluate  # noqa: E402
from ndcg_report.errors import InputError, ParameterError  # noqa: E402
from ndcg_report.inputs.reading import read_qrels  # noqa: E402
from ndcg_report.inputs.tables import load_qrels  # noqa: E402

RUNS = {"bm25": SMALL / "bm25.txt", "monot5": SMALL / "monot5.txt", "rrf": JUDGES / "rrf.txt",
        "interp": JUDGES / "interp.txt", "monot5-top20": JUDGES / "monot5-top20.txt"}


def qrels_of(rows: list[tuple[str, str, float]]):
    return load_qrels({qid: {docid: rel for q, docid, rel in rows if q == qid} for qid, _, _ in rows})


def test_shared_labels_and_filling():
    reference = qrels_of([("q1", "a", 2), ("q1", "b", 0), ("q2", "c", 1)])
    other = qrels_of([("q1", "a", 1), ("q1", "d", 3), ("q2", "c", 1), ("q3", "e", 2)])
    shared = shared_labels(reference, other)
    assert list(shared.qids) == ["q1", "q2"] and list(shared.docids) == ["a", "c"]
    assert list(shared.reference) == [2, 1] and list(shared.other) == [1, 1]
    assert (shared.only_reference, shared.only_other) == (1, 2)
    assert shared.shared_queries == {"q1", "q2"}
    filled, count = fill_unjudged(reference, other)
    assert count == 1  # q1/d: q1/a keeps the reference's 2; q3 is not a reference query
    rows = sorted(zip(filled.table["qid"].to_pylist(), filled.table["docid"].to_pylist(), filled.table["rel"].to_pylist()))
    assert rows == [("q1", "a", 2.0), ("q1", "b", 0.0), ("q1", "d", 3.0), ("q2", "c", 1.0)]


def test_sets_sharing_no_query_or_no_pair_are_refused():
    reference = read_qrels(SMALL / "qrels.txt")
    with pytest.raises(InputError, match="shares no query with the reference"):
        check_comparable_sets({"ref": reference, "x": qrels_of([("q9", "a", 1)])}, "ref")
    with pytest.raises(InputError, match=r"judges no \(qid, docid\) pair .* \(1 queries in common\)"):
        check_comparable_sets({"ref": reference, "x": qrels_of([("104861", "nowhere", 1)])}, "ref")
    with pytest.raises(ParameterError, match="at least two"):
        check_comparable_sets({"ref": reference}, "ref")


@pytest.fixture(scope="module")
def three_sets():
    """The human qrels, the simulated judge and its float grades; every run evaluated under each."""
    sets = {"human": read_qrels(SMALL / "qrels.txt"), "llm": read_qrels(JUDGES / "llm.txt"),
            "llm-float": read_qrels(JUDGES / "llm-float.txt")}
    evaluations = {name: {run: evaluate(path, qrels, measures="nDCG@10 AP", rel_level=2) for run, path in RUNS.items()}
                   for name, qrels in sets.items()}
    return sets, evaluations


@pytest.fixture(scope="module")
def comparison(three_sets):
    sets, evaluations = three_sets
    return compare_judgments(evaluations, sets, baseline="bm25", n_resamples=2000)


def test_means_are_what_eval_prints(comparison, capsys):
    from ndcg_report.cli import main

    assert main(["eval", str(JUDGES / "llm.txt"), str(RUNS["rrf"]), "-m", "nDCG@10", "-m", "AP", "-l", "2",
                 "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert comparison.means["llm"]["nDCG@10"]["rrf"] == printed["summary"]["nDCG@10"]["mean"]
    assert comparison.means["llm"]["AP"]["rrf"] == printed["summary"]["AP"]["mean"]


def test_orders_by_hand_and_by_scipy(comparison):
    means = comparison.means
    for other in comparison.comparisons:
        for order in other.orders:
            x = np.array([means["human"][order.measure][s] for s in comparison.systems])
            y = np.array([means[other.name][order.measure][s] for s in comparison.systems])
            assert order.kendall_tau == pytest.approx(stats.kendalltau(x, y).statistic)
            assert order.spearman == pytest.approx(stats.spearmanr(x, y).statistic)
            assert order.tau_ap == pytest.approx(tau_ap(x, y))
            assert order.best_reference == tuple(s for s, v in zip(comparison.systems, x) if v == x.max())
    ndcg = comparison.comparison("llm").order("nDCG@10")
    assert ndcg.best_reference == ("monot5", "monot5-top20") and ndcg.same_best_system  # the same top 10: a tie


def test_reference_verdicts_are_the_reports(comparison):
    """Under the reference, the verdicts are those compare_runs (the report) gives: the same test,
    family and random streams."""
    from ndcg_report.analysis.compare import compare_runs

    experiment = compare_runs({name: path for name, path in RUNS.items() if name != "bm25"}, SMALL / "qrels.txt",
                              RUNS["bm25"], baseline_name="bm25", measures="nDCG@10 AP", rel_level=2, n_resamples=2000)
    for verdict in comparison.comparison("llm").verdicts:
        row = experiment.comparison_row(verdict.system, verdict.measure)
        assert verdict.reference_p == row["holm_randomization_pvalue"]
        assert verdict.reference_delta == pytest.approx(row["delta"])
        significant = row["holm_randomization_pvalue"] < 0.05
        assert verdict.reference == ("better" if row["delta"] > 0 else "worse") if significant else "no difference"


def test_differing_verdicts_come_first(comparison):
    verdicts = comparison.comparison("llm-float").verdicts
    flags = [v.differs for v in verdicts]
    assert any(flags) and flags == sorted(flags, reverse=True)


def test_query_disagreement_is_the_mean_absolute_change_over_systems(three_sets, comparison):
    sets, evaluations = three_sets
    rows = [q for q in comparison.comparison("llm").disagreeing_queries if q.measure == "nDCG@10"]
    assert len(rows) == 8 and [r.disagreement for r in rows] == sorted((r.disagreement for r in rows), reverse=True)
    top = rows[0]
    changes = []
    for system in RUNS:
        human, llm = evaluations["human"][system], evaluations["llm"][system]
        before = human.column_values("nDCG@10")[list(human.qids).index(top.qid)]
        after = llm.column_values("nDCG@10")[list(llm.qids).index(top.qid)]
        changes.append(after - before)
    assert top.disagreement == pytest.approx(np.mean(np.abs(changes)))
    assert top.mean_difference == pytest.approx(np.mean(changes))
    per_system = {s.system: s for s in comparison.comparison("llm").per_system if s.measure == "AP"}
    assert per_system["bm25"].n_queries == 8


def test_to_dict_has_the_issues_keys_and_is_json(comparison):
    document = comparison.to_dict()
    text = json.dumps(document, allow_nan=False)
    other = document["comparisons"]["llm"]
    for key in ("pairs", "confusion", "cohen_kappa", "weighted_kappa", "krippendorff_alpha", "binary_kappa",
                "measures", "verdicts", "disagreeing_queries"):
        assert key in other
    assert set(other["pairs"]) == {"shared", "only_reference", "only_other"}
    assert set(other["weighted_kappa"]) == {"linear", "quadratic"}
    assert set(other["krippendorff_alpha"]) == {"ordinal", "interval"}
    assert set(other["binary_kappa"]) == {"1", "2", "3"}
    assert set(other["measures"]["nDCG@10"]) >= {"kendall_tau", "tau_ap", "spearman", "same_best_system"}
    assert document["means"]["nDCG@10"]["monot5"] == {name: pytest.approx(comparison.means[name]["nDCG@10"]["monot5"])
                                                      for name in ("human", "llm", "llm-float")}
    assert list(document["comparisons"]) == ["llm", "llm-float"] and "NaN" not in text


def test_evaluations_that_do_not_match_are_refused(three_sets):
    sets, evaluations = three_sets
    uneven = {**evaluations, "llm": {k: v for k, v in evaluations["llm"].items() if k != "rrf"}}
    with pytest.raises(ParameterError, match="every set needs the same systems"):
        compare_judgments(uneven, sets)
    with pytest.raises(ParameterError, match="baseline 'nope' is not one of the systems"):
        compare_judgments(evaluations, sets, baseline="nope")
    other_level = {**evaluations, "llm": {run: evaluate(path, sets["llm"], measures="nDCG@10 AP", rel_level=1)
                                          for run, path in RUNS.items()}}
    with pytest.raises(ParameterError, match="different rel_level settings"):
        compare_judgments(other_level, sets)
    labels_only = compare_judgments({}, sets)
    assert labels_only.systems == () and labels_only.comparisons[0].orders == ()


def test_figures(comparison):
    from matplotlib.figure import Figure

    from ndcg_report.analysis.judgments.figures import confusion_heatmap, means_scatter

    agreement = comparison.comparison("llm").agreement
    figure = confusion_heatmap(agreement, "human", "llm")
    texts = [text.get_text() for text in figure.axes[0].texts]
    assert isinstance(figure, Figure) and texts == [f"{count:,}" for row in agreement.confusion for count in row]
    scatter = means_scatter(comparison.measure_means("nDCG@10"), "human", "nDCG@10")
    ax = scatter.axes[0]
    diagonal = ax.lines[0]
    assert list(diagonal.get_xdata()) == list(diagonal.get_ydata())
    assert len(ax.collections) == 2  # one series per other set
    assert "monot5, monot5-top20" in [text.get_text() for text in ax.texts]


# --- ndcg-report judges ----------------------------------------------------------------------------------

from ndcg_report.cli import main  # noqa: E402

RUN_ARGS = [f"{name}={path}" for name, path in RUNS.items()]


def judges(capsys, *args) -> tuple[int, str, str]:
    code = main(["judges", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_judges_text_end_to_end(capsys):
    code, out, err = judges(capsys, SMALL / "qrels.txt", JUDGES / "llm.txt", JUDGES / "llm-float.txt", *RUN_ARGS,
                            "--baseline", "bm25", "-m", "nDCG@10 AP", "-l", "2", "--queries", "3")
    assert code == 0 and err == ""
    assert "  qrels: " in out and "== llm against qrels ==" in out and "== llm-float against qrels ==" in out
    assert "Pairs: 1,665 judged by both, 84 by qrels only, 29 by llm only" in out
    assert "Labels for the categorical statistics: rounded to the nearest whole grade, halves up" in out
    assert "Cohen's kappa 0.5890, weighted linear 0.7504, quadratic 0.8725" in out
    assert "Mean label difference (llm - qrels): +0.1387 (llm is more lenient)." in out
    assert "  bm25 (baseline)" in out and "DIFFERS" in out
    assert out.count("Queries where the sets disagree most") == 2


def test_judges_json_is_compare_judgments(capsys, three_sets):
    code, out, _ = judges(capsys, SMALL / "qrels.txt", JUDGES / "llm.txt", *RUN_ARGS, "--baseline", "bm25",
                          "-m", "nDCG@10", "--format", "json")
    assert code == 0
    sets = {"qrels": read_qrels(SMALL / "qrels.txt"), "llm": read_qrels(JUDGES / "llm.txt")}
    evaluations = {name: {run: evaluate(path, qrels, measures="nDCG@10") for run, path in RUNS.items()}
                   for name, qrels in sets.items()}
    expected = compare_judgments(evaluations, sets, baseline="bm25").to_dict()
    assert json.loads(out) == json.loads(json.dumps(expected))


def test_judges_csv_is_tidy(capsys):
    import csv
    import io

    from ndcg_report.analysis.judgments.tables import TIDY_COLUMNS

    code, out, _ = judges(capsys, SMALL / "qrels.txt", JUDGES / "llm.txt", *RUN_ARGS, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and tuple(rows[0]) == TIDY_COLUMNS
    kappa = next(r for r in rows if r["section"] == "agreement" and r["statistic"] == "cohen_kappa")
    assert (kappa["set"], round(float(kappa["value"]), 4)) == ("llm", 0.589)
    cell = next(r for r in rows if r["section"] == "confusion" and r["label"] == "0" and r["other_label"] == "1")
    assert cell["value"] == "196"
    mean = next(r for r in rows if r["section"] == "means" and r["set"] == "llm" and r["system"] == "monot5")
    assert (mean["measure"], round(float(mean["value"]), 4)) == ("nDCG@10", 0.4361)
    assert not any(r["section"] == "verdict" for r in rows)  # no --baseline, no verdicts


def test_judges_without_runs_compares_labels_only(capsys):
    code, out, _ = judges(capsys, SMALL / "qrels.txt", JUDGES / "llm.txt")
    assert code == 0 and "Confusion matrix" in out and "System" not in out
    code, out, _ = judges(capsys, SMALL / "qrels.txt", JUDGES / "llm.txt", "--format", "json")
    document = json.loads(out)
    assert document["systems"] == [] and document["comparisons"]["llm"]["measures"] == {}


def test_judges_fills_the_reference_from_another_set(capsys):
    code, out, _ = judges(capsys, SMALL / "qrels.txt", JUDGES / "llm.txt", *RUN_ARGS, "--fill-unjudged-from", "llm",
                          "--format", "json")
    document = json.loads(out)
    filled = document["sets"][-1]
    assert code == 0 and (filled["name"], filled["filled_from"], filled["filled_pairs"]) == ("qrels+llm", "llm", 29)
    assert document["comparisons"]["qrels+llm"]["pairs"] == {"shared": 1749, "only_reference": 0, "only_other": 29}


def test_sets_with_one_file_name_are_made_unique(capsys, tmp_path):
    (tmp_path / "a").mkdir()
    copy = tmp_path / "a" / "qrels.txt"
    copy.write_text((JUDGES / "llm.txt").read_text())
    code, out, _ = judges(capsys, SMALL / "qrels.txt", copy, "--format", "json")
    assert code == 0 and [s["name"] for s in json.loads(out)["sets"]] == ["qrels", "qrels-2"]


def bad_inputs(tmp_path: Path) -> dict[str, tuple[list, str]]:
    """Each bad input class: the arguments after the reference, and what the one line must say."""
    qrels = (SMALL / "qrels.txt").read_text().splitlines()
    (tmp_path / "bad.txt").write_text(qrels[0] + "\n104861 0 1017092\n")
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "repeated.txt").write_text("\n".join([qrels[0], qrels[1], qrels[0]]) + "\n")
    (tmp_path / "elsewhere.txt").write_text("q9 0 d1 1\nq9 0 d2 0\n")
    (tmp_path / "other_docs.txt").write_text("104861 0 nowhere 1\n")
    (tmp_path / "run.txt").write_text("q9 Q0 d1 1 1.0 x\n")
    return {
        "bad line": ([tmp_path / "bad.txt"], f"{tmp_path / 'bad.txt'}:2: "),
        "empty set": ([tmp_path / "empty.txt"], f"{tmp_path / 'empty.txt'}: empty file"),
        "repeated pair": ([tmp_path / "repeated.txt"], f"{tmp_path / 'repeated.txt'}:3: "),
        "no shared query": ([tmp_path / "elsewhere.txt"], f"{tmp_path / 'elsewhere.txt'}: judgment set 'elsewhere' "
                                                          "shares no query with the reference"),
        "no shared pair": ([tmp_path / "other_docs.txt"], f"{tmp_path / 'other_docs.txt'}: judgment set 'other_docs' "
                                                          "judges no (qid, docid) pair"),
        "one set": ([], "give at least two judgment sets"),
        "run of other topics": ([JUDGES / "llm.txt", f"x={tmp_path / 'run.txt'}"], "run 'x' has no query in common"),
        "unknown fill set": ([JUDGES / "llm.txt", "--fill-unjudged-from", "nope"], "--fill-unjudged-from 'nope'"),
        "missing baseline": ([JUDGES / "llm.txt", f"a={RUNS['rrf']}", "--baseline", tmp_path / "gone.txt"], "gone.txt"),
    }


@pytest.mark.parametrize("case", ["bad line", "empty set", "repeated pair", "no shared query", "no shared pair", "one set",
                                  "run of other topics", "unknown fill set", "missing baseline"])
def test_bad_input_is_exit_2_with_one_line(capsys, tmp_path, case):
    arguments, says = bad_inputs(tmp_path)[case]
    code, out, err = judges(capsys, SMALL / "qrels.txt", *arguments)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and says in err, err
    assert "Traceback" not in err


def test_judges_libraries_are_imported_only_by_judges():
    """scikit-learn and krippendorff load with the judges command, never with `import ndcg_report` or eval."""
    code = ("import sys, io, contextlib\nimport ndcg_report\nfrom ndcg_report.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['eval', sys.argv[1], sys.argv[2]]) == 0\n"
            "before = sorted(m for m in ('sklearn', 'krippendorff') if m in sys.modules)\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['judges', sys.argv[1], sys.argv[3]]) == 0\n"
            "print(before, sorted(m for m in ('sklearn', 'krippendorff') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code, str(SMALL / "qrels.txt"), str(RUNS["bm25"]),
                             str(JUDGES / "llm.txt")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[] ['krippendorff', 'sklearn']"


def test_same_best_system_when_the_reference_ties_the_top():
    from ndcg_report.analysis.judgments.orders import system_order

    tied = system_order({"a": 0.7, "b": 0.7, "c": 0.5}, {"a": 0.6, "b": 0.65, "c": 0.5}, "nDCG@10")
    assert tied.best_reference == ("a", "b") and tied.best_other == ("b",) and tied.same_best_system
    assert tied.tau_ap == 1.0 and tied.kendall_tau < 1.0  # the reference's tie allows either order
    other = system_order({"a": 0.7, "b": 0.6, "c": 0.5}, {"a": 0.6, "b": 0.65, "c": 0.5}, "nDCG@10")
    assert not other.same_best_system
