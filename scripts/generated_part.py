"""The part of a docs page between two markers that a script writes from the code, and that script's main.

architecture_page.py (the modules) and measures_page.py (the measure families) use it; each test
that keeps its page true compares the page with what the script would write.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def with_part(text: str, begin: str, end: str, body: str) -> str:
    """The page `text` with `body` between its `begin` and `end` markers (a blank line either side)."""
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n\n{body}\n{end}{tail}"


def main(page: Path, rewrite: Callable[[str], str], argv: list[str]) -> int:
    """Rewrite the page; with --check, write nothing and exit 1 if it is out of date."""
    text = page.read_text(encoding="utf-8")
    new = rewrite(text)
    if "--check" in argv:
        return 0 if new == text else 1
    page.write_text(new, encoding="utf-8")
    return 0
