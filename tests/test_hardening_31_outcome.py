"""What a build publishes and how it ends agree. An input changed while it is read is refused; a lost
log line is not a failed build; a terminal hung up mid-build ends it as SIGHUP does; no staging folder
outlives a build, killed, crashed or stopped twice.

Most builds here run in-process with the notebook steps replaced by a stub that writes the report's
files (stub_steps): what is under test is around the steps. The others run the command line for real.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
import yaml

from ndcg_report.errors import InputError
from tests.test_hardening_21 import PassedNbval  # a stand-in for nbval that passed

SMALL = Path(__file__).parent / "data" / "small"
CORPUS = Path(__file__).parent / "data" / "corpus"
RUN, BASELINE, QRELS, TOPICS = SMALL / "monot5.txt", SMALL / "bm25.txt", SMALL / "qrels.txt", SMALL / "topics.txt"
CLI = [sys.executable, "-m", "ndcg_report.cli"]


def build_args(run: Path, out: Path, *extra) -> list[str]:
    return ["build", "--run", str(run), "--baseline", str(BASELINE), "--qrels", str(QRELS), "-k", "5,10", *extra,
            "--out", str(out)]


def working_folders(parent: Path) -> list[str]:
    """The build's working folders (staging, an old report being retired) in parent."""
    entries = parent.iterdir() if parent.is_dir() else ()
    return sorted(entry.name for entry in entries if ".staging-" in entry.name or ".old-" in entry.name)


def one_line(stderr: str, *parts: str) -> None:
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    for part in parts:
        assert part in stderr, stderr


def summary(run_mean: float) -> dict:
    row = {"n": 8, "run_mean": run_mean, "baseline_mean": 0.4, "delta": run_mean - 0.4, "ci_low": -0.1,
           "ci_high": 0.2, "randomization_pvalue": 0.5, "holm_randomization_pvalue": 0.5, "t_pvalue": 0.5,
           "holm_t_pvalue": 0.5, "wilcoxon_pvalue": 0.5, "holm_wilcoxon_pvalue": 0.5}
    return {"schema_version": 3, "ndcg_report_version": "test", "parameters": {"headline": "nDCG@10", "alpha": 0.05},
            "comparisons": {"monot5": {"nDCG@10": row}}, "baseline": "bm25", "warnings": []}



@pytest.fixture
def stub_steps(monkeypatch):
    """papermill, nbval and nbconvert replaced by a stub writing the report's files; `during` (a list of
    callables) runs while the stub 'executes', as a user (or the system) acting mid-build would."""
    from ndcg_report.build import pipeline

    during: list = []

    def execute(params, template, executed, env, timeout, progress=False):
        for action in during:
            action()
        executed.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
        (executed.parent / "per_query.csv").write_text("system,qid\n")
        (executed.parent / "unjudged.tsv").write_text("qid\tdocid\tbest_rank\tn_systems\tsystems\n")
        (executed.parent / "summary.json").write_text(json.dumps(summary(0.6)))

    monkeypatch.setattr(pipeline, "_execute", execute)
    monkeypatch.setattr(pipeline, "_drop_run_specific_metadata", lambda executed: None)
    monkeypatch.setattr(pipeline, "_start_nbval", lambda executed, env, timeout, progress=False: PassedNbval())
    monkeypatch.setattr(pipeline, "_read_notebook", lambda executed: None)
    monkeypatch.setattr(pipeline, "notebook_to_html", lambda notebook, exporter=None: "<html><main></main></html>")
    monkeypatch.setenv("NDCG_REPORT_NO_FORKS", "1")  # no fork server: nothing here starts a kernel
    return during


def build_in_process(out: Path, run: Path = RUN, progress: bool = False, **given):
    from ndcg_report.build.parameters import validate_parameters
    from ndcg_report.build.pipeline import build_report

    values = {"runs": [str(run)], "qrels": str(QRELS), "baseline": str(BASELINE), "ks": "5,10", **given}
    return build_report(validate_parameters(**values), out, progress=progress)


@pytest.fixture
def stop_signals(sighup_at_default):
    """The command line's stop signals (each raises interrupts.Interrupted), put back afterwards."""
    from ndcg_report.interrupts import install, restore

    replaced = install()
    yield
    restore(replaced)


# --- an input replaced or written to while the build reads it ----------------------------------------------


def swapped_run(tmp_path: Path) -> tuple[Path, Path]:
    """run.txt holding monoT5's run (A) and, beside it, next.txt holding BM25's (B)."""
    run, other = tmp_path / "run.txt", tmp_path / "next.txt"
    run.write_bytes(RUN.read_bytes())
    other.write_bytes(BASELINE.read_bytes())
    return run, other


def test_05_a_run_moved_over_while_it_is_parsed_is_refused_before_any_kernel(tmp_path, stub_steps, monkeypatch):
    # found: the run was hashed after parsing, so `mv B run.txt` during the parse gave A's numbers B's sha256
    from ndcg_report.build import loading

    run, other = swapped_run(tmp_path)
    parse = loading.read_run

    def read_run(path):
        parsed = parse(path)
        if Path(path) == run and other.exists():
            os.replace(other, run)  # `mv next.txt run.txt` while A is parsed
        return parsed

    monkeypatch.setattr(loading, "read_run", read_run)
    executed = []
    stub_steps.append(lambda: executed.append(True))
    with pytest.raises(InputError, match=r"run\.txt: changed during the build \(replaced, or written to\)"):
        build_in_process(tmp_path / "out", run)
    assert not executed and not (tmp_path / "out").exists() and working_folders(tmp_path) == []


def parquet_folder(folder: Path, run: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [line.split() for line in run.read_text().splitlines() if line.strip()]
    folder.mkdir()
    table = pa.table({"qid": [r[0] for r in rows], "docid": [r[2] for r in rows], "score": [float(r[4]) for r in rows]})
    pq.write_table(table, folder / "part-0.parquet")
    return folder


@pytest.mark.parametrize("change", ["qrels written to", "topics moved over", "a file added to a Parquet run"])
def test_05_an_input_changed_while_the_kernels_read_it_is_refused_at_publish(tmp_path, stub_steps, change):
    qrels, topics = tmp_path / "qrels.txt", tmp_path / "topics.txt"
    qrels.write_bytes(QRELS.read_bytes())
    topics.write_bytes(TOPICS.read_bytes())
    run = parquet_folder(tmp_path / "run.parquet", RUN)
    if change == "qrels written to":
        changed, act = qrels, lambda: qrels.write_bytes(QRELS.read_bytes().replace(b" 3\n", b" 2\n"))
    elif change == "topics moved over":
        (tmp_path / "new.txt").write_bytes(TOPICS.read_bytes().upper())
        changed, act = topics, lambda: os.replace(tmp_path / "new.txt", topics)
    else:
        changed, act = run, lambda: parquet_folder(tmp_path / "more", BASELINE).joinpath("part-0.parquet").rename(
            run / "part-1.parquet")
    stub_steps.append(act)
    with pytest.raises(InputError, match=rf"{changed.name}: changed during the build"):
        build_in_process(tmp_path / "out", run, qrels=str(qrels), topics=str(topics))
    assert not (tmp_path / "out").exists() and working_folders(tmp_path) == []


SWAP_WHILE_PARSED = """
import os, sys
from ndcg_report.build import loading

parse, run, other = loading.read_run, sys.argv[1], sys.argv[2]

def read_run(path):
    parsed = parse(path)
    if str(path) == run and os.path.exists(other):
        os.replace(other, run)  # `mv next.txt run.txt` while the build parses run.txt
    return parsed

loading.read_run = read_run
from ndcg_report.cli import main
sys.exit(main(sys.argv[3:]))
"""


def test_05_the_command_line_refuses_a_run_moved_over_mid_parse_with_exit_2(tmp_path):
    run, other = swapped_run(tmp_path)
    result = subprocess.run([sys.executable, "-c", SWAP_WHILE_PARSED, str(run), str(other),
                             *build_args(run, tmp_path / "out")], capture_output=True, text=True, check=False)
    assert result.returncode == 2, result.stderr
    one_line(result.stderr, f"{run}: changed during the build", "run the build again once the file is complete")
    assert not (tmp_path / "out").exists() and working_folders(tmp_path) == []


def test_05_eval_refuses_qrels_changed_between_two_runs(tmp_path, monkeypatch, capsys):
    # eval reads the qrels once per run: the two runs must be scored against one version of them
    from ndcg_report.cli import main
    from ndcg_report.inputs import reading

    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(QRELS.read_bytes())
    read = reading.read_qrels

    def read_qrels(path):
        parsed = read(path)
        qrels.write_bytes(QRELS.read_bytes().replace(b" 3\n", b" 0\n"))  # rewritten after the first read
        return parsed

    monkeypatch.setattr(reading, "read_qrels", read_qrels)
    code = main(["eval", str(qrels), str(RUN), str(BASELINE)])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    one_line(captured.err, f"{qrels}: changed during the evaluation")


def test_05_a_corpus_changed_during_its_bm25_build_stores_no_cache_entry(tmp_path, monkeypatch):
    from ndcg_report.baseline import bm25
    from ndcg_report.baseline.cache import cached_bm25_run

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes((CORPUS / "tiny.jsonl").read_bytes())
    build = bm25.build_bm25_run

    def build_bm25_run(*args, **kwargs):
        corpus.write_bytes((CORPUS / "tiny.jsonl").read_bytes() + b'{"_id": "new", "text": "added meanwhile"}\n')
        return build(*args, **kwargs)

    monkeypatch.setattr(bm25, "build_bm25_run", build_bm25_run)
    with pytest.raises(InputError, match=r"corpus\.jsonl: changed during the BM25 build"):
        cached_bm25_run(corpus, CORPUS / "tiny_topics.tsv", k1=0.9, b=0.4, top_k=10, cache_dir=tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []


# --- a standard output or error that cannot be written -----------------------------------------------------


class FullStream:
    """A standard stream on a full disk: every write fails with ENOSPC."""

    encoding = "utf-8"

    def write(self, text):
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self):
        pass

    def isatty(self):
        return False


@pytest.mark.parametrize("stdout", ["full", "closed"])
def test_07_a_build_whose_standard_output_fails_publishes_and_exits_0(tmp_path, stub_steps, monkeypatch, capsys,
                                                                      stdout):
    # found: `build > /dev/full` published, then exited 1 "cannot write the output"
    from ndcg_report.cli import main

    monkeypatch.setattr(sys, "stdout", FullStream() if stdout == "full" else None)
    monkeypatch.setattr("ndcg_report.commands.output.silence_stdout", lambda: None)  # fd 1 is pytest's
    code = main(build_args(RUN, tmp_path / "out"))
    err = capsys.readouterr().err
    assert code == 0 and (tmp_path / "out" / "report.html").is_file()
    why = "No space left on device" if stdout == "full" else "it is closed"
    one_line(err, f"could not print this on the standard output ({why}): built {tmp_path / 'out' / 'report.html'}")


def test_07_a_build_to_dev_full_exits_0_and_eval_to_dev_full_exits_1(tmp_path):
    with open("/dev/full", "w") as full:
        built = subprocess.run([*CLI, *build_args(RUN, tmp_path / "out")], stdout=full, stderr=subprocess.PIPE,
                               text=True, check=False)
        evaluated = subprocess.run([*CLI, "eval", str(QRELS), str(RUN)], stdout=full, stderr=subprocess.PIPE,
                                   text=True, check=False)
    assert built.returncode == 0 and (tmp_path / "out" / "report.html").is_file(), built.stderr
    one_line(built.stderr, "ndcg-report: note: could not print this on the standard output (No space left on device)")
    assert evaluated.returncode == 1  # eval's table is its product: not written is a failure
    one_line(evaluated.stderr, "cannot write the output (No space left on device)")


def small_config(folder: Path, names=("r1",)) -> Path:
    reports = [{"name": name, "run": str(RUN), "baseline": str(BASELINE), "qrels": str(QRELS), "k": "5,10"}
               for name in names]
    path = folder / "c.yml"
    path.write_text(yaml.safe_dump({"output": "out", "reports": reports}))
    return path


def test_07_a_batch_whose_log_goes_to_a_full_disk_builds_and_finishes(tmp_path):
    # found: `batch > /dev/full 2>&1` failed every report ("No space left on device") without building it,
    # and left batch.json "running"
    small_config(tmp_path)
    with open("/dev/full", "w") as full:
        result = subprocess.run([*CLI, "batch", "c.yml"], cwd=tmp_path, stdout=full, stderr=full, check=False)
    history = tmp_path / "out" / ".history"
    assert result.returncode == 0
    assert json.loads((history / "batch.json").read_text())["state"] == "finished"
    assert json.loads((history / "r1.status.json").read_text())["status"] == "built"
    assert (tmp_path / "out" / "r1" / "report.html").is_file()


# --- the terminal hangs up mid-build -----------------------------------------------------------------------


def on_a_terminal_hung_up(command: list[str], cwd: Path, ready) -> tuple[int, bytes]:
    """Run command with a pseudo-terminal as its controlling terminal; once ready(what it printed) is true,
    close the terminal (as `kill -9` of the terminal emulator or of `script` does): the command, the session
    leader, gets SIGHUP and its terminal fails every write (EIO). Its exit code and what it printed."""
    master, slave = os.openpty()
    process = subprocess.Popen(command, cwd=cwd, stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                               preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
    os.close(slave)
    shown, deadline = b"", time.monotonic() + 120
    try:
        while not ready(shown) and time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    shown += os.read(master, 65536)
                except OSError:
                    break
        assert ready(shown), shown
    finally:
        os.close(master)
    try:
        return process.wait(timeout=120), shown
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # a child that outlived it
        except ProcessLookupError:
            pass


@pytest.mark.usefixtures("sighup_at_default")
def test_08_a_terminal_hung_up_mid_build_removes_the_staging_and_exits_129(tmp_path):
    # found: the progress line's clean-up failed on the dead terminal (EIO) and skipped the staging's
    code, shown = on_a_terminal_hung_up([*CLI, *build_args(RUN, tmp_path / "out")], tmp_path,
                                        lambda shown: b"executing the notebook" in shown)
    assert code == 129, shown
    assert working_folders(tmp_path) == [] and not (tmp_path / "out").exists()


@pytest.mark.usefixtures("sighup_at_default")
def test_08_a_batch_whose_terminal_hangs_up_exits_129(tmp_path):
    small_config(tmp_path)
    code, shown = on_a_terminal_hung_up([*CLI, "batch", "c.yml"], tmp_path,
                                        lambda shown: b" start r1 " in shown and working_folders(tmp_path / "out"))
    history = tmp_path / "out" / ".history"
    assert code == 129, shown
    assert json.loads((history / "batch.json").read_text())["state"] == "finished"
    assert json.loads((history / "r1.status.json").read_text())["step"] == "interrupted"
    assert working_folders(tmp_path / "out") == []


def test_08_progress_lines_on_a_dead_terminal_cut_no_clean_up_short(tmp_path, stub_steps, monkeypatch, stop_signals):
    from ndcg_report.interrupts import Interrupted

    class HungUpTerminal(FullStream):
        alive = True

        def write(self, text):
            if not self.alive:
                raise OSError(errno.EIO, "Input/output error")
            return len(text)

        def isatty(self):
            return True

    terminal = HungUpTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)

    def hang_up():
        terminal.alive = False
        os.kill(os.getpid(), signal.SIGHUP)

    stub_steps.append(hang_up)
    with pytest.raises(Interrupted) as stopped:
        build_in_process(tmp_path / "out", progress=True)
    assert stopped.value.signum == signal.SIGHUP
    assert working_folders(tmp_path) == [] and not (tmp_path / "out").exists()


# --- staging folders left by a crashed build, or by a stop that came twice ---------------------------------


CRASHING_BUILD = """
import os, signal, sys
from pathlib import Path
from ndcg_report.files import new_owned_folder

out = Path(sys.argv[1])
new_owned_folder(out.parent, f".{out.name}.staging")
os.kill(os.getpid(), signal.SIGKILL)  # killed mid-build (out of memory): no clean-up of its own
"""


def test_11_a_batch_removes_the_staging_of_a_build_it_saw_crash_and_only_that(tmp_path, monkeypatch):
    from ndcg_report.batch import runner
    from ndcg_report.batch.config import load_config
    from ndcg_report.files import new_owned_folder

    monkeypatch.setattr(runner, "build_command", lambda report, out, cache_dir: [sys.executable, "-c", CRASHING_BUILD,
                                                                                  str(out)])
    (tmp_path / "out").mkdir()
    other = new_owned_folder(tmp_path / "out", ".r1.staging")  # this process's, alive: never the batch's to remove
    lines: list[str] = []
    result = runner.run_batch(load_config(small_config(tmp_path)), log=lines.append)
    assert [(o.status, o.step) for o in result.outcomes] == [("failed", "crash")]
    assert working_folders(tmp_path / "out") == [other.name]
    assert [line for line in lines if line.startswith("removed .r1.staging-")], lines


def test_11_a_second_stop_signal_during_the_clean_up_still_removes_the_staging(tmp_path, stub_steps, monkeypatch,
                                                                                stop_signals):
    # Ctrl-C on a batch: its build gets SIGINT from the terminal and SIGTERM from the batch at once; the
    # second used to cut the first's clean-up short
    from ndcg_report.build import pipeline
    from ndcg_report.interrupts import Interrupted

    remove = pipeline.remove_owned_folder

    def second_stop_then_remove(folder, *args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        return remove(folder, *args, **kwargs)

    monkeypatch.setattr(pipeline, "remove_owned_folder", second_stop_then_remove)
    stub_steps.append(lambda: os.kill(os.getpid(), signal.SIGINT))
    with pytest.raises(Interrupted) as stopped:
        build_in_process(tmp_path / "out")
    assert stopped.value.signum == signal.SIGINT  # the first stop says how the build ended
    assert working_folders(tmp_path) == [] and not (tmp_path / "out").exists()


def test_11_a_stop_signal_right_after_the_staging_is_made_still_removes_it(tmp_path, stub_steps, monkeypatch,
                                                                          stop_signals):
    from ndcg_report.build import pipeline
    from ndcg_report.interrupts import Interrupted

    make = pipeline.new_owned_folder

    def made_then_stopped(*args, **kwargs):
        folder = make(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)  # before the build has taken the folder in its charge
        return folder

    monkeypatch.setattr(pipeline, "new_owned_folder", made_then_stopped)
    with pytest.raises(Interrupted) as stopped:
        build_in_process(tmp_path / "out")
    assert stopped.value.signum == signal.SIGTERM
    assert working_folders(tmp_path) == [] and not (tmp_path / "out").exists()


DEAF_BUILD = """
import signal, sys, time
from pathlib import Path
from ndcg_report.files import new_owned_folder

signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a stop it never acts on (Python lost it in a finalizer)
out = Path(sys.argv[1])
new_owned_folder(out.parent, f".{out.name}.staging")
time.sleep(600)
"""


def test_11_a_build_that_does_not_end_when_the_batch_stops_is_killed_after_a_grace(tmp_path, monkeypatch):
    # seen in about 1 of 16 batch Ctrl-C: a build's stop signals raised inside a finalizer (a module
    # lock's weakref callback) were lost, the build hung on the import lock that left held, and so did the batch
    import threading

    from ndcg_report.batch import builds
    from ndcg_report.batch.builds import BuildJob, LocalBuilds

    monkeypatch.setattr(builds, "POLL_SECONDS", 0.1)
    monkeypatch.setattr(builds, "GRACE_SECONDS", 0.5)
    out, local, ran = tmp_path / "r1", LocalBuilds(), []
    job = BuildJob("r1", [sys.executable, "-c", DEAF_BUILD, str(out)], {}, tmp_path / "attempt.json", out)
    waiting = threading.Thread(target=lambda: ran.append(local.run(job)), daemon=True)
    waiting.start()
    deadline = time.monotonic() + 30
    while not working_folders(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    local.stop(signal.SIGTERM)
    waiting.join(20)
    if not ran:  # still waiting: end the build so that nothing outlives the test
        for process in list(local.running):
            process.kill()
    assert ran and ran[0].returncode == -signal.SIGKILL
    assert working_folders(tmp_path) == [] and ran[0].removed[0].startswith(".r1.staging-")
