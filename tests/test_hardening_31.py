"""The third hardening round (issue 31): nothing of the caller's folder runs as code or changes a
report. Each test plants what a hostile or careless folder may hold and builds from inside it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SMALL = Path(__file__).parent / "data" / "small"
CONSOLE = Path(sys.executable).parent / "ndcg-report"  # the installed command: its own folder first on sys.path
PLANTED = ("json", "socket", "select", "shutil", "tempfile", "subprocess", "dataclasses", "yaml", "papermill")


def build_from(folder: Path, out: Path, **env: str) -> subprocess.CompletedProcess:
    """`ndcg-report build` of the small DL 2019 set, started in `folder`, into `out`."""
    return subprocess.run([str(CONSOLE), "build", "--run", f"monoT5={SMALL / 'monot5.txt'}", "--baseline",
                           str(SMALL / "bm25.txt"), "--qrels", str(SMALL / "qrels.txt"), "--out", str(out)],
                          cwd=folder, capture_output=True, text=True, env={**os.environ, **env}, check=False)


def figures(report: Path) -> list[str]:
    notebook = json.loads((report / "report.ipynb").read_text())
    return [output["data"]["image/png"] for cell in notebook["cells"] for output in cell.get("outputs", [])
            if "image/png" in output.get("data", {})]


@pytest.mark.parametrize("forks", ["", "1"], ids=["forked kernels", "NDCG_REPORT_NO_FORKS=1"])
def test_01_modules_in_the_working_folder_never_run(tmp_path, forks):
    folder = tmp_path / "hostile"
    folder.mkdir()
    for name in PLANTED:  # each would leave a file behind if it ran
        (folder / f"{name}.py").write_text(f"open({str(tmp_path / ('ran-' + name))!r}, 'w').close()\n"
                                           "raise SystemExit('planted module ran')\n")
    result = build_from(folder, tmp_path / "out", NDCG_REPORT_NO_FORKS=forks)
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in tmp_path.glob("ran-*")) == []
    assert (tmp_path / "out" / "report.html").is_file()


def test_02_a_matplotlibrc_in_the_working_folder_changes_no_figure(tmp_path):
    clean, planted = tmp_path / "clean", tmp_path / "planted"
    clean.mkdir()
    planted.mkdir()
    (planted / "matplotlibrc").write_text("figure.facecolor: red\naxes.facecolor: red\nlegend.frameon: False\n"
                                          "lines.linewidth: 9\nfont.size: 30\n")
    assert build_from(clean, tmp_path / "a").returncode == 0
    result = build_from(planted, tmp_path / "b")
    assert result.returncode == 0, result.stderr
    assert figures(tmp_path / "a") and figures(tmp_path / "a") == figures(tmp_path / "b")
