"""Messages to a terminal or a log (console.py): a write that fails is dropped, never raised: a build whose
output or terminal is lost still publishes or cleans up, and ends as it would have."""

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

from tests.helpers import CLI, QRELS, RUN, build_args, build_in_process, one_stderr_line, small_config, working_folders


class FullStream:
    """A standard stream on a full disk: every write fails with ENOSPC."""

    encoding = "utf-8"

    def write(self, text):
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self):
        pass

    def isatty(self):
        return False


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


@pytest.mark.parametrize("stdout", ["full", "closed"])
def test_a_build_whose_standard_output_fails_publishes_and_exits_0(tmp_path, fake_steps, monkeypatch, capsys,
                                                                      stdout):
    # found: `build > /dev/full` published, then exited 1 "cannot write the output"
    from ndcg_report.cli import main

    monkeypatch.setattr(sys, "stdout", FullStream() if stdout == "full" else None)
    monkeypatch.setattr("ndcg_report.commands.output.silence_stdout", lambda: None)  # fd 1 is pytest's
    code = main(build_args(tmp_path / "out"))
    err = capsys.readouterr().err
    assert code == 0 and (tmp_path / "out" / "report.html").is_file()
    why = "No space left on device" if stdout == "full" else "it is closed"
    one_stderr_line(err, f"could not print this on the standard output ({why}): built {tmp_path / 'out' / 'report.html'}")


def test_a_build_to_dev_full_exits_0_and_eval_to_dev_full_exits_1(tmp_path):
    with open("/dev/full", "w") as full:
        built = subprocess.run([*CLI, *build_args(tmp_path / "out")], stdout=full, stderr=subprocess.PIPE,
                               text=True, check=False)
        evaluated = subprocess.run([*CLI, "eval", str(QRELS), str(RUN)], stdout=full, stderr=subprocess.PIPE,
                                   text=True, check=False)
    assert built.returncode == 0 and (tmp_path / "out" / "report.html").is_file(), built.stderr
    one_stderr_line(built.stderr, "ndcg-report: note: could not print this on the standard output (No space left on device)")
    assert evaluated.returncode == 1  # eval's table is its product: not written is a failure
    one_stderr_line(evaluated.stderr, "cannot write the output (No space left on device)")


def test_a_batch_whose_log_goes_to_a_full_disk_builds_and_finishes(tmp_path):
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


@pytest.mark.usefixtures("sighup_at_default")
def test_a_terminal_hung_up_mid_build_removes_the_staging_and_exits_129(tmp_path):
    # found: the progress line's clean-up failed on the dead terminal (EIO) and skipped the staging's
    code, shown = on_a_terminal_hung_up([*CLI, *build_args(tmp_path / "out")], tmp_path,
                                        lambda shown: b"executing the notebook" in shown)
    assert code == 129, shown
    assert working_folders(tmp_path) == [] and not (tmp_path / "out").exists()


@pytest.mark.usefixtures("sighup_at_default")
def test_a_batch_whose_terminal_hangs_up_exits_129(tmp_path):
    small_config(tmp_path)
    code, shown = on_a_terminal_hung_up([*CLI, "batch", "c.yml"], tmp_path,
                                        lambda shown: b" start r1 " in shown and working_folders(tmp_path / "out"))
    history = tmp_path / "out" / ".history"
    assert code == 129, shown
    assert json.loads((history / "batch.json").read_text())["state"] == "finished"
    assert json.loads((history / "r1.status.json").read_text())["step"] == "interrupted"
    assert working_folders(tmp_path / "out") == []


def test_progress_lines_on_a_dead_terminal_cut_no_clean_up_short(tmp_path, fake_steps, monkeypatch, stop_signals):
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

    fake_steps.append(hang_up)
    with pytest.raises(Interrupted) as stopped:
        build_in_process(tmp_path / "out", progress=True)
    assert stopped.value.signum == signal.SIGHUP
    assert working_folders(tmp_path) == [] and not (tmp_path / "out").exists()
