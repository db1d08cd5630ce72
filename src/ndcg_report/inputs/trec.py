"""The readers of runs, qrels and topics in every accepted format (told by inputs.detection), and TREC
text read column-wise with pyarrow; bad input is rejected with file:line."""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ndcg_report.inputs.columns import as_numpy, column_numpy, from_numpy
from ndcg_report.errors import InputError
from ndcg_report.files import is_gzip, open_maybe_gzip
from ndcg_report.inputs.formats.beir_tsv import read_beir_qrels
from ndcg_report.inputs.fingerprints import pair_keys
from ndcg_report.inputs.detection import BEIR_TSV, JSON, JSONL, PARQUET, detect_format
from ndcg_report.inputs.formats.json_documents import read_json_document
from ndcg_report.inputs.formats.json_lines import json_lines_chunks, json_lines_line_of_row, read_json_lines
from ndcg_report.inputs.pair_index import PairIndex, build_pair_index, rows_sharing_a_key
from ndcg_report.inputs.formats.parquet import duplicate_error, parquet_chunks, read_parquet
from ndcg_report.inputs.sources import given_name, source_path
from ndcg_report.inputs.text_files import MAX_LINE, PREFIX_BYTES, check_first_line
from ndcg_report.inputs.text_files import check_encoding as _check_encoding
from ndcg_report.inputs.text_files import check_readable as _check_readable
from ndcg_report.inputs.text_files import io_errors_as_input_errors as _io_errors_as_input_errors
from ndcg_report.inputs.text_files import line_ends as _line_ends
from ndcg_report.inputs.formats.topics import read_topics_file

if TYPE_CHECKING:
    import pandas as pd

_QID_TYPE = pa.dictionary(pa.int32(), pa.string())
_NUMBER = re.compile(  # ASCII digits only: pyarrow (and trec_eval) read no other
    r"^[+-]?([0-9]+\.?[0-9]*([eE][+-]?[0-9]+)?|\.[0-9]+([eE][+-]?[0-9]+)?|nan|inf|infinity)$", re.IGNORECASE
)
_BLOCK_SIZE = 1 << 22  # 4 MiB: fastest here, and peak memory stays about twice the file
_MAX_BLOCK = MAX_LINE  # the longest line read: longer ones are refused with their line number
_PREFIX_BYTES = PREFIX_BYTES  # text checked before the whole file is read: garbage fails at once
_CHUNK_BYTES = 64 << 20  # text normalised and parsed at a time when the fast path cannot read a file
_LARGE_STRINGS = 1 << 31  # docid columns this large become large_string (one chunk holds < 2 GiB of string)


@dataclass(frozen=True)
class _Layout:
    """The whitespace-separated columns of one file kind, and which of them we keep."""

    kind: str
    columns: tuple[str, ...]
    keep: dict[str, pa.DataType]
    numeric: str  # the one numeric column kept (score or rel)


RUN_LAYOUT = _Layout(
    kind="run",
    columns=("qid", "Q0", "docid", "rank", "score", "tag"),
    keep={"qid": _QID_TYPE, "docid": pa.string(), "score": pa.float64()},
    numeric="score",
)
QRELS_LAYOUT = _Layout(
    kind="qrels",
    columns=("qid", "iter", "docid", "rel"),
    keep={"qid": _QID_TYPE, "docid": pa.string(), "rel": pa.float64()},
    numeric="rel",
)


@dataclass(frozen=True)
class Run:
    """A parsed run: `table` has qid (dictionary), docid (string), score (float64); `pairs` indexes its rows."""

    path: str
    table: pa.Table
    tag: str
    pairs: PairIndex


@dataclass(frozen=True)
class Qrels:
    """Parsed qrels: `table` has qid (dictionary), docid (string), rel (float64); `pairs` indexes its rows."""

    path: str
    table: pa.Table
    pairs: PairIndex


def read_run(path: str | Path) -> Run:
    """Read a run in any accepted format (TREC `qid Q0 docid rank score tag` text, JSON, JSON lines,
    plain or gzip; a Parquet file or folder); raise InputError if bad.

    Parameters
    ----------
    path
        The run's file (or Parquet folder); its format is told by its extension and confirmed by
        its content.

    Returns
    -------
    Run
        The checked run: `table` (a pyarrow Table with `qid`, `docid`, `score`), `tag` (the last
        column of TREC text) and `path`. `evaluate` and `compare_runs` take it as it is and reuse
        its (query, docid) index.

    Raises
    ------
    InputError
        A problem in the file, naming the file, the line and the fix.

    Examples
    --------
    In `tests/data/small/` of the checkout:

    >>> run = read_run("monot5.txt")
    >>> run.table.num_rows, run.table.column_names, run.tag
    (800, ['qid', 'docid', 'score'], 'pyterrier')
    """
    with _io_errors_as_input_errors(path), _named_as(path) as readable:
        return _read_run(readable)


def _read_run(path: Path) -> Run:
    form = _format(path, "run")
    if form == PARQUET:
        table, pairs = _read_parquet_indexed(path, "score", "run")
        return Run(path=str(path), table=table, tag="", pairs=pairs)
    if form in (JSON, JSONL):
        table, line_of_row = read_json_document(path, "run") if form == JSON else read_json_lines(path, "run")
        return Run(path=str(path), table=table, tag="", pairs=_reject_duplicates(path, line_of_row, table, "run"))
    table, line_of_row = _read_table(path, RUN_LAYOUT)
    scores = column_numpy(table, "score")
    bad = np.flatnonzero(~np.isfinite(scores))
    if bad.size:
        raise InputError(
            path, line_of_row(int(bad[0])), f"score is {scores[bad[0]]} (NaN or infinite)",
            "give every retrieved document a finite score",
        )
    pairs = _reject_duplicates(path, line_of_row, table, "run")
    return Run(path=str(path), table=table, tag=_first_tag(path), pairs=pairs)


def read_qrels(path: str | Path) -> Qrels:
    """Read qrels in any accepted format (TREC `qid iter docid rel` text, BEIR TSV, JSON, JSON lines,
    plain or gzip; a Parquet file or folder); raise InputError if bad.

    Parameters
    ----------
    path
        The qrels file (or Parquet folder); its format is told by its extension and confirmed by
        its content.

    Returns
    -------
    Qrels
        The checked judgements: `table` (a pyarrow Table with `qid`, `docid`, `rel`) and `path`.

    Raises
    ------
    InputError
        A problem in the file, naming the file, the line and the fix.

    Examples
    --------
    In `tests/data/small/` of the checkout:

    >>> qrels = read_qrels("qrels.txt")
    >>> qrels.table.num_rows, qrels.table.column_names
    (1749, ['qid', 'docid', 'rel'])
    """
    with _io_errors_as_input_errors(path), _named_as(path) as readable:
        return _read_qrels(readable)


def _read_qrels(path: Path) -> Qrels:
    form = _format(path, "qrels")
    if form == PARQUET:
        table, pairs = _read_parquet_indexed(path, "rel", "qrels")
        return Qrels(path=str(path), table=table, pairs=pairs)
    if form in (JSON, JSONL, BEIR_TSV):
        reader = {JSON: read_json_document, JSONL: read_json_lines}.get(form)
        table, line_of_row = reader(path, "qrels") if reader else read_beir_qrels(path)
        return Qrels(path=str(path), table=table, pairs=_reject_duplicates(path, line_of_row, table, "qrels"))
    table, line_of_row = _read_table(path, QRELS_LAYOUT)
    labels = column_numpy(table, "rel")
    bad = np.flatnonzero(~np.isfinite(labels))
    if bad.size:
        raise InputError(
            path, line_of_row(int(bad[0])), f"relevance label is {labels[bad[0]]}",
            "labels must be finite integers or decimals",
        )
    pairs = _reject_duplicates(path, line_of_row, table, "qrels")
    return Qrels(path=str(path), table=table, pairs=pairs)


def _format(path: Path, kind: str) -> str:
    """The input's format (inputs.detection.detect_format), after checking that it exists and, if a
    file, that it is readable and not empty."""
    if not path.exists():
        raise InputError(path, None, "no such file or folder" if kind != "topics" else "no such file", "check the path")
    if not path.is_dir():
        _check_readable(path)
    return detect_format(path, kind)


@contextmanager
def _named_as(given: str | Path) -> Iterator[Path]:
    """The path to read for `given` (inputs.sources: a process substitution is read once into a copy);
    an InputError about the copy names the path the user gave."""
    readable = source_path(given)
    try:
        yield readable
    except InputError as exc:
        if given_name(exc.path) == exc.path:
            raise
        raise InputError(given_name(exc.path), exc.line, exc.problem, exc.fix) from None


def _read_parquet_indexed(path: Path, value_column: str, kind: str) -> tuple[pa.Table, PairIndex]:
    """A Parquet run or qrels and the index of its pairs; InputError (file and row) on a repeated pair."""
    table, rows = read_parquet(path, value_column, kind)
    pairs, found = index_pairs(table)
    if found is not None:
        raise duplicate_error(rows, *found, table, kind)
    return table, pairs


def read_topics(path: str | Path) -> "pd.Series":
    """Read topics (`qid<TAB>text` lines, BEIR queries.jsonl or a TREC topic file, plain or gzip);
    return query text indexed by qid (strings).

    Parameters
    ----------
    path
        The topics file: `qid<TAB>text` lines, BEIR `queries.jsonl` or a TREC topic file (the
        number from `<num>`, the text from `<title>`).

    Returns
    -------
    pandas.Series
        The query text (named `query`) indexed by qid (named `qid`), as `compare_runs(topics=...)`
        takes it.

    Raises
    ------
    InputError
        A problem in the file, naming the file, the line and the fix.

    Examples
    --------
    In `tests/data/small/` of the checkout:

    >>> topics = read_topics("topics.txt")
    >>> topics["1037798"]
    'who is robert gray'
    """
    with _io_errors_as_input_errors(path), _named_as(path) as readable:
        _format(readable, "topics")
        return read_topics_file(readable)


# --- loading and normalising text ---------------------------------------------------------


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
            count += _line_ends(previous + piece) - _line_ends(previous)  # a \r\n across pieces counts once
            previous = piece[-1:]
    return count


def _later_by(exc: InputError, lines: int) -> InputError:
    """The same error with its line number counted `lines` lines further into the file."""
    return InputError(exc.path, None if exc.line is None else exc.line + lines, exc.problem, exc.fix)


def _normalise(data: bytes) -> bytes:
    """Single spaces between fields, no comment lines, `\\n` line ends; line count unchanged."""
    text = bytes(data)
    if text.startswith(b"\xef\xbb\xbf"):
        text = text[3:]
    text = re.sub(rb"\r\n?", b"\n", text)
    text = text.translate(bytes.maketrans(b"\t\x0b\x0c", b"   "))
    text = re.sub(rb" {2,}", b" ", text)
    text = re.sub(rb"(?m)^ | $", b"", text)
    return re.sub(rb"(?m)^#.*$", b"", text)


def _parse(source: bytes | Path, layout: _Layout) -> pa.Table:
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


def _parse_blocks(source: bytes | Path, layout: _Layout, block: int) -> pa.Table:
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
    return _one_chunk(table)


def _one_chunk(table: pa.Table) -> pa.Table:
    """One chunk per column, one qid dictionary; docids as large_string past 2 GiB of text."""
    table = table.unify_dictionaries()
    if sum(chunk.nbytes for chunk in table["docid"].chunks) >= _LARGE_STRINGS:
        table = table.set_column(table.column_names.index("docid"), "docid", table["docid"].cast(pa.large_string()))
    return table.combine_chunks()


def _looks_clean(table: pa.Table) -> bool:
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


def _read_table(path: Path, layout: _Layout) -> tuple[pa.Table, Callable[[int], int]]:
    """Parse a run or qrels file; return the table and a map from row to file line number.

    First the first _PREFIX_BYTES of text are checked: a file that is wrong from its start fails at
    once, whatever its size. Fast path: pyarrow reads the file itself. Files it may misread (tabs,
    runs of spaces, comments, a byte-order mark, bad lines) are read again in chunks of whole lines,
    each normalised and parsed on its own (memory bounded by the chunk), and a chunk that fails is
    scanned for its first bad line.
    """
    _check_readable(path)
    problem = _prefix_problem(path, layout)
    if problem is not None:
        raise problem
    head = _head(path)
    table = None
    if head[:3] != b"\xef\xbb\xbf" and head[:2] not in (b"\xff\xfe", b"\xfe\xff") and head[:1] not in (b" ", b"#", b"\t", b"\r", b"\n"):
        try:
            table = _parse(path, layout)
        except (pa.ArrowInvalid, OSError):
            table = None
        if table is not None and not _looks_clean(table):
            table = None
    if table is None:
        table = _parse_in_chunks(path, layout)
    pa.default_memory_pool().release_unused()  # the parser's buffers, once the whole file is read
    if table.num_rows == 0:
        raise InputError(path, None, f"empty {layout.kind} file (no data lines)", "give a file with data lines")
    return table, lambda row: _line_of_row(path, row)


def _prefix_problem(path: Path, layout: _Layout) -> InputError | None:
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
        _check_encoding(path, text)
        _parse_chunk(path, text, layout, 0)
    except InputError as exc:
        return exc if exc.line is not None else None
    return None


def _parse_in_chunks(path: Path, layout: _Layout) -> pa.Table:
    """Read, normalise and parse the file _CHUNK_BYTES of whole lines at a time; diagnose the first bad line."""
    tables = []
    lines_before = 0
    try:
        with open_maybe_gzip(path) as handle:
            for chunk in _whole_line_chunks(path, handle):
                _check_encoding(path, chunk, lines_before, at_start=lines_before == 0)
                normalised = _normalise(chunk)
                if normalised.strip():
                    tables.append(_parse_normalised(path, normalised, layout, lines_before))
                lines_before += normalised.count(b"\n")
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise InputError(path, None, f"corrupt gzip file ({exc})", "re-compress it or give the plain file") from None
    if not tables:
        return pa.table({name: pa.array([], kind) for name, kind in layout.keep.items()})
    return _one_chunk(pa.concat_tables(tables))


def run_chunks(path: str | Path, chunk_bytes: int | None = None) -> Iterator[tuple[pa.Table, int]]:
    """A run file (TREC text, JSON lines or JSON) read about chunk_bytes of whole lines at a time, for
    streaming: (table of the chunk's rows as read_run's table has them, rows before it). Checks as
    read_run, with file:line: bad lines, non-finite scores; an empty file is an InputError. Repeated
    pairs are the caller's (they may straddle chunks)."""
    with _io_errors_as_input_errors(path), _named_as(path) as readable:
        form = _format(readable, "run")
        if form == JSONL:
            yield from json_lines_chunks(readable, "run", chunk_bytes)
        elif form == JSON:
            yield read_json_document(readable, "run")[0], 0
        elif form == PARQUET:
            yield from parquet_chunks(readable, "score", "run", 1 << 19)
        else:
            yield from _trec_run_chunks(readable, chunk_bytes)


def _trec_run_chunks(path: Path, chunk_bytes: int | None) -> Iterator[tuple[pa.Table, int]]:
    """run_chunks of a TREC text run."""
    problem = _prefix_problem(path, RUN_LAYOUT)
    if problem is not None:
        raise problem
    rows_before = offset = 0  # data rows and bytes of text before the chunk
    try:
        with open_maybe_gzip(path) as handle:
            for chunk in _whole_line_chunks(path, handle, chunk_bytes):
                try:  # line numbers counted from the chunk's start; the lines before it only on error
                    _check_encoding(path, chunk, at_start=offset == 0)
                    table = _parse_chunk(path, chunk, RUN_LAYOUT, 0)
                except InputError as exc:
                    raise _later_by(exc, _lines_before(path, offset)) from None
                offset += len(chunk)
                if table is None or table.num_rows == 0:
                    continue
                scores = column_numpy(table, "score")
                bad = np.flatnonzero(~np.isfinite(scores))
                if bad.size:
                    raise InputError(path, _line_of_row(path, rows_before + int(bad[0])),
                                     f"score is {scores[bad[0]]} (NaN or infinite)",
                                     "give every retrieved document a finite score")
                yield table, rows_before
                rows_before += table.num_rows
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise InputError(path, None, f"corrupt gzip file ({exc})", "re-compress it or give the plain file") from None
    if rows_before == 0:
        raise InputError(path, None, "empty run file (no data lines)", "give a file with data lines")


def line_of_row(path: str | Path, row: int) -> int | None:
    """The 1-based line of the file holding data row `row` (0-based; comment and blank lines skipped),
    in any text format (None where a JSON document does not show it plainly)."""
    readable = source_path(path)
    form = detect_format(readable, "run")
    if form == JSONL:
        return json_lines_line_of_row(readable, "run", row)
    if form == JSON:
        return read_json_document(readable, "run")[1](row)
    return _line_of_row(readable, row)


def _parse_chunk(path: Path, chunk: bytes, layout: _Layout, lines_before: int) -> pa.Table | None:
    """One chunk of whole lines as a table: as it is if pyarrow reads it cleanly, else normalised
    (tabs, runs of spaces, comments, CRLF); InputError naming the first bad line."""
    if chunk[:1] not in (b" ", b"#", b"\t", b"\r", b"\n", b"\xef") and b"\r" not in chunk and b"\t" not in chunk:
        try:
            table = _parse(chunk, layout)
            if _looks_clean(table):
                return table
        except pa.ArrowInvalid:
            pass
    normalised = _normalise(chunk)
    return _parse_normalised(path, normalised, layout, lines_before) if normalised.strip() else None


def _parse_normalised(path: Path, normalised: bytes, layout: _Layout, lines_before: int) -> pa.Table:
    """Parse normalised text whose lines start after lines_before; InputError naming its first bad line."""
    try:
        table = _parse(normalised, layout)
    except pa.ArrowInvalid as exc:
        raise _diagnose(path, normalised, layout, exc, lines_before) from None
    if not _looks_clean(table):
        raise _diagnose(path, normalised, layout, None, lines_before)
    return table


def _whole_line_chunks(path: Path, handle: IO[bytes], chunk_bytes: int | None = None) -> Iterator[bytes]:
    """The file's text in pieces of about _CHUNK_BYTES that end at a line end (the last one may not);
    InputError for a line longer than _MAX_BLOCK. A piece's last line is finished with readline, which
    copies nothing; text without \\n line ends is cut at its last \\r, the rest carried over."""
    carry = b""
    offset = 0  # bytes of text before `data`
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


def _diagnose(path: Path, text: bytes, layout: _Layout, exc: Exception | None, lines_before: int = 0) -> InputError:
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


def _line_of_row(path: Path, row: int) -> int:
    """The 1-based file line of data row `row` (blank and comment lines do not count as rows); the
    file is read in pieces, so this stays in bounded memory however large it is."""
    seen = -1
    number = 0
    with open_maybe_gzip(path) as handle:
        for piece in _whole_line_chunks(path, handle):
            for raw in re.split(rb"\r\n?|\n", piece):  # line ends as pyarrow reads them
                number += 1
                if raw.strip() and not raw.lstrip().lstrip(b"\xef\xbb\xbf").startswith(b"#"):
                    seen += 1
                    if seen == row:
                        return number
            number -= 1  # the piece ended with a line end: its last split is empty, not a line
    raise AssertionError(f"row {row} not in {path}")


def _first_tag(path: Path) -> str:
    """The run tag (last column) of the first data line."""
    with open_maybe_gzip(path) as handle:
        for raw in handle:
            line = raw.strip()
            if line and not line.startswith(b"#"):
                return line.split()[-1].decode("utf-8", "replace").lstrip("\ufeff")
    return ""


# --- duplicate (qid, docid) pairs -----------------------------------------------------------


def first_duplicate_pair(qid_codes: np.ndarray, docids: pa.Array, pairs: PairIndex) -> tuple[int, int] | None:
    """(first row, repeating row) of the earliest-repeated (qid, docid) pair, or None."""
    rows = rows_sharing_a_key(pairs)
    seen: dict[tuple[int, str], int] = {}
    for row, code, docid in zip(rows.tolist(), qid_codes[rows].tolist(), docids.take(from_numpy(rows)).to_pylist()):
        first = seen.setdefault((code, docid), row)
        if first != row:
            return first, row
    return None


def index_pairs(table: pa.Table) -> tuple[PairIndex, tuple[int, int] | None]:
    """The index of a table's (qid, docid) pairs (one-chunk qid dictionary and docid columns), and
    its earliest-repeated pair as (first row, repeating row), or None."""
    qids, docids = table["qid"].chunk(0), table["docid"].chunk(0)
    pairs = build_pair_index(pair_keys(qids, docids))
    return pairs, first_duplicate_pair(as_numpy(qids.indices), docids, pairs)


def _reject_duplicates(path: str | Path, line_of_row: Callable[[int], int], table: pa.Table, kind: str) -> PairIndex:
    """Raise InputError on a repeated (qid, docid); return the index of the table's pairs."""
    pairs, found = index_pairs(table)
    if found is not None:
        first, second = found
        raise InputError(
            path, line_of_row(second),
            f"duplicate {kind} entry for query {table['qid'][second].as_py()!r}, "
            f"document {table['docid'][second].as_py()!r} (first on line {line_of_row(first)})",
            "keep one line per (query, document)",
        )
    return pairs
