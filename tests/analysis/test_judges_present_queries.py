"""Judgment sets compared on runs that lack queries: each run's per-query correlations over the queries
it has, the runs lacking judged queries, and the bootstrap interval of the systems' tau-b over queries."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ndcg_report import evaluate
from ndcg_report.analysis.judgments.comparison import compare_judgments
from ndcg_report.inputs.reading import read_qrels
from ndcg_report.stats.rank_correlation import kendall_tau_b_rows, tau_b_interval
from ndcg_report.stats.streams import stream
from tests.helpers import SMALL, run_on_queries

JUDGES = SMALL.parent / "judges"
KEPT = ("1037798", "104861", "1063750", "1103812")  # 4 of the 8 judged queries


@pytest.fixture(scope="module")
def lacking_run(tmp_path_factory):
    return run_on_queries(SMALL / "bm25.txt", KEPT, tmp_path_factory.mktemp("runs") / "part.txt")


@pytest.fixture(scope="module")
def compared(lacking_run):
    sets = {"human": read_qrels(SMALL / "qrels.txt"), "llm": read_qrels(JUDGES / "llm.txt")}
    runs = {"bm25": SMALL / "bm25.txt", "monot5": SMALL / "monot5.txt", "rrf": JUDGES / "rrf.txt", "part": lacking_run}
    evaluations = {name: {run: evaluate(path, qrels, measures="nDCG@10") for run, path in runs.items()}
                   for name, qrels in sets.items()}
    return evaluations, compare_judgments(evaluations, sets, n_resamples=2000)


def _by_qid(evaluation) -> dict:
    return dict(zip(evaluation.qids.tolist(), evaluation.column_values("nDCG@10").tolist()))


def test_a_lacking_runs_correlations_are_over_its_queries_as_scipy_gives_them(compared):
    evaluations, comparison = compared
    human, llm = (_by_qid(evaluations[name]["part"]) for name in ("human", "llm"))
    x, y = np.array([human[q] for q in KEPT]), np.array([llm[q] for q in KEPT])
    row = next(s for s in comparison.comparison("llm").per_system if s.system == "part")
    assert row.n_queries == 4
    assert row.pearson == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert row.kendall_tau == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    over_all = stats.pearsonr(list(human.values()), [llm[q] for q in human]).statistic  # the 0s counted
    assert abs(row.pearson - over_all) > 1e-4
    whole = next(s for s in comparison.comparison("llm").per_system if s.system == "bm25")
    assert whole.n_queries == 8


def test_the_means_still_count_a_lacking_query_as_0(compared):
    evaluations, comparison = compared
    values = np.array(list(_by_qid(evaluations["human"]["part"]).values()))
    assert len(values) == 8 and comparison.means["human"]["nDCG@10"]["part"] == pytest.approx(values.sum() / 8)


def test_the_lacking_runs_are_listed_per_set(compared):
    _, comparison = compared
    assert [(c.system, c.set, c.lacking, c.judged) for c in comparison.lacking] == [
        ("part", "human", 4, 8), ("part", "llm", 4, 8)]
    assert comparison.to_dict()["lacking"][0] == {"system": "part", "set": "human", "lacking": 4, "judged": 8}


def test_tau_b_rows_are_scipys():
    rng = np.random.default_rng(7)
    x = rng.integers(0, 4, (200, 6)).astype(float)
    y = x + rng.integers(0, 3, (200, 6))
    found = kendall_tau_b_rows(x, y)
    for i in range(200):
        expected = stats.kendalltau(x[i], y[i]).statistic
        assert (np.isnan(found[i]) and np.isnan(expected)) or found[i] == pytest.approx(expected, abs=1e-12)


def test_tau_intervals_are_the_percentiles_of_the_resampled_orders_computed_by_hand(compared):
    evaluations, comparison = compared
    systems = list(comparison.systems)
    x = np.array([evaluations["human"][s].column_values("nDCG@10") for s in systems])
    y = np.array([evaluations["llm"][s].column_values("nDCG@10") for s in systems])
    assert list(evaluations["human"]["bm25"].qids) == list(evaluations["llm"]["bm25"].qids)
    rng = stream(42, "judges tau-b", "llm", "nDCG@10")
    drawn = rng.integers(0, 8, (2000, 8))  # scipy.stats.bootstrap's draws from the same stream
    taus = np.array([stats.kendalltau(x[:, d].mean(axis=1), y[:, d].mean(axis=1)).statistic for d in drawn])
    expected = np.percentile(taus[np.isfinite(taus)], [2.5, 97.5])
    order = comparison.comparison("llm").order("nDCG@10")
    assert order.kendall_tau_interval == pytest.approx(tuple(expected), abs=1e-12)
    assert order.kendall_tau_interval[0] <= order.kendall_tau <= order.kendall_tau_interval[1]


def test_tau_interval_is_undefined_for_fewer_than_two_systems():
    assert np.isnan(tau_b_interval(np.ones((1, 5)), np.ones((1, 5)), np.random.default_rng(0), 100, 0.95)).all()
