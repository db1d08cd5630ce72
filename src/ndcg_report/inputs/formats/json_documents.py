"""Runs and qrels as one JSON document, as pytrec_eval and ranx dicts are saved.

{qid: {docid: value}} (a run also {qid: [docid, ...]}, ranked, best first). The text is held whole
(at most MAX_DOCUMENT bytes, measured before it is held) and decoded a query at a time, so the Python
objects of at most BATCH_ROWS documents exist at once; a problem names the line of the query or
document at fault.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NoReturn

import pyarrow as pa

from ndcg_report.errors import InputError
from ndcg_report.files import open_maybe_gzip
from ndcg_report.inputs.mappings import SHAPE, mapping_table
from ndcg_report.inputs.records import RecordProblem, RepeatedKey, json_value, no_repeated_keys, shown
from ndcg_report.inputs.access.text_files import GZIP_ERRORS, check_encoding, read_prefix
from ndcg_report.inputs.formats.registry import FORMATS, Format, Parsed, parsed_by_lines

# Text of a JSON document read at most (a pytrec_eval dict of MS MARCO dev, 7M documents, is about
# 145 MB with 7-digit docids); larger ones go as JSON lines. Decoded a query at a time, the peak is
# about 5.5 times the text: 145 MB took 0.80 GB, so 176 MiB stays under 1 GB (256 MiB took 1.35 GB).
MAX_DOCUMENT = 176 << 20
BATCH_ROWS = 1 << 20  # documents decoded into Python objects before they are made into a table
_PIECE = 1 << 20
_SPACE = re.compile(r"[ \t\n\r]*")


def read_json_document(path: Path, kind: str, batch_rows: int = BATCH_ROWS) -> tuple[
        pa.Table, Callable[[int], int | None], Callable[[int, str], int | None]]:
    """A JSON run or qrels document as a table (qid dictionary, docid, score or rel), a map from row
    to the line of its document and one from (row, 'qid' or 'docid') to the line of that id (None
    where not found); InputError naming the bad line.
    batch_rows: documents decoded before they are made into a table (memory, not the result)."""
    text = _text(path, kind)

    def fail(problem: str, fix: str, qid: str | None, docid: str | None) -> NoReturn:
        where = "".join(part for part in (f"query {qid!r}" if qid is not None else "",
                                          f", document {docid!r}" if docid is not None else "") if part)
        raise InputError(path, locate(text, qid, docid), f"{where}: {problem}" if where else problem, fix)

    try:
        parts = [mapping_table(batch, kind, fail, empty_ok=True) for batch in _query_batches(text, batch_rows)]
        if not parts:  # not an object: read to say what it is (a list an item at a time, holding none)
            parts.append(mapping_table(_checked_list(text) if text.lstrip().startswith("[") else json_value(text),
                                       kind, fail))
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            raise InputError(path, exc.lineno, "more than one JSON value (JSON lines?)",
                             f"name a JSON-lines file .jsonl, or give one object {SHAPE[kind]}") from None
        raise InputError(path, exc.lineno, f"not valid JSON ({exc.msg} at column {exc.colno})",
                         f"give one object {SHAPE[kind]}") from None
    except _QueryProblem as exc:
        line = repeated_key_line(text, exc.problem.key) if isinstance(exc.problem, RepeatedKey) else None
        raise InputError(path, line or text.count("\n", 0, exc.at) + 1, exc.problem.problem, exc.problem.fix) from None
    except RecordProblem as exc:
        line = repeated_key_line(text, exc.key) if isinstance(exc, RepeatedKey) else None
        raise InputError(path, line, exc.problem, exc.fix) from None
    if not any(part.num_rows for part in parts):
        mapping_table({}, kind, fail)  # the error for no documents
    table = pa.concat_tables(parts).unify_dictionaries().combine_chunks()

    def line_of_row(row: int) -> int | None:
        return locate(text, table["qid"][row].as_py(), table["docid"][row].as_py())

    def line_of_id(row: int, column: str) -> int | None:
        return locate(text, table["qid"][row].as_py(), table["docid"][row].as_py() if column == "docid" else None)

    return table, line_of_row, line_of_id


class _QueryProblem(Exception):
    """A RecordProblem (a key given twice) in the query whose key starts at `at` of the text."""

    def __init__(self, at: int, problem: RecordProblem) -> None:
        super().__init__(problem.problem)
        self.at, self.problem = at, problem


def _query_batches(text: str, batch_rows: int) -> Iterator[dict[str, object]]:
    """{qid: its value} of the top-level object's queries, a batch each time they hold about
    batch_rows documents (the last may hold none); nothing if the text is not an object.
    json.JSONDecodeError as json.loads raises it; _QueryProblem for a key given twice."""
    decoder = json.JSONDecoder(object_pairs_hook=no_repeated_keys)
    at = _SPACE.match(text).end()
    if not text.startswith("{", at):
        return
    at = _SPACE.match(text, at + 1).end()
    batch: dict[str, object] = {}
    seen: set[str] = set()
    rows = 0
    closed = text.startswith("}", at)
    if closed:
        at = _SPACE.match(text, at + 1).end()
    while not closed:
        start = at
        if not text.startswith('"', at):
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, at)
        qid, at = _decoded(decoder, text, start)
        at = _SPACE.match(text, at).end()
        if not text.startswith(":", at):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, at)
        at = _SPACE.match(text, at + 1).end()
        try:
            if qid in seen:
                raise RecordProblem(f"key {shown(qid)} given twice in one object", "give each key once")
            value, at = _decoded(decoder, text, at)
        except RecordProblem as exc:
            raise _QueryProblem(start, exc) from None
        seen.add(qid)
        batch[qid] = value
        rows += len(value) if isinstance(value, (dict, list)) else 1
        at = _SPACE.match(text, at).end()
        closed = text.startswith("}", at)
        if not closed and not text.startswith(",", at):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
        at = _SPACE.match(text, at + 1).end()
        if rows >= batch_rows:
            yield batch
            batch, rows = {}, 0
    if at < len(text):
        raise json.JSONDecodeError("Extra data", text, at)
    yield batch  # the rest (empty for `{}`, or when the last batch was full)


def _checked_list(text: str) -> list:
    """[] for a text that is one valid JSON list, read an item at a time (none held); else the
    json.JSONDecodeError json.loads raises."""
    decoder = json.JSONDecoder(object_pairs_hook=no_repeated_keys)
    at = _SPACE.match(text, text.index("[") + 1).end()
    closed = text.startswith("]", at)
    if closed:
        at = _SPACE.match(text, at + 1).end()
    while not closed:
        _, at = _decoded(decoder, text, at)
        at = _SPACE.match(text, at).end()
        closed = text.startswith("]", at)
        if not closed and not text.startswith(",", at):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
        at = _SPACE.match(text, at + 1).end()
    if at < len(text):
        raise json.JSONDecodeError("Extra data", text, at)
    return []


def _decoded(decoder: json.JSONDecoder, text: str, at: int) -> tuple[object, int]:
    """(the JSON value at text[at:], where it ends); a value nested past the recursion limit or an
    integer of more digits than Python converts is a json.JSONDecodeError (as records.json_value)."""
    try:
        return decoder.raw_decode(text, at)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", "", 0) from None
    except (json.JSONDecodeError, RecordProblem):
        raise
    except ValueError:
        raise json.JSONDecodeError(f"a number of more than {sys.get_int_max_str_digits():,} digits", "", 0) from None


def _text(path: Path, kind: str) -> str:
    """The document's text, after checking (in pieces, holding none) that it is at most MAX_DOCUMENT
    bytes; InputError for a larger one, binary or non-UTF-8 text."""
    prefix = read_prefix(path)
    check_encoding(path, prefix)
    size = 0
    try:
        with open_maybe_gzip(path) as handle:
            while piece := handle.read(_PIECE):
                size += len(piece)
                if size > MAX_DOCUMENT:
                    raise InputError(path, None, f"a JSON document larger than {MAX_DOCUMENT >> 20} MiB",
                                     "give it as JSON lines (.jsonl, one query per line), which are read in pieces")
            handle.seek(0)
            data = handle.read()
    except GZIP_ERRORS as exc:
        raise InputError(path, None, f"corrupt gzip file ({exc})", "re-compress it or give the plain file") from None
    check_encoding(path, data)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, data.count(b"\n", 0, exc.start) + 1, "not valid UTF-8 text",
                         "re-save the file as UTF-8") from None


def locate(text: str, qid: str | None, docid: str | None) -> int | None:
    """The line of the document's first `"qid":` key, or of the docid's first mention after it; None
    if the ids are written with other escapes than json writes (either with or without ensure_ascii)."""
    if qid is None:
        return None
    for ascii_only in (False, True):
        found = re.search(re.escape(json.dumps(qid, ensure_ascii=ascii_only)) + r"\s*:", text)
        if found is not None:
            break
    else:
        return None
    at = found.start()
    if docid is not None:
        mentions = [position for position in (text.find(json.dumps(docid, ensure_ascii=ascii_only), found.end())
                                              for ascii_only in (False, True)) if position >= 0]
        at = min(mentions, default=at)
    return text.count("\n", 0, at) + 1


def repeated_key_line(text: str, key: str) -> int | None:
    """The line of the second `key` of the first object that repeats it, or None if not found. json's
    C scanner reads every value; only the objects whose text mentions the key are walked key by key."""
    try:
        at = _repeated_key_at(text, key, _SPACE.match(text, 0).end())
    except (ValueError, IndexError, RecursionError):  # valid JSON: only a nest past the recursion limit; then no line
        return None
    return None if at is None else text.count("\n", 0, at) + 1


_SCAN = json.JSONDecoder().scan_once  # values as they are: no hook, so no repeated key is refused while walking


def _repeated_key_at(text: str, key: str, start: int) -> int | None:
    """Where the object at text[start] ('{'; else None) or an object inside it first repeats `key`."""
    if text[start] != "{":
        return None
    seen: set[str] = set()
    at = _SPACE.match(text, start + 1).end()
    while text[at] == '"':
        name, end = json.decoder.scanstring(text, at + 1)
        if name == key and name in seen:
            return at
        seen.add(name)
        value = _SPACE.match(text, _SPACE.match(text, end).end() + 1).end()  # past the ':'
        end = _SCAN(text, value)[1]
        if text[value] == "{" and _mentions(text, key, value, end):
            inner = _repeated_key_at(text, key, value)
            if inner is not None:
                return inner
        at = _SPACE.match(text, end).end()
        if text[at] != ",":
            return None
        at = _SPACE.match(text, at + 1).end()
    return None


def _mentions(text: str, key: str, start: int, end: int) -> bool:
    """Whether text[start:end] holds `key` as json writes it (with or without ensure_ascii)."""
    return any(text.find(json.dumps(key, ensure_ascii=ascii_only)[1:-1], start, end) >= 0 for ascii_only in (False, True))


def _read(path: Path, kind: str) -> Parsed:
    table, line_of_row, line_of_id = read_json_document(path, kind)
    return parsed_by_lines(path, kind, table, line_of_row, line_of_id)


JSON = FORMATS.register(Format(
    "json", "JSON", (".json",), ("run", "qrels"), None, _read,
    line_of_row=lambda path, kind, row: read_json_document(path, kind)[1](row),
    opens="{[", expected="a JSON object ({...})",
    examples=(("run", "JSON (`.json`, pytrec_eval/ranx dict)",
               '`{"q1": {"d7": 14.2, "d3": 9.1}}` or ranked: `{"q1": ["d7", "d3"]}`'),
              ("qrels", "JSON (`.json`, pytrec_eval/ranx dict)", '`{"q1": {"d7": 2, "d3": 0}}`')),
))
