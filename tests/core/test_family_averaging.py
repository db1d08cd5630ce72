"""A measure family owns its averaging: every mean of a measure (Evaluation.mean and mean_with, the
Experiment's leaderboard and intervals, the data checks' other averaging rule) is its family's, so
gm_map and gm_bpref are geometric means wherever they are averaged."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from ndcg_report import evaluate
from ndcg_report.analysis.checks import averaging_warnings
from ndcg_report.analysis.compare import compare_runs
from ndcg_report.core.conventions import left_out_counts
from ndcg_report.core.measures.family import MIN_GEO_MEAN
from ndcg_report.core.measures.registry import FAMILIES

SMALL = Path(__file__).resolve().parents[1] / "data" / "small"


def geometric(values: np.ndarray) -> float:
    """trec_eval's geometric mean, written out: exp(mean(log(max(v, 0.00001))))."""
    return math.exp(sum(math.log(max(v, MIN_GEO_MEAN)) for v in values) / len(values))


def test_a_report_with_gm_map_warns_of_no_other_averaging_rule_when_no_query_is_left_out():
    """No judged query of tests/data/small lacks a relevant document: leaving such queries out changes no
    mean, gm_map's and gm_bpref's included (their other rule's mean was an arithmetic one, and warned)."""
    experiment = compare_runs({"monoT5": SMALL / "monot5.txt"}, SMALL / "qrels.txt", baseline=SMALL / "bm25.txt",
                              baseline_name="BM25", measures="gm_map gm_bpref AP nDCG@10")
    assert experiment.baseline.counts.no_relevant == 0 and experiment.baseline.counts.below_level == 0
    assert averaging_warnings(experiment) == []


def test_gm_map_s_mean_under_another_rule_is_the_geometric_mean_of_the_queries_it_keeps():
    evaluation = evaluate(SMALL / "bm25.txt", SMALL / "qrels.txt", measures="gm_map AP", rel_level=3)
    assert evaluation.counts.below_level == 1  # one query has no label >= 3: skip leaves it out
    kept = evaluation.averaged_with("gm_map", no_relevant="skip")
    assert kept.sum() == 7
    ap = evaluation.values[:, evaluation.column("AP")]
    assert evaluation.mean_with("gm_map", no_relevant="skip") == pytest.approx(geometric(ap[kept]), rel=1e-12)
    assert evaluation.mean_with("gm_map", no_relevant="skip") == pytest.approx(0.0058152269, rel=1e-8)
    assert evaluation.mean_with("AP", no_relevant="skip") == pytest.approx(ap[kept].mean(), rel=1e-12)
    assert evaluation.mean_with("gm_map") == evaluation.mean("gm_map") == pytest.approx(geometric(ap), rel=1e-12)


def test_the_leaderboard_and_the_intervals_average_as_the_family_does():
    experiment = compare_runs({"monoT5": SMALL / "monot5.txt"}, SMALL / "qrels.txt", baseline=SMALL / "bm25.txt",
                              baseline_name="BM25", measures="gm_map AP", n_resamples=2000)
    intervals = experiment.mean_intervals.droplevel("k")
    for name in experiment.systems:
        ap = experiment.scores("AP")[name].to_numpy()
        assert experiment.leaderboard.at[name, "gm_map"] == pytest.approx(geometric(ap), rel=1e-12)
        assert experiment.leaderboard.at[name, "AP"] == experiment.evaluations[name].mean("AP")
        interval = intervals.loc[(name, "gm_map")]
        assert interval["mean"] == experiment.leaderboard.at[name, "gm_map"]
        assert interval["low"] < interval["mean"] < interval["high"]  # of the geometric mean, around it
        arithmetic = intervals.loc[(name, "AP")]
        assert arithmetic["mean"] == pytest.approx(ap.mean(), rel=1e-12)


def test_a_count_s_all_row_is_its_sum_and_its_mean_the_arithmetic_one():
    evaluation = evaluate(SMALL / "bm25.txt", SMALL / "qrels.txt", measures="num_ret num_rel")
    num_ret = evaluation.values[:, 0]
    assert evaluation.overall("num_ret") == num_ret.sum() and evaluation.mean("num_ret") == num_ret.mean()
    assert evaluation.overall("num_rel") == evaluation.num_rel_graded.sum()  # trec_eval -c's num_rel `all` row


@pytest.mark.parametrize(("kind", "relevant"), [("graded", "positive"), ("gain", "positive"), ("binary", "level"),
                                                ("count", "any"), ("unjudged", "any")])
def test_each_kind_says_what_a_query_needs_to_have_something_relevant(kind, relevant):
    family = next(family for family in FAMILIES.values() if family.kind == kind)
    num_rel, num_rel_graded = np.array([0, 0, 2]), np.array([0, 3, 3])  # nothing; labels below the level; both
    expected = {"positive": [False, True, True], "level": [False, False, True], "any": [True, True, True]}[relevant]
    assert family.relevant == relevant
    assert family.has_relevant(num_rel, num_rel_graded).tolist() == expected


def test_the_queries_left_out_are_named_by_what_each_family_finds_relevant():
    evaluation = evaluate(SMALL / "bm25.txt", SMALL / "qrels.txt", measures="rbp AP unj.10", rel_level=3)
    rbp, ap, unj = evaluation.measures
    assert left_out_counts(evaluation, [rbp, unj], "zero", "skip") == {}  # every query has a positive label
    assert left_out_counts(evaluation, [ap, unj], "zero", "skip") == {"binary": 1}
    assert left_out_counts(evaluation, [ap], "zero", "zero") == {}


def test_a_family_row_takes_keywords_only():
    with pytest.raises(TypeError):
        type(FAMILIES["AP"])("AP", "binary", "an unnamed definition")  # type: ignore[misc]
