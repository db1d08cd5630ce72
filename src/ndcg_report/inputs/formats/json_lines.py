"""Runs and qrels as JSON lines, read in pieces of whole lines (bounded memory, streamable).

One record per line, in one of these forms (the file's first record sets it; every line must keep it):
- `flat`: one judgment or scored document: {"qid", "docid", "rel"|"score"} (also query_id/doc_id/
  relevance, BEIR's query-id/corpus-id/score, PyTerrier's docno/label);
- `retrieved` (runs): one query with its ranked list, first is best: {"qid", "retrieved": [docid, ...]},
  read as score = -rank, so no two documents tie;
- `docs` (runs): one query with scored documents: {"qid", "docs": [{"docid", "score"}, ...]};
- `grades` (qrels): one query with its grades: {"qid", "grades": {docid: grade}}.
Other keys are ignored. pyarrow's JSON reader reads a clean piece; any piece it cannot read, or that
breaks a rule, is read again line by line in Python, which names the first bad line: the Python
reading is the definition, and the fast one gives the same table where both read a piece. The fast
one reads only the keys the first record uses: a later line naming its query by another alias reads
as null there and goes to the Python reading; one giving a second alias beside the first's is read
by the first's key (the Python reading would refuse it only if that piece fell to it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.errors import InputError
from ndcg_report.files import is_gzip, open_maybe_gzip
from ndcg_report.inputs.access.read_bounds import ReadBound
from ndcg_report.inputs.columns import as_numpy, from_numpy, strings
from ndcg_report.inputs.records import (
    DOCID_KEYS, QID_KEYS, VALUE_KEYS, RecordProblem, identifier, json_value, key_hint, kind_of, number, one_key,
)
from ndcg_report.inputs.access.text_files import (
    GZIP_ERRORS, MAX_LINE, PREFIX_BYTES, check_encoding, check_first_line, line_pieces, line_too_long, read_prefix,
)
from ndcg_report.inputs.formats.registry import FORMATS, Format, parsed_by_lines

PIECE_BYTES = 16 << 20  # TREC text whose rows are parsed at a time
ROW_BYTES = 40  # of a TREC run line: pieces hold PIECE_BYTES / ROW_BYTES rows
MAX_PIECE = 64 << 20
LOOKUP_BYTES = 1 << 20  # of a piece read again to find a row's line
_BOM = b"\xef\xbb\xbf"
SUFFIXES = (".jsonl", ".ndjson", ".jsonlines")
RECORD_KEYS = (*QID_KEYS, "_id")  # a JSON-lines record names its query by one of these
FORMS = {"run": ("flat", "retrieved", "docs"), "qrels": ("flat", "grades")}
_LIST_KEYS = {"retrieved": "retrieved", "docs": "docs", "grades": "grades"}
_QID_TYPE = pa.dictionary(pa.int32(), pa.string())
_LARGE_STRINGS = 1 << 31


def _schema(kind: str, form: str, record: dict) -> pa.Schema:
    """What pyarrow's JSON reader is told to read: the fields the file's first record uses (a line
    that names its ids by other keys reads as nulls there and goes to the Python reading; every
    field asked for halves pyarrow's speed). Ids as strings: a number there sends the piece to the
    Python reading, which takes whole numbers."""
    fields = [pa.field(key, pa.string()) for key in QID_KEYS if key in record]
    if form == "flat":
        fields += [pa.field(key, pa.string()) for key in DOCID_KEYS if key in record]
        fields += [pa.field(key, pa.float64()) for key in VALUE_KEYS[kind] if key in record]
    elif form == "retrieved":
        fields.append(pa.field("retrieved", pa.list_(pa.string())))
    elif form == "docs":
        first = next((item for item in record["docs"] if isinstance(item, dict)), {})
        doc = [pa.field(key, pa.string()) for key in DOCID_KEYS if key in first] + [pa.field("score", pa.float64())]
        fields.append(pa.field("docs", pa.list_(pa.struct(doc))))
    return pa.schema(fields)


@dataclass
class _Reading:
    """What the pieces of one file share: its form (set by the first record) and the queries met so far
    with their lines (a query may have only one line in the per-query forms)."""

    path: Path
    kind: str
    form: str = ""
    form_line: int = 0
    schema: pa.Schema | None = None  # set from the first record
    queries: dict[str, int] = field(default_factory=dict)


def read_json_lines(path: Path, kind: str) -> tuple[pa.Table, Callable[[int], int]]:
    """A JSON-lines run or qrels as one table (qid dictionary, docid, score or rel) and a map from row
    to line; InputError naming the first bad line. A gzip file's pieces are fed to a ReadBound as they are
    read (as a gzip TREC run's): a bomb is refused at its first repeated line, or once its text would not fit
    in half the memory, not after it is decompressed."""
    fix = f"give a smaller {kind} file" + (", or evaluate it with `eval --stream`" if kind == "run" else "")
    bound = ReadBound(path, kind, lambda row, problem, fix: InputError(path, json_lines_line_of_row(path, kind, row),
                                                                        problem, fix),
                      max_query_lines=None, too_large_fix=fix) if is_gzip(path) else None
    tables = [table for table, _ in json_lines_chunks(path, kind, bound=bound)]
    table = pa.concat_tables(tables).unify_dictionaries()
    if sum(chunk.nbytes for chunk in table["docid"].chunks) >= _LARGE_STRINGS:
        table = table.set_column(1, "docid", table["docid"].cast(pa.large_string()))
    return table.combine_chunks(), lambda row: json_lines_line_of_row(path, kind, row)


def json_lines_chunks(path: Path, kind: str, piece_bytes: int | None = None,
                      bound: ReadBound | None = None) -> Iterator[tuple[pa.Table, int]]:
    """(table of a piece's rows, rows before it), every check made; an empty file is an InputError.
    Repeated (query, document) pairs are the caller's (a bound, given, counts the text and checks the rows
    of each piece as it is read: inputs.access.read_bounds). A piece holds about as many rows as
    piece_bytes of TREC text would (ROW_BYTES a row): a ranked list of ids is denser than TREC text,
    and a streamed block's memory follows its rows, not its bytes."""
    reading = _Reading(path, kind)
    _first_check(reading)
    target_rows = max(1, (piece_bytes or PIECE_BYTES) // ROW_BYTES)
    size = min(piece_bytes or PIECE_BYTES, 1 << 20)  # the first piece measures the bytes of a row
    rows = 0
    try:
        with open_maybe_gzip(path) as handle:
            for piece, lines_before in line_pieces(handle, lambda: size):
                if len(piece) > MAX_LINE and b"\n" not in piece[-MAX_LINE - 1:]:
                    raise line_too_long(path, lines_before + piece.count(b"\n") + 1)
                if bound is not None:
                    bound.text(len(piece), lines_before)
                table = _fast(piece, reading, lines_before) if reading.form != "grades" else None
                if table is None:
                    table, _ = _slow(piece, reading, lines_before)
                if table.num_rows:
                    if bound is not None:
                        bound.rows(table, rows)
                    yield table, rows
                    rows += table.num_rows
                    size = int(min(max(len(piece) / table.num_rows * target_rows, 1 << 16), MAX_PIECE))
    except GZIP_ERRORS as exc:
        raise InputError(path, None, f"corrupt gzip file ({exc})", "re-compress it or give the plain file") from None
    if rows == 0:
        raise InputError(path, None, f"empty {kind} file (no judgments or documents)", f"give {_example(kind)}")


def json_lines_line_of_row(path: Path, kind: str, row: int) -> int:
    """The line of a JSON-lines file holding data row `row` (0-based), read again in pieces of LOOKUP_BYTES
    (each parsed record by record: a bad line early in a large file is found at once)."""
    reading = _Reading(path, kind)
    _first_check(reading)
    before = 0
    with open_maybe_gzip(path) as handle:
        for piece, lines_before in line_pieces(handle, LOOKUP_BYTES):
            _, per_line = _slow(piece, reading, lines_before)
            for line, count in per_line:
                if before + count > row:
                    return line
                before += count
    raise AssertionError(f"row {row} not in {path}")


def _example(kind: str) -> str:
    return ('one {"qid": ..., "docid": ..., "score": ...} or {"qid": ..., "retrieved": [docid, ...]} per line'
            if kind == "run" else 'one {"qid": ..., "docid": ..., "rel": ...} or {"qid": ..., "grades": {docid: grade}} '
                                  "per line")


def _first_check(reading: _Reading) -> None:
    """The first MiB checked before anything else (encoding, an overlong first line), and the form set
    from the first record; InputError for a bad first record."""
    prefix = read_prefix(reading.path, PREFIX_BYTES)
    check_first_line(reading.path, prefix, "JSON-lines")
    check_encoding(reading.path, prefix)
    lines = prefix.split(b"\n")
    whole = lines if len(prefix) < PREFIX_BYTES else lines[:-1]  # the last may be cut by the prefix's end
    for number_, raw in enumerate(whole, start=1):
        if raw.strip():
            _slow(raw + b"\n", reading, number_ - 1)  # sets the form; raises for a bad record
            reading.queries.clear()
            return


# --- the fast reading: pyarrow ---------------------------------------------------------------


def _fast(piece: bytes, reading: _Reading, lines_before: int) -> pa.Table | None:
    """The piece's table read by pyarrow, or None where the Python reading must decide (anything
    unusual: blank lines, numbers as ids, nulls, repeated keys, a rule broken)."""
    import pyarrow.json as pajson

    start = 3 if lines_before == 0 and piece.startswith(_BOM) else 0
    lines = piece.count(b"\n") + (not piece.endswith(b"\n"))  # pyarrow skips blank lines: rows != lines then
    block = 4 << 20
    while True:
        try:
            table = pajson.read_json(
                pa.BufferReader(piece[start:] if start else piece),
                read_options=pajson.ReadOptions(block_size=block),
                parse_options=pajson.ParseOptions(explicit_schema=reading.schema,
                                                  unexpected_field_behavior="ignore", newlines_in_values=False),
            )
            break
        except pa.ArrowInvalid as exc:
            if "straddl" not in str(exc) or block > len(piece):
                return None
            block = len(piece) + 1
    if table.num_rows != lines:
        return None  # two objects on a line, or an array: the Python reading names it
    qids = _one_of(table, QID_KEYS)
    if qids is None:
        return None
    form = reading.form
    others = [name for name in ("retrieved", "docs") if name in table.column_names and name != form]
    if any(table[name].null_count != table.num_rows for name in others):
        return None
    if form == "flat":
        docids, values = _one_of(table, DOCID_KEYS), _one_of(table, VALUE_KEYS[reading.kind])
        if docids is None or values is None:
            return None
        row_qids = qids
    else:
        if not _all_null(table, DOCID_KEYS + VALUE_KEYS[reading.kind]):
            return None
        lists = table[form].combine_chunks()
        if lists.null_count:
            return None
        parents = pc.list_parent_indices(lists)
        items = lists.flatten()
        if form == "retrieved":
            docids = items
            offsets = as_numpy(lists.offsets).astype(np.int64)
            positions = np.arange(len(items), dtype=np.int64) + offsets[0] - offsets[as_numpy(parents)]
            values = from_numpy(-(positions + 1).astype(np.float64))
        else:
            if items.null_count:
                return None
            fields = pa.table(dict(zip([field.name for field in items.type], items.flatten())))
            docids, values = _one_of(fields, DOCID_KEYS), fields["score"].combine_chunks()
            if docids is None or values.null_count:
                return None
        row_qids = qids.take(parents)
        names = qids.to_pylist()
        if len(set(names)) != len(names) or any(name in reading.queries for name in names):
            return None
    if len(docids) and (docids.null_count or pc.min(pc.binary_length(docids)).as_py() == 0):
        return None
    if len(values) and (values.null_count or not pc.all(pc.is_finite(values)).as_py()):
        return None
    if form != "flat":  # every line is a record here: query i is on the piece's line i
        reading.queries.update(zip(names, range(lines_before + 1, lines_before + 1 + len(names))))
    return _table(row_qids, docids, values, reading.kind)


def _one_of(table: pa.Table, keys: tuple[str, ...]) -> pa.Array | None:
    """The column under whichever of `keys` each row has, or None unless every row has exactly one,
    not null and not empty."""
    present = [table[key].combine_chunks() for key in keys if key in table.column_names
               and table[key].null_count != table.num_rows]
    if len(present) != 1 or present[0].null_count:
        return None
    column = present[0]
    if pa.types.is_string(column.type) and len(column) and pc.min(pc.binary_length(column)).as_py() == 0:
        return None
    return column


def _all_null(table: pa.Table, keys: tuple[str, ...]) -> bool:
    return all(table[key].null_count == table.num_rows for key in keys if key in table.column_names)


def _table(qids: pa.Array, docids: pa.Array, values: pa.Array, kind: str) -> pa.Table:
    value_name = "score" if kind == "run" else "rel"
    return pa.table({"qid": qids.cast(pa.string()).dictionary_encode(), "docid": docids.cast(pa.string()),
                     value_name: values.cast(pa.float64())})


# --- the defining reading: Python, line by line ------------------------------------------------


def _slow(piece: bytes, reading: _Reading, lines_before: int) -> tuple[pa.Table, list[tuple[int, int]]]:
    """The piece read line by line: its table and (line, rows) of each record; InputError naming the
    first bad line."""
    qids: list[str] = []
    docids: list[str] = []
    values: list[float] = []
    per_line: list[tuple[int, int]] = []
    path = reading.path
    for offset, raw in enumerate(piece.split(b"\n")):
        line = lines_before + offset + 1
        if line == 1 and raw.startswith(_BOM):
            raw = raw[3:]
        if not raw.strip():
            continue
        if len(raw) > MAX_LINE:
            raise line_too_long(path, line)
        if b"\x00" in raw:
            raise InputError(path, line, "NUL byte: not UTF-8 text", "re-save it as UTF-8 text")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(path, line, "not valid UTF-8 text", "re-save the file as UTF-8") from None
        try:
            record = json_value(text)
        except json.JSONDecodeError as exc:
            what = "more than one JSON value on the line" if exc.msg == "Extra data" else exc.msg
            raise InputError(path, line, f"not valid JSON ({what} at column {exc.colno})",
                             f"give {_example(reading.kind)}") from None
        except RecordProblem as exc:
            raise InputError(path, line, exc.problem, exc.fix) from None
        try:
            count = _record(record, reading, line, qids, docids, values)
        except RecordProblem as exc:
            raise InputError(path, line, exc.problem, exc.fix) from None
        per_line.append((line, count))
    value_column = from_numpy(np.array(values, dtype=np.float64))
    return _table(strings(qids), strings(docids), value_column, reading.kind), per_line


def _record(record: object, reading: _Reading, line: int, qids: list, docids: list, values: list) -> int:
    """Append one record's rows; return how many. RecordProblem if it breaks a rule."""
    if not isinstance(record, dict):
        raise RecordProblem(f"a JSON {_json_kind(record)} where an object {{...}} belongs", f"give {_example(reading.kind)}")
    form = _form(record, reading.kind)
    if not reading.form:
        reading.form, reading.form_line = form, line
        reading.schema = _schema(reading.kind, form, record)
    elif form != reading.form:
        raise RecordProblem(f"a record of the {form!r} form, but line {reading.form_line} is of the "
                            f"{reading.form!r} form", "give every line in one form")
    kind = reading.kind
    groups = _KEY_GROUPS[kind][form]
    qid = identifier(one_key(record, QID_KEYS, "query id", groups), "qid")
    if form == "flat":
        qids.append(qid)
        docids.append(identifier(one_key(record, DOCID_KEYS, "document id", groups), "docid"))
        values.append(number(one_key(record, VALUE_KEYS[kind], "score" if kind == "run" else "relevance label", groups),
                             kind))
        return 1
    if qid in reading.queries:
        raise RecordProblem(f"query {qid!r} was already given on line {reading.queries[qid]}",
                            "give each query on one line")
    reading.queries[qid] = line
    items = record[_LIST_KEYS[form]]
    before = len(docids)
    if form == "grades":
        if not isinstance(items, dict):
            raise RecordProblem(f"'grades' is {kind_of(items)}, where an object {{docid: grade}} belongs",
                                "give the grades as an object of document ids and grades")
        for docid, grade in items.items():
            docids.append(identifier(docid, "docid"))
            try:
                values.append(number(grade, kind))
            except RecordProblem as exc:
                raise RecordProblem(f"document {docid!r}: {exc.problem}", exc.fix) from None
    else:
        if not isinstance(items, list):
            raise RecordProblem(f"{form!r} is {kind_of(items)}, where a list belongs",
                                "give the documents as a list, best first" if form == "retrieved"
                                else 'give "docs" as a list of {"docid": ..., "score": ...} objects')
        for position, item in enumerate(items, start=1):
            if form == "retrieved":
                docids.append(_item(identifier, item, position, "docid"))
                values.append(-float(position))
            else:
                if not isinstance(item, dict):
                    raise RecordProblem(f"'docs' item {position} is {kind_of(item)}, where an object belongs",
                                        'give each document as {"docid": ..., "score": ...}')
                docids.append(_item(identifier, one_key(item, DOCID_KEYS, "document id", _DOC_KEYS), position, "docid"))
                values.append(_item(lambda value, _: number(value, "run"), item.get("score", _MISSING), position,
                                    "score", key_hint(item, _DOC_KEYS)))
    qids.extend([qid] * (len(docids) - before))
    return len(docids) - before


_MISSING = object()
_LISTS = ("retrieved", "docs", "grades")
_KEY_GROUPS = {  # the keys a record may have, by role, in each form: a missing one's hint names them
    "run": {"flat": (QID_KEYS, DOCID_KEYS, VALUE_KEYS["run"], _LISTS[:2]), "retrieved": (QID_KEYS, _LISTS[:2]),
            "docs": (QID_KEYS, _LISTS[:2])},
    "qrels": {"flat": (QID_KEYS, DOCID_KEYS, VALUE_KEYS["qrels"], _LISTS[2:]), "grades": (QID_KEYS, _LISTS[2:])},
}
_DOC_KEYS = (DOCID_KEYS, ("score",))  # of an item of a run's "docs" list


def _item(convert: Callable, value: object, position: int, name: str, hint: str | None = None):
    """An item of a query's list converted, its position named in a problem (hint: a fix naming a
    key close to the missing one)."""
    if value is _MISSING:
        raise RecordProblem(f"document {position} of the list has no {name}", hint or f"give every document a {name}")
    try:
        return convert(value, name)
    except RecordProblem as exc:
        raise RecordProblem(f"document {position} of the list: {exc.problem}", exc.fix) from None


def _form(record: dict, kind: str) -> str:
    lists = [key for key in ("retrieved", "docs", "grades") if key in record]
    allowed = FORMS[kind]
    if len(lists) > 1:
        raise RecordProblem(f"has both {' and '.join(map(repr, lists))}", "give one list of documents per line")
    if lists and lists[0] not in allowed:
        wanted = "'retrieved' or 'docs'" if kind == "run" else "'grades'"
        raise RecordProblem(f"has {lists[0]!r}, which a {kind} does not take", f"give {wanted}, or one document per line")
    return lists[0] if lists else "flat"


def _json_kind(value: object) -> str:
    return {list: "list", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


def looks_like_json_lines(prefix: bytes) -> bool:
    """True if the first line is a whole JSON object naming its query (qid, query_id, query-id or _id)."""
    line = prefix.lstrip(_BOM + b" \t\r\n").split(b"\n", 1)[0]
    try:
        value = json_value(line, check_keys=False)
    except ValueError:
        return False
    return isinstance(value, dict) and any(key in value for key in RECORD_KEYS)


JSON_LINES = FORMATS.register(Format(
    "jsonl", "JSON lines", SUFFIXES, ("run", "qrels"), looks_like_json_lines,
    lambda path, kind: parsed_by_lines(path, kind, *read_json_lines(path, kind)),
    chunks=json_lines_chunks, line_of_row=json_lines_line_of_row,
    opens="{[", expected="JSON lines (one {...} object per line)",
    examples=(("run", "JSON lines (`.jsonl`, `.ndjson`), a ranked list per query", '`{"qid": "q1", "retrieved": ["d7", "d3"]}`'),
              ("run", "JSON lines, scored documents per query", '`{"qid": "q1", "docs": [{"docid": "d7", "score": 14.2}]}`'),
              ("run", "JSON lines, one scored document per line", '`{"qid": "q1", "docid": "d7", "score": 14.2}`'),
              ("qrels", "JSON lines, one judgment per line", '`{"qid": "q1", "docid": "d7", "rel": 2}` (or '
               '`query_id`/`doc_id`/`relevance`, `query-id`/`corpus-id`/`score`)'),
              ("qrels", "JSON lines, one query per line", '`{"qid": "q1", "grades": {"d7": 2, "d3": 0}}`')),
))
