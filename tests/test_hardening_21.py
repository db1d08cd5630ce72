"""Hostile use: one regression test each.

Most builds here run in-process with the notebook steps replaced by a stub that writes the report's
files (fake_steps): what is under test is what happens around the steps (checks, publish, batch).
"""

from __future__ import annotations

import fcntl
import glob
import json
import os
import signal
import stat
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
import yaml

from ndcg_report.errors import BuildError, InputError, ParameterError
from ndcg_report.files import OWNED_MARKER

SMALL = Path(__file__).parent / "data" / "small"
CORPUS = Path(__file__).parent / "data" / "corpus"
RUN, BASELINE, QRELS = SMALL / "monot5.txt", SMALL / "bm25.txt", SMALL / "qrels.txt"
TOKEN = "0123456789abcdef0123456789abcdef"


def cli(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ndcg_report.cli", *map(str, args)], capture_output=True, text=True,
                          check=False, **kwargs)


def one_line(result: subprocess.CompletedProcess, code: int, message: str) -> None:
    assert result.returncode == code, (result.returncode, result.stderr)
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert message in result.stderr, result.stderr


def build_args(out: Path, *extra) -> list:
    return ["build", "--run", RUN, "--baseline", BASELINE, "--qrels", QRELS, "-k", "5,10", *extra, "--out", out]


def wait_for(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


# --- in-process builds with the notebook steps stubbed -------------------------------------------------------


def fake_summary(run_mean: float) -> dict:
    row = {"n": 8, "run_mean": run_mean, "baseline_mean": 0.4, "delta": run_mean - 0.4, "ci_low": -0.1, "ci_high": 0.2,
           "randomization_pvalue": 0.5, "holm_randomization_pvalue": 0.5, "t_pvalue": 0.5, "holm_t_pvalue": 0.5,
           "wilcoxon_pvalue": 0.5, "holm_wilcoxon_pvalue": 0.5}
    return {"schema_version": 3, "ndcg_report_version": "test", "parameters": {"headline": "nDCG@10", "alpha": 0.05},
            "comparisons": {"monot5": {"nDCG@10": row}}, "baseline": "bm25", "warnings": []}


@pytest.fixture
def fake_steps(monkeypatch):
    """Replace papermill, nbval and nbconvert by a stub writing the report's files; `during` (a list of
    callables) runs while the stub 'executes', as a user acting during a build would."""
    from ndcg_report.build import pipeline as build

    during: list = []
    built = {"n": 0}

    def execute(params, template, executed, env, timeout, progress=False):
        built["n"] += 1
        for action in during:
            action()
        executed.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
        (executed.parent / "per_query.csv").write_text("system,qid\n")
        (executed.parent / "unjudged.tsv").write_text("qid\tdocid\tbest_rank\tn_systems\tsystems\n")
        (executed.parent / "summary.json").write_text(json.dumps(fake_summary(0.5 + built["n"] / 100)))

    monkeypatch.setattr(build, "_execute", execute)
    monkeypatch.setattr(build, "_drop_run_specific_metadata", lambda executed: None)
    monkeypatch.setattr(build, "_start_nbval", lambda executed, env, timeout, progress=False: PassedNbval())
    monkeypatch.setattr(build, "_read_notebook", lambda executed: None, raising=False)  # main: nbformat reads it
    monkeypatch.setattr(build, "notebook_to_html", lambda notebook, exporter=None: "<html><main></main></html>")
    return during


class PassedNbval:
    """Stands in for the nbval process of a build: it passed."""

    def wait(self):
        from ndcg_report.build.steps.processes import Finished

        return Finished(0, "", "")

    def send(self, line):
        pass

    def stop(self, line):
        pass

    def kill(self):
        pass


def build_in_process(out: Path):
    from ndcg_report.build.pipeline import build_report
    from ndcg_report.build.parameters import validate_parameters

    params = validate_parameters(runs=[str(RUN)], qrels=str(QRELS), baseline=str(BASELINE), ks="5,10")
    return build_report(params, out)


class InProcessBuilds:
    """batch Builds running each build command through cli.main in this process (so the stubs apply)."""

    stopping = 0
    description = ""

    def run(self, job):
        from ndcg_report.commands import build_report as cli_module
        from ndcg_report.cli import build_parser
        from ndcg_report.batch.builds import BuildRun

        argv = job.command[3:]
        try:
            cli_module.run_build(build_parser().parse_args(argv), argv, time.monotonic())
        except (InputError, ParameterError) as exc:
            return BuildRun(2, "", f"ndcg-report: error: {exc}\n")
        except (BuildError, OSError) as exc:
            return BuildRun(1, "", f"ndcg-report: error: {exc}\n")
        return BuildRun(0, "", "")

    def stop(self, signum):
        self.stopping = signum


def small_config(folder: Path, **extra) -> Path:
    report = {"name": "r1", "run": str(RUN), "baseline": str(BASELINE), "qrels": str(QRELS), "k": "5,10", **extra}
    path = folder / "c.yml"
    path.write_text(yaml.safe_dump({"output": "out", "reports": [report]}))
    return path


# --- data loss ----------------------------------------------------------------------------------------------


def test_01_files_added_to_out_during_a_build_are_kept(tmp_path, fake_steps):
    out = tmp_path / "out"
    build_in_process(out)  # an earlier report
    fake_steps.append(lambda: (out / "notes.txt").write_text("mine"))
    fake_steps.append(lambda: (out / "mydir").mkdir())
    fake_steps.append(lambda: (out / "mydir" / "f.txt").write_text("mine too"))
    result = build_in_process(out)
    assert (out / "notes.txt").read_text() == "mine" and (out / "mydir" / "f.txt").read_text() == "mine too"
    assert json.loads((out / "summary.json").read_text())["comparisons"]["monot5"]["nDCG@10"]["run_mean"] == 0.52
    assert sorted(p.name for p in out.iterdir()) == ["mydir", "notes.txt", "per_query.csv", "report.html",
                                                     "report.ipynb", "summary.json", "unjudged.tsv"]
    assert any("kept mydir, notes.txt" in note for note in result.notes)
    assert not list(tmp_path.glob(".out.*"))
    fake_steps.clear()
    build_in_process(out)  # an earlier report with the user's files in it is still an earlier report: kept again
    assert (out / "notes.txt").read_text() == "mine" and (out / "mydir" / "f.txt").read_text() == "mine too"


def test_01_a_batch_keeps_a_file_added_to_its_report_folder_mid_build(tmp_path, fake_steps):
    from ndcg_report.batch.config import load_config
    from ndcg_report.batch.history import read_history, read_status
    from ndcg_report.batch.runner import run_batch

    config = load_config(small_config(tmp_path))
    assert run_batch(config, builds=InProcessBuilds(), log=lambda line: None).exit_code == 0
    notes = tmp_path / "out" / "r1" / "NOTES.txt"
    fake_steps.append(lambda: notes.write_text("the user's"))
    assert run_batch(config, force=True, builds=InProcessBuilds(), log=lambda line: None).exit_code == 0
    assert notes.read_text() == "the user's" and (tmp_path / "out" / "r1" / "report.html").is_file()
    assert read_status(tmp_path / "out", "r1")["status"] == "built" and len(read_history(tmp_path / "out", "r1")) == 1
    assert json.loads((tmp_path / "out" / "r1" / "summary.json").read_text())["comparisons"]["monot5"]["nDCG@10"][
        "run_mean"] == 0.52


def test_01_an_old_report_left_mid_swap_loses_only_its_own_files(tmp_path, fake_steps):
    out = tmp_path / "out"
    build_in_process(out)
    left = tmp_path / ".out.staging-999999-0123abcd"  # a build killed between the swap and the tidy-up
    left.mkdir()
    (left / "report.html").write_text("old report")
    (left / "notes.txt").write_text("the user's")
    (left / OWNED_MARKER).write_text("made by ndcg-report, process 999999\nowns only: report.html\n")
    build_in_process(out)  # its clean-up of stale folders
    assert not left.exists() and (out / "notes.txt").read_text() == "the user's"


def test_01_an_out_that_stopped_being_a_report_folder_is_not_replaced_at_the_swap(tmp_path, fake_steps):
    out = tmp_path / "out"
    fake_steps.append(lambda: out.mkdir())
    fake_steps.append(lambda: (out / "summary.json").write_text("the user's"))
    with pytest.raises(ParameterError, match="nothing is published: --out .* changed during the build and now is not"):
        build_in_process(out)
    assert (out / "summary.json").read_text() == "the user's" and sorted(os.listdir(out)) == ["summary.json"]
    assert not list(tmp_path.glob(".out.*"))


@pytest.mark.parametrize("target", ["topics", "corpus", "link to topics"])
def test_02_bm25_out_that_is_an_input_is_refused(tmp_path, target):
    topics, corpus = tmp_path / "topics.tsv", tmp_path / "corpus.jsonl"
    topics.write_bytes((CORPUS / "tiny_topics.tsv").read_bytes())
    corpus.write_bytes((CORPUS / "tiny.jsonl").read_bytes())
    out = {"topics": topics, "corpus": corpus, "link to topics": tmp_path / "link.tsv"}[target]
    if target == "link to topics":
        out.symlink_to(topics)
    result = cli("bm25", "--corpus", corpus, "--topics", topics, "--out", out,
                 env={**os.environ, "NDCG_REPORT_CACHE": str(tmp_path / "cache")})
    one_line(result, 2, "which would be replaced; write the run to another file")
    assert topics.read_bytes() == (CORPUS / "tiny_topics.tsv").read_bytes()
    assert corpus.read_bytes() == (CORPUS / "tiny.jsonl").read_bytes()


def _drained(fifo: Path) -> tuple[list[bytes], "threading.Thread"]:
    """A thread reading fifo to its end into the returned list (a reader must be there for a writer)."""
    import threading

    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    return received, reader


@pytest.mark.parametrize("command", ["pool", "bm25"])
def test_02_an_out_that_is_a_pipe_or_a_device_is_written_into_not_replaced(tmp_path, command):
    # found this stop: `pool --out /dev/full` replaced the device node with a regular file (rename over it)
    corpus_args = ["--corpus", CORPUS / "tiny.jsonl", "--topics", CORPUS / "tiny_topics.tsv"]
    args = {"pool": ["pool", SMALL / "qrels.txt", SMALL / "monot5.txt"], "bm25": ["bm25", *corpus_args]}[command]
    env = {**os.environ, "NDCG_REPORT_CACHE": str(tmp_path / "cache")}
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received, reader = _drained(fifo)
    result = cli(*args, "--out", fifo, env=env)
    reader.join(30)
    assert result.returncode == 0, result.stderr
    assert received and received[0].startswith(b"qid\tdocid" if command == "pool" else b"q1 Q0 ")
    assert fifo.is_fifo()
    real, link = tmp_path / "real.out", tmp_path / "link.out"  # through a link (as /dev/stdout is): its file
    real.write_text("old\n")
    link.symlink_to(real)
    assert cli(*args, "--out", link, env=env).returncode == 0
    assert link.is_symlink() and real.read_bytes() == received[0]
    if os.geteuid() != 0:
        return
    full, null = tmp_path / "full", tmp_path / "null"
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))  # what /dev/full is
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null
    failed = cli(*args, "--out", full, env=env)  # bm25 says first which cached run it reuses
    assert failed.returncode == 1 and "Traceback" not in failed.stderr, failed.stderr
    assert failed.stderr.splitlines()[-1].startswith("ndcg-report: error: cannot write the output (No space left")
    assert cli(*args, "--out", null, env=env).returncode == 0
    assert full.is_char_device() and null.is_char_device()
    assert not list(tmp_path.glob(".full*")) and not list(tmp_path.glob(".null*"))  # no temp file left


def test_03_a_folder_is_an_earlier_report_only_with_the_tools_mark(tmp_path):
    user = tmp_path / "U"
    user.mkdir()
    (user / "summary.json").write_text('{"my": "numbers"}')
    one_line(cli(*build_args(user)), 2, "is not an earlier report's folder (its summary.json was not written by "
                                        "ndcg-report")
    assert (user / "summary.json").read_text() == '{"my": "numbers"}' and os.listdir(user) == ["summary.json"]
    from ndcg_report.build.publish import is_earlier_report

    (user / "summary.json").write_text(json.dumps({"schema_version": 2, "ndcg_report_version": "0.1.0"}))
    assert is_earlier_report(user)
    for foreign in ("[1, 2]", '{"schema_version": "2", "ndcg_report_version": "0.1.0"}', "{"):
        (user / "summary.json").write_text(foreign)
        assert not is_earlier_report(user), foreign


def test_04_the_batch_removes_only_attempt_markers_it_wrote(tmp_path):
    from ndcg_report.batch.dask_builds import _claim
    from ndcg_report.batch.leftovers import clean_stale_folders

    history = tmp_path / ".history"
    history.mkdir()
    notes = history / "notes.attempt.json"
    notes.write_text('{"my": "notes"}')
    ours = history / "r9.attempt.json"
    ours.write_text(json.dumps({"token": TOKEN, "worker": "worker tcp://127.0.0.1:1", "started": "2026-11-25T00:00:00Z"}))
    removed = clean_stale_folders(tmp_path)
    assert removed == [ours] and not ours.exists() and notes.read_text() == '{"my": "notes"}'
    mine = history / "r1.attempt.json"  # named like a report's marker, but not one
    mine.write_text("the user's")
    with pytest.raises(FileExistsError, match="not an attempt marker"):
        _claim(mine, TOKEN, "worker here")
    assert mine.read_text() == "the user's"


# --- wrong results and crashes ---------------------------------------------------------------------------------


def test_06_an_unnamed_run_is_named_by_its_file_name_and_a_clash_is_refused(tmp_path):
    from ndcg_report.analysis.compare import compare_runs

    dl_hard = tmp_path / "bm25+rm3+bert(zs).run"
    dl_hard.write_text(RUN.read_text().replace("pyterrier", "T5-P"))
    t5 = tmp_path / "t5.txt.gz"
    import gzip

    t5.write_bytes(gzip.compress(RUN.read_text().replace("pyterrier", "T5-P").encode()))
    experiment = compare_runs([dl_hard, t5], QRELS, BASELINE, cutoffs="10", n_resamples=50)
    assert experiment.names == ("bm25+rm3+bert(zs)", "t5") and experiment.baseline_name == "bm25"
    from ndcg_report.analysis.systems import stem_name

    for name in ("splade.json", "splade.jsonl", "splade.ndjson", "splade.jsonl.gz", "splade.JSONL", "splade.run"):
        assert stem_name(tmp_path / name) == "splade", name  # JSON and JSON lines as TREC text and Parquet
    lines = tmp_path / "colbert.jsonl"
    lines.write_text("".join(f'{{"qid": "{q}", "docid": "{d}", "score": {s}}}\n'
                             for q, _, d, _, s, _ in (line.split() for line in RUN.read_text().splitlines())))
    assert compare_runs([lines], QRELS, BASELINE, cutoffs="10", n_resamples=50).names == ("colbert",)
    twin = tmp_path / "bm25.run"
    twin.write_text(RUN.read_text())
    with pytest.raises(ParameterError, match="named 'bm25' .from its file name. like the baseline"):
        compare_runs([twin], QRELS, BASELINE, cutoffs="10", n_resamples=50)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "t5.run").write_text(RUN.read_text())
    one_line(cli("build", "--run", tmp_path / "a" / "t5.run", "--run", t5, "--baseline", BASELINE, "--qrels", QRELS,
                 "--out", tmp_path / "out"), 2, "runs 1 and 2 would both be named 't5'")
    one_line(cli("build", "--run", twin, "--baseline", BASELINE, "--qrels", QRELS, "--out", tmp_path / "out"), 2,
             "like the baseline")
    assert not (tmp_path / "out").exists()


def test_07_a_report_folder_the_build_cannot_empty_is_refused_before_building(tmp_path, monkeypatch):
    from ndcg_report.build import pipeline as build

    out = tmp_path / "r1"
    out.mkdir()
    (out / "summary.json").write_text(json.dumps(fake_summary(0.5)))
    real_access = os.access  # root may write anywhere: the folder of another user, simulated
    monkeypatch.setattr(os, "access", lambda path, mode: False if Path(path) == out else real_access(path, mode))
    with pytest.raises(ParameterError, match=r"r1 is not writable.*the old report's files in it could not be removed"):
        build.check_out_dir(out)


def test_07_once_published_a_build_succeeds_even_if_the_old_report_cannot_be_removed(tmp_path, fake_steps, monkeypatch):
    from ndcg_report.batch.config import load_config
    from ndcg_report.batch.history import read_history, read_status
    from ndcg_report.batch.runner import run_batch

    config = load_config(small_config(tmp_path))
    assert run_batch(config, builds=InProcessBuilds(), log=lambda line: None).exit_code == 0
    write_text = Path.write_text

    def denied(path, *args, **kwargs):  # the old report's folder belongs to another user: nothing is written in it
        if path.name == OWNED_MARKER and (path.parent / "summary.json").exists():
            raise PermissionError(13, "Permission denied", str(path))
        return write_text(path, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", denied)
    lines = []
    config = load_config(small_config(tmp_path, k="10"))  # other options: a new history point
    result = run_batch(config, builds=InProcessBuilds(), log=lines.append)
    assert result.exit_code == 0 and not any("FAILED" in line for line in lines), lines
    assert read_status(tmp_path / "out", "r1")["status"] == "built" and len(read_history(tmp_path / "out", "r1")) == 2
    summary = json.loads((tmp_path / "out" / "r1" / "summary.json").read_text())
    assert summary["comparisons"]["monot5"]["nDCG@10"]["run_mean"] == 0.52  # the new report is the published one
    (left,) = glob.glob(str(tmp_path / "out" / ".r1.staging-*"))  # the old one, named in a note, untouched
    assert sorted(os.listdir(left)) == ["per_query.csv", "report.html", "report.ipynb", "summary.json", "unjudged.tsv"]


def test_09_a_timed_out_cell_is_named_with_the_limit(tmp_path):
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"),
                                               nbformat.v4.new_code_cell("import time\ntime.sleep(60)")])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, tmp_path / "slow.ipynb")
    result = cli(*build_args(tmp_path / "out", "--notebook", tmp_path / "slow.ipynb", "--timeout", "2"))
    one_line(result, 1, "step papermill failed: cell 1 (`import time`) did not finish within --timeout 2 s")
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".out.*"))


# --- tracebacks ----------------------------------------------------------------------------------------------


def test_14_a_config_nested_600_deep_is_one_line(tmp_path):
    from ndcg_report.batch.config import load_config

    (tmp_path / "c.yml").write_text("output: out\nreports: " + "[" * 600 + "]" * 600 + "\n")
    with pytest.raises(ParameterError, match="nested more than 50 deep"):
        load_config(tmp_path / "c.yml")


def test_15_dask_failures_are_one_line_and_dask_says_nothing_itself(tmp_path, monkeypatch):
    import logging

    from ndcg_report.dask_cluster import connect

    for name in ["distributed", "tornado", *(n for n in logging.root.manager.loggerDict if n.startswith("distributed."))]:
        monkeypatch.setattr(logging.getLogger(name), "level", logging.getLogger(name).level)  # restored after

    config = small_config(tmp_path)
    one_line(cli("batch", config, "--dask", "tls://127.0.0.1:9"), 2, "--dask tls://127.0.0.1:9: cannot connect (TypeError")
    one_line(cli("batch", config, "--dask", f"tcp://{'a' * 300}:1"), 2, "no Dask scheduler answered")
    assert not (tmp_path / "out").exists()
    with pytest.raises(ParameterError):
        connect("tcp://127.0.0.1:9", timeout=0.5)
    for name in ("distributed", "distributed.client", "distributed.utils", "tornado"):
        assert not logging.getLogger(name).isEnabledFor(logging.CRITICAL), name  # a lost scheduler logs nothing


def test_16_a_disk_that_fills_while_papermill_writes_is_one_line_naming_it(tmp_path, monkeypatch):
    from ndcg_report.build import pipeline as build

    from ndcg_report.build.steps.processes import Finished

    class OutOfSpace(PassedNbval):
        """papermill's process: it writes half the notebook, then the disk is full."""

        def __init__(self, command, env, **kwargs):
            self.papermill = "ndcg_report.build.steps.papermill_process" in command
            if self.papermill:
                executed = Path(command[command.index("ndcg_report.build.steps.papermill_process") + 2])
                executed.write_text('{"cells": [{"cell_type": "code", "source": "x = 1", "outp')  # cut short

        def wait(self):
            stderr = ('Traceback (most recent call last):\n  File "papermill/iorw.py", line 1\n'
                      "OSError: [Errno 28] No space left on device\n")
            return Finished(1, "", stderr) if self.papermill else super().wait()

    monkeypatch.setattr(build, "ChildProcess", OutOfSpace)
    with pytest.raises(BuildError) as caught:
        build_in_process(tmp_path / "out")
    message = str(caught.value)
    assert message.startswith(f"step papermill failed: no space left on the disk holding {tmp_path} (")
    assert "\n" not in message and not list(tmp_path.glob(".out.*"))
    executed = tmp_path / "report.ipynb"  # a cut notebook read later (papermill said it succeeded) is one line too
    executed.write_text('{"cells": [')
    with pytest.raises(BuildError, match="report.ipynb was cut short; no space left on the disk holding"):
        build._read_notebook(executed)


def test_17_ctrl_c_while_eval_writes_is_one_line(tmp_path):
    run = tmp_path / "run"
    run.write_text("".join(f"q{i} Q0 d{i} 1 1.0 t\n" for i in range(4000)))
    (tmp_path / "qrels").write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(4000)))
    process = subprocess.Popen([sys.executable, "-m", "ndcg_report.cli", "eval", "-q", tmp_path / "qrels", run],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pending = bytearray(4)

    def pipe_full() -> bool:  # the output fills the pipe, which nobody reads: eval is blocked writing
        fcntl.ioctl(process.stdout.fileno(), termios.FIONREAD, pending)
        return int.from_bytes(pending, sys.byteorder) >= 65536

    assert wait_for(pipe_full, 30)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130 and stderr == b"ndcg-report: interrupted\n", stderr


def test_17_25_a_stop_signal_during_start_up_is_one_line(tmp_path):
    imported = subprocess.run([sys.executable, "-c", "import sys, ndcg_report.cli; print(sorted("
                               "m for m in ('numpy', 'pyarrow', 'pandas') if m in sys.modules))"],
                              capture_output=True, text=True, check=True)
    assert imported.stdout == "[]\n"  # the handlers go in before the heavy imports
    import ndcg_report

    assert {"evaluate", "read_run", "compare_runs", "InputError"} <= set(dir(ndcg_report))  # the lazy API is listed
    process = subprocess.Popen([sys.executable, "-m", "ndcg_report.cli", "eval", QRELS, RUN],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def catches_sigterm() -> bool:
        try:
            status = Path(f"/proc/{process.pid}/status").read_text()
        except OSError:
            return False
        mask = int(next(line for line in status.splitlines() if line.startswith("SigCgt:")).split()[1], 16)
        return bool(mask & (1 << (signal.SIGTERM - 1)))

    wait_for(catches_sigterm, 5)
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=30)
    if process.returncode == 0:  # pragma: no cover - finished before the signal arrived (a very fast machine)
        return
    assert process.returncode == 143 and stderr == b"ndcg-report: interrupted by SIGTERM\n", (process.returncode, stderr)


def test_18_a_history_line_of_the_wrong_shape_is_skipped_and_named(tmp_path):
    from ndcg_report.batch.history import append_history, history_file, read_history
    from ndcg_report.batch.index_page import ReportState, write_index

    append_history(tmp_path, "r1", {"time": "2026-11-25T00:00:00Z", "run_mean": 0.5, "run_name": "a", "k": "10"})
    with open(history_file(tmp_path, "r1"), "a") as stream:
        stream.write('{"systems":"x"}\n{"time": "2026-11-26T00:00:00Z", "run_mean": "high"}\n')
    append_history(tmp_path, "r1", {"time": "2026-11-27T00:00:00Z", "run_mean": 0.6, "run_name": "a", "k": "10"})
    history = read_history(tmp_path, "r1")
    write_index(tmp_path, [ReportState(name="r1", title="r1", status="built", history=tuple(history))],
                heading="h", batch_line="b")
    assert "0.6000" in (tmp_path / "index.html").read_text()
    assert [record["run_mean"] for record in history] == [0.5, 0.6]
    from ndcg_report.batch.history import history_problems

    assert history_problems(tmp_path, "r1") == ["line 2: 'time' is not text", "line 3: 'run_mean' is not a number"]


# --- smaller ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("field", "value"), [("output", "ro\x01ot"), ("cache_dir", "c\x1b[31m"), ("run", "r\nun.txt"),
                                              ("title", "T\x85itle"), ("run_name", "a\x9bb")])
def test_19_control_characters_in_a_config_are_refused_at_load(tmp_path, field, value):
    from ndcg_report.batch.config import load_config

    report = {"name": "a", "run": "r.txt", "baseline": "b.txt", "qrels": "q.txt"}
    config = {"output": "out", "reports": [report]}
    (config if field in ("output", "cache_dir") else report)[field] = value
    (tmp_path / "c.yml").write_text(yaml.safe_dump(config))
    with pytest.raises(ParameterError, match=rf"'{field}'.*control character \(U\+00"):
        load_config(tmp_path / "c.yml")


def test_19_a_control_character_in_a_run_path_is_refused_before_building(tmp_path):
    run = tmp_path / "r\nun.txt"
    run.write_text(RUN.read_text())
    one_line(cli("build", "--run", run, "--baseline", BASELINE, "--qrels", QRELS, "--out", tmp_path / "out"), 2,
             "holds a control character (U+000A)")


@pytest.mark.parametrize("text", ["  - {<<: {gain: linear, gain: exponential}, name: a, run: r, baseline: b, qrels: q}\n",
                                  "  - {<<: {gain: linear}, <<: {k: 5}, name: a, run: r, baseline: b, qrels: q}\n"])
def test_20_repeated_keys_in_merged_mappings_and_two_merge_keys_are_refused(tmp_path, text):
    from ndcg_report.batch.config import load_config

    (tmp_path / "c.yml").write_text("output: out\nreports:\n" + text)
    with pytest.raises(ParameterError, match="appears twice in one mapping|two merge keys"):
        load_config(tmp_path / "c.yml")


def test_21_usage_errors_are_cut_at_1000_characters():
    result = cli("eval", "--digits", "9" * 5000, QRELS, RUN)
    one_line(result, 2, "argument --digits: invalid int value")
    assert len(result.stderr) <= 1001


@pytest.mark.parametrize("args", [["--version"], ["build", "--help"]])
def test_22_help_and_version_to_a_full_disk_fail(args):
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "ndcg_report.cli", *args], stdout=full, stderr=subprocess.PIPE,
                                text=True, check=False)
    one_line(result, 1, "cannot write the output (No space left on device)")


def test_24_a_notebook_that_is_not_json_is_bad_input(tmp_path):
    (tmp_path / "bad.ipynb").write_text("{ not json")
    result = cli(*build_args(tmp_path / "out", "--notebook", tmp_path / "bad.ipynb"))
    one_line(result, 2, "bad.ipynb: not a Jupyter notebook (not JSON")
    assert not list(tmp_path.glob(".out.*")) and not (tmp_path / "out").exists()


@pytest.mark.usefixtures("sighup_at_default")
def test_25_sighup_to_a_build_is_one_line_and_removes_the_staging(tmp_path):
    process = subprocess.Popen([sys.executable, "-m", "ndcg_report.cli", *map(str, build_args(tmp_path / "out"))],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert wait_for(lambda: glob.glob(str(tmp_path / ".out.staging-*")), 60)
        process.send_signal(signal.SIGHUP)
        _, stderr = process.communicate(timeout=60)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # the kernel, if it outlived its build
        except ProcessLookupError:
            pass
    assert process.returncode == 129 and stderr == "ndcg-report: interrupted by SIGHUP\n", stderr
    assert wait_for(lambda: not glob.glob(str(tmp_path / ".out.staging-*")), 5) and not (tmp_path / "out").exists()


def test_25_ctrl_c_on_a_batch_is_one_line_and_exit_130(tmp_path, capsys, monkeypatch):
    from ndcg_report.batch.builds import BuildRun
    from ndcg_report.batch.runner import main as batch_main

    class StoppedBuilds(InProcessBuilds):
        def run(self, job):
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the build runs: the batch stops it
            wait_for(lambda: self.stopping, 5)
            return BuildRun(-signal.SIGTERM, "", "")

    from ndcg_report.batch import runner

    original = runner.run_batch
    monkeypatch.setattr(runner, "run_batch", lambda *args, **kwargs: original(*args, **{**kwargs, "builds": StoppedBuilds()}))
    capsys.readouterr()
    code = batch_main(str(small_config(tmp_path)))
    err = capsys.readouterr().err.splitlines()
    assert code == 130
    after = err[[i for i, line in enumerate(err) if " start r1 " in line][0] + 1:]
    assert len(after) == 1 and "batch: interrupted by SIGINT after" in after[0], err
    assert "0 built, 0 skipped, 0 failed, 1 stopped, 0 not started" in after[0]


def test_26_an_out_that_is_a_mount_point_is_refused_before_building(tmp_path, monkeypatch):
    from ndcg_report.build import pipeline as build

    mount = tmp_path / "mnt"
    mount.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True,
                             check=False).returncode == 0 if os.geteuid() == 0 else False
    if not mounted:  # the sandbox forbids mounting: the same check, the mount point simulated
        real_ismount = os.path.ismount
        monkeypatch.setattr(os.path, "ismount", lambda path: Path(path) == mount or real_ismount(path))
    try:
        with pytest.raises(ParameterError, match="is a mount point: a report is published by renaming its folder"):
            build.check_out_dir(mount)
        if mounted:
            one_line(cli(*build_args(mount)), 2, "is a mount point")
    finally:
        if mounted:
            subprocess.run(["umount", str(mount)], check=False)
