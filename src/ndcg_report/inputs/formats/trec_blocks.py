"""A plain TREC text run read for streaming: pieces of whole queries, parsed from one reused buffer.

The streamed reader (core.streaming) wants blocks of whole queries. A piece of text is cut where a
query's lines begin, found in the text (the first field of the last lines): the piece holds whole
queries, and the last query's lines are moved to the buffer's front for the next piece. Text is read
into the same buffer each time and pyarrow parses it in place, so nothing is copied or faulted in
anew per block. Where the text does not show a clean cut (a query longer than the buffer, lines
that start with blanks or comments), the piece ends at a line end and the caller joins the pieces
(`whole` False). Gzip runs, and text without \\n line ends, are read by trec_text.trec_run_chunks.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

from ndcg_report.errors import InputError
from ndcg_report.files import is_gzip
from ndcg_report.inputs.formats.trec_lines import RUN_LAYOUT
from ndcg_report.inputs.formats.trec_parsing import parse_plain
from ndcg_report.inputs.formats.trec_text import finite_scores, parse_run_piece, run_prefix_problem, trec_run_chunks

RunPiece = tuple[pa.Table, int, bool]  # (table, data rows before it, whether its last line ends a query)
_NOT_FIRST_BYTE = b" #\t\r\n\xef\xff\xfe"  # a line starting so does not show its qid plainly
_OTHER_BLANKS = (b"\t", b"\x0b", b"\x0c", b"\r")  # blanks normalising turns into spaces or line ends
_ENCODING_MARKS = b"\xff\xfe"  # a piece starting so may be UTF-16: check_encoding's, not the plain parse
_MAX_WALK_LINES = 65_536  # lines of the last query looked back over for its start; a longer query is joined by the caller


def trec_run_pieces(path: Path, piece_bytes: int) -> Iterator[RunPiece]:
    """A TREC text run in pieces of at most piece_bytes of text: (table, rows before it, whether it
    ends at the end of a query's lines), each checked as trec_run_chunks checks its chunks."""
    if is_gzip(path):
        yield from ((table, rows, False) for table, rows in trec_run_chunks(path, piece_bytes))
        return
    problem = run_prefix_problem(path)
    if problem is not None:
        raise problem
    buffer = bytearray(piece_bytes)
    filled = offset = rows_before = 0  # bytes in the buffer, bytes of text before it, data rows before it
    with open(path, "rb", buffering=0) as handle:
        while True:
            at_end = False
            while filled < len(buffer) and not at_end:
                read = handle.readinto(memoryview(buffer)[filled:])
                filled += read
                at_end = read == 0
            if filled == 0:
                break
            if at_end:
                cut, whole = filled, True
            else:
                line_end = buffer.rfind(b"\n", 0, filled) + 1
                if line_end == 0:  # no \n in a full buffer: a very long line, or \r line ends
                    yield from ((table, rows, False)
                                for table, rows in trec_run_chunks(path, piece_bytes, offset, rows_before))
                    return
                cut, whole = query_cut(buffer, line_end)
            table = _parsed(path, buffer, cut, offset, rows_before)
            if table is not None and table.num_rows:
                yield table, rows_before, whole
                rows_before += table.num_rows
            offset += cut
            buffer[: filled - cut] = buffer[cut:filled]
            filled -= cut
            if at_end and not filled:
                break
    if rows_before == 0:
        raise InputError(path, None, "empty run file (no data lines)", "give a file with data lines")


def query_cut(text: bytearray | bytes, end: int) -> tuple[int, bool]:
    """(where the last query's lines begin in text[:end], True), text[:end] being whole lines; or
    (end, False) where the text does not show it plainly: a line there starts with a blank or a `#`,
    or that query's lines reach back to the start or past _MAX_WALK_LINES lines."""
    last_start = text.rfind(b"\n", 0, end - 1) + 1
    qid = _first_field(text, last_start, end)
    if qid is None:
        return end, False
    start = last_start
    for _ in range(_MAX_WALK_LINES):
        if start == 0:
            break
        before = text.rfind(b"\n", 0, start - 1) + 1
        field = _first_field(text, before, start)
        if field is None:
            return end, False
        if field != qid:
            return start, True
        start = before
    return end, False


def _first_field(text: bytearray | bytes, start: int, end: int) -> bytes | None:
    """The text before the first space of the line text[start:end], or None if the line starts with
    a blank or a `#`, has no space, or holds another blank (a tab) before it."""
    if start >= end or text[start] in _NOT_FIRST_BYTE:
        return None
    space = text.find(b" ", start, end)
    if space < 0:
        return None
    field = bytes(text[start:space])
    return None if any(blank in field for blank in _OTHER_BLANKS) else field  # pyarrow's field would end sooner


def _parsed(path: Path, buffer: bytearray, cut: int, offset: int, rows_before: int) -> pa.Table | None:
    """buffer[:cut] parsed in place when it is plain text (trec_parsing.parse_plain) with no NUL byte
    or UTF-16 mark; else copied and read as trec_run_chunks reads a chunk (normalised, or its first bad
    line named)."""
    if buffer[0] not in _ENCODING_MARKS and buffer.find(b"\x00", 0, cut) < 0:  # check_encoding's, for a plain piece
        table = parse_plain(buffer, RUN_LAYOUT, cut)
        if table is not None:
            return finite_scores(path, table, rows_before)
    return parse_run_piece(path, bytes(buffer[:cut]), offset, rows_before)
