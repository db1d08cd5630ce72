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
from ndcg_report.inputs.records import RecordProblem, json_value
from ndcg_report.inputs.text_files import GZIP_ERRORS, MAX_LINE, check_encoding, read_prefix

MAX_DOCUMENT = MAX_LINE  # text of a JSON document read at most: larger ones go as JSON lines
_PIECE = 1 << 20


def read_json_document(path: Path, kind: str) -> tuple[pa.Table, Callable[[int], int | None]]:
    """A JSON run or qrels document as a table (qid dictionary, docid, score or rel) and a map from
    row to the line of its document (None where not found); InputError naming the bad line."""
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
        raise InputError(path, None, exc.problem, exc.fix) from None

    def fail(problem: str, fix: str, qid: str | None, docid: str | None) -> NoReturn:
        where = "".join(part for part in (f"query {qid!r}" if qid is not None else "",
                                          f", document {docid!r}" if docid is not None else "") if part)
        raise InputError(path, locate(text, qid, docid), f"{where}: {problem}" if where else problem, fix)

    table = mapping_table(data, kind, fail)

    def line_of_row(row: int) -> int | None:
        return locate(text, table["qid"][row].as_py(), table["docid"][row].as_py())

    return table, line_of_row


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
    if the ids are written with escapes and so not found as they are."""
    if qid is None:
        return None
    found = re.search(re.escape(json.dumps(qid, ensure_ascii=False)) + r"\s*:", text)
    if found is None:
        return None
    at = found.start()
    if docid is not None:
        mention = text.find(json.dumps(docid, ensure_ascii=False), found.end())
        at = mention if mention >= 0 else at
    return text.count("\n", 0, at) + 1
