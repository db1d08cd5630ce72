"""Ids and names that are bad input (control characters, bytes not UTF-8): one rule, checked at reading.

C0 (tab, line ends, ESC, ...), DEL, C1 (NEL U+0085, ...) and the line and paragraph separators
U+2028 and U+2029 would split or forge the lines of eval's output, pool.tsv and a report's files, or
reach a terminal as escapes. Every reader's qid and docid columns go through first_bad_id at once
(their bytes first: ids of printable ASCII pass in milliseconds, a regex looks only at the others);
topic and corpus ids through id_problem, system names and titles through name_problem, which also
refuses bytes that are not UTF-8 (reports hold text). Ids that start with `=`, `+`, `-` or `@` stay
as they are: trec_eval's ids must round-trip (docs/inputs.md says how to open a TSV safely).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.inputs.columns import as_numpy

# C0, DEL and C1, LINE and PARAGRAPH SEPARATOR; and the invisible characters that make one id look
# like another or reorder what a terminal shows: ZERO WIDTH SPACE, the bidirectional embeddings,
# overrides (U+202E) and isolates, WORD JOINER and the invisible operators, and ZERO WIDTH NO-BREAK
# SPACE (a BOM inside a line; one that starts a file is dropped by its reader). The joiners
# U+200C/U+200D and the marks U+200E/U+200F stay: scripts and right-to-left names need them.
_RANGES = ((0x00, 0x1F), (0x7F, 0x9F), (0x200B, 0x200B), (0x2028, 0x202E), (0x2060, 0x2064), (0x2066, 0x2069),
           (0xFEFF, 0xFEFF))
_CONTROL = re.compile("[" + "".join(f"\\u{low:04x}-\\u{high:04x}" for low, high in _RANGES) + "]")
_UNPRINTABLE = re.compile(f"{_CONTROL.pattern[:-1]}\\ud800-\\udfff]")  # and surrogates: bytes not UTF-8
_CONTROL_RE2 = "[" + "".join(f"\\x{{{low:x}}}-\\x{{{high:x}}}" for low, high in _RANGES) + "]"  # pyarrow's RE2
ID_FIX = "remove the tabs, line ends and other control characters from the ids (they would split output lines)"
_SHOWN = 60  # characters of an id shown in an error


def control_character(text: str, allowed: str = "") -> str | None:
    """The first control character of text not in allowed, as U+XXXX; None if there is none."""
    for match in _CONTROL.finditer(text):
        if match[0] not in allowed:
            return f"U+{ord(match[0]):04X}"
    return None


def non_utf8(text: str) -> str | None:
    """If text holds bytes that are not UTF-8 (passed by the command line or the file system as
    surrogate escapes), its bytes escaped whole (b'run\\xff.txt': a path is shown as it is); else None."""
    try:
        text.encode("utf-8")
        return None
    except UnicodeEncodeError:
        pass
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte: Python data, not a file's name
        return escaped(text)
    return repr(data)


def name_problem(text: str, allowed: str = "") -> str | None:
    """What unfits a name for the outputs it is written into (report.html, summary.json, TSV and CSV
    lines, a terminal): bytes that are not UTF-8, or a control character not in allowed, with the
    name shown escaped; None if there is none."""
    shown = non_utf8(text)
    if shown:
        return f"{shown} holds bytes that are not UTF-8"
    control = control_character(text, allowed)
    return None if control is None else f"{escaped(text)} holds a control character ({control})"


def replace_controls(text: str) -> str:
    """text with each control character, and each byte that is not UTF-8, replaced by U+FFFD (a name
    made from a file name or a run's tag)."""
    return _UNPRINTABLE.sub("\N{REPLACEMENT CHARACTER}", text)


def escaped(text: str) -> str:
    """text as Python writes a string (quoted, control characters as \\n, \\t, \\x1b, \\x85, ...),
    cut after _SHOWN characters: safe to print on one line of a terminal."""
    return repr(text[:_SHOWN]) + ("..." if len(text) > _SHOWN else "")


@dataclass(frozen=True)
class BadId:
    """An id holding a control character: its row (0-based, in the table checked), column and value."""

    row: int
    column: str  # "qid" or "docid"
    value: str

    @property
    def problem(self) -> str:
        """What is wrong, for an error's message: the id escaped and the character."""
        return id_problem(self.value, "query id" if self.column == "qid" else "document id") or ""


def id_problem(value: str, what: str) -> str | None:
    """What is wrong with one id (`what`: 'topic id', ...) holding a control character (name_problem), or None."""
    problem = name_problem(value)
    return None if problem is None else f"{what} {problem}"


def first_bad_id(table: pa.Table) -> BadId | None:
    """The earliest row whose qid or docid holds a control character (qid first on one row), or None.
    qid may be dictionary-encoded (its dictionary is checked, then its rows), docid any string type."""
    found = [(row, name) for name in ("qid", "docid")
             if (row := _first_row(table[name])) is not None]
    if not found:
        return None
    row, name = min(found)
    return BadId(row=row, column=name, value=table[name][row].as_py())


def refuse_bad_ids(table: pa.Table, error_for: Callable[[BadId], Exception]) -> None:
    """Raise error_for(the first id holding a control character), if there is one (its problem and
    ID_FIX say what is wrong and what to do; the caller says where)."""
    found = first_bad_id(table)
    if found is not None:
        raise error_for(found)


def _first_row(column: pa.ChunkedArray | pa.Array) -> int | None:
    """The first row of a string (or dictionary of strings) column holding a control character."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    before = 0
    for chunk in chunks:
        if pa.types.is_dictionary(chunk.type):
            bad = _bad_rows(chunk.dictionary)
            row = None
            if bad is not None:
                hits = np.flatnonzero(np.isin(as_numpy(chunk.indices), bad))
                row = int(hits[0]) if len(hits) else None
        else:
            bad = _bad_rows(chunk)
            row = None if bad is None else int(bad[0])
        if row is not None:
            return before + row
        before += len(chunk)
    return None


def _bad_rows(values: pa.Array) -> np.ndarray | None:
    """The rows of a string array holding a control character (ascending), or None. Its text bytes are
    looked at first: printable ASCII alone (every byte 0x20-0x7e) holds none."""
    if len(values) == 0:
        return None
    if not pa.types.is_string(values.type) and not pa.types.is_large_string(values.type):
        values = values.cast(pa.string())
    large = pa.types.is_large_string(values.type)
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int64 if large else np.int32, count=len(values) + 1,
                            offset=values.offset * (8 if large else 4))
    data = values.buffers()[2]
    text = np.frombuffer(data, dtype=np.uint8)[offsets[0]:offsets[-1]] if data is not None else np.zeros(0, np.uint8)
    if len(text) == 0 or (text.min() >= 0x20 and text.max() < 0x7F):
        return None
    matches = pc.and_kleene(pc.match_substring_regex(values, _CONTROL_RE2), pc.is_valid(values))  # a null is no id
    rows = np.flatnonzero(as_numpy(matches))
    return rows if len(rows) else None
