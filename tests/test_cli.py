"""The command line's entry (cli.py): a stop signal at start-up or while eval writes, and a deleted working
folder, are one line."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from tests.helpers import BUILD, CONSOLE, QRELS, RUN, SMALL, refused, wait_for


def test_ctrl_c_while_eval_writes_is_one_line(tmp_path):
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


def test_a_stop_signal_during_start_up_is_one_line(tmp_path):
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


@pytest.mark.parametrize("command", ["eval", "build", "batch"])
def test_a_deleted_working_folder_is_one_line_before_any_work(tmp_path, command):
    gone = tmp_path / "gone"
    gone.mkdir()
    config = tmp_path / "c.yml"
    config.write_text(f"output: {tmp_path / 'site'}\nreports:\n  - {{name: a, run: {SMALL / 'monot5.txt'}, "
                      f"baseline: {SMALL / 'bm25.txt'}, qrels: {SMALL / 'qrels.txt'}}}\n")
    args = {"eval": ["eval", SMALL / "qrels.txt", SMALL / "monot5.txt"], "build": [*BUILD, "--out", tmp_path / "out"],
            "batch": ["batch", config]}[command]
    script = "import os, subprocess, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); os.execv(sys.argv[2], sys.argv[2:])"
    result = subprocess.run([sys.executable, "-c", script, str(gone), str(CONSOLE), *map(str, args)],
                            capture_output=True, check=False)
    refused(result, "the working folder was deleted: cd to an existing folder")
    assert sorted(os.listdir(tmp_path)) == ["c.yml"]
