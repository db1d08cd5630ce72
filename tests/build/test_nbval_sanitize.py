"""The build's nbval sanitiser (build/notebooks/nbval_sanitize.cfg): it rewrites what is volatile between
two executions (a Python object's memory address) and never a user's ids, query text or names."""

from __future__ import annotations

import re

from nbval.plugin import get_sanitize_patterns

from ndcg_report.build.pipeline import package_file
from tests.helpers import ids_of_every_length


def _patterns() -> list[tuple[str, str]]:
    return get_sanitize_patterns(package_file("notebooks", "nbval_sanitize.cfg").read_text())


def _sanitised(text: str) -> str:
    for regex, replace in _patterns():  # as nbval's IPyNbCell.sanitize applies them
        text = re.sub(regex, replace, text)
    return text


def test_the_sanitiser_leaves_ids_of_every_length_hex_or_not_unchanged():
    for qid in ids_of_every_length():
        for shown in (qid, f"<td>{qid}</td>", f"query {qid} at k=10", f"{qid} at 0x{qid}"):
            assert _sanitised(shown) == shown, (len(qid), shown)


def test_the_sanitiser_replaces_an_objects_memory_address():
    assert _patterns()  # a sanitiser with no pattern would pass the tests above for nothing
    assert _sanitised("<function f at 0x7f3a2b9c10>") == "<function f at 0xADDRESS>"
    assert _sanitised("[<Figure object at 0x7F00AB>, <Axes object at 0x5e>]") == (
        "[<Figure object at 0xADDRESS>, <Axes object at 0xADDRESS>]")
