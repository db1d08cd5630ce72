"""The gate's statuses, Holm over the systems x measures tested, and the losers, on reports made in memory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from ndcg_report.analysis.gate.built import BuiltReport
from ndcg_report.analysis.gate.verdict import MAX_LOSERS, gate, gated_measures
from ndcg_report.errors import ParameterError

QIDS = [f"q{i:02d}" for i in range(40)]
BASE = np.random.default_rng(3).uniform(0.3, 0.9, len(QIDS))


def report(label: str, systems: dict[str, np.ndarray], sha: dict[str, str], unjudged=frozenset({"d1"}),
           **parameters) -> BuiltReport:
    rows = [{"system": name, "qid": qid, "measure": "nDCG@10", "value": float(v)}
            for name, values in systems.items() for qid, v in zip(QIDS[:len(values)], values)]
    files = [{"role": f"run: {name}", "sha256": sha[name]} for name in systems] + [
        {"role": "qrels", "sha256": parameters.pop("qrels", "q" * 64)}, {"role": "topics", "sha256": "t" * 64}]
    summary = {"title": "t", "files": files, "unjudged": {"depth": 10}, "systems": [{"name": name} for name in systems],
               "parameters": {"measures": ["nDCG@10", "RR"], "headline": "nDCG@10", "rel_level": 1.0, "gain": "linear",
                              "missing": "zero", "no_relevant": "zero", "identical_ids": "keep", "seed": 42,
                              "n_resamples": 2000, "confidence": 0.95, **parameters}}
    return BuiltReport(Path(label), label, summary, pd.DataFrame(rows), {("worse", "q00"): unjudged},
                       {"q00": "what is <b>"})


def shifted(delta: float, queries: int = 40) -> np.ndarray:
    noise = np.random.default_rng(int(abs(delta) * 1000)).normal(0, 0.05, queries)
    return BASE[:queries] + delta + noise


@pytest.fixture(scope="module")
def pair():
    names = ("worse", "slightly", "better", "same", "few", "gone")
    before = report("BEFORE", {"worse": BASE, "slightly": BASE, "better": BASE, "same": BASE, "few": BASE[:4],
                               "gone": BASE}, {name: "a" * 64 for name in names})
    worse = shifted(-0.2)
    worse[0] = 0.0  # q00 falls most
    after = report("AFTER", {"worse": worse, "slightly": shifted(-0.021), "better": shifted(0.1), "same": BASE,
                             "few": BASE[:4] - 0.1, "new": BASE},
                   {"worse": "b" * 64, "slightly": "b" * 64, "better": "b" * 64, "same": "a" * 64, "few": "b" * 64,
                    "new": "b" * 64}, unjudged=frozenset({"d1", "d2"}))
    return before, after


def by_system(verdict):
    return {result.system: result for result in verdict.results}


def test_each_status_in_its_place(pair):
    verdict = gate(*pair, ("nDCG@10",))
    statuses = {name: result.status for name, result in by_system(verdict).items()}
    assert statuses["worse"] == "regression" and statuses["better"] == "improved"
    assert statuses["same"] == "unchanged" and statuses["few"] == "not comparable"
    assert statuses["new"] == "new" and statuses["gone"] == "gone"
    assert by_system(verdict)["few"].reason == "4 queries scored in both builds; 5 needed"
    assert verdict.status == "regression" and verdict.failed


def test_holm_over_the_systems_tested_matches_statsmodels(pair):
    results = [result for result in gate(*pair, ("nDCG@10",)).results if result.p is not None]
    assert [result.system for result in results] == ["worse", "slightly", "better"]
    p = np.array([result.p for result in results])
    np.testing.assert_allclose([result.p_holm for result in results], multipletests(p, method="holm")[1], rtol=1e-12)
    better = np.array([result.p_better for result in results])
    np.testing.assert_allclose([r.p_better_holm for r in results], multipletests(better, method="holm")[1], rtol=1e-12)


def test_a_drop_significant_before_holm_only_is_a_warning(pair):
    slightly = by_system(gate(*pair, ("nDCG@10",)))["slightly"]
    assert slightly.p < 0.05 <= slightly.p_holm, (slightly.p, slightly.p_holm)
    assert slightly.status == "warning" and "before Holm" in slightly.reason


def test_a_margin_turns_a_small_significant_drop_into_a_pass_and_an_unproven_large_one_into_a_warning(pair):
    big_margin = by_system(gate(*pair, ("nDCG@10",), margin=0.5))
    assert big_margin["worse"].status == "pass"  # significant, but less than the margin
    strict = by_system(gate(*pair, ("nDCG@10",), margin=0.01, alpha=1e-9))
    assert strict["worse"].status == "warning" and "margin" in strict["worse"].reason


def test_losers_are_the_largest_drops_capped_and_counted(pair):
    worse = by_system(gate(*pair, ("nDCG@10",)))["worse"]
    deltas = [loser["delta"] for loser in worse.losers]
    assert len(deltas) == MAX_LOSERS and deltas == sorted(deltas)
    fell = int(np.sum(shifted(-0.2)[1:] < BASE[1:])) + 1
    assert worse.losers_beyond == fell - MAX_LOSERS
    first = worse.losers[0]
    assert (first["qid"], first["before"], first["after"]) == ("q00", BASE[0], 0.0)
    assert first["query"] == "what is <b>" and first["unjudged"] == ["d2"]  # d1 was in BEFORE's top k already


def test_other_qrels_or_averaging_make_every_shared_system_not_comparable(pair):
    before, after = pair
    other = report("AFTER", {"worse": BASE, "new": BASE}, {"worse": "a" * 64, "new": "a" * 64}, qrels="z" * 64,
                   gain="exponential")
    statuses = {(r.system, r.status, r.reason) for r in gate(before, other, ("nDCG@10",)).results}
    assert ("worse", "not comparable", "the qrels differ (sha256); gain differs (linear -> exponential)") in statuses
    assert ("new", "new", "not in BEFORE") in statuses
    assert not gate(before, other, ("nDCG@10",)).failed


def test_a_measure_not_in_both_reports_is_refused(pair):
    assert gated_measures(*pair) == ("nDCG@10",)
    assert gated_measures(*pair, "recip_rank") == ("RR",)
    with pytest.raises(ParameterError, match=r"-m AP: not a measure of BEFORE"):
        gated_measures(*pair, "AP")


def test_a_p_value_at_the_resampling_floor_is_written_as_at_most(pair):
    """2,000 sign flips: no one-sided p below 1/2,001, no Holm p below the tests / 2,001 (3 systems tested)."""
    from ndcg_report.analysis.gate.formats import markdown_summary

    verdict = gate(*pair, ("nDCG@10",))
    worse = by_system(verdict)["worse"]
    tested = sum(result.p is not None for result in verdict.results)
    assert verdict.floors == (1 / 2001, tested / 2001) and worse.p == pytest.approx(1 / 2001)
    assert worse.p_holm == pytest.approx(tested / 2001)
    assert f"one-sided p ≤ 0.0005, Holm's p ≤ {tested / 2001:.4f}" in worse.line(0.95, verdict.floors)
    assert f"| ≤0.0005 (≤{tested / 2001:.4f}) |" in markdown_summary([("t", verdict)])
