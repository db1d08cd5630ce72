"""TREC text runs and qrels, plain or gzip, read whole or in chunks; bad input names its file:line.

A run is `qid Q0 docid rank score tag` lines, qrels `qid iter docid rel` lines. The text's first
_PREFIX_BYTES are checked before the rest is read, so a file that is wrong from its start fails at
once, whatever its size. Then pyarrow reads the whole file (inputs.formats.trec_parsing); a file
it may misread is read again in chunks of whole lines, each normalised and parsed on its own. A
run is also read chunk by chunk for streaming. Rows map back to file lines, counted only on error.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import numpy as np
import pyarrow as pa

from ndcg_report.errors import InputError
from ndcg_report.files import is_gzip, open_maybe_gzip
from ndcg_report.inputs.access.read_bounds import ReadBound
from ndcg_report.inputs.columns import column_numpy
from ndcg_report.inputs.formats.trec_lines import QRELS_LAYOUT, RUN_LAYOUT, Layout
from ndcg_report.inputs.formats.trec_parsing import normalise, one_chunk, parse_chunk, parse_file, parse_normalised
from ndcg_report.inputs.access.text_files import GZIP_ERRORS, MAX_LINE, PREFIX_BYTES, check_encoding, check_first_line, check_readable, line_ends

_MAX_BLOCK = MAX_LINE  # the longest line read: longer ones are refused with their line number
_PREFIX_BYTES = PREFIX_BYTES  # text checked before the whole file is read: garbage fails at once
_CHUNK_BYTES = 64 << 20  # text normalised and parsed at a time when the fast path cannot read a file
_COUNTED_BYTES = 16 << 20  # text of a gzip file parsed and counted at a time (_read_bounded)
_LINE_SCAN_BYTES = 1 << 20  # text split into lines at a time to find a row's line


def read_trec_run(path: Path) -> tuple[pa.Table, Callable[[int], int]]:
    """A TREC text run as a table (qid dictionary, docid, score) and a map from row to file line;
    InputError for a bad line or a NaN or infinite score."""
    return _finite(path, *read_table(path, RUN_LAYOUT), "score", lambda value: f"score is {value} (NaN or infinite)",
                   "give every retrieved document a finite score")


def read_trec_qrels(path: Path) -> tuple[pa.Table, Callable[[int], int]]:
    """TREC text qrels as a table (qid dictionary, docid, rel) and a map from row to file line;
    InputError for a bad line or a NaN or infinite label."""
    return _finite(path, *read_table(path, QRELS_LAYOUT), "rel", lambda value: f"relevance label is {value}",
                   "labels must be finite integers or decimals")


def _finite(path: Path, table: pa.Table, line_of_row: Callable[[int], int], column: str,
            problem: Callable[[float], str], fix: str) -> tuple[pa.Table, Callable[[int], int]]:
    """(table, line_of_row) as given; InputError at the first row whose `column` is NaN or infinite."""
    values = column_numpy(table, column)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise InputError(path, line_of_row(int(bad[0])), problem(values[bad[0]]), fix)
    return table, line_of_row


def _head(path: Path, size: int = 4) -> bytes:
    """The first bytes of the (decompressed) text; b'' if they cannot be read."""
    try:
        with open_maybe_gzip(path) as handle:
            return handle.read(size)
    except (OSError, EOFError, zlib.error):
        return b""


def _lines_before(path: Path, offset: int) -> int:
    """How many line ends the file's first `offset` bytes of text hold (read again in pieces, so it
    costs nothing until an error needs a line number)."""
    count, previous = 0, b""
    with open_maybe_gzip(path) as handle:
        while offset > 0:
            piece = handle.read(min(offset, _CHUNK_BYTES))
            if not piece:
                break
            offset -= len(piece)
            count += line_ends(previous + piece) - line_ends(previous)  # a \r\n across pieces counts once
            previous = piece[-1:]
    return count


def _later_by(exc: InputError, lines: int) -> InputError:
    """The same error with its line number counted `lines` lines further into the file."""
    return InputError(exc.path, None if exc.line is None else exc.line + lines, exc.problem, exc.fix)


def read_table(path: Path, layout: Layout) -> tuple[pa.Table, Callable[[int], int]]:
    """Parse a run or qrels file; return the table and a map from row to file line number.

    First the first _PREFIX_BYTES of text are checked: a file that is wrong from its start fails at
    once, whatever its size. A gzip file is read in chunks, counted and bounded as it is decompressed
    (_read_bounded). Fast path: pyarrow reads the file itself. Files it may misread (tabs,
    runs of spaces, comments, a byte-order mark, bad lines) are read again in chunks of whole lines,
    each normalised and parsed on its own (memory bounded by the chunk), and a chunk that fails is
    scanned for its first bad line.
    """
    check_readable(path)
    problem = _prefix_problem(path, layout)
    if problem is not None:
        raise problem
    head = _head(path)
    table = None
    if is_gzip(path):  # its text's size is unknown: counted and bounded as it is decompressed
        table = _read_bounded(path, layout)
    elif head[:3] != b"\xef\xbb\xbf" and head[:2] not in (b"\xff\xfe", b"\xfe\xff") and head[:1] not in (b" ", b"#", b"\t", b"\r", b"\n"):
        table = parse_file(path, layout)
    if table is None:
        table = _parse_in_chunks(path, layout)
    pa.default_memory_pool().release_unused()  # the parser's buffers, once the whole file is read
    if table.num_rows == 0:
        raise InputError(path, None, f"empty {layout.kind} file (no data lines)", "give a file with data lines")
    return table, lambda row: trec_line_of_row(path, row)


def run_prefix_problem(path: Path) -> InputError | None:
    """The first bad line among the whole lines of a run's first _PREFIX_BYTES of text, if any."""
    return _prefix_problem(path, RUN_LAYOUT)


def _prefix_problem(path: Path, layout: Layout) -> InputError | None:
    """The first bad line among the whole lines of the first _PREFIX_BYTES of text, if any."""
    try:
        with open_maybe_gzip(path) as handle:
            prefix = handle.read(_PREFIX_BYTES)
    except (OSError, EOFError, zlib.error):
        return None  # the full read says what is wrong
    end = max(prefix.rfind(b"\n"), prefix.rfind(b"\r"))
    if end < 0:  # not one whole line yet: binary, or a first line longer than the limit, fail here
        try:
            check_first_line(path, prefix, layout.kind)
        except InputError as exc:
            return exc
        return None
    text = prefix[: end + 1]
    try:  # a clean prefix is read by pyarrow as it is, in milliseconds; only others are normalised and diagnosed
        check_encoding(path, text)
        parse_chunk(path, text, layout, 0)
    except InputError as exc:
        return exc if exc.line is not None else None
    return None


def _parse_in_chunks(path: Path, layout: Layout) -> pa.Table:
    """Read, normalise and parse the file _CHUNK_BYTES of whole lines at a time; diagnose the first bad line."""
    tables = []
    lines_before = 0
    try:
        with open_maybe_gzip(path) as handle:
            for chunk in _whole_line_chunks(path, handle):
                check_encoding(path, chunk, lines_before, at_start=lines_before == 0)
                normalised = normalise(chunk)
                if normalised.strip():
                    tables.append(parse_normalised(path, normalised, layout, lines_before))
                lines_before += normalised.count(b"\n")
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise InputError(path, None, f"corrupt gzip file ({exc})", "re-compress it or give the plain file") from None
    if not tables:
        return pa.table({name: pa.array([], kind) for name, kind in layout.keep.items()})
    return one_chunk(pa.concat_tables(tables))


def _read_bounded(path: Path, layout: Layout) -> pa.Table:
    """A gzip file read _COUNTED_BYTES of text at a time, each chunk parsed and fed to a ReadBound
    (inputs.access.read_bounds) as it is read: a bomb is refused at its first repeated line, or once
    its text would not fit in half the available memory, not after it is decompressed."""
    fix = f"give a smaller {layout.kind} file" + (", or evaluate it with `eval --stream`" if layout.kind == "run" else "")
    bound = ReadBound(path, layout.kind, lambda row, problem, fix: InputError(path, trec_line_of_row(path, row), problem, fix),
                      max_query_lines=None, too_large_fix=fix)
    tables, offset, lines, rows = [], 0, 0, 0
    try:
        with open_maybe_gzip(path) as handle:
            for chunk in _whole_line_chunks(path, handle, _COUNTED_BYTES):
                bound.text(len(chunk), lines)
                table = parse_piece(path, chunk, layout, offset)
                if table is not None and table.num_rows:
                    bound.rows(table, rows)
                    tables.append(table)
                    rows += table.num_rows
                offset += len(chunk)
                lines += chunk.count(b"\n")
    except GZIP_ERRORS as exc:
        raise InputError(path, None, f"corrupt gzip file ({exc})", "re-compress it or give the plain file") from None
    if not tables:
        return pa.table({name: pa.array([], kind) for name, kind in layout.keep.items()})
    return one_chunk(pa.concat_tables(tables))


def trec_run_chunks(path: Path, chunk_bytes: int | None, text_offset: int = 0,
                    rows_before: int = 0) -> Iterator[tuple[pa.Table, int]]:
    """A TREC text run in chunks for streaming (reading.run_pieces): (table of a chunk's rows, rows
    before it), each checked; from `text_offset` bytes of text on, after `rows_before` data rows (a
    reader that read those itself)."""
    if text_offset == 0:
        problem = run_prefix_problem(path)
        if problem is not None:
            raise problem
    offset = text_offset  # bytes of text before the chunk
    try:
        with open_maybe_gzip(path) as handle:
            handle.seek(text_offset)
            for chunk in _whole_line_chunks(path, handle, chunk_bytes, text_offset):
                table = parse_run_piece(path, chunk, offset, rows_before)
                offset += len(chunk)
                if table is None or table.num_rows == 0:
                    continue
                yield table, rows_before
                rows_before += table.num_rows
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise InputError(path, None, f"corrupt gzip file ({exc})", "re-compress it or give the plain file") from None
    if rows_before == 0:
        raise InputError(path, None, "empty run file (no data lines)", "give a file with data lines")


def parse_run_piece(path: Path, piece: bytes, offset: int, rows_before: int) -> pa.Table | None:
    """Whole lines of a TREC run starting `offset` bytes into its text, after `rows_before` data rows,
    parsed and checked: InputError at the file line of a bad line or of a NaN or infinite score."""
    table = parse_piece(path, piece, RUN_LAYOUT, offset)
    return table if table is None else finite_scores(path, table, rows_before)


def parse_piece(path: Path, piece: bytes, layout: Layout, offset: int) -> pa.Table | None:
    """Whole lines of TREC text starting `offset` bytes into it, parsed (trec_parsing.parse_chunk):
    InputError at the file line of a bad line."""
    try:  # line numbers counted from the piece's start; the lines before it only on error
        check_encoding(path, piece, at_start=offset == 0)
        return parse_chunk(path, piece, layout, 0)
    except InputError as exc:
        raise _later_by(exc, _lines_before(path, offset)) from None


def finite_scores(path: Path, table: pa.Table, rows_before: int) -> pa.Table:
    """The table of a run's rows after `rows_before` rows; InputError at the line of a NaN or infinite score."""
    scores = column_numpy(table, "score")
    bad = np.flatnonzero(~np.isfinite(scores))
    if bad.size:
        raise InputError(path, trec_line_of_row(path, rows_before + int(bad[0])),
                         f"score is {scores[bad[0]]} (NaN or infinite)", "give every retrieved document a finite score")
    return table


def _whole_line_chunks(path: Path, handle: IO[bytes], chunk_bytes: int | None = None, offset: int = 0) -> Iterator[bytes]:
    """The file's text, from `offset` bytes on (where `handle` is), in pieces of about _CHUNK_BYTES
    that end at a line end (the last one may not); InputError for a line longer than _MAX_BLOCK. A piece's last line is finished with readline, which
    copies nothing; text without \\n line ends is cut at its last \\r, the rest carried over."""
    carry = b""  # offset: bytes of text before `data`
    chunk_bytes = chunk_bytes or _CHUNK_BYTES
    while data := handle.read(chunk_bytes):
        data, carry = (carry + data if carry else data), b""
        newline = data.rfind(b"\n")
        if newline >= 0:
            if newline < len(data) - 1:  # finish the last line (a lone \r inside it ends a line too: fine)
                rest = handle.readline(chunk_bytes)
                if rest.endswith(b"\n"):
                    data += rest
                else:  # no \n within a chunk's length: cut at the last one, carry the rest
                    data, carry = data[: newline + 1], data[newline + 1:] + rest
        else:  # no \n yet: lone \r line ends, or a long line
            end = data.rfind(b"\r", 0, len(data) - 1)  # a final \r may start a \r\n
            if end < 0:
                if len(data) > _MAX_BLOCK:
                    raise InputError(path, _lines_before(path, offset) + 1, f"a line longer than {_MAX_BLOCK >> 20} MiB",
                                     "split or remove it: no run or qrels line is that long")
                carry = data
                continue
            carry, data = data[end + 1:], data[: end + 1]
        offset += len(data)
        yield data
    if carry:
        yield carry


def trec_line_of_row(path: Path, row: int) -> int:
    """The 1-based file line of data row `row` (blank and comment lines do not count as rows); the
    file is read in pieces, so this stays in bounded memory however large it is."""
    seen = -1
    number = 0
    with open_maybe_gzip(path) as handle:
        for piece in _whole_line_chunks(path, handle, _LINE_SCAN_BYTES):
            for raw in re.split(rb"\r\n?|\n", piece):  # line ends as pyarrow reads them
                number += 1
                if raw.strip() and not raw.lstrip().lstrip(b"\xef\xbb\xbf").startswith(b"#"):
                    seen += 1
                    if seen == row:
                        return number
            number -= 1  # the piece ended with a line end: its last split is empty, not a line
    raise AssertionError(f"row {row} not in {path}")


def first_tag(path: Path) -> str:
    """The run tag (last column) of the first data line."""
    with open_maybe_gzip(path) as handle:
        for raw in handle:
            line = raw.strip()
            if line and not line.startswith(b"#"):
                return line.split()[-1].decode("utf-8", "replace").lstrip("\ufeff")
    return ""
