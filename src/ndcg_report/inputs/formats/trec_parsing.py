"""TREC text parsed column-wise by pyarrow, as it is or normalised: every TREC read goes through it.

The whole file (the fast path), the checked prefix, a chunk of lines read again or streamed: each
is parsed by pyarrow's multi-threaded CSV reader into the layout's kept columns. Text it may
misread (tabs, runs of spaces, comments, CRLF, a byte-order mark) is normalised first, and text that
still fails is diagnosed (inputs.formats.trec_lines) for its first bad line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ndcg_report.files import is_gzip
from ndcg_report.inputs.formats.trec_lines import Layout, diagnose
from ndcg_report.inputs.access.text_files import MAX_LINE, line_ends

_BLOCK_SIZE = 1 << 22  # 4 MiB: fastest here, and peak memory stays about twice the file
_MAX_BLOCK = MAX_LINE  # the longest line read: longer ones are refused with their line number
_NOT_PLAIN_START = (b" ", b"#", b"\t", b"\r", b"\n", b"\xef")  # a first byte that may need normalising
_LARGE_STRINGS = 1 << 31  # docid columns this large become large_string (one chunk holds < 2 GiB of string)


def normalise(data: bytes) -> bytes:
    """Single spaces between fields, no comment lines, `\\n` line ends; line count unchanged. Blank
    text is its line ends alone, without the regexes (45 MB/s): a file of blank lines is empty at once."""
    text = bytes(data)
    if text.isspace():
        return b"\n" * line_ends(text)
    if text.startswith(b"\xef\xbb\xbf"):
        text = text[3:]
    text = re.sub(rb"\r\n?", b"\n", text)
    text = text.translate(bytes.maketrans(b"\t\x0b\x0c", b"   "))
    text = re.sub(rb" {2,}", b" ", text)
    text = re.sub(rb"(?m)^ | $", b"", text)
    return re.sub(rb"(?m)^#.*$", b"", text)


def parse_text(source: bytes | memoryview | Path, layout: Layout) -> pa.Table:
    """Parse single-space-separated text (a file, maybe gzip, or bytes) with pyarrow, multi-threaded.

    A line longer than a read block ("straddling object") is read again with larger blocks, up to
    _MAX_BLOCK; longer lines are left to the chunked reader, which names them.
    """
    block = _BLOCK_SIZE
    while True:
        try:
            return _parse_blocks(source, layout, block)
        except pa.ArrowInvalid as exc:
            if "straddl" not in str(exc) or block >= _MAX_BLOCK:
                raise
            block = min(block * 4, _MAX_BLOCK)


def _parse_blocks(source: bytes | memoryview | Path, layout: Layout, block: int) -> pa.Table:
    if isinstance(source, Path):
        stream = pa.input_stream(str(source), compression="gzip" if is_gzip(source) else None)
    else:
        stream = pa.BufferReader(source)
    table = pacsv.read_csv(
        stream,
        read_options=pacsv.ReadOptions(column_names=list(layout.columns), block_size=block),
        parse_options=pacsv.ParseOptions(
            delimiter=" ", quote_char=False, escape_char=False, double_quote=False,
            newlines_in_values=False, ignore_empty_lines=True,
        ),
        convert_options=pacsv.ConvertOptions(
            include_columns=list(layout.keep), column_types=layout.keep, null_values=[],
            strings_can_be_null=False, quoted_strings_can_be_null=False,
        ),
    )
    return one_chunk(table)


def one_chunk(table: pa.Table) -> pa.Table:
    """One chunk per column, one qid dictionary; docids as large_string past 2 GiB of text."""
    table = table.unify_dictionaries()
    if sum(chunk.nbytes for chunk in table["docid"].chunks) >= _LARGE_STRINGS:
        table = table.set_column(table.column_names.index("docid"), "docid", table["docid"].cast(pa.large_string()))
    return table.combine_chunks()


def looks_clean(table: pa.Table) -> bool:
    """False where a fast parse may have misread the text (comment lines, empty fields)."""
    qids = table["qid"].chunk(0).dictionary if table.num_rows else pa.array([], pa.string())
    if len(qids) and (
        pc.any(pc.starts_with(qids, "#")).as_py()
        or pc.any(pc.match_substring(qids, "\x00")).as_py()
        or pc.min(pc.binary_length(qids)).as_py() == 0
    ):
        return False
    docids = table["docid"]
    return not (len(docids) and pc.min(pc.binary_length(docids)).as_py() == 0)


def parse_file(path: Path, layout: Layout) -> pa.Table | None:
    """The whole file parsed by pyarrow as it is (the fast path), or None where pyarrow failed or may
    have misread it (the caller reads it again in chunks)."""
    try:
        table = parse_text(path, layout)
    except (pa.ArrowInvalid, OSError):
        table = None
    if table is not None and not looks_clean(table):
        table = None
    return table


def parse_plain(text: bytes | bytearray, layout: Layout, end: int | None = None) -> pa.Table | None:
    """text[:end] (whole lines) parsed in place if it is plain single-spaced text that pyarrow reads
    cleanly; None where it may need normalising (a blank or `#` first, a tab, a \r, a byte-order mark)."""
    end = len(text) if end is None else end
    if text[:1] in _NOT_PLAIN_START or text.find(b"\r", 0, end) >= 0 or text.find(b"\t", 0, end) >= 0:
        return None
    try:
        table = parse_text(text if end == len(text) else memoryview(text)[:end], layout)  # pyarrow copies the values
    except pa.ArrowInvalid:
        return None
    return table if looks_clean(table) else None


def parse_chunk(path: Path, chunk: bytes, layout: Layout, lines_before: int) -> pa.Table | None:
    """One chunk of whole lines as a table: as it is if pyarrow reads it cleanly, else normalised
    (tabs, runs of spaces, comments, CRLF); InputError naming the first bad line."""
    table = parse_plain(chunk, layout)
    if table is not None:
        return table
    normalised = normalise(chunk)
    return parse_normalised(path, normalised, layout, lines_before) if normalised.strip() else None


def parse_normalised(path: Path, normalised: bytes, layout: Layout, lines_before: int) -> pa.Table:
    """Parse normalised text whose lines start after lines_before; InputError naming its first bad line."""
    try:
        table = parse_text(normalised, layout)
    except pa.ArrowInvalid as exc:
        raise diagnose(path, normalised, layout, exc, lines_before) from None
    if not looks_clean(table):
        raise diagnose(path, normalised, layout, None, lines_before)
    return table
