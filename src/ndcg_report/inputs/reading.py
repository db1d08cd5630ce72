"""The way in for runs, qrels and topics: the format told, its reader called, repeated pairs refused.

read_run, read_qrels and read_topics take a path in any registered format (inputs.formats.registry):
inputs.detection tells which (by extension and content), the format's reader reads it, and an id
holding a control character, a relevance label out of range or a repeated (query, document) pair is
refused here (inputs.ids, inputs.labels, inputs.duplicates) whatever the format. run_pieces reads a run in pieces for streaming, each
checked alike; line_of_row maps a data row back to its line. A process substitution is read once
into a copy, and in a build every input from the build's copy (inputs.access.sources); an error about
a copy names the path the user gave, and a parsed run or qrels is of that path.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from ndcg_report.errors import InputError
from ndcg_report.inputs.detection import detect_format
from ndcg_report.inputs.duplicates import index_pairs
from ndcg_report.inputs.formats.registry import FORMATS, Format, RunPiece
from ndcg_report.inputs.ids import ID_FIX, BadId, refuse_bad_ids
from ndcg_report.inputs.labels import refuse_labels_out_of_range
from ndcg_report.inputs.pair_index import PairIndex
from ndcg_report.inputs.access.sources import read_as, readable_path, source_path
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
    with io_errors_as_input_errors(path), readable_path(path) as readable:
        return _read_run(readable)


def _read_run(path: Path) -> Run:
    table, pairs, form = _read_checked(path, "run")
    return Run(path=read_as(path), table=table, tag=form.tag(path) if form.tag is not None else "", pairs=pairs)


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
    with io_errors_as_input_errors(path), readable_path(path) as readable:
        return _read_qrels(readable)


def _read_qrels(path: Path) -> Qrels:
    table, pairs, _ = _read_checked(path, "qrels")
    return Qrels(path=read_as(path), table=table, pairs=pairs)


def _read_checked(path: Path, kind: str) -> tuple[pa.Table, PairIndex, Format]:
    """A run or qrels in any format read and checked as every format is (inputs.ids: no control
    character in an id; inputs.labels: no label out of range; inputs.duplicates: no repeated pair):
    (table, index of its pairs, format)."""
    form = FORMATS[_format(path, kind)]
    parsed = form.read(path, kind)
    refuse_bad_ids(parsed.table, parsed.bad_id)
    if kind == "qrels":
        refuse_labels_out_of_range(parsed.table, partial(form.error_at, path, kind))
    pairs, found = index_pairs(parsed.table)
    if found is not None:
        raise parsed.duplicate(*found)
    return parsed.table, pairs, form


def _format(path: Path, kind: str) -> str:
    """The input's format (inputs.detection.detect_format), after checking that it exists and, if a
    file, that it is readable and not empty."""
    if not path.exists():
        raise InputError(path, None, "no such file or folder" if kind != "topics" else "no such file", "check the path")
    if not path.is_dir():
        check_readable(path)
    return detect_format(path, kind)


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
    with io_errors_as_input_errors(path), readable_path(path) as readable:
        return FORMATS[_format(readable, "topics")].read(readable, "topics")


def run_pieces(path: str | Path, chunk_bytes: int | None = None, text_bytes: int | None = None) -> Iterator[RunPiece]:
    """A run file read about chunk_bytes of whole lines at a time (by its format's chunks; a format
    without them, as JSON, read whole), for streaming: (table of the piece's rows as read_run's table
    has them, rows before it, whether its last row ends its query's rows). With text_bytes, a format
    that cuts a run where a query's rows begin (TREC text, inputs.formats.trec_blocks) reads text_bytes
    at a time, the one case where that last is known (else False). Checks as read_run, with file:line:
    bad lines, non-finite scores, ids holding control characters; an empty file is an InputError.
    Repeated pairs are the caller's (they may straddle pieces)."""
    with io_errors_as_input_errors(path), readable_path(path) as readable:
        form = FORMATS[_format(readable, "run")]
        if text_bytes is not None and form.query_pieces is not None:
            pieces = form.query_pieces(readable, text_bytes)
        elif form.chunks is not None:
            pieces = ((table, rows_before, False) for table, rows_before in form.chunks(readable, "run", chunk_bytes))
        else:
            parsed = form.read(readable, "run")
            refuse_bad_ids(parsed.table, parsed.bad_id)
            yield parsed.table, 0, False
            return
        for table, rows_before, whole in pieces:
            refuse_bad_ids(table, partial(_at_row, form, readable, rows_before))
            yield table, rows_before, whole


def _at_row(form: Format, path: Path, rows_before: int, bad: BadId) -> InputError:
    """The error for a bad id of a piece, at its line (a Parquet input: its file and row)."""
    return form.error_at(path, "run", rows_before + bad.row, bad.problem, ID_FIX)


def line_of_row(path: str | Path, row: int) -> int | None:
    """The 1-based line of the file holding data row `row` (0-based; comment and blank lines skipped),
    in any text format (None where a JSON document does not show it plainly, or the format has no lines)."""
    readable = source_path(path)
    form = FORMATS[detect_format(readable, "run")]
    return form.line_of_row(readable, "run", row) if form.line_of_row is not None else None
