"""Rewrite the table of measures in docs/measures.md from the families' own rows (their Family).

    .venv/bin/python scripts/measures_page.py          # rewrites the part between the markers
    .venv/bin/python scripts/measures_page.py --check  # exit 1 if the page is out of date

The table is core.measures.catalogue.markdown_table(): one row per family of the registry, its
names, definition, `all` row and what is relevant to it, the same text `ndcg-report eval --list`
prints. tests/core/test_measures_page.py checks the page the same way, so a family added or re-defined
without the page fails the suite.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # generated_part.py beside it, however it is loaded
from generated_part import main, with_part  # noqa: E402

from ndcg_report.core.measures.catalogue import LEGEND, markdown_table

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "measures.md"
BEGIN = "<!-- measures: written by scripts/measures_page.py from each family's row -->"
END = "<!-- end of measures -->"


def page_with_table(text: str) -> str:
    return with_part(text, BEGIN, END, f"{LEGEND}\n\n{markdown_table()}")


if __name__ == "__main__":
    sys.exit(main(PAGE, page_with_table, sys.argv[1:]))
