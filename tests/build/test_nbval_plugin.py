"""The build's nbval plugin (build/steps/nbval_plugin.py): a kernel that dies is noticed at once and said; a report
whose query ids have any length, hex or not, and a system name the font has no glyphs for, passes its re-execution."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from tests.helpers import BASELINE, QRELS, RUN, TOPICS, figures, ids_of_every_length, installed


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


def _with_ids(folder: Path, ids: list[str]) -> dict[str, Path]:
    """The small set with each of its queries under several of `ids` (query i of ids is the small set's
    query i modulo its count), written into folder."""
    originals = [line.split("\t")[0] for line in TOPICS.read_text().splitlines()]
    copies = {old: [new for i, new in enumerate(ids) if i % len(originals) == position]
              for position, old in enumerate(originals)}
    written = {}
    for source, sep in ((RUN, " "), (BASELINE, " "), (QRELS, " "), (TOPICS, "\t")):
        lines = [line.split(sep, 1) for line in source.read_text().splitlines()]
        written[source.name] = folder / source.name
        written[source.name].write_text("".join(f"{new}{sep}{rest}\n" for qid, rest in lines for new in copies[qid]))
    return written


def test_query_ids_of_every_length_hex_or_not_pass_the_re_execution(tmp_path):
    """One build, 60 queries (their ids labelled under the per-query bars) with ids of 1 to 4,096
    characters, hex (a sha256's 64) and not, and a system named in characters the figures' font lacks:
    papermill's execution and nbval's show the same, the ids are the report's as given."""
    every = ids_of_every_length()
    ids = [every[i] for i in np.linspace(0, len(every) - 1, 60).round().astype(int)]
    files = _with_ids(tmp_path, ids)
    out = tmp_path / "report"
    result = installed("build", "--run", f"检索={files[RUN.name]}", "--baseline", files[BASELINE.name],
                       "--qrels", files[QRELS.name], "--topics", files[TOPICS.name], "-k", "10", "--out", out)
    assert result.returncode == 0, result.stderr.decode()
    per_query = pd.read_csv(out / "per_query.csv", dtype={"qid": str}, keep_default_na=False)
    assert set(per_query["qid"]) == set(ids) and len({len(qid) for qid in ids}) == 60
    assert len(figures(out)) >= 4
    warned = json.loads((out / "summary.json").read_text(encoding="utf-8"))["warnings"]
    assert "检索: the figures' font has no glyph for 检 索, drawn there as an empty box (the tables show the name " \
           "as given)." in warned  # said once, by the data checks, in both executions alike


def test_a_kernel_message_is_pretty_printed_only_when_nbval_logs_it():
    import logging
    import pprint

    from ndcg_report.build.steps import nbval_plugin

    message = {"content": {"data": {"text/html": "<table>" + "<tr><td>1</td></tr>" * 200 + "</table>"}}}
    made = nbval_plugin._PrettyWhenLogged(message)
    assert str(made) == pprint.pformat(message)
    records = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    logger = logging.getLogger("nbval.kernel.probe")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.debug("Kernel message (%s):\n%s", "iopub", made)
    assert records == [f"Kernel message (iopub):\n{pprint.pformat(message)}"]
