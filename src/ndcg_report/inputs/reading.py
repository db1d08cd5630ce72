"""The way in for runs, qrels and topics: the format told, its reader called, repeated pairs refused.

read_run, read_qrels and read_topics take a path in any accepted format: inputs.detection tells
which (by extension and content), inputs.formats holds one reader per format, and an id holding
a control character or a repeated (query, document) pair is refused here (inputs.ids,
inputs.duplicates) whatever the format. run_pieces reads a run in pieces for streaming, each
checked alike; line_of_row maps a data row back to its line. A process substitution is read once
into a copy (inputs.access.sources); an error about the copy names the path the user gave.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from ndcg_report.errors import InputError
from ndcg_report.inputs.detection import BEIR_TSV, JSON, JSONL, PARQUET, detect_format
from ndcg_report.inputs.duplicates import index_pairs, reject_duplicates
from ndcg_report.inputs.formats.beir_tsv import read_beir_qrels
from ndcg_report.inputs.formats.json_documents import read_json_document
from ndcg_report.inputs.formats.json_lines import ROW_BYTES, json_lines_chunks, json_lines_line_of_row, read_json_lines
from ndcg_report.inputs.formats.parquet import duplicate_error, parquet_chunks, parquet_rows, read_parquet
from ndcg_report.inputs.formats.topics import read_topics_file
from ndcg_report.inputs.formats.trec_blocks import RunPiece, trec_run_pieces
from ndcg_report.inputs.formats.trec_text import first_tag, read_trec_qrels, read_trec_run, trec_line_of_row, trec_run_chunks
from ndcg_report.inputs.ids import ID_FIX, BadId, refuse_bad_ids
from ndcg_report.inputs.pair_index import PairIndex
from ndcg_report.inputs.access.sources import given_name, source_path
from ndcg_report.inputs.access.text_files import check_readable, io_errors_as_input_errors

if TYPE_CHECKING:
    import pandas as pd


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
    with io_errors_as_input_errors(path), _named_as(path) as readable:
        return _read_run(readable)


def _read_run(path: Path) -> Run:
    table, pairs, form = _read_checked(path, "run")
    return Run(path=str(path), table=table, tag=first_tag(path) if form not in (PARQUET, JSON, JSONL) else "", pairs=pairs)


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
    with io_errors_as_input_errors(path), _named_as(path) as readable:
        return _read_qrels(readable)


def _read_qrels(path: Path) -> Qrels:
    table, pairs, _ = _read_checked(path, "qrels")
    return Qrels(path=str(path), table=table, pairs=pairs)


def _read_checked(path: Path, kind: str) -> tuple[pa.Table, PairIndex, str]:
    """A run or qrels in any format read and checked as every format is (inputs.ids: no control
    character in an id; inputs.duplicates: no repeated pair): (table, index of its pairs, format)."""
    form = _format(path, kind)
    value = "score" if kind == "run" else "rel"
    if form == PARQUET:
        table, rows = read_parquet(path, value, kind)
        refuse_bad_ids(table, lambda bad: rows.error(bad.row, bad.problem, ID_FIX))
        pairs, found = index_pairs(table)
        if found is not None:
            raise duplicate_error(rows, *found, table, kind)
        return table, pairs, form
    if form == JSON:
        table, line_of_row, line_of_id = read_json_document(path, kind)
    else:
        if form == JSONL:
            table, line_of_row = read_json_lines(path, kind)
        elif form == BEIR_TSV and kind == "qrels":
            table, line_of_row = read_beir_qrels(path)
        else:
            table, line_of_row = read_trec_run(path) if kind == "run" else read_trec_qrels(path)
        line_of_id = _line_of_id(line_of_row)
    refuse_bad_ids(table, _id_error(path, line_of_id))
    return table, reject_duplicates(path, line_of_row, table, kind), form


def _id_error(path: Path, line_of_id: Callable[[int, str], int | None]) -> Callable[[BadId], InputError]:
    """The error for an id holding a control character, at its line."""
    return lambda bad: InputError(path, line_of_id(bad.row, bad.column), bad.problem, ID_FIX)


def _line_of_id(line_of_row: Callable[[int], int | None], rows_before: int = 0) -> Callable[[int, str], int | None]:
    """The line of a row's id: its row's line, in every format but a JSON document (rows_before rows
    come before the table's first)."""
    return lambda row, column: line_of_row(rows_before + row)


def _format(path: Path, kind: str) -> str:
    """The input's format (inputs.detection.detect_format), after checking that it exists and, if a
    file, that it is readable and not empty."""
    if not path.exists():
        raise InputError(path, None, "no such file or folder" if kind != "topics" else "no such file", "check the path")
    if not path.is_dir():
        check_readable(path)
    return detect_format(path, kind)


@contextmanager
def _named_as(given: str | Path) -> Iterator[Path]:
    """The path to read for `given` (inputs.access.sources: a process substitution is read once into a copy);
    an InputError about the copy names the path the user gave."""
    readable = source_path(given)
    try:
        yield readable
    except InputError as exc:
        if given_name(exc.path) == exc.path:
            raise
        raise InputError(given_name(exc.path), exc.line, exc.problem, exc.fix) from None


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
    with io_errors_as_input_errors(path), _named_as(path) as readable:
        _format(readable, "topics")
        return read_topics_file(readable)


def run_pieces(path: str | Path, chunk_bytes: int | None = None, text_bytes: int | None = None) -> Iterator[RunPiece]:
    """A run file (TREC text, JSON lines or JSON) read about chunk_bytes of whole lines at a time, for
    streaming: (table of the piece's rows as read_run's table has them, rows before it, whether its last
    row ends its query's rows). With text_bytes, a TREC text run is read text_bytes at a time and cut
    where a query's lines begin (inputs.formats.trec_blocks), the one case where that last is known
    (else False). Checks as read_run, with file:line: bad lines, non-finite scores, ids holding control
    characters; an empty file is an InputError. Repeated pairs are the caller's (they may straddle pieces)."""
    with io_errors_as_input_errors(path), _named_as(path) as readable:
        form = _format(readable, "run")
        if form == JSONL:
            pieces = _not_known_whole(json_lines_chunks(readable, "run", chunk_bytes))
        elif form == JSON:
            table, _, line_of_id = read_json_document(readable, "run")
            pieces = _not_known_whole(iter([(table, 0)]))
        elif form == PARQUET:
            pieces = _not_known_whole(parquet_chunks(readable, "score", "run",
                                                     max(1, chunk_bytes // ROW_BYTES) if chunk_bytes else 1 << 19))
        elif text_bytes is not None:
            pieces = trec_run_pieces(readable, text_bytes)
        else:
            pieces = _not_known_whole(trec_run_chunks(readable, chunk_bytes))
        for table, rows_before, whole in pieces:
            if form == PARQUET:
                refuse_bad_ids(table, partial(_at_parquet_row, readable, rows_before))
            else:
                refuse_bad_ids(table, _id_error(readable, line_of_id if form == JSON
                                                else _line_of_id(partial(line_of_row, readable), rows_before)))
            yield table, rows_before, whole


def _not_known_whole(chunks: Iterator[tuple[pa.Table, int]]) -> Iterator[RunPiece]:
    return ((table, rows_before, False) for table, rows_before in chunks)


def _at_parquet_row(path: Path, rows_before: int, bad: BadId) -> InputError:
    """The error for a bad id naming the file of a Parquet file or folder and the row within it."""
    return parquet_rows(path).error(rows_before + bad.row, bad.problem, ID_FIX)


def line_of_row(path: str | Path, row: int) -> int | None:
    """The 1-based line of the file holding data row `row` (0-based; comment and blank lines skipped),
    in any text format (None where a JSON document does not show it plainly)."""
    readable = source_path(path)
    form = detect_format(readable, "run")
    if form == JSONL:
        return json_lines_line_of_row(readable, "run", row)
    if form == JSON:
        return read_json_document(readable, "run")[1](row)
    return trec_line_of_row(readable, row)

