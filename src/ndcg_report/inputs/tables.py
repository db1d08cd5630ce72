"""Runs and qrels in any form the API takes, as the checked Run and Qrels the readers make.

A path (read and checked), what read_run / read_qrels returned, a pyarrow Table or a pandas
DataFrame (ir_datasets' and ir_measures' `query_id`, `doc_id` and `relevance`, PyTerrier's `docno`
and `label` column names too; a run with a `rank` column and no `score` is ordered by it, as JSON
lines and Parquet are), or what pytrec_eval, ranx and ir_measures take (inputs.formats.python_data:
{qid: {docid: value}}, {qid: [docid, ...]}, a ranx Run/Qrels, a list of namedtuples).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.errors import ParameterError
from ndcg_report.inputs.columns import id_strings, types_wanted
from ndcg_report.inputs.duplicates import index_pairs
from ndcg_report.inputs.ids import ID_FIX, refuse_bad_ids
from ndcg_report.inputs.labels import refuse_labels_out_of_range
from ndcg_report.inputs.formats.python_data import python_table, python_tag
from ndcg_report.inputs.reading import Qrels, Run, read_qrels, read_run
from ndcg_report.inputs.records import DOCID_KEYS, QID_KEYS

if TYPE_CHECKING:
    import pandas as pd

RunLike = Union[str, Path, Run, pa.Table, "pd.DataFrame", Mapping]
QrelsLike = Union[str, Path, Qrels, pa.Table, "pd.DataFrame", Mapping]
COLUMNS = {  # each column's accepted names, as JSON-lines records take them (inputs.records)
    "qid": QID_KEYS, "docid": DOCID_KEYS, "score": ("score",), "rel": ("rel", "relevance", "label"),
}
RANK = "rank"  # a run table without a score column is ordered by it: score = -rank (1 is best)


def load_run(data: RunLike) -> Run:
    """A checked, indexed Run from a path, a Run, a table with qid, docid (or docno) and score, or a
    run held in Python (inputs.formats.python_data)."""
    if isinstance(data, Run):
        return data
    if isinstance(data, (str, Path)):
        return read_run(data)
    table = python_table(data, "run")
    if table is not None:
        return Run(path="", table=table, tag=python_tag(data), pairs=_index(table, "run"))
    table = normalise_table(data, "score", "run")
    return Run(path="", table=table, tag="", pairs=_index(table, "run"))


def load_qrels(data: QrelsLike) -> Qrels:
    """Checked, indexed Qrels from a path, a Qrels, a table with qid, docid (or docno) and rel (or
    label), or qrels held in Python (inputs.formats.python_data); every label in inputs.labels' range."""
    if isinstance(data, Qrels):
        return data
    if isinstance(data, (str, Path)):
        return read_qrels(data)
    table = python_table(data, "qrels")
    if table is None:
        table = normalise_table(data, "rel", "qrels")
    refuse_labels_out_of_range(table, lambda row, problem, fix: ParameterError(
        f"the qrels table's row {row} (query {table['qid'][row].as_py()!r}, document "
        f"{table['docid'][row].as_py()!r}): {problem}; {fix}"))
    return Qrels(path="", table=table, pairs=_index(table, "qrels"))


def normalise_table(data: "pa.Table | pd.DataFrame", value_column: str, kind: str) -> pa.Table:
    """qid as a dictionary of strings (only the values present), docid one chunk of strings, the
    value float64 (a run without a score column: -rank); ParameterError for a missing column, a column
    of a type it may not have (columns.types_wanted), a null id or a NaN or infinite value."""
    if not isinstance(data, pa.Table) and not hasattr(data, "columns"):
        raise ParameterError(f"a {kind} must be a path, a pyarrow Table, a pandas DataFrame or a dict "
                             f"{{qid: {{docid: {value_column}}}}}; got {type(data).__name__}")
    names = list(data.column_names) if isinstance(data, pa.Table) else [str(c) for c in data.columns]
    if (data.num_rows if isinstance(data, pa.Table) else len(data)) == 0:
        raise ParameterError(f"the {kind} table is empty; give at least one row")
    columns = {}
    for wanted in ("qid", "docid", value_column):
        present = [name for name in COLUMNS[wanted] if name in names]
        if wanted == "score" and not present and RANK in names:
            present = [RANK]  # no score: ordered by the rank column, score = -rank
        if len(present) > 1:
            raise ParameterError(f"the {kind} table has both {' and '.join(repr(n) for n in present)} columns; "
                                 "keep one of them")
        if not present:
            accepted = ", ".join(" or ".join(COLUMNS[name]) for name in ("qid", "docid", value_column))
            raise ParameterError(
                f"the {kind} table lacks a {wanted!r} column (has {', '.join(names) or 'none'}); give columns "
                f"{accepted}" + (f" (or {RANK}, without a score: ordered by it)" if value_column == "score" else "")
            )
        columns[wanted] = present[0]
    ranked = columns.get("score") == RANK
    if isinstance(data, pa.Table):
        for wanted, name in columns.items():
            accepted = types_wanted(data.schema.field(name).type, wanted == value_column)
            if accepted is not None:
                raise _type_error(kind, name, data.schema.field(name).type, accepted)
    else:
        data = pa.table({
            "qid": _pandas_strings(data[columns["qid"]]),
            "docid": _pandas_strings(data[columns["docid"]]),
            value_column: _pandas_numbers(data[columns[value_column]], kind, columns[value_column]),
        })
        columns = {name: name for name in columns}
    for name in ("qid", "docid"):
        nulls = data[columns[name]].null_count
        if nulls:
            row = _first_null_row(data[columns[name]])
            raise ParameterError(f"the {kind} table has no {name} on row {row}; give every row a {name}")
    try:
        values = pc.cast(data[columns[value_column]].combine_chunks(), pa.float64(), safe=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise ParameterError(f"the {kind} table's {columns[value_column]} column is not numeric; give numbers") from None
    finite = pc.is_finite(values.fill_null(float("nan")))
    shown = RANK if ranked else value_column
    if not pc.all(finite).as_py():
        row = pc.index(finite, False).as_py()
        raise ParameterError(f"the {kind} table's {shown} on row {row} is {values[row].as_py()} "
                             f"(missing, NaN or infinite); give every row a finite {shown}")
    if ranked:
        values = pc.negate(values)
    return pa.table({
        "qid": _as_strings(data[columns["qid"]]).dictionary_encode(),
        "docid": _as_strings(data[columns["docid"]]),
        value_column: values,
    })


def _index(table: pa.Table, kind: str):
    """The pair index of a normalised table; ParameterError if an id holds a control character
    (inputs.ids) or it repeats a (qid, docid)."""
    refuse_bad_ids(table, lambda bad: ParameterError(f"the {kind} table's row {bad.row}: {bad.problem}; {ID_FIX}"))
    pairs, found = index_pairs(table)
    if found is not None:
        raise ParameterError(
            f"the {kind} table repeats query {table['qid'][found[1]].as_py()!r}, "
            f"document {table['docid'][found[1]].as_py()!r} (rows {found[0]} and {found[1]}); "
            "keep one row per (query, document)"
        )
    return pairs


def _pandas_strings(column: "pd.Series") -> pa.Array:
    """A pandas column as Arrow strings; nulls stay null (reported by the caller with their row)."""
    missing = column.isna().to_numpy()
    values = column.astype(str).to_numpy(dtype=object)
    return pa.array(values, pa.string(), mask=missing)


def _type_error(kind: str, name: str, found: object, accepted: str) -> ParameterError:
    """The error for a column of a type it may not have (columns.types_wanted: `accepted`)."""
    return ParameterError(f"the {kind} table's {name} column has type {found}; give {name} as {accepted}")


def _pandas_numbers(column: "pd.Series", kind: str, name: str) -> pa.Array:
    """A pandas column of numbers as float64; ParameterError for one of booleans, dates or durations
    (which would convert to numbers silently) or of values that are not numbers."""
    if getattr(column.dtype, "kind", "O") in "bmM":
        raise _type_error(kind, name, column.dtype, "numbers")
    try:
        return pa.array(column.to_numpy(dtype=np.float64, na_value=np.nan), pa.float64())
    except (TypeError, ValueError):
        raise ParameterError(f"the {kind} table's {name} column is not numeric; give numbers") from None


def _first_null_row(column: pa.ChunkedArray) -> int:
    return pc.index(pc.is_null(column.combine_chunks()), True).as_py()


def _as_strings(column: pa.ChunkedArray) -> pa.Array:
    """One chunk of strings (large_string past 2 GiB) from a column of strings of any layout,
    dictionary-encoded strings or numbers (columns.id_strings)."""
    column = id_strings(column)
    try:
        return column.combine_chunks()
    except (pa.ArrowInvalid, pa.ArrowCapacityError):  # the chunks together exceed 2 GiB of text
        return column.cast(pa.large_string()).combine_chunks()
