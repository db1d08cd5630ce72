"""What a TREC run or qrels line holds (its layout), and the diagnosis of a line that breaks it.

The layouts name the whitespace-separated columns and the three kept (qid, docid, and the score or
the relevance label). A text that pyarrow could not read, or read wrongly, is diagnosed here line
by line in Python: that costs only on the error path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ndcg_report.errors import InputError

_QID_TYPE = pa.dictionary(pa.int32(), pa.string())
_NUMBER = re.compile(  # ASCII digits only: pyarrow (and trec_eval) read no other
    r"^[+-]?([0-9]+\.?[0-9]*([eE][+-]?[0-9]+)?|\.[0-9]+([eE][+-]?[0-9]+)?|nan|inf|infinity)$", re.IGNORECASE
)


@dataclass(frozen=True)
class Layout:
    """The whitespace-separated columns of one file kind, and which of them we keep."""

    kind: str
    columns: tuple[str, ...]
    keep: dict[str, pa.DataType]
    numeric: str  # the one numeric column kept (score or rel)


RUN_LAYOUT = Layout(
    kind="run",
    columns=("qid", "Q0", "docid", "rank", "score", "tag"),
    keep={"qid": _QID_TYPE, "docid": pa.string(), "score": pa.float64()},
    numeric="score",
)
QRELS_LAYOUT = Layout(
    kind="qrels",
    columns=("qid", "iter", "docid", "rel"),
    keep={"qid": _QID_TYPE, "docid": pa.string(), "rel": pa.float64()},
    numeric="rel",
)


def diagnose(path: Path, text: bytes, layout: Layout, exc: Exception | None, lines_before: int = 0) -> InputError:
    """Find the first bad line of normalised text (its lines start after lines_before) and describe it."""
    names = " ".join(layout.columns)
    for number, raw in enumerate(text.split(b"\n"), start=lines_before + 1):
        if not raw:
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            return InputError(path, number, "not valid UTF-8 text", "re-save the file as UTF-8")
        fields = line.split(" ")
        if len(fields) != len(layout.columns):
            return InputError(
                path, number, f"expected {len(layout.columns)} columns ({names}), found {len(fields)}",
                "fix or remove the line",
            )
        value = fields[layout.columns.index(layout.numeric)]
        if not _NUMBER.match(value):
            what = "score" if layout.numeric == "score" else "relevance label"
            shown = repr(value) if len(value) <= 40 else repr(value[:40]) + "..."
            return InputError(path, number, f"{what} {shown} is not a number", "fix or remove the line")
    detail = f" ({str(exc).splitlines()[0][:200]})" if exc else ""
    return InputError(path, None, f"cannot parse as a {layout.kind} file{detail}", f"check it is `{names}` lines")
