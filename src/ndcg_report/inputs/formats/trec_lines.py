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


class LooksSwapped(InputError):
    """A run read as qrels, or qrels read as a run: the file's first line has the other kind's columns.

    Its fix says to check the order; a caller that knows the order it takes (`eval QRELS RUN`) may
    give a more precise one."""


def diagnose(path: Path, text: bytes, layout: Layout, exc: Exception | None, lines_before: int = 0) -> InputError:
    """Find the first bad line of normalised text (its lines start after lines_before) and describe it.
    The file's first line with the other kind's column count (6 read as qrels, 4 as a run) is a
    LooksSwapped error: the run and the qrels were probably given in each other's place; a qrels
    file whose first line is `qid docid grade` is BEIR TSV without its header line."""
    names = " ".join(layout.columns)
    first = lines_before == 0
    for number, raw in enumerate(text.split(b"\n"), start=lines_before + 1):
        if not raw:
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            return InputError(path, number, "not valid UTF-8 text", "re-save the file as UTF-8")
        fields = line.split(" ")
        if len(fields) != len(layout.columns):
            problem = f"expected {len(layout.columns)} columns ({names}), found {len(fields)}"
            other = QRELS_LAYOUT if layout.kind == "run" else RUN_LAYOUT
            if first and len(fields) == len(other.columns):
                looks, wanted = ("qrels", "a run") if other.kind == "qrels" else ("a run", "qrels")
                return LooksSwapped(path, number, f"{problem}: this looks like {looks} ({' '.join(other.columns)}), "
                                    f"not {wanted}", "check that the run and the qrels are not given in each other's place")
            if first and layout.kind == "qrels" and len(fields) == 3 and _NUMBER.match(fields[2]):
                return InputError(path, number, f"{problem}: this looks like BEIR TSV qrels without their header line",
                                  "add the header `query-id<TAB>corpus-id<TAB>score` as the first line "
                                  "(or write TREC qrels: qid 0 docid rel)")
            return InputError(path, number, problem, "fix or remove the line")
        first = False
        value = fields[layout.columns.index(layout.numeric)]
        if not _NUMBER.match(value):
            what = "score" if layout.numeric == "score" else "relevance label"
            shown = repr(value) if len(value) <= 40 else repr(value[:40]) + "..."
            return InputError(path, number, f"{what} {shown} is not a number", "fix or remove the line")
    detail = f" ({str(exc).splitlines()[0][:200]})" if exc else ""
    return InputError(path, None, f"cannot parse as a {layout.kind} file{detail}", f"check it is `{names}` lines")
