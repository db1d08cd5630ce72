"""A report's -M / max_retrieved: trec_eval's -M, with `eval -M`'s numbers, declared once for build, batch and Python."""

from __future__ import annotations

import json

import pytest

from ndcg_report import ParameterError, compare_runs
from ndcg_report.analysis.report_model import build_command
from ndcg_report.batch.config import load_config
from ndcg_report.build.parameters import validate_parameters
from tests.helpers import BASELINE, QRELS, RUN, cli

MEASURES = "nDCG@10 AP R@100 P@10"


def test_a_report_s_means_under_max_retrieved_are_eval_s_with_the_same_M():
    evaluated = cli("eval", "-M", "5", "-m", MEASURES, "--format", "json", str(QRELS), f"monoT5={RUN}", f"BM25={BASELINE}")
    assert evaluated.returncode == 0, evaluated.stderr
    expected = {entry["run"]: {label: value["mean"] for label, value in entry["summary"].items()}
                for entry in json.loads(evaluated.stdout)["runs"]}
    experiment = compare_runs({"monoT5": RUN}, QRELS, baseline=BASELINE, baseline_name="BM25", measures=MEASURES,
                              max_retrieved=5)
    got = {name: {label: float(experiment.leaderboard.at[name, label]) for label in experiment.labels}
           for name in experiment.systems}
    assert got == expected
    unbounded = compare_runs({"monoT5": RUN}, QRELS, baseline=BASELINE, measures=MEASURES).leaderboard
    assert got["monoT5"]["R@100"] < float(unbounded.at["monoT5", "R@100"])  # -M 5 took lines away


def test_max_retrieved_reaches_the_rebuild_command_and_a_batch_key(tmp_path):
    params = validate_parameters(runs=[{"name": "m", "path": str(RUN)}], qrels=str(QRELS), baseline=str(BASELINE),
                                 max_retrieved=1000)
    assert params.max_retrieved == 1000 and "--max-retrieved=1000" in build_command(params)
    assert "max-retrieved" not in build_command(validate_parameters(
        runs=[{"name": "m", "path": str(RUN)}], qrels=str(QRELS), baseline=str(BASELINE)))
    (tmp_path / "c.yml").write_text(f"output: out\nreports:\n  - {{name: a, run: {RUN}, baseline: {BASELINE}, "
                                    f"qrels: {QRELS}, max_retrieved: 1000}}\n")
    assert load_config(tmp_path / "c.yml").reports[0].options.max_retrieved == 1000


def test_a_bad_max_retrieved_is_one_parameter_error():
    with pytest.raises(ParameterError, match="max_retrieved"):
        compare_runs({"monoT5": RUN}, QRELS, baseline=BASELINE, max_retrieved=-1)
    refused = cli("build", "--run", str(RUN), "--baseline", str(BASELINE), "--qrels", str(QRELS), "-M", "x")
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1


def test_an_experiment_s_report_keeps_its_max_retrieved(tmp_path, monkeypatch):
    from ndcg_report.build import from_objects

    seen = {}
    monkeypatch.setattr(from_objects, "build_notebook", lambda job, out, timeout, progress: seen.update(job=job))
    compare_runs({"monoT5": RUN}, QRELS, baseline=BASELINE, max_retrieved=5).report(tmp_path / "out")
    assert seen["job"].parameters["max_retrieved"] == 5
