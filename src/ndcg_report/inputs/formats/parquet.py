"""Runs and qrels stored as Parquet: one file, or a folder of files (a dataset, read in path order).

Columns qid, docid (or docno) and score (runs; without one, a rank column gives score = -rank) or rel
(or label, qrels); ids are strings of any Arrow layout or whole numbers, values numbers. Same checks as the text formats; errors name the file and the row (1-based,
within that file).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.errors import InputError
from ndcg_report.inputs.access.read_bounds import half_memory_text, rows_read_whole
from ndcg_report.inputs.columns import id_strings, types_wanted
from ndcg_report.inputs.formats.json_lines import ROW_BYTES
from ndcg_report.inputs.formats.registry import FORMATS, Format, Parsed
from ndcg_report.inputs.ids import ID_FIX

if TYPE_CHECKING:
    import pyarrow.parquet as pq

MAGIC = b"PAR1"
SUFFIXES = (".parquet", ".pq", ".parq")
_LARGE_STRINGS = (1 << 31) - (1 << 24)
RANK = "rank"  # a run without a score column is ranked by this one: score = -rank (1 is best)
FIRST_FILES = 3  # files of a folder checked to be Parquet before it is taken for a dataset
MAX_ENTRIES = 10_000  # folder entries listed while looking for them
MAX_DATASET_ENTRIES = 1_000_000  # entries of a whole dataset's walk
ALIASES = {"docid": ("docid", "docno"), "score": ("score",), "rel": ("rel", "label"), "qid": ("qid",)}


@dataclass(frozen=True)
class ParquetRows:
    """Where each row of the concatenated table came from: the files, and the first row of each."""

    files: tuple[Path, ...]
    starts: np.ndarray  # row of the concatenated table where each file begins; one extra: the total

    def where(self, row: int) -> tuple[Path, int]:
        """(file, 1-based row within it) of a row of the concatenated table."""
        position = int(np.searchsorted(self.starts, row, side="right")) - 1
        return self.files[position], row - int(self.starts[position]) + 1

    def error(self, row: int, problem: str, fix: str) -> InputError:
        path, within = self.where(row)
        return InputError(path, None, f"row {within}: {problem}", fix)


def is_parquet(path: Path) -> bool:
    """A Parquet dataset (a folder whose first files are Parquet), a file named *.parquet/.pq/.parq,
    or a file that is Parquet by its structure (`PAR1` at both ends, a footer that fits): told by
    structure, so a text file whose first id starts with PAR1 stays text."""
    if path.is_dir():
        return dataset_problem(path) is None
    if path.suffix.lower() in SUFFIXES:
        return True
    return has_parquet_structure(path)


def has_parquet_structure(path: Path) -> bool:
    """True if the file starts and ends with the Parquet magic and its footer length fits the file
    (False for anything but a regular file: a pipe is never opened here)."""
    try:
        if not path.is_file():
            return False
        with open(path, "rb") as handle:
            if handle.read(4) != MAGIC:
                return False
            size = handle.seek(0, 2)
            if size < 12:
                return False
            handle.seek(size - 8)
            tail = handle.read(8)
    except OSError:
        return False
    return tail[4:] == MAGIC and int.from_bytes(tail[:4], "little") <= size - 12


def dataset_problem(folder: Path) -> str | None:
    """None if the folder looks like a Parquet dataset: its first FIRST_FILES files (in path order)
    are Parquet; else what it is instead. Stops at the first file that is not, and looks at no more
    than MAX_ENTRIES entries, so a mistyped folder (/usr) costs milliseconds, not a walk."""
    checked = 0
    try:
        for file in _walk(folder, [MAX_ENTRIES]):
            if not has_parquet_structure(file):
                return f"a folder, but not a Parquet dataset: its file {file.relative_to(folder)} is not Parquet"
            checked += 1
            if checked == FIRST_FILES:
                break
    except _TooLarge:
        return f"a folder with more than {MAX_ENTRIES:,} entries before its first Parquet files: not a Parquet dataset"
    except OSError as exc:
        return f"a folder that cannot be read ({exc.strerror or exc})"
    return None if checked else "a folder without any Parquet file"


def parquet_files(path: Path) -> list[Path]:
    """The Parquet files of a file or a folder (recursively, sorted by path; names starting with '.'
    or '_', as Spark's _SUCCESS and .crc files, are skipped); InputError if there is none, or if the
    folder's first files are not Parquet (a mistyped folder is not walked whole)."""
    if not path.exists():
        raise InputError(path, None, "no such file or folder", "check the path")
    if not path.is_dir():
        return [path]
    problem = dataset_problem(path)
    if problem is not None:
        raise InputError(path, None, problem, "give a Parquet file or a folder of them")
    try:
        return list(_walk(path, [MAX_DATASET_ENTRIES]))
    except _TooLarge:
        raise InputError(path, None, f"a folder with more than {MAX_DATASET_ENTRIES:,} entries",
                         "give the Parquet dataset's own folder") from None
    except OSError as exc:
        raise InputError(path, None, f"cannot be read ({exc.strerror or exc})", "check the folder") from None


class _TooLarge(Exception):
    """A folder walk passed its budget of entries."""


def _walk(folder: Path, budget: list[int]) -> Iterator[Path]:
    """The files below folder in path order (as sorted(rglob) gives them), lazily, depth first; names
    starting with '.' or '_' skipped, links to folders not followed; _TooLarge once more entries than
    budget[0] were listed."""
    with os.scandir(folder) as listing:
        entries = sorted(listing, key=lambda entry: entry.name)
    budget[0] -= len(entries)
    if budget[0] < 0:
        raise _TooLarge
    for entry in entries:
        if entry.name.startswith((".", "_")):
            continue
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(Path(entry.path), budget)
        elif entry.is_file():
            yield Path(entry.path)


def parquet_row_count(path: Path) -> int:
    """Rows of a Parquet file or folder, from the files' metadata."""
    return int(parquet_rows(path).starts[-1])


def read_parquet(path: Path, value_column: str, kind: str,
                 max_rows: int | None = None) -> tuple[pa.Table, ParquetRows]:
    """qid (dictionary of strings), docid (strings) and the value (float64) of every file, checked:
    columns present and typed, no null id, a finite value on every row; InputError before any row is
    decoded if the metadata count more than max_rows (by default the rows that fit in half the
    available memory, inputs.access.read_bounds.rows_read_whole: a 1 MB file of dictionary-encoded
    rows can hold 100M of them, about 10 GB once read)."""
    files = parquet_files(path)
    total = sum(_metadata_rows(file, kind) for file in files)
    cap = rows_read_whole() if max_rows is None else max_rows
    if total > cap:
        raise InputError(path, None, f"{total:,} rows (its metadata says), more than the {cap:,} read whole"
                         + (f" in half the available memory ({half_memory_text()})" if max_rows is None else ""),
                         f"evaluate it with `eval`, which streams a run this large in blocks, or give fewer rows"
                         if kind == "run" else "give fewer rows")
    tables, sizes = [], []
    for file in files:
        parquet, names = _open(file, value_column, kind)
        try:
            table = parquet.read(columns=list(names.values()))
        except (pa.ArrowInvalid, OSError) as exc:
            raise InputError(file, None, f"cannot be read as Parquet ({_first_line(exc)})", "rewrite the file") from None
        tables.append(_checked(file, table, names, value_column, 0))
        sizes.append(table.num_rows)
    rows = ParquetRows(tuple(files), np.concatenate(([0], np.cumsum(sizes))))
    if rows.starts[-1] == 0:
        raise no_rows_error(path, len(files), kind)
    table = pa.concat_tables(tables)
    docids = table["docid"]
    if pa.types.is_string(docids.type) and docids.nbytes >= _LARGE_STRINGS:  # one chunk holds < 2 GiB of text
        docids = docids.cast(pa.large_string())
    docids = docids.combine_chunks()
    return pa.table({"qid": table["qid"].combine_chunks().dictionary_encode(), "docid": docids,
                     value_column: table[value_column].combine_chunks()}), rows


def parquet_chunks(path: Path, value_column: str, kind: str, rows: int) -> Iterator[tuple[pa.Table, int]]:
    """The rows of a Parquet file or folder about `rows` at a time, in path order, each chunk as
    read_parquet's table (one chunk, qid a dictionary) and checked the same way: (table, rows before it)."""
    files = parquet_files(path)
    before = 0
    for file in files:
        parquet, names = _open(file, value_column, kind)
        within = 0
        try:
            for batch in parquet.iter_batches(batch_size=rows, columns=list(names.values())):
                table = _checked(file, pa.Table.from_batches([batch]), names, value_column, within)
                within += table.num_rows
                if table.num_rows:
                    qid = table["qid"].combine_chunks().dictionary_encode()
                    yield pa.table({"qid": qid, "docid": table["docid"].cast(pa.string()),
                                    value_column: table[value_column]}).combine_chunks(), before
                    before += table.num_rows
        except (pa.ArrowInvalid, OSError) as exc:
            raise InputError(file, None, f"cannot be read as Parquet ({_first_line(exc)})", "rewrite the file") from None
    if before == 0:
        raise no_rows_error(path, len(files), kind)


def parquet_rows(path: Path) -> ParquetRows:
    """Where each row of a Parquet file or folder is (file and row within it), from the files' metadata."""
    import pyarrow.parquet as pq

    files = parquet_files(path)
    sizes = [pq.ParquetFile(file).metadata.num_rows for file in files]
    return ParquetRows(tuple(files), np.concatenate(([0], np.cumsum(sizes))))


def parquet_data_bytes(path: Path) -> int:
    """The uncompressed size of a Parquet file's or folder's data, from the files' metadata."""
    import pyarrow.parquet as pq

    total = 0
    for file in parquet_files(path):
        metadata = pq.ParquetFile(file).metadata
        total += sum(metadata.row_group(group).total_byte_size for group in range(metadata.num_row_groups))
    return total


def _metadata_rows(file: Path, kind: str) -> int:
    """The rows a Parquet file's metadata count; InputError if it is not Parquet."""
    import pyarrow.parquet as pq

    try:
        return pq.read_metadata(file).num_rows
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(file, None, f"cannot be read as Parquet ({_first_line(exc)})",
                         f"give a Parquet file, or the {kind} as TREC text") from None


def _open(file: Path, value_column: str, kind: str) -> tuple["pq.ParquetFile", dict[str, str]]:
    """The file opened, and the name of its qid, docid and value columns (aliases allowed); InputError
    if it is not Parquet, lacks a column or has one of a wrong type."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(file)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(file, None, f"cannot be read as Parquet ({_first_line(exc)})",
                         f"give a Parquet file, or the {kind} as TREC text") from None
    schema = parquet.schema_arrow
    names = {}
    for wanted in ("qid", "docid", value_column):
        present = [name for name in ALIASES[wanted] if name in schema.names]
        if wanted == "score" and not present and RANK in schema.names:
            present = [RANK]  # no score: ranked by the rank column, score = -rank
        if len(present) != 1:
            problem = (f"has both {' and '.join(map(repr, present))} columns" if present else
                       f"lacks a {wanted!r} column (has {', '.join(map(repr, schema.names)) or 'none'})")
            raise InputError(file, None, problem, f"give columns qid, docid and {value_column}")
        names[wanted] = present[0]
    for wanted, name in names.items():
        _check_type(file, name, schema.field(name).type, numeric=wanted == value_column)
    return parquet, names


def _checked(file: Path, table: pa.Table, names: dict[str, str], value_column: str, first_row: int) -> pa.Table:
    """qid and docid as strings, the value as float64; InputError naming the file's row (first_row
    rows of the file come before the table) of a null id or a null, NaN or infinite value."""
    values = pc.cast(table[names[value_column]], pa.float64())
    table = pa.table({"qid": _strings(table[names["qid"]]), "docid": _strings(table[names["docid"]]),
                      value_column: pc.negate(values) if names[value_column] == RANK else values})
    for name in ("qid", "docid"):
        if table[name].null_count:
            row = pc.index(pc.is_null(table[name]), True).as_py()
            raise InputError(file, None, f"row {first_row + row + 1}: {name} is null", f"give every row a {name}")
    values = table[value_column]
    finite = pc.is_finite(values.fill_null(float("nan")))
    if pc.all(finite).as_py() is False:  # None for no rows
        row = pc.index(finite, False).as_py()
        value = values[row].as_py()
        raise InputError(file, None, f"row {first_row + row + 1}: {value_column} is "
                                     f"{'null' if value is None else value} (missing, NaN or infinite)",
                         f"give every row a finite {value_column}")
    return table


def no_rows_error(path: Path, files: int, kind: str) -> InputError:
    """The error for a Parquet file or folder without a row."""
    return InputError(path, None, f"no rows in {files} Parquet file{'s' if files > 1 else ''}", f"give a {kind} with data")


def duplicate_error(rows: ParquetRows, first: int, second: int, table: pa.Table, kind: str) -> InputError:
    """The error for a (qid, docid) pair on two rows."""
    file, row = rows.where(first)
    return rows.error(second, f"duplicate {kind} entry for query {table['qid'][second].as_py()!r}, document "
                              f"{table['docid'][second].as_py()!r} (first on row {row} of {file})",
                      "keep one row per (query, document)")


def _check_type(file: Path, name: str, kind: pa.DataType, numeric: bool) -> None:
    """Ids are strings (or dictionary-encoded strings) or whole numbers; values are numbers (columns.types_wanted)."""
    wanted = types_wanted(kind, numeric)
    if wanted is not None:
        shown = kind.value_type if pa.types.is_dictionary(kind) else kind
        raise InputError(file, None, f"column {name!r} has type {shown}", f"store {name} as {wanted}")


def _strings(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """Ids as strings (columns.id_strings): dictionaries decoded, string_view and large_string cast,
    whole numbers written in decimal (as a text file holds them)."""
    return id_strings(column)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


_VALUE = {"run": "score", "qrels": "rel"}


def _read(path: Path, kind: str) -> Parsed:
    table, rows = read_parquet(path, _VALUE[kind], kind)
    return Parsed(table, lambda bad: rows.error(bad.row, bad.problem, ID_FIX),
                  lambda first, second: duplicate_error(rows, first, second, table, kind))


PARQUET = FORMATS.register(Format(
    "parquet", "Parquet", SUFFIXES, ("run", "qrels"), None, _read,
    chunks=lambda path, kind, chunk_bytes: parquet_chunks(path, _VALUE[kind], kind,
                                                          max(1, chunk_bytes // ROW_BYTES) if chunk_bytes else 1 << 19),
    structure=has_parquet_structure, folder=dataset_problem,
    row_error=lambda path, row, problem, fix: parquet_rows(path).error(row, problem, fix),
    examples=(("run", "Parquet file or folder (`.parquet`)",
               "columns `qid`, `docid` (or `docno`), `score`, or `rank` without a score"),
              ("qrels", "Parquet file or folder", "columns `qid`, `docid` (or `docno`), `rel` (or `label`)")),
))
