"""Rewrite the module list of docs/internals/architecture.md from the modules' own docstrings.

    .venv/bin/python scripts/architecture_page.py        # rewrites the part between the markers
    .venv/bin/python scripts/architecture_page.py --check  # exit 1 if the page is out of date

Each module is one line, `- `path`: its docstring's first line`, under its folder's heading, the
folders in alphabetical order (the package's top first). tests/test_architecture.py checks the
page the same way, so a module added, removed or re-described without the page fails the suite.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # generated_part.py beside it, however it is loaded
from generated_part import main, with_part  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "ndcg_report"
PAGE = ROOT / "docs" / "internals" / "architecture.md"
BEGIN = "<!-- modules: written by scripts/architecture_page.py from each module's docstring -->"
END = "<!-- end of modules -->"


def summary(path: Path) -> str:
    """The first line of a module's docstring ('' if it has none)."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False) or ""
    return docstring.strip().split("\n")[0].strip()


def folders() -> dict[str, list[Path]]:
    """Modules by folder (relative to the package, '' for its top), each folder's modules sorted."""
    found: dict[str, list[Path]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        folder = path.parent.relative_to(PACKAGE).as_posix()
        found.setdefault("" if folder == "." else folder, []).append(path)
    return found


def module_lines() -> str:
    """The generated part of the page: a heading per folder, a line per module."""
    parts = []
    for folder, paths in sorted(folders().items(), key=lambda item: (item[0] != "", item[0])):
        parts.append(f"### `{folder or 'ndcg_report'}/`\n")
        for path in paths:
            parts.append(f"- `{path.relative_to(PACKAGE).as_posix()}`: {summary(path)}")
        parts.append("")
    return "\n".join(parts)


def page_with_modules(text: str) -> str:
    return with_part(text, BEGIN, END, module_lines())


if __name__ == "__main__":
    sys.exit(main(PAGE, page_with_modules, sys.argv[1:]))
