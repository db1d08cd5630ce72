"""Every figure of a report also as SVG in figures/ beside it: linked from its caption,
the same bytes on every build, replaced by the next build, never a user's file removed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

SHARE_KERNEL_FORKS = True  # its builds fork their kernels from the session's server (conftest.py)

SMALL = Path(__file__).resolve().parents[1] / "data" / "small"
CONSOLE = Path(sys.executable).parent / "ndcg-report"


def build(out: Path, *runs: Path) -> subprocess.CompletedProcess:
    command = [str(CONSOLE), "build", *[part for run in runs for part in ("--run", str(run))],
               "--baseline", str(SMALL / "bm25.txt"), "--qrels", str(SMALL / "qrels.txt"), "--out", str(out)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_each_figure_has_its_svg_linked_and_reproducible(tmp_path):
    second = tmp_path / "second.txt"
    second.write_text((SMALL / "bm25.txt").read_text().replace(" bm25", " other").replace(" 1 ", " 1 ", 1))
    assert build(tmp_path / "a", SMALL / "monot5.txt").returncode == 0
    assert build(tmp_path / "b", SMALL / "monot5.txt").returncode == 0
    page = (tmp_path / "a" / "report.html").read_text()
    linked = re.findall(r'<a class="svg" href="(figures/[^"]+\.svg)">SVG</a>', page)
    pngs = sum("image/png" in output.get("data", {}) for cell in json.loads((tmp_path / "a" / "report.ipynb").read_text())["cells"]
               for output in cell.get("outputs", []))
    assert linked and len(linked) == pngs  # one SVG per figure shown
    assert sorted(f"figures/{p.name}" for p in (tmp_path / "a" / "figures").iterdir()) == sorted(linked)
    assert json.loads((tmp_path / "a" / "summary.json").read_text())["figures"] == linked
    for name in linked:
        svg = (tmp_path / "a" / name).read_bytes()
        assert svg.startswith(b"<?xml") and b"<svg" in svg and b"<dc:date>" not in svg
        assert svg == (tmp_path / "b" / name).read_bytes()  # the same bytes on every build


def test_a_rebuild_replaces_the_figures_and_keeps_a_users_file(tmp_path):
    assert build(tmp_path / "out", SMALL / "monot5.txt").returncode == 0
    before = {p.name for p in (tmp_path / "out" / "figures").iterdir()}
    (tmp_path / "out" / "figures" / "notes.txt").write_text("mine")
    result = build(tmp_path / "out", SMALL / "monot5.txt")
    assert result.returncode == 0, result.stderr
    assert {p.name for p in (tmp_path / "out" / "figures").iterdir()} == before | {"notes.txt"}  # new figures, the user's file
    assert "notes.txt" in result.stdout + result.stderr  # the user's file is named, not removed
    leftovers = [p for p in tmp_path.iterdir() if p.name != "out"]
    assert [p.name for p in leftovers] == [] and (tmp_path / "out" / "figures" / "notes.txt").read_text() == "mine"
