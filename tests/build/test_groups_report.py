"""Query groups inside a report: `build --groups FILE`, compare_runs(groups=...),
per_group.csv and summary.json's `groups`, the same numbers as group_table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from ndcg_report import compare_runs, group_table
from ndcg_report.errors import InputError, ParameterError

SHARE_KERNEL_FORKS = True  # its builds fork their kernels from the session's server (conftest.py)

DATA = Path(__file__).resolve().parents[1] / "data"
SMALL, JUDGES = DATA / "small", DATA / "judges"
CONSOLE = Path(sys.executable).parent / "ndcg-report"
RUNS = {"monoT5": SMALL / "monot5.txt", "rrf": JUDGES / "rrf.txt"}
FOLDS = {"1": [1037798, 104861], "2": ["1063750", 1103812, 1106007]}  # DL-HARD's folds.json shape: numbers or text


def build(out: Path, groups: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [str(CONSOLE), "build", *[part for name, path in RUNS.items() for part in ("--run", f"{name}={path}")],
               "--baseline", str(SMALL / "bm25.txt"), "--baseline-name", "BM25", "--qrels", str(SMALL / "qrels.txt"),
               "--preset", "trec-dl", "--groups", str(groups), *extra, "--out", str(out)]
    return subprocess.run(command, capture_output=True, text=True, check=False, env={**os.environ})


def test_compare_runs_keeps_the_groups_and_group_table_uses_them():
    experiment = compare_runs(RUNS, SMALL / "qrels.txt", SMALL / "bm25.txt", baseline_name="BM25", preset="trec-dl",
                              groups=FOLDS)
    assert experiment.groups.to_dict() == {"1037798": "1", "104861": "1", "1063750": "2", "1103812": "2", "1106007": "2"}
    pd.testing.assert_frame_equal(group_table(experiment), group_table(experiment, FOLDS))
    plain = compare_runs(RUNS, SMALL / "qrels.txt", SMALL / "bm25.txt", baseline_name="BM25", preset="trec-dl")
    pd.testing.assert_frame_equal(plain.leaderboard, experiment.leaderboard)  # groups change no other number
    with pytest.raises(ParameterError, match="give the groups"):
        group_table(plain)
    with pytest.raises(ParameterError, match="names no query of the qrels"):
        compare_runs(RUNS, SMALL / "qrels.txt", SMALL / "bm25.txt", groups={"x": ["nope"]})


def test_a_grouped_report_writes_per_group_csv_with_group_tables_numbers(tmp_path):
    folds = tmp_path / "folds.json"
    folds.write_text(json.dumps(FOLDS))
    result = build(tmp_path / "out", folds)
    assert result.returncode == 0, result.stderr
    written = pd.read_csv(tmp_path / "out" / "per_group.csv", dtype={"group": str})
    assert list(written.columns[:3]) == ["group", "system", "role"]
    experiment = compare_runs(RUNS, SMALL / "qrels.txt", SMALL / "bm25.txt", baseline_name="BM25", preset="trec-dl")
    expected = group_table(experiment, folds).reset_index(drop=True)
    pd.testing.assert_series_equal(written["group"], expected["group"].astype(str), check_names=False)
    for column in ("n", "mean", "delta", "ci_low", "ci_high", "p_holm"):
        assert written[column].to_numpy() == pytest.approx(expected[column].to_numpy(dtype=float), nan_ok=True), column
    assert written["significant"].astype("boolean").tolist() == expected["significant"].astype("boolean").tolist()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["groups"]["groups"] == {"1": 2, "2": 3, "(no group)": 3}
    assert summary["parameters"]["groups"] == "folds.json" and "--groups" in summary["command"]
    page = (tmp_path / "out" / "report.html").read_text()
    assert "Query groups: nDCG@10 per group" in page and "1 (2 q)" in page and "(no group) (3 q)" in page
    assert "Delta nDCG@10 against BM25 per query group" in page
    # built again without groups into the same folder: per_group.csv is the old report's, not a user's file
    again = subprocess.run([str(CONSOLE), "build", "--run", str(RUNS["monoT5"]), "--baseline", str(SMALL / "bm25.txt"),
                            "--qrels", str(SMALL / "qrels.txt"), "--out", str(tmp_path / "out")],
                           capture_output=True, text=True, check=False)
    assert again.returncode == 0, again.stderr
    assert not (tmp_path / "out" / "per_group.csv").exists() and "kept" not in again.stdout + again.stderr


def test_a_groups_file_of_another_collection_is_exit_2_one_line_nothing_written(tmp_path):
    groups = tmp_path / "groups.tsv"
    groups.write_text("q1\ta\nq2\tb\n")
    result = build(tmp_path / "out", groups)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "names no query of the qrels" in result.stderr
    assert str(groups) in result.stderr and not (tmp_path / "out").exists()
    groups.write_text("1037798\n")  # no group
    result = build(tmp_path / "out", groups)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and ":1:" in result.stderr
    with pytest.raises(InputError):
        compare_runs(RUNS, SMALL / "qrels.txt", SMALL / "bm25.txt", groups=groups)


def test_a_batch_report_takes_groups(tmp_path):
    from ndcg_report.batch.config import load_config
    from ndcg_report.batch.reports import build_argv

    folds = tmp_path / "folds.json"
    folds.write_text(json.dumps(FOLDS))
    config = tmp_path / "batch.yml"
    config.write_text(f"output: {tmp_path / 'out'}\nreports:\n  - name: grouped\n    run: {RUNS['monoT5']}\n"
                      f"    baseline: {SMALL / 'bm25.txt'}\n    qrels: {SMALL / 'qrels.txt'}\n    groups: folds.json\n")
    [report] = load_config(config).reports
    assert f"--groups={folds}" in build_argv(report, tmp_path / "out" / "grouped", None)
