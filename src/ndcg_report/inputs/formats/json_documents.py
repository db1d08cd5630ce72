"""Runs and qrels as one JSON document, as pytrec_eval and ranx dicts are saved.

{qid: {docid: value}} (a run also {qid: [docid, ...]}, ranked, best first). Read whole (at most
MAX_DOCUMENT bytes of text, measured before it is held); a problem names the line of the query or
document at fault.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pyarrow as pa

from ndcg_report.errors import InputError
from ndcg_report.files import open_maybe_gzip
from ndcg_report.inputs.mappings import SHAPE, mapping_table
from ndcg_report.inputs.records import RecordProblem, RepeatedKey, json_value
from ndcg_report.inputs.text_files import GZIP_ERRORS, MAX_LINE, check_encoding, read_prefix

MAX_DOCUMENT = MAX_LINE  # text of a JSON document read at most: larger ones go as JSON lines
_PIECE = 1 << 20


def read_json_document(path: Path, kind: str) -> tuple[pa.Table, Callable[[int], int | None],
                                                       Callable[[int, str], int | None]]:
    """A JSON run or qrels document as a table (qid dictionary, docid, score or rel), a map from row
    to the line of its document and one from (row, 'qid' or 'docid') to the line of that id (None
    where not found); InputError naming the bad line."""
    text = _text(path, kind)
    try:
        data = json_value(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            raise InputError(path, exc.lineno, "more than one JSON value (JSON lines?)",
                             f"name a JSON-lines file .jsonl, or give one object {SHAPE[kind]}") from None
        raise InputError(path, exc.lineno, f"not valid JSON ({exc.msg} at column {exc.colno})",
                         f"give one object {SHAPE[kind]}") from None
    except RecordProblem as exc:
        line = repeated_key_line(text, exc.key) if isinstance(exc, RepeatedKey) else None
        raise InputError(path, line, exc.problem, exc.fix) from None

    def fail(problem: str, fix: str, qid: str | None, docid: str | None) -> NoReturn:
        where = "".join(part for part in (f"query {qid!r}" if qid is not None else "",
                                          f", document {docid!r}" if docid is not None else "") if part)
        raise InputError(path, locate(text, qid, docid), f"{where}: {problem}" if where else problem, fix)

    table = mapping_table(data, kind, fail)

    def line_of_row(row: int) -> int | None:
        return locate(text, table["qid"][row].as_py(), table["docid"][row].as_py())

    def line_of_id(row: int, column: str) -> int | None:
        return locate(text, table["qid"][row].as_py(), table["docid"][row].as_py() if column == "docid" else None)

    return table, line_of_row, line_of_id


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
        at = _repeated_key_at(text, key, _WHITESPACE.match(text, 0).end())
    except (ValueError, IndexError, RecursionError):  # valid JSON: only a nest past the recursion limit; then no line
        return None
    return None if at is None else text.count("\n", 0, at) + 1


_WHITESPACE = re.compile(r"[ \t\n\r]*")
_SCAN = json.JSONDecoder().scan_once  # values as they are: no hook, so no repeated key is refused while walking


def _repeated_key_at(text: str, key: str, start: int) -> int | None:
    """Where the object at text[start] ('{'; else None) or an object inside it first repeats `key`."""
    if text[start] != "{":
        return None
    seen: set[str] = set()
    at = _WHITESPACE.match(text, start + 1).end()
    while text[at] == '"':
        name, end = json.decoder.scanstring(text, at + 1)
        if name == key and name in seen:
            return at
        seen.add(name)
        value = _WHITESPACE.match(text, _WHITESPACE.match(text, end).end() + 1).end()  # past the ':'
        end = _SCAN(text, value)[1]
        if text[value] == "{" and _mentions(text, key, value, end):
            inner = _repeated_key_at(text, key, value)
            if inner is not None:
                return inner
        at = _WHITESPACE.match(text, end).end()
        if text[at] != ",":
            return None
        at = _WHITESPACE.match(text, at + 1).end()
    return None


def _mentions(text: str, key: str, start: int, end: int) -> bool:
    """Whether text[start:end] holds `key` as json writes it (with or without ensure_ascii)."""
    return any(text.find(json.dumps(key, ensure_ascii=ascii_only)[1:-1], start, end) >= 0 for ascii_only in (False, True))
