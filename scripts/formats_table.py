"""Rewrite the format table of docs/inputs.md from the registered input formats (inputs.formats.registry).

    .venv/bin/python scripts/formats_table.py          # rewrites the part between the markers
    .venv/bin/python scripts/formats_table.py --check  # exit 1 if the page is out of date

A row per example each format gives (its `examples`), the inputs in the order run, qrels, topics and
the formats in the order they are registered. tests/test_format_registry.py checks the page the same
way, so a format added or re-described without the page fails the suite.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from ndcg_report.inputs.formats.registry import FORMATS

_SPEC = importlib.util.spec_from_file_location("architecture_page", Path(__file__).with_name("architecture_page.py"))
_PAGES = importlib.util.module_from_spec(_SPEC)  # its page writing: between markers, --check
_SPEC.loader.exec_module(_PAGES)

PAGE = Path(__file__).resolve().parents[1] / "docs" / "inputs.md"
BEGIN = "<!-- formats: written by scripts/formats_table.py from the registered input formats -->"
END = "<!-- end of formats -->"


def table() -> str:
    """The generated part of the page: the markdown table of every registered format's examples."""
    rows = ["| input | format | one line of it (or the file) |", "| --- | --- | --- |"]
    for kind in FORMATS.kinds():
        rows += [f"| {kind} | {name} | {line} |" for form in FORMATS.for_kind(kind)
                 for shown, name, line in form.examples if shown == kind]
    return "\n".join(rows)


def page_with_table(text: str) -> str:
    return _PAGES.between_markers(text, BEGIN, END, table() + "\n")


def main(argv: list[str]) -> int:
    return _PAGES.rewrite(PAGE, page_with_table, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
