"""A run read in blocks of whole queries, on a thread ahead of its reader, and whether to read it so.

query_blocks gives about BLOCK_BYTES of text at a time (a TREC text run cut where a query's lines
begin, inputs.formats.trec_blocks; other formats gathered and cut before their last query);
ReadAhead makes the next items on a thread while the caller works on the one it has. Nothing here
evaluates, so a command can start reading before it imports the evaluation (core.streaming).
A query of more than MAX_QUERY_LINES lines, or a line repeating the one before, is an InputError as it
is read (inputs.access.read_bounds): a block holds whole queries.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import TypeVar

import numpy as np
import pyarrow as pa

from ndcg_report.errors import InputError
from ndcg_report.inputs.access.read_bounds import MAX_QUERY_LINES, TEXT_BYTES_PER_ROW, ReadBound, fits_in_half_memory
from ndcg_report.inputs.columns import as_numpy, from_numpy, one_array
from ndcg_report.inputs.formats.parquet import is_parquet, parquet_data_bytes, parquet_rows
from ndcg_report.inputs.reading import line_of_row, run_pieces

BLOCK_BYTES = 16 << 20  # text per block: about 0.4M run lines (7M lines: as fast as 32 MiB with 90 MB less memory, 64 MiB slower)
READ_BYTES = 16 << 20  # of JSON lines parsed at a time (Parquet: READ_BYTES / 40 rows); TREC text comes in whole blocks
_END = object()  # ReadAhead: the iterator is exhausted
T = TypeVar("T")
STREAM_ABOVE = 128 << 20  # text bytes past which eval streams by default: as fast or faster, and bounded memory
# JSON lines of ranked lists hold a line of TREC text in a quarter of the bytes, and parse slower: streaming
# (reading a block while the one before is evaluated) is faster past this (7M lines in 76 MB: 1.62 s against 2.6 s)
JSON_STREAM_ABOVE = 32 << 20
_GZIP_RATIO = 4  # how much larger a gzip run's text is than the file, for the estimate
_TEXT_BYTES_PER_LINE = TEXT_BYTES_PER_ROW  # of a typical run line: Parquet rows read at a time are READ_BYTES' worth


class ReadAhead(Iterator[T]):
    """The items of an iterator, the next `depth` made on a thread while the caller works on the one
    it has (pyarrow and NumPy release the GIL): reading blocks overlaps evaluating the one before.
    Making items starts at once. An exception of the iterator reaches the caller when it asks for
    that item. close() (or leaving `with closing(...)`) waits for the item being made."""

    def __init__(self, items: Iterator[T], depth: int = 2) -> None:
        self._items = items
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="read-ahead")  # one thread: next() in order
        self._pending: deque[Future] = deque(self._pool.submit(next, items, _END) for _ in range(depth))

    def __next__(self) -> T:
        item = self._pending.popleft().result()
        if item is _END:
            raise StopIteration
        self._pending.append(self._pool.submit(next, self._items, _END))
        return item

    def close(self) -> None:
        for pending in self._pending:
            pending.cancel()
        self._pool.shutdown(wait=True)


def start_reading(run: str | Path, block_bytes: int = BLOCK_BYTES,
                  max_query_lines: int = MAX_QUERY_LINES) -> ReadAhead[tuple[pa.Table, int]]:
    """query_blocks of the run, read from now on a thread; close() it when done with it."""
    return ReadAhead(query_blocks(run, block_bytes, max_query_lines))


def query_blocks(run: str | Path, block_bytes: int,
                 max_query_lines: int = MAX_QUERY_LINES) -> Iterator[tuple[pa.Table, int]]:
    """(table of whole queries, rows before it): about block_bytes of text at a time. A TREC text
    run comes in pieces of whole queries (cut in its text), each a block as parsed; other pieces (other
    formats, READ_BYTES at a time) are gathered and cut before their last query, whose lines go to the
    front of the next block; InputError once those lines of one query are more than max_query_lines."""
    per_block = max(1, block_bytes // READ_BYTES)
    gathered: list[pa.Table] = []  # the carried lines first, then the chunks read since
    start = 0  # rows before the first gathered table
    chunks = 0
    bound = ReadBound(run, "run", partial(_error_at_row, Path(run)), max_query_lines)
    for table, rows_before, whole in run_pieces(run, min(block_bytes, READ_BYTES), block_bytes):  # Parquet: READ_BYTES / 40 rows
        bound.rows(table, rows_before)  # a repeated line, a query past max_query_lines: refused as read
        if not gathered:
            start = rows_before
        if whole:  # ends at a query's end: the block is what was gathered, with this piece
            if gathered:
                table = _compact(_one_table([*gathered, table]))
            yield table, start
            gathered, chunks = [], 0
            continue
        gathered.append(table)
        chunks += 1
        if chunks < per_block:
            continue
        table = _one_table(gathered)
        codes = as_numpy(table["qid"].chunk(0).indices)
        changes = np.flatnonzero(codes[1:] != codes[:-1])
        split = int(changes[-1]) + 1 if len(changes) else 0  # where the last query's trailing lines begin
        if split:
            yield _compact(table.slice(0, split)), start
        gathered, start, chunks = [table.slice(split)], start + split, 0
    if gathered:
        table = _one_table(gathered)
        if table.num_rows:
            yield _compact(table), start


def _one_table(tables: list[pa.Table]) -> pa.Table:
    """The tables end to end, one chunk, one qid dictionary."""
    return pa.concat_tables(tables).unify_dictionaries().combine_chunks()


def _error_at_row(run: Path, row: int, problem: str, fix: str) -> InputError:
    """The error for a data row of a streamed run, at its line (a Parquet run: its file and row)."""
    file, line, at = where_in_run(run, row)
    return InputError(file, line, f"{at}{problem}", fix)


def _compact(table: pa.Table) -> pa.Table:
    """The table in one chunk, its qid dictionary holding only the qids of its rows, in the order they
    first appear (as read_run's): the codes remapped, no string decoded."""
    column = one_array(table["qid"])
    codes = as_numpy(column.indices)
    used, first = np.unique(codes[run_starts(codes)], return_index=True)
    used = used[np.argsort(first)]
    remap = np.zeros(len(column.dictionary), dtype=np.int32)
    remap[used] = np.arange(len(used), dtype=np.int32)
    qids = pa.DictionaryArray.from_arrays(from_numpy(remap[codes]), column.dictionary.take(from_numpy(used)))
    return table.set_column(0, "qid", qids).combine_chunks()


def where_in_run(run: Path, row: int) -> tuple[str, int | None, str]:
    """(file, line or None, 'row N: ' or '') of a data row of a text or Parquet run, for an error."""
    if is_parquet(run):
        file, within = parquet_rows(run).where(row)
        return str(file), None, f"row {within}: "
    return str(run), line_of_row(run, row), ""


def run_starts(codes: np.ndarray) -> np.ndarray:
    """The rows where a run of equal codes begins (a query's lines, in a run grouped by query)."""
    if not len(codes):
        return np.zeros(0, dtype=np.intp)
    return np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))


def streams_by_default(run: str | Path, available: int | None = None) -> bool:
    """True for a run file whose text is past STREAM_ABOVE bytes (a JSON-lines run past
    JSON_STREAM_ABOVE), or that is unlikely to fit in memory: streaming is as fast there and its
    memory stays bounded."""
    path = Path(run)
    above = JSON_STREAM_ABOVE if not is_parquet(path) and _is_json_lines(path) else STREAM_ABOVE
    return _text_bytes(path) > above or not fits_in_memory(run, available)


def _is_json_lines(run: Path) -> bool:
    from ndcg_report.inputs.detection import detect_format
    from ndcg_report.inputs.formats.json_lines import JSON_LINES

    try:
        return detect_format(run, "run") == JSON_LINES.name
    except (InputError, OSError):
        return False


def _text_bytes(run: Path) -> int:
    """The size of a run's text: the file's, an estimate for gzip; for Parquet the larger of its data's
    and its rows' as text (_TEXT_BYTES_PER_LINE each: dictionary-encoded rows take almost no bytes)."""
    if is_parquet(run):
        return max(parquet_data_bytes(run), parquet_rows(run).starts[-1] * _TEXT_BYTES_PER_LINE)
    size = run.stat().st_size
    with open(run, "rb") as handle:
        return size * _GZIP_RATIO if handle.read(2) == b"\x1f\x8b" else size


def fits_in_memory(run: str | Path, available: int | None = None) -> bool:
    """True if an in-memory evaluation of the run file is likely to use under half the memory
    available (inputs.access.read_bounds.fits_in_half_memory of its text's size, estimated)."""
    return fits_in_half_memory(_text_bytes(Path(run)), available)
