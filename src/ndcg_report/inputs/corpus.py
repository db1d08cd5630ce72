"""A BEIR-style JSON-lines corpus (plain or gzip) streamed in batches; bad input named by file:line."""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path

from ndcg_report.errors import InputError, ParameterError
from ndcg_report.files import open_maybe_gzip
from ndcg_report.inputs.ids import ID_FIX, id_problem
from ndcg_report.inputs.access.text_files import GZIP_ERRORS, MAX_LINE, PREFIX_BYTES, check_first_line, line_too_long
from ndcg_report.inputs.records import json_value

DEFAULT_BATCH_SIZE = 10_000
# Text (UTF-8 bytes of the lines) of a batch at most, whatever its count of documents: bm25s holds a
# batch's tokens as Python strings, about 15 times the text's size. A document alone is at most a
# line (text_files.MAX_LINE).
BATCH_BYTES = 32 << 20
_BOM = "\ufeff"
_FORMAT = 'one JSON object per line: {"_id": "...", "title": "...", "text": "..."}'


def iter_corpus(
    path: str | Path, batch_size: int = DEFAULT_BATCH_SIZE, batch_bytes: int = BATCH_BYTES
) -> Iterator[tuple[list[str], list[str]]]:
    """Yield (ids, texts) batches of at most batch_size documents and about batch_bytes of text (a
    batch ends with the line that reaches it); text is `title + " " + text`.

    Blank lines are skipped; ids are strings (JSON ints are converted). Raises InputError on the
    first bad line (not a JSON object, no `_id`, repeated `_id`, invalid UTF-8), a missing or
    empty file, or an unreadable gzip stream. Memory: one batch of texts plus the set of ids.
    A missing or empty file and a bad batch_size are reported at the call, the rest while iterating.
    """
    for name, value in (("batch_size", batch_size), ("batch_bytes", batch_bytes)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ParameterError(f"{name} must be a whole number >= 1; got {value!r}")
    path = Path(path)
    _check_file(path)
    try:
        with open_maybe_gzip(path) as handle:
            prefix = handle.read(PREFIX_BYTES)
    except GZIP_ERRORS:
        prefix = b"\n"  # a corrupt gzip: the reading names it, with the line it reached
    check_first_line(path, prefix, "corpus")  # binary, or a first line past MAX_LINE: fail at once
    return _batches(path, batch_size, batch_bytes)


def _batches(path: Path, batch_size: int, batch_bytes: int) -> Iterator[tuple[list[str], list[str]]]:
    seen: set[str] = set()
    ids: list[str] = []
    texts: list[str] = []
    size = 0
    for number, raw in _numbered_lines(path):
        if not raw.strip():
            continue
        doc_id, text = _parse_line(path, number, raw)
        if doc_id in seen:
            first = _first_line_of(path, doc_id, before=number)
            raise InputError(
                path, number, f"document _id {doc_id!r} repeats the one on line {first}",
                "give every document a unique _id",
            )
        seen.add(doc_id)
        ids.append(doc_id)
        texts.append(text)
        size += len(raw)
        if len(ids) == batch_size or size >= batch_bytes:
            yield ids, texts
            ids, texts, size = [], [], 0
    if ids:
        yield ids, texts
    elif not seen:
        raise InputError(path, None, "no documents (the file has only blank lines)", f"give {_FORMAT}")


def _check_file(path: Path) -> None:
    """Raise InputError unless path is a readable, non-empty regular file."""
    if not path.exists():
        raise InputError(path, None, "no such file", "check the corpus path")
    if not path.is_file():
        raise InputError(path, None, "not a regular file", "give the path of a .jsonl or .jsonl.gz file")
    try:
        with path.open("rb") as handle:
            empty = not handle.read(1)
    except PermissionError:
        raise InputError(path, None, "permission denied", "make the file readable") from None
    if empty:
        raise InputError(path, None, "empty file (no documents)", f"give {_FORMAT}")


def _numbered_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, raw line without the line end), streaming."""
    number = 0
    try:
        with open_maybe_gzip(path) as handle:
            while raw := handle.readline(MAX_LINE + 1):
                number += 1
                if len(raw) > MAX_LINE:
                    raise line_too_long(path, number)
                yield number, raw.rstrip(b"\r\n")
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise InputError(
            path, None, f"corrupt or truncated gzip file after line {number} ({exc})",
            "re-compress the corpus or give the plain .jsonl file",
        ) from None


def _parse_line(path: Path, number: int, raw: bytes) -> tuple[str, str]:
    """(id, title + ' ' + text) of one non-blank line, or InputError naming the line."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            path, number, f"not valid UTF-8 (byte {exc.start + 1} of the line)", "re-save the corpus as UTF-8",
        ) from None
    if number == 1 and line.startswith(_BOM):
        line = line[1:]
    try:
        record = json_value(line, check_keys=False)
    except json.JSONDecodeError as exc:
        raise InputError(path, number, f"not valid JSON ({exc.msg} at column {exc.colno})", f"give {_FORMAT}") from None
    if not isinstance(record, dict):
        raise InputError(path, number, f"a JSON {type(record).__name__}, not an object", f"give {_FORMAT}")
    return _document_id(path, number, record), _document_text(path, number, record)


def _document_id(path: Path, number: int, record: dict) -> str:
    if "_id" not in record:
        keys = ", ".join(sorted(record)) or "none"
        raise InputError(path, number, f"no `_id` field (keys: {keys})", 'give each document an "_id" (BEIR format)')
    value = record["_id"]
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(path, number, f"`_id` is {json.dumps(value)}, not a string or integer", "give a string _id")
    doc_id = str(value)
    if not doc_id:
        raise InputError(path, number, "`_id` is empty", "give a non-empty _id")
    problem = id_problem(doc_id, "`_id`")
    if problem:
        raise InputError(path, number, problem, ID_FIX)
    if any(char.isspace() for char in doc_id):
        raise InputError(
            path, number, f"`_id` {doc_id!r} contains white space (it would break TREC run lines)",
            "remove the spaces from the _id",
        )
    return doc_id


def _document_text(path: Path, number: int, record: dict) -> str:
    if "text" not in record:
        raise InputError(path, number, "no `text` field", 'give each document a "text" (it may be "")')
    title = record.get("title")
    text = record["text"]
    for name, value in (("title", title), ("text", text)):
        if value is not None and not isinstance(value, str):
            raise InputError(path, number, f"`{name}` is a JSON {type(value).__name__}, not a string", f"make {name} a string")
    title = title or ""
    text = text or ""
    return f"{title} {text}" if title else text


def _first_line_of(path: Path, doc_id: str, before: int) -> int:
    """The line where doc_id first occurs (error path only: rescans the file)."""
    for number, raw in _numbered_lines(path):
        if number >= before:
            break
        if raw.strip() and _parse_line(path, number, raw)[0] == doc_id:
            return number
    raise AssertionError(f"{doc_id!r} not found before line {before}")
