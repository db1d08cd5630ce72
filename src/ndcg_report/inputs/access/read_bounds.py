"""What a reader may decompress and hold, counted as it reads: text and rows against memory, a query's lines.

A compressed file's size says nothing of its text (a 5 MB gzip holds 74M lines), so a reader counts
what it has read. fits_in_half_memory is eval's rule for reading a run whole (its text, times
IN_MEMORY_FACTOR, under half the available memory); ReadBound applies it, and the checks a streamed
run makes, to the pieces of a run or qrels as they arrive, so a bomb is refused at its first bound.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.errors import InputError
from ndcg_report.inputs.columns import as_numpy

IN_MEMORY_FACTOR = 4  # peak memory of an in-memory evaluation, as a multiple of the run's text size
TEXT_BYTES_PER_ROW = 40  # of a typical run line: what a row read whole costs, for a Parquet file's rows
# Lines of one query a streamed run may hold (a block holds whole queries, so this bounds a block):
# a ranking of all 8.8M MS MARCO passages fits. 10M lines of a query take about 1 GB in a block.
MAX_QUERY_LINES = 10_000_000
ErrorAt = Callable[[int, str, str], InputError]  # (0-based data row, problem, fix) -> the error at its line


def available_memory() -> int:
    """MemAvailable of /proc/meminfo, else the physical memory, in bytes."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def fits_in_half_memory(text_bytes: int, available: int | None = None) -> bool:
    """True if reading `text_bytes` of run text whole is likely to use under half the available memory."""
    return text_bytes * IN_MEMORY_FACTOR < (available if available is not None else available_memory()) / 2


def rows_read_whole(available: int | None = None) -> int:
    """The most rows (TEXT_BYTES_PER_ROW each) that fit_in_half_memory: a Parquet input's cap, told by its metadata."""
    return max(0, ((available if available is not None else available_memory()) // 2 - 1)
               // (TEXT_BYTES_PER_ROW * IN_MEMORY_FACTOR))


def half_memory_text(available: int | None = None) -> str:
    """Half the available memory, for an error message (`3.9 GiB`, `512 MiB`)."""
    half = (available if available is not None else available_memory()) // 2
    return f"{half / (1 << 30):.1f} GiB" if half >= 1 << 30 else f"{half >> 20} MiB"


class ReadBound:
    """The pieces of a run or qrels, fed in file order as they are read: InputError (at the line, by
    error_at) at a line that repeats the query and document of the line before, once one query's
    lines in a row pass max_query_lines (None: no such cap), or, with text counted, once the text read
    would not fit in half the available memory (`too_large_fix` says what to do instead)."""

    def __init__(self, path: str | Path, kind: str, error_at: ErrorAt, max_query_lines: int | None = MAX_QUERY_LINES,
                 too_large_fix: str = "") -> None:
        self._path, self._kind, self._error_at = path, kind, error_at
        self._limit, self._too_large_fix = max_query_lines, too_large_fix
        self._last: tuple[str, str] | None = None  # (qid, docid) of the last row fed
        self._query_rows = 0  # rows of the last row's query, in a row, up to it
        self._query_start = 0  # the row where they begin
        self._text = 0
        self._available = available_memory()

    def text(self, size: int, lines_before: int) -> None:
        """Count `size` more bytes of text read, whose first line follows `lines_before` lines; InputError
        if the text read so far would not fit in half the available memory."""
        self._text += size
        if not fits_in_half_memory(self._text, self._available):
            raise InputError(self._path, lines_before + 1,
                             f"its text passes {self._text >> 20} MiB here (decompressed), more than fits in half the "
                             f"available memory ({half_memory_text(self._available)}) once read",
                             self._too_large_fix or f"give a smaller {self._kind}")

    def rows(self, table: pa.Table, rows_before: int) -> None:
        """Check the next piece's rows (qid dictionary, docid), `rows_before` data rows before it."""
        if not table.num_rows:
            return
        qids, docids = table["qid"].combine_chunks(), table["docid"]
        codes = as_numpy(qids.indices)
        same_query = codes[1:] == codes[:-1]
        repeated = np.flatnonzero(same_query & _equal_neighbours(docids))
        first = (qids[0].as_py(), docids[0].as_py())
        if self._last == first:
            self._refuse_repeat(rows_before, *first)
        if repeated.size:
            row = int(repeated[0]) + 1
            self._refuse_repeat(rows_before + row, qids[row].as_py(), docids[row].as_py())
        self._count_query_lines(codes, same_query, rows_before, first[0], qids)
        self._last = (qids[-1].as_py(), docids[-1].as_py())

    def _count_query_lines(self, codes: np.ndarray, same_query: np.ndarray, rows_before: int, first_qid: str,
                           qids: pa.DictionaryArray) -> None:
        """The lines of each query in a row, the last piece's last query carried on; InputError past the cap."""
        changes = np.flatnonzero(~same_query) + 1  # rows where another query begins
        if self._last is None or self._last[0] != first_qid:
            self._query_rows, self._query_start = 0, rows_before
        lengths = np.diff(np.concatenate(([0], changes, [len(codes)])))
        lengths[0] += self._query_rows
        if self._limit is not None and lengths.max() > self._limit:
            index = int(np.argmax(lengths > self._limit))
            start = self._query_start if index == 0 else rows_before + int(changes[index - 1])
            qid = first_qid if index == 0 else qids[int(changes[index - 1])].as_py()
            raise self._error_at(start, f"query {qid!r} has more than {self._limit:,} lines from here on, more than "
                                        "a block of the streamed run holds",
                                 "keep each query's top documents (a run's depth is usually 1,000), or evaluate it "
                                 "in memory (--in-memory)")
        if len(changes):
            self._query_start = rows_before + int(changes[-1])
        self._query_rows = int(lengths[-1])

    def _refuse_repeat(self, row: int, qid: str, docid: str) -> None:
        raise self._error_at(row, f"duplicate {self._kind} entry for query {qid!r}, document {docid!r} "
                                  "(the same as the entry before it)", "keep one line per (query, document)")


def _equal_neighbours(docids: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """For each row but the first: whether its docid is the one of the row before."""
    column = docids.combine_chunks() if isinstance(docids, pa.ChunkedArray) else docids
    if len(column) < 2:
        return np.zeros(0, dtype=bool)
    return as_numpy(pc.equal(column.slice(1), column.slice(0, len(column) - 1)))  # to_numpy() would import pandas
