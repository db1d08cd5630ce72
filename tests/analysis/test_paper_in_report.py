"""The report's "Tables for a paper" section and leaderboard.tex / leaderboard.md beside
summary.json, the same texts `ndcg-report table` makes from that summary.json."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

SHARE_KERNEL_FORKS = True  # its builds fork their kernels from the session's server (conftest.py)

SMALL = Path(__file__).resolve().parents[1] / "data" / "small"
CONSOLE = Path(sys.executable).parent / "ndcg-report"


def test_a_report_holds_its_paper_tables_as_table_makes_them(tmp_path):
    out = tmp_path / "out"
    built = subprocess.run([str(CONSOLE), "build", "--run", f"monoT5={SMALL / 'monot5.txt'}", "--baseline",
                            str(SMALL / "bm25.txt"), "--qrels", str(SMALL / "qrels.txt"), "--out", str(out)],
                           capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    for name, form in (("leaderboard.tex", "latex"), ("leaderboard.md", "markdown")):
        table = subprocess.run([str(CONSOLE), "table", str(out), "--format", form],
                               capture_output=True, text=True, check=False)
        assert table.returncode == 0, table.stderr
        assert (out / name).read_text() == table.stdout, name
    page = (out / "report.html").read_text()
    section = page[page.index("Tables for a paper"):]
    assert "<details" in page[:page.index("Tables for a paper")][-400:]
    shown = [html.unescape(block) for block in re.findall(r"<pre[^>]*>(.*?)</pre>", section, flags=re.S)[:2]]
    assert [text.rstrip("\n") for text in shown] == [(out / n).read_text().rstrip("\n")
                                                     for n in ("leaderboard.tex", "leaderboard.md")]
    assert r"\toprule" in (out / "leaderboard.tex").read_text() and "monoT5" in (out / "leaderboard.md").read_text()
