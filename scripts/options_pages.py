"""Rewrite what the report options table writes: the report notebook's parameters cell (both copies)
and the options table of docs/report-options.md; and the gate options' table of docs/gating.md.

    .venv/bin/python scripts/options_pages.py          # rewrites them
    .venv/bin/python scripts/options_pages.py --check  # exit 1 if one is out of date

tests/analysis/test_options.py checks them the same way, so an option changed in
src/ndcg_report/analysis/options/table.py without its pages fails the suite.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ndcg_report.analysis.gate.options import gate_options_markdown
from ndcg_report.analysis.options.pages import notebook_parameters_cell, options_table_markdown

sys.path.insert(0, str(Path(__file__).resolve().parent))  # generated_part.py beside it, however it is loaded
from generated_part import with_part  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = (ROOT / "src" / "ndcg_report" / "build" / "notebooks" / "ndcg_report.ipynb",
             ROOT / "notebooks" / "ndcg_report.ipynb")
PAGE = ROOT / "docs" / "report-options.md"
BEGIN = "<!-- options: written by scripts/options_pages.py from analysis/options/table.py -->"
END = "<!-- end of options -->"
GATE_PAGE = ROOT / "docs" / "gating.md"
GATE_BEGIN = "<!-- gate options: written by scripts/options_pages.py from analysis/gate/options.py -->"
GATE_END = "<!-- end of gate options -->"


def notebook_text(path: Path) -> str:
    """The notebook at path with its parameters cell written from the table (the file's own layout kept)."""
    text = path.read_text(encoding="utf-8")
    notebook = json.loads(text)
    cell = next(cell for cell in notebook["cells"] if "parameters" in cell.get("metadata", {}).get("tags", []))
    lines = notebook_parameters_cell().split("\n")
    cell["source"] = [line + "\n" for line in lines[:-1]] + [lines[-1]]
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def page_text() -> str:
    return with_part(PAGE.read_text(encoding="utf-8"), BEGIN, END, options_table_markdown() + "\n")


def written() -> dict[Path, str]:
    """Every file this script writes, with the text it should hold."""
    gate_page = with_part(GATE_PAGE.read_text(encoding="utf-8"), GATE_BEGIN, GATE_END, gate_options_markdown() + "\n")
    return {**{path: notebook_text(path) for path in NOTEBOOKS}, PAGE: page_text(), GATE_PAGE: gate_page}


def main(argv: list[str]) -> int:
    stale = [path for path, text in written().items() if path.read_text(encoding="utf-8") != text]
    if "--check" in argv:
        for path in stale:
            print(f"{path.relative_to(ROOT)} is out of date: run scripts/options_pages.py", file=sys.stderr)
        return 1 if stale else 0
    for path, text in written().items():
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
