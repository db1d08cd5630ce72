"""The build's nbval process stops at once when told to, wherever it is: a build stopped by a signal
(Ctrl-C, a batch's SIGTERM, a terminal hung up) while nbval's kernel is still starting never waits
for that start (it used to wait until the kernel was up and warmed, beyond a batch's grace)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from ndcg_report.build.steps.nbval_plugin import STOPPED


def _nbval_with_a_kernel_that_never_starts(tmp_path) -> subprocess.Popen:
    spec = tmp_path / "share" / "kernels" / "never"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": ["sh", "-c", "exec sleep 45 </dev/null >/dev/null 2>&1", "{connection_file}"],  # own session
        "display_name": "never", "language": "python"}))
    notebook = tmp_path / "report.ipynb"
    notebook.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "id": "a", "metadata": {}, "execution_count": 1, "outputs": [], "source": "1"}]}))
    (tmp_path / "cells").mkdir()
    command = [sys.executable, "-m", "pytest", "-p", "ndcg_report.build.steps.nbval_plugin", "-p", "nbval.plugin",
               "--nbval", str(notebook), "--nbval-kernel-name", "never", "--nbval-kernel-startup-timeout", "90",
               "--ndcg-report-cells", str(tmp_path / "cells"), "--ndcg-report-executed", str(notebook),
               "-p", "no:cacheprovider", "-q", "-s", "--rootdir", str(tmp_path), "-c", os.devnull]
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "NDCG_REPORT_NO_FORKS": "1",
           "JUPYTER_PATH": str(tmp_path / "share")}
    return subprocess.Popen(command, cwd=tmp_path, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _ended_within(process: subprocess.Popen, seconds: float) -> tuple[int | None, float]:
    started = time.monotonic()
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        pass
    finally:
        elapsed = time.monotonic() - started
        try:
            os.killpg(process.pid, signal.SIGKILL)  # the kernel that never started, and nbval if it hangs
        except ProcessLookupError:
            pass
        process.communicate()
    return process.returncode if elapsed < seconds else None, elapsed


def test_a_stop_line_ends_nbval_while_its_kernel_is_starting(tmp_path):
    process = _nbval_with_a_kernel_that_never_starts(tmp_path)
    time.sleep(3)  # nbval is waiting for its kernel (which would take the whole startup timeout, 90 s)
    process.stdin.write("stop\n")
    process.stdin.flush()
    returncode, elapsed = _ended_within(process, 30)
    assert returncode == STOPPED, (returncode, elapsed)


def test_the_end_of_its_input_ends_nbval_before_its_kernel_has_started(tmp_path):
    process = _nbval_with_a_kernel_that_never_starts(tmp_path)
    process.stdin.close()  # the build gone: nothing more will come
    process.stdin = None
    returncode, _ = _ended_within(process, 30)
    assert returncode == STOPPED
