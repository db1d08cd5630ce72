"""Rewrite the format table of docs/inputs.md from the registered input formats (inputs.formats.registry).

    .venv/bin/python scripts/formats_table.py          # rewrites the part between the markers
    .venv/bin/python scripts/formats_table.py --check  # exit 1 if the page is out of date

A row per example each format gives (its `examples`), the inputs in the order run, qrels, topics and
the formats in the order they are registered. tests/inputs/test_format_registry.py checks the page the same
way, so a format added or re-described without the page fails the suite.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ndcg_report.inputs.formats.registry import FORMATS

sys.path.insert(0, str(Path(__file__).resolve().parent))  # generated_part.py beside it, however it is loaded
from generated_part import main, with_part  # noqa: E402

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
    return with_part(text, BEGIN, END, table() + "\n")


if __name__ == "__main__":
    sys.exit(main(PAGE, page_with_table, sys.argv[1:]))
