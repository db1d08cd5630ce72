"""How a build runs its steps: inputs parsed once and reused by the kernels while unchanged, nbval's
kernel started during papermill, files written by papermill's execution only, and progress shown on a
terminal only; a build stopped (Ctrl-C, SIGHUP, a second stop during the clean-up) removes its staging
folder, and a killed build's stale staging is removed by the next build."""

from __future__ import annotations

import fcntl
import glob
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
from pathlib import Path

import numpy as np
import pytest

from ndcg_report.build import notebook_io
from ndcg_report.inputs.reading import read_qrels, read_run
from ndcg_report.build import input_cache, loading
from ndcg_report.build.input_cache import INPUT_CACHE_ENV, load_parsed, save_parsed
from ndcg_report.build.steps.processes import REVALIDATION_ENV
from ndcg_report.working_folders import OWNED_MARKER
from tests.helpers import build_args, build_in_process, cli, wait_for, working_folders

SMALL = Path(__file__).resolve().parents[1] / "data" / "small"
DL19 = Path(__file__).resolve().parents[2] / "src" / "ndcg_report" / "data" / "dl19-passage"


def same_parse(a, b) -> None:
    assert a.path == b.path and a.table.equals(b.table) and a.table.schema.equals(b.table.schema)
    assert np.array_equal(a.pairs.packed, b.pairs.packed) and a.pairs.row_bits == b.pairs.row_bits
    assert getattr(a, "tag", None) == getattr(b, "tag", None)


@pytest.mark.parametrize("name", ["monot5.dl19.run.gz", "run.msmarco-v1-passage.bm25-default.dl19.txt.gz"])
def test_a_saved_run_loads_as_it_was_parsed(tmp_path, name):
    parsed = read_run(DL19 / name)
    save_parsed(tmp_path, parsed)
    same_parse(load_parsed(tmp_path, DL19 / name, "run"), parsed)
    assert load_parsed(tmp_path, DL19 / name, "qrels") is None  # a run is never served as qrels


def test_saved_qrels_and_a_json_lines_run_load_as_they_were_parsed(tmp_path):
    qrels = read_qrels(DL19 / "qrels.dl19-passage.txt")
    save_parsed(tmp_path, qrels)
    same_parse(load_parsed(tmp_path, DL19 / "qrels.dl19-passage.txt", "qrels"), qrels)
    rag = Path(__file__).resolve().parents[2] / "src" / "ndcg_report" / "data" / "rag-cranfield" / "bm25-chunks.jsonl"
    run = read_run(rag)
    save_parsed(tmp_path, run)
    same_parse(load_parsed(tmp_path, rag, "run"), run)


def test_a_changed_or_moved_input_is_parsed_again(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text((SMALL / "monot5.txt").read_text())
    save_parsed(tmp_path / "cache", read_run(run))
    assert load_parsed(tmp_path / "cache", run, "run") is not None
    (tmp_path / "copy.txt").write_bytes(run.read_bytes())
    assert load_parsed(tmp_path / "cache", tmp_path / "copy.txt", "run") is None  # the same bytes at another path
    assert load_parsed(tmp_path / "cache", tmp_path / "missing.txt", "run") is None
    with open(run, "a") as stream:
        stream.write("999 Q0 extra 1 0.5 t\n")
    assert load_parsed(tmp_path / "cache", run, "run") is None
    assert load_parsed(None, run, "run") is None


def test_the_report_reads_the_build_s_parsed_inputs(tmp_path, monkeypatch):
    from ndcg_report.build.parameters import validate_parameters

    params = validate_parameters(runs=[str(SMALL / "monot5.txt")], qrels=str(SMALL / "qrels.txt"),
                                 baseline=str(SMALL / "bm25.txt"), ks="5,10")
    expected = notebook_io.load_report(params).experiment.leaderboard
    for parsed in (read_run(SMALL / "monot5.txt"), read_run(SMALL / "bm25.txt"), read_qrels(SMALL / "qrels.txt")):
        save_parsed(tmp_path, parsed)
    monkeypatch.setenv(INPUT_CACHE_ENV, str(tmp_path))

    def parsed_again(path):
        raise AssertionError(f"{path} was parsed again")

    monkeypatch.setattr(loading, "read_run", parsed_again)
    monkeypatch.setattr(loading, "read_qrels", parsed_again)
    assert notebook_io.load_report(params).experiment.leaderboard.equals(expected)
    assert input_cache.cache_folder() == tmp_path


def test_nbval_s_re_execution_writes_no_file(tmp_path, monkeypatch):
    from ndcg_report.build.parameters import validate_parameters

    report = notebook_io.load_report(validate_parameters(runs=[str(SMALL / "monot5.txt")], qrels=str(SMALL / "qrels.txt"),
                                                     baseline=str(SMALL / "bm25.txt"), ks="5,10"))
    monkeypatch.setenv(REVALIDATION_ENV, "1")
    notebook_io.save_outputs(report, tmp_path)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.delenv(REVALIDATION_ENV)
    notebook_io.save_outputs(report, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["leaderboard.md", "leaderboard.tex", "per_query.csv",
                                                          "summary.json", "unjudged.tsv"]


def build_command(out: Path) -> list[str]:
    return [sys.executable, "-m", "ndcg_report.cli", "build", "--run", str(SMALL / "monot5.txt"), "--baseline",
            str(SMALL / "bm25.txt"), "--qrels", str(SMALL / "qrels.txt"), "-k", "5,10", "--out", str(out)]


def run_on_a_terminal(command: list[str]) -> tuple[int, str, str]:
    """(exit code, stdout, what the terminal showed on stderr) of command with stderr on a pseudo-terminal."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # tqdm draws nothing 0 wide
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=follower, stdin=subprocess.DEVNULL)
    os.close(follower)
    shown = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            process.kill()
            raise AssertionError("no output for 120 s")
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the process ended
            break
        if not chunk:
            break
        shown += chunk
    stdout = process.stdout.read().decode()
    process.wait()
    os.close(leader)
    return process.returncode, stdout, shown.decode("utf-8", "replace")


def test_a_build_on_a_terminal_shows_its_step_and_cells_and_nothing_elsewhere(tmp_path):
    code, stdout, shown = run_on_a_terminal(build_command(tmp_path / "out"))
    assert code == 0, shown
    assert stdout.startswith("built ") and stdout.count("\n") == 1
    for seen in ("reading the inputs", "papermill:", "nbval:", "publishing"):
        assert seen in shown, (seen, shown)
    assert re.search(r"papermill: .* cell \d+/\d+", shown) and re.search(r"nbval: .* cell \d+/\d+", shown), shown
    assert shown.rstrip("\r\n").endswith("\x1b[K")  # the progress line is cleared at the end
    piped = subprocess.run(build_command(tmp_path / "out2"), capture_output=True, text=True, check=False)
    assert piped.returncode == 0 and piped.stderr == "" and piped.stdout.startswith("built ")


def staging_processes(staging_part: str) -> list[str]:
    """Command lines of running processes that mention staging_part (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            if staging_part in line:
                found.append(line)
    return found


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs Linux /proc")
def test_a_failing_papermill_step_leaves_no_nbval_or_kernel_running(tmp_path):
    import nbformat

    from ndcg_report.build.pipeline import package_file

    notebook = nbformat.read(package_file("notebooks", "ndcg_report.ipynb"), as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell("raise RuntimeError('stop here')"))
    broken = tmp_path / "broken.ipynb"
    nbformat.write(notebook, broken)
    result = subprocess.run(build_command(tmp_path / "out") + ["--notebook", str(broken)], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 1 and "RuntimeError: stop here" in result.stderr, result.stderr
    assert staging_processes(str(tmp_path / ".out.staging")) == []
    assert not [p for p in tmp_path.iterdir() if ".staging" in p.name]


def test_nbval_s_verdict_is_on_the_executed_notebook_not_on_a_cell_s_first_outputs(tmp_path):
    """nbval compares a cell with papermill's outputs of it as soon as it has run; a later cell that changes
    them (a display updated by id) makes the executed notebook differ from what nbval compared with. The
    build must then judge by the executed notebook, as a re-execution after papermill would: it fails."""
    import nbformat

    from ndcg_report.build.pipeline import package_file

    notebook = nbformat.read(package_file("notebooks", "ndcg_report.ipynb"), as_version=4)
    notebook.cells += [nbformat.v4.new_code_cell("from IPython.display import display\n"
                                                 "handle = display('before', display_id=True)"),
                       nbformat.v4.new_code_cell("handle.update('after')")]
    updating = tmp_path / "updating.ipynb"
    nbformat.write(notebook, updating)
    code_cells = sum(cell.cell_type == "code" for cell in notebook.cells) + 1  # and the injected parameters
    result = subprocess.run(build_command(tmp_path / "out") + ["--notebook", str(updating)], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 1, result.stderr
    assert f"step nbval failed in Cell {code_cells - 2}:" in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


def test_progress_lines_of_a_child_drive_nothing_when_not_asked(tmp_path):
    from ndcg_report.build.steps.processes import PROGRESS_MARK, ChildProcess

    script = f"print({PROGRESS_MARK!r} + '1 2'); print('plain'); import sys; print('err', file=sys.stderr)"
    finished = ChildProcess([sys.executable, "-c", script], dict(os.environ)).wait()
    assert (finished.returncode, finished.stdout, finished.stderr) == (0, "plain\n", "err\n")


def test_the_build_skips_jsonschema_s_format_grammar_but_still_validates_notebooks(tmp_path):
    script = ("from ndcg_report.build.steps.processes import skip_unused_jsonschema_formats as s; s(); import nbformat, sys;"
              "nb = nbformat.v4.new_notebook(); nb.cells.append(nbformat.v4.new_code_cell('1'));"
              "nbformat.validate(nb); bad = nbformat.v4.new_notebook(); bad.cells.append({'cell_type': 'nope'});"
              "ok = True\ntry:\n    nbformat.validate(bad); ok = False\nexcept nbformat.ValidationError:\n    pass\n"
              "print(ok, 'rfc3987_syntax' in sys.modules and sys.modules['rfc3987_syntax'] is not None)")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["True", "False"]  # a bad notebook is refused; the grammar never loaded


def test_build_removes_its_own_stale_staging_and_nothing_else(tmp_path):
    stale = tmp_path / ".out.staging-999999-0123abcd"
    stale.mkdir()
    (stale / OWNED_MARKER).write_text("made by ndcg-report")
    foreign = tmp_path / ".out.staging-999998-0123abce"
    foreign.mkdir()
    (foreign / "mine.txt").write_text("keep")
    import nbformat

    failing = tmp_path / "failing.ipynb"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("raise SystemExit('stop')")])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, failing)
    result = cli("build", "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels",
                 SMALL / "qrels.txt", "-k", "10", "--notebook", failing, "--out", tmp_path / "out")
    assert result.returncode == 1 and "step papermill failed" in result.stderr, result.stderr
    assert not stale.exists() and (foreign / "mine.txt").read_text() == "keep"
    assert not glob.glob(str(tmp_path / ".out.staging-*[!e]"))  # its own staging is gone too


def test_ctrl_c_during_a_build_is_one_line_and_removes_the_staging(tmp_path):
    process = subprocess.Popen(
        [sys.executable, "-m", "ndcg_report.cli", "build", "--run", str(SMALL / "monot5.txt"), "--baseline",
         str(SMALL / "bm25.txt"), "--qrels", str(SMALL / "qrels.txt"), "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert wait_for(lambda: glob.glob(str(tmp_path / ".out.staging-*")), 60)
    os.killpg(process.pid, signal.SIGINT)  # as a terminal does: the whole foreground group
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130 and stderr == "ndcg-report: interrupted\n", stderr
    assert not glob.glob(str(tmp_path / ".out.staging-*")) and not (tmp_path / "out").exists()


@pytest.mark.usefixtures("sighup_at_default")
def test_sighup_to_a_build_is_one_line_and_removes_the_staging(tmp_path):
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


def test_a_second_stop_signal_during_the_clean_up_still_removes_the_staging(tmp_path, fake_steps, monkeypatch,
                                                                                stop_signals):
    # Ctrl-C on a batch: its build gets SIGINT from the terminal and SIGTERM from the batch at once; the
    # second used to cut the first's clean-up short
    from ndcg_report.build import staging
    from ndcg_report.interrupts import Interrupted

    remove = staging.remove_owned_folder

    def second_stop_then_remove(folder, *args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        return remove(folder, *args, **kwargs)

    monkeypatch.setattr(staging, "remove_owned_folder", second_stop_then_remove)
    fake_steps.append(lambda: os.kill(os.getpid(), signal.SIGINT))
    with pytest.raises(Interrupted) as stopped:
        build_in_process(tmp_path / "out")
    assert stopped.value.signum == signal.SIGINT  # the first stop says how the build ended
    assert working_folders(tmp_path) == [] and not (tmp_path / "out").exists()


def test_a_stop_signal_right_after_the_staging_is_made_still_removes_it(tmp_path, fake_steps, monkeypatch,
                                                                          stop_signals):
    from ndcg_report.build import staging
    from ndcg_report.interrupts import Interrupted

    make = staging.new_private_folder

    def made_then_stopped(*args, **kwargs):
        folder = make(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)  # before the build has taken the folder in its charge
        return folder

    monkeypatch.setattr(staging, "new_private_folder", made_then_stopped)
    with pytest.raises(Interrupted) as stopped:
        build_in_process(tmp_path / "out")
    assert stopped.value.signum == signal.SIGTERM
    assert working_folders(tmp_path) == [] and not (tmp_path / "out").exists()
