"""The build's nbval plugin (build/steps/nbval_plugin.py): a kernel that dies is noticed at once and said."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def test_nbval_notices_a_dead_kernel_at_once_and_says_so(tmp_path):
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"name": "python3", "language": "python",
                                                                               "display_name": "Python 3"}},
                "cells": [{"cell_type": "code", "id": "a", "metadata": {}, "execution_count": 1, "outputs": [],
                           "source": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"},
                          {"cell_type": "code", "id": "b", "metadata": {}, "execution_count": 2, "outputs": [],
                           "source": "1"}]}
    path = tmp_path / "dies.ipynb"
    path.write_text(json.dumps(notebook))
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "ndcg_report.build.steps.nbval_plugin", "-p",
                             "nbval.plugin", "--nbval", str(path), "--nbval-cell-timeout", "120", "-p",
                             "no:cacheprovider", "-q", "-s", "--rootdir", str(tmp_path), "-c", os.devnull],
                            capture_output=True, text=True, cwd=tmp_path, timeout=110,
                            env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "NDCG_REPORT_NO_FORKS": "1"})
    from ndcg_report.build.steps.step_failures import KERNEL_DIED

    assert result.returncode != 0 and result.stdout.strip().splitlines()[-1] == KERNEL_DIED, result.stdout[-2000:]
    assert time.monotonic() - started < 60
