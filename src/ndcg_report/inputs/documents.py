"""The text of a few documents for the report's drill-downs, picked from a corpus in one pass.

The corpus is a BEIR JSON-lines file (`{"_id", "title", "text"}`) or a `docid<TAB>text` file, plain
or gzip, read in one streaming pass that decodes only the lines of the documents wanted (memory:
those documents' text, and one line of at most MAX_LINE bytes: a longer line is read on and dropped,
but for its first CUT_KEPT bytes, so a TSV document keeps its snippet and a JSON one shows none).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import IO

from ndcg_report.errors import InputError
from ndcg_report.files import open_maybe_gzip
from ndcg_report.inputs.records import json_value
from ndcg_report.inputs.access.text_files import GZIP_ERRORS, MAX_LINE

MAX_TEXT = 400  # characters kept per document: the report shows a snippet
_DRAIN = 1 << 20  # read at a time while dropping the rest of a line past MAX_LINE
CUT_KEPT = 1 << 16  # bytes kept of a line past MAX_LINE: its id and snippet
_JSON_ID = re.compile(rb'"_id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')


def check_documents_file(path: Path) -> Path:
    """path, if its first MiB is UTF-8 and the first line there with anything on it reads as a document
    (a JSON object, or docid<TAB>text); else InputError naming that line. The rest is read, for the documents a report
    shows, by document_texts."""
    try:
        with open_maybe_gzip(path) as handle:
            prefix = handle.read(1 << 20)
    except (OSError, *GZIP_ERRORS) as exc:
        raise InputError(path, None, f"cannot be read ({getattr(exc, 'strerror', None) or exc})",
                         "check the docs path") from None
    try:  # a file in another encoding is refused here, not when a report's kernel reads the documents it shows
        codecs.getincrementaldecoder("utf-8")().decode(prefix, final=len(prefix) < 1 << 20)
    except UnicodeDecodeError as exc:
        raise InputError(path, prefix[:exc.start].count(b"\n") + 1, "not valid UTF-8 text",
                         "convert the file to UTF-8 (iconv -f LATIN1 -t UTF-8)") from None
    for number, raw in enumerate(prefix.split(b"\n"), start=1):
        line = raw.rstrip(b"\r").lstrip(b"\xef\xbb\xbf")
        if line.strip():
            if line.lstrip().startswith(b"{") or b"\t" in line:
                return path
            raise InputError(path, number, "neither a JSON object nor docid<TAB>text",
                             'give a BEIR corpus.jsonl ({"_id", "title", "text"} per line) or docid<TAB>text lines')
    raise InputError(path, None, "no document in its first MiB",
                     'give a BEIR corpus.jsonl ({"_id", "title", "text"} per line) or docid<TAB>text lines')


def document_texts(path: str | Path, wanted: Collection[str], max_chars: int = MAX_TEXT,
                   max_line: int = MAX_LINE) -> dict[str, str]:
    """{docid: its text (title and text, at most max_chars)} of the wanted documents found in the corpus.

    The format is told by the first line: a JSON object (BEIR), else `docid<TAB>text`. A line that
    cannot be read is skipped only if it is not one of the wanted ones; a wanted line that is not
    valid JSON or UTF-8 is an InputError naming it. Documents not in the corpus are left out.
    """
    path = Path(path)
    wanted = set(wanted)
    found: dict[str, str] = {}
    if not wanted:
        return found
    try:
        with open_maybe_gzip(path) as handle:
            json_lines = None
            for number, line, cut in bounded_lines(handle, max_line):
                if not line.strip():
                    continue
                if json_lines is None:
                    json_lines = line.lstrip(b"\xef\xbb\xbf").lstrip().startswith(b"{")
                if json_lines and cut:
                    continue  # its JSON is cut: no text shown (a document line of MAX_LINE is not a snippet's)
                docid, text = (_json_document(path, number, line, wanted) if json_lines
                               else _tsv_document(path, number, line, wanted))
                if docid is not None and docid not in found:  # a repeated id: its first text
                    found[docid] = text[:max_chars]
                    if len(found) == len(wanted):
                        break
    except OSError as exc:
        raise InputError(path, None, f"cannot be read ({exc.strerror or exc})", "check the corpus path") from None
    except GZIP_ERRORS as exc:
        raise InputError(path, None, f"corrupt gzip file ({exc})", "re-compress it or give the plain file") from None
    return found


def bounded_lines(handle: IO[bytes], max_line: int = MAX_LINE) -> Iterator[tuple[int, bytes, bool]]:
    """(1-based number, line without its line end, whether it was cut) of each line: a line longer
    than max_line bytes is cut to its first CUT_KEPT bytes, the rest read _DRAIN bytes at a time and
    dropped."""
    number = 0
    while raw := handle.readline(max_line + 1):
        number += 1
        cut = len(raw) > max_line and not raw.endswith(b"\n")
        if cut:
            raw = raw[:CUT_KEPT]
            while (rest := handle.readline(_DRAIN)) and not rest.endswith(b"\n"):
                pass
        yield number, raw.rstrip(b"\r\n"), cut


def _json_document(path: Path, number: int, line: bytes, wanted: set[str]) -> tuple[str | None, str]:
    match = _JSON_ID.search(line)
    if not match:
        return None, ""
    docid = str(json.loads(match.group(1)))
    if docid not in wanted:
        return None, ""
    try:
        record = json_value(line.decode("utf-8"), check_keys=False)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise InputError(path, number, f"document {docid!r} is not a valid JSON line",
                         'give one {"_id", "title", "text"} object per line') from None
    title, text = str(record.get("title") or "").strip(), str(record.get("text") or "")
    if title and text:
        return docid, f"{title} {text}" if title[-1] in ".:;!?" else f"{title}: {text}"
    return docid, title or text


def _tsv_document(path: Path, number: int, line: bytes, wanted: set[str]) -> tuple[str | None, str]:
    docid, _, text = line.partition(b"\t")
    try:
        key = docid.decode("utf-8")
    except UnicodeDecodeError:
        return None, ""
    if key not in wanted:
        return None, ""
    try:
        return key, text.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(path, number, f"the text of document {key!r} is not valid UTF-8", "re-save the file as UTF-8") from None
