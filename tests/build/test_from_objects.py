"""A report from Python objects (ndcg_report.build_report, Experiment.report): the same report as `build`
on the same data, its inputs written once as Parquet into the report, and the command that rebuilds it."""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import ndcg_report
from ndcg_report import ParameterError, compare_runs, read_qrels, read_run, read_topics

SHARE_KERNEL_FORKS = True  # its builds fork their kernels from the session's server (conftest.py)

SMALL = Path(__file__).resolve().parents[1] / "data" / "small"
GROUPS = {"first-four": ["1037798", "104861", "1063750", "1103812"]}  # the rest in no group
OPTIONS = dict(baseline_name="BM25", preset="trec-dl", measures="R@100", seed=7)
CLI_OPTIONS = ["--baseline-name", "BM25", "--preset", "trec-dl", "-m", "R@100", "--seed", "7"]


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ndcg_report.cli", *args], capture_output=True, text=True, cwd=cwd)


def numbers(summary: dict) -> dict:
    """summary.json without what names the files (names, hashes, formats, the run tag) and the command."""
    record = {key: value for key, value in summary.items() if key not in ("files", "command", "parameters")}
    record["systems"] = [{key: value for key, value in system.items() if key not in ("file", "tag")}
                         for system in record["systems"]]
    record["parameters"] = {key: value for key, value in summary["parameters"].items()
                            if key not in ("runs", "baseline", "qrels", "topics", "groups")}
    record["groups"] = {key: value for key, value in summary["groups"].items() if key != "file"}
    return record


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """The same data built three ways: `build` from the files; Experiment.report from objects (DataFrames,
    a pytrec_eval dict, a Series of topics, a mapping of groups); `build` again from the inputs/ folder
    of that report, with the command its How to reproduce gives."""
    folder = tmp_path_factory.mktemp("objects")
    (folder / "groups.tsv").write_text("".join(f"{qid}\tfirst-four\n" for qid in GROUPS["first-four"]))
    files = cli("build", "--run", f"monoT5={SMALL / 'monot5.txt'}", "--baseline", str(SMALL / "bm25.txt"),
                "--qrels", str(SMALL / "qrels.txt"), "--topics", str(SMALL / "topics.txt"),
                "--groups", str(folder / "groups.tsv"), *CLI_OPTIONS, "--out", str(folder / "files"))
    assert files.returncode == 0, files.stderr
    qrels = read_qrels(SMALL / "qrels.txt").table.to_pandas()
    qrels_dict: dict[str, dict[str, float]] = {}
    for qid, docid, rel in qrels[["qid", "docid", "rel"]].itertuples(index=False):
        qrels_dict.setdefault(str(qid), {})[docid] = int(rel)
    run, baseline = (read_run(SMALL / name).table.to_pandas() for name in ("monot5.txt", "bm25.txt"))
    experiment = compare_runs({"monoT5": run}, qrels_dict, baseline=baseline, topics=read_topics(SMALL / "topics.txt"),
                              groups=GROUPS, **OPTIONS)
    result = experiment.report(folder / "objects")  # the runs as the caller still holds them (the Experiment: weakly)
    assert result.out_dir == folder / "objects"
    command = json.loads((folder / "objects" / "summary.json").read_text())["command"]
    words = shlex.split(command)
    assert words[:2] == ["ndcg-report", "build"] and words[-2:] == ["--out", "NEW_FOLDER"]
    again = cli(*words[1:-1], str(folder / "rebuilt"), cwd=folder / "objects")
    assert again.returncode == 0, again.stderr
    return {"files": folder / "files", "objects": folder / "objects", "rebuilt": folder / "rebuilt"}


def test_a_report_from_objects_has_build_s_numbers_and_per_query_csv(built):
    files, objects = (json.loads((built[name] / "summary.json").read_text()) for name in ("files", "objects"))
    assert numbers(objects) == numbers(files)
    assert objects["comparisons"] == files["comparisons"] and objects["groups"]["groups"] == {"first-four": 4, "(no group)": 4}
    assert (built["objects"] / "per_query.csv").read_bytes() == (built["files"] / "per_query.csv").read_bytes()
    assert (built["objects"] / "leaderboard.tex").read_bytes() == (built["files"] / "leaderboard.tex").read_bytes()


def test_the_inputs_are_written_once_as_parquet_with_their_sha256(built):
    inputs = built["objects"] / "inputs"
    assert sorted(path.name for path in inputs.iterdir()) == [
        "baseline.parquet", "groups.json", "qrels.parquet", "run-1.parquet", "topics.jsonl"]
    summary = json.loads((built["objects"] / "summary.json").read_text())
    assert {entry["file"]: entry["sha256"] for entry in summary["files"]} == {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in inputs.iterdir()}
    run = pq.read_table(inputs / "run-1.parquet")
    assert run.column_names == ["qid", "docid", "score"] and run.num_rows == 800
    assert json.loads((inputs / "groups.json").read_text()) == GROUPS
    assert summary["parameters"]["runs"] == [{"name": "monoT5", "file": "run-1.parquet"}]


def test_how_to_reproduce_rebuilds_the_same_report_from_the_report_s_inputs(built):
    objects, rebuilt = (json.loads((built[name] / "summary.json").read_text()) for name in ("objects", "rebuilt"))
    assert {key: value for key, value in rebuilt.items() if key != "command"} == {
        key: value for key, value in objects.items() if key != "command"}
    assert (built["rebuilt"] / "per_query.csv").read_bytes() == (built["objects"] / "per_query.csv").read_bytes()
    html = (built["objects"] / "report.html").read_text()
    assert "Built from Python objects (ndcg_report.build_report)" in html and "this report&#x27;s folder inputs/" in html
    assert "Built from Python objects" not in (built["files"] / "report.html").read_text()


def test_an_experiment_of_files_reads_them_where_they_are(tmp_path, monkeypatch):
    """Inputs given as paths are not copied: the report is `build`'s, with nothing under inputs/; checked
    without a build (the parameters build_report hands to the pipeline)."""
    from ndcg_report.build import from_objects

    seen = {}
    monkeypatch.setattr(from_objects, "build_notebook", lambda job, out, timeout, progress: seen.update(job=job))
    experiment = compare_runs({"monoT5": SMALL / "monot5.txt"}, SMALL / "qrels.txt", baseline=SMALL / "bm25.txt",
                              baseline_name="BM25")
    experiment.report(tmp_path / "out")
    job = seen["job"]
    assert job.prepare is None and job.parameters["inputs_folder"] == ""
    assert job.parameters["runs"] == [{"name": "monoT5", "path": str(SMALL / "monot5.txt")}]
    assert job.parameters["qrels"] == str(SMALL / "qrels.txt") and job.parameters["baseline"] == str(SMALL / "bm25.txt")


def test_the_mapping_form_names_objects_as_compare_runs_does(tmp_path, monkeypatch):
    from ndcg_report.build import from_objects

    seen = {}
    monkeypatch.setattr(from_objects, "build_notebook", lambda job, out, timeout, progress: seen.update(job=job))
    run = read_run(SMALL / "monot5.txt").table.to_pandas()
    other = read_qrels(SMALL / "qrels.txt").table  # a pyarrow Table
    ndcg_report.build_report({"runs": [run], "qrels": {"human": SMALL / "qrels.txt", "other": other},
                              "baseline": SMALL / "bm25.txt"}, tmp_path / "out", title="T", fill_unjudged_from="other")
    parameters = seen["job"].parameters
    assert parameters["runs"][0]["name"] == "run 1" and parameters["title"] == "T"
    assert [entry["name"] for entry in parameters["qrels"]] == ["human", "other"]
    assert parameters["fill_unjudged_from"] == "other" and parameters["inputs_folder"] == "inputs"


@pytest.mark.parametrize("call, says", [
    (lambda e, out: ndcg_report.build_report(e, out, preset="msmarco"), "preset: an Experiment's report uses"),
    (lambda e, out: ndcg_report.build_report({"runs": [SMALL / "monot5.txt"], "qrels": SMALL / "qrels.txt"}, out),
     "no baseline"),
    (lambda e, out: ndcg_report.build_report({"runs": {}, "qrels": 1, "baseline": 1, "corpus": 2}, out),
     "unknown key 'corpus'"),
    (lambda e, out: ndcg_report.build_report({"runs": iter([SMALL / "monot5.txt"]), "qrels": SMALL / "qrels.txt",
                                              "baseline": SMALL / "bm25.txt"}, out), "not an iterator"),
    (lambda e, out: ndcg_report.build_report({"runs": [SMALL / "monot5.txt"], "qrels": SMALL / "qrels.txt",
                                              "baseline": SMALL / "bm25.txt"}, out, alpha=0.01), "alpha=0.01"),
    (lambda e, out: ndcg_report.build_report({"runs": [SMALL / "monot5.txt"], "qrels": SMALL / "qrels.txt",
                                              "baseline": SMALL / "bm25.txt"}, out, colour="red"),
     "unknown option colour"),
    (lambda e, out: ndcg_report.build_report([SMALL / "monot5.txt"], out), "got list"),
])
def test_bad_calls_are_one_parameter_error_and_write_nothing(tmp_path, monkeypatch, call, says):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    experiment = compare_runs({"monoT5": SMALL / "monot5.txt"}, SMALL / "qrels.txt", baseline=SMALL / "bm25.txt")
    with pytest.raises(ParameterError, match=says):
        call(experiment, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not list((tmp_path / "tmp").iterdir())


def test_runs_from_an_iterator_cannot_make_a_report(tmp_path):
    experiment = compare_runs(iter([("monoT5", SMALL / "monot5.txt")]), SMALL / "qrels.txt", baseline=SMALL / "bm25.txt")
    with pytest.raises(ParameterError, match="given by an iterator"):
        experiment.report(tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_bad_objects_are_refused_before_a_kernel_and_the_written_inputs_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    run = pd.DataFrame({"qid": ["19335"], "docid": ["D1"], "score": [float("nan")]})
    with pytest.raises(ParameterError, match="score on row 0 is nan"):
        ndcg_report.build_report({"runs": {"bad": run}, "qrels": SMALL / "qrels.txt", "baseline": SMALL / "bm25.txt"},
                                 tmp_path / "out")
    assert not (tmp_path / "out").exists() and not list((tmp_path / "tmp").iterdir())


def test_runs_the_caller_let_go_or_held_as_dicts_are_not_kept_and_say_so(tmp_path):
    """The Experiment holds no run its caller may let go (compare_runs' memory contract): an object by a
    weak reference, a dict not at all; report() then says which run and what to do."""
    import gc

    run = read_run(SMALL / "monot5.txt").table.to_pandas()
    experiment = compare_runs({"monoT5": run}, SMALL / "qrels.txt", baseline=SMALL / "bm25.txt")
    del run
    gc.collect()
    with pytest.raises(ParameterError, match="the run 'monoT5' given to compare_runs as an object has been let go"):
        experiment.report(tmp_path / "out")
    as_dict: dict[str, dict[str, float]] = {}
    for qid, docid, score in read_run(SMALL / "monot5.txt").table.to_pandas().itertuples(index=False):
        as_dict.setdefault(str(qid), {})[docid] = score
    experiment = compare_runs({"monoT5": as_dict}, SMALL / "qrels.txt", baseline=SMALL / "bm25.txt")
    with pytest.raises(ParameterError, match="given to compare_runs as a dict, which an Experiment does not keep"):
        experiment.report(tmp_path / "out")
    assert not (tmp_path / "out").exists()
