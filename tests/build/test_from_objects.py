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


def test_runs_from_an_iterator_are_kept_for_the_report(tmp_path, monkeypatch):
    """A generator's runs are read once; each given as an object is written at compare time, so report() can
    still hand every run to the pipeline (checked without a build: the parameters build_report hands on)."""
    from ndcg_report.build import from_objects

    seen = {}
    monkeypatch.setattr(from_objects, "build_notebook", lambda job, out, timeout, progress: seen.update(job=job))
    run = read_run(SMALL / "monot5.txt").table.to_pandas()
    experiment = compare_runs(iter([("monoT5", run), ("again", SMALL / "monot5.txt")]), SMALL / "qrels.txt",
                              baseline=SMALL / "bm25.txt")
    del run
    experiment.report(tmp_path / "out")
    runs = seen["job"].parameters["runs"]
    assert [entry["name"] for entry in runs] == ["monoT5", "again"]
    assert runs[1]["path"] == str(SMALL / "monot5.txt") and seen["job"].parameters["inputs_folder"] == "inputs"


def test_bad_objects_are_refused_before_a_kernel_and_the_written_inputs_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    run = pd.DataFrame({"qid": ["19335"], "docid": ["D1"], "score": [float("nan")]})
    with pytest.raises(ParameterError, match="score on row 0 is nan"):
        ndcg_report.build_report({"runs": {"bad": run}, "qrels": SMALL / "qrels.txt", "baseline": SMALL / "bm25.txt"},
                                 tmp_path / "out")
    assert not (tmp_path / "out").exists() and not list((tmp_path / "tmp").iterdir())


def test_a_run_made_inline_makes_the_report_with_eval_s_numbers(tmp_path):
    """A notebook's idiom: compare_runs on a DataFrame made in the call (nothing else holds it), then
    report(out) builds; its means are `ndcg-report eval`'s on the same lines written as a TREC run."""
    import gc

    frame = read_run(SMALL / "monot5.txt").table.to_pandas()
    experiment = compare_runs({"m": frame.sort_values("score", ascending=False).groupby("qid").head(50)},
                              SMALL / "qrels.txt", baseline=SMALL / "bm25.txt", baseline_name="BM25",
                              measures="nDCG@10 AP R@100")
    top = frame.sort_values("score", ascending=False).groupby("qid").head(50)
    del frame
    gc.collect()
    experiment.report(tmp_path / "out")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    (tmp_path / "top.txt").write_text("".join(f"{q} Q0 {d} 0 {s!r} m\n" for q, d, s in
                                              top[["qid", "docid", "score"]].itertuples(index=False)))
    evaluated = cli("eval", "-m", "nDCG@10 AP R@100", "--format", "json", str(SMALL / "qrels.txt"), str(tmp_path / "top.txt"))
    assert evaluated.returncode == 0, evaluated.stderr
    means = json.loads(evaluated.stdout)["summary"]
    system = next(entry for entry in summary["systems"] if entry["name"] == "m")
    assert {label: system["summary"][label]["mean"] for label in ("nDCG@10", "AP", "R@100")} == {
        label: means[label]["mean"] for label in ("nDCG@10", "AP", "R@100")}
    assert pq.read_table(tmp_path / "out" / "inputs" / "run-1.parquet").num_rows == 400


def test_runs_given_as_objects_are_written_once_to_a_private_folder_removed_with_the_experiment(tmp_path, monkeypatch):
    """Each run given as an object (a dict too) is written at compare time as Parquet into one private
    temporary folder; it goes when the Experiment is collected, and a copy gone by hand is one clear error."""
    import gc

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    as_dict: dict[str, dict[str, float]] = {}
    for qid, docid, score in read_run(SMALL / "monot5.txt").table.to_pandas().itertuples(index=False):
        as_dict.setdefault(str(qid), {})[docid] = score
    experiment = compare_runs({"monoT5": as_dict}, SMALL / "qrels.txt", baseline=read_run(SMALL / "bm25.txt"))
    folder = experiment.sources.store.folder
    assert folder.parent == tmp_path / "tmp" and folder.stat().st_mode & 0o777 == 0o700
    assert sorted(path.name for path in folder.iterdir()) == ["input-1.parquet"]  # the run: the baseline has a file
    assert experiment.sources.baseline == SMALL / "bm25.txt"  # parsed from a file still there: kept as its path
    assert pq.read_table(folder / "input-1.parquet").num_rows == 800
    (folder / "input-1.parquet").unlink()
    with pytest.raises(ParameterError, match="the run 'monoT5' given to compare_runs as an object was written to .*gone"):
        experiment.report(tmp_path / "out")
    assert not (tmp_path / "out").exists()
    del experiment
    gc.collect()
    assert not folder.exists()


def test_experiment_paper_tables_show_their_options_in_the_signature():
    """help() and Jupyter read inspect.signature: the writers' keyword options, not **options."""
    import inspect
    import pydoc

    from ndcg_report.analysis.experiment import Experiment

    latex = inspect.signature(Experiment.to_latex)
    assert list(latex.parameters)[:1] == ["self"] and {"measures", "systems", "letters", "digits", "caption",
                                                       "label"} <= set(latex.parameters)
    assert latex.parameters["label"].default == "tab:leaderboard"
    assert latex.parameters["label"].kind is inspect.Parameter.KEYWORD_ONLY
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in latex.parameters.values())
    assert list(inspect.signature(Experiment.to_csv).parameters)[:2] == ["self", "path"]
    assert "label: str = 'tab:leaderboard'" in pydoc.render_doc(Experiment.to_latex)
    experiment = compare_runs({"monoT5": SMALL / "monot5.txt"}, SMALL / "qrels.txt", baseline=SMALL / "bm25.txt",
                              measures="nDCG@10 AP")
    assert "\\label{tab:mine}" in experiment.to_latex(label="tab:mine", measures=["AP"])


def test_several_baselines_reach_the_report_each_by_its_name_an_inline_one_too(tmp_path):
    """compare_runs(baseline=[...]) then report(out): the report has each baseline by name, an inline DataFrame
    one written into inputs/, and its comparisons with the second are the Experiment's."""
    frame = read_run(SMALL / "monot5.txt").table.to_pandas()
    experiment = compare_runs({"monoT5": SMALL / "monot5.txt"}, SMALL / "qrels.txt",
                              baseline=[("BM25", SMALL / "bm25.txt"),
                                        ("top5", frame.sort_values("score", ascending=False).groupby("qid").head(5))],
                              measures="nDCG@10 AP")
    del frame
    experiment.report(tmp_path / "out")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["baseline"] == "BM25" and summary["parameters"]["more_baselines"] == [
        {"name": "top5", "file": "baseline-2.parquet"}]
    assert pq.read_table(tmp_path / "out" / "inputs" / "baseline-2.parquet").num_rows == 40
    against = experiment.comparisons_with("top5")
    for (name, measure, k), row in against.iterrows():
        label = "AP" if measure == "AP" else f"nDCG@{k}"
        recorded = summary["more_baselines"]["top5"]["comparisons"][name][label]
        assert recorded["holm_randomization_pvalue"] == row["holm_randomization_pvalue"]
        assert recorded["delta"] == row["delta"]
    assert "--baseline=top5=inputs/baseline-2.parquet" in summary["command"]
