"""Judgment sets compared (issue 32): label agreement, rank correlations, compare_judgments, `ndcg-report judges`.

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

DATA = Path(__file__).parent / "data"
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
