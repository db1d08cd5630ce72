"""Topics (query text by qid) as TSV, BEIR queries.jsonl or a TREC topic file, plain or gzip: three registered formats.

TSV is `qid<TAB>text` lines; BEIR's, one `{"_id", "text"}` object per line; a TREC topic file,
`<top> <num> ... <title> ... </top>` blocks. Read a piece of whole lines at a time after the
bounded first check, so a file that is wrong from its start fails at once, whatever its size.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ndcg_report.errors import InputError
from ndcg_report.files import open_maybe_gzip
from ndcg_report.inputs.ids import ID_FIX, id_problem
from ndcg_report.inputs.formats.json_lines import SUFFIXES as JSONL_SUFFIXES
from ndcg_report.inputs.formats.registry import FORMATS, Format
from ndcg_report.inputs.formats.trec import TEXT_SUFFIXES
from ndcg_report.inputs.records import RecordProblem, identifier, json_value
from ndcg_report.inputs.access.text_files import (
    GZIP_ERRORS, PREFIX_BYTES, check_encoding, check_first_line, check_readable, line_pieces, read_prefix,
)

if TYPE_CHECKING:
    import pandas as pd

PIECE_BYTES = 1 << 20
MAX_TOPIC_FILE = 256 << 20  # a TREC topic file is read whole: at most this much text
_BEIR = 'one {"_id": "...", "text": "..."} object per line (BEIR queries.jsonl)'


Lines = Callable[[Path], Iterator[tuple[int, str, str]]]  # (line number, qid, text) of each topic


def read_topics_file(path: Path, read_lines: Lines, empty_fix: str) -> "pd.Series":
    """Query text indexed by qid (strings), from a topics file whose format's read_lines gives its topics;
    InputError naming the first bad line: no tab (TSV), a qid with white space, a repeated qid, no topics."""
    import pandas as pd

    check_readable(path)
    prefix = read_prefix(path, PREFIX_BYTES)
    check_first_line(path, prefix, "topics")
    check_encoding(path, prefix)
    lines = read_lines(path)
    qids: list[str] = []
    queries: list[str] = []
    seen: dict[str, int] = {}
    for number, qid, query in lines:
        problem = id_problem(qid, "topic id")
        if problem:
            raise InputError(path, number, problem, ID_FIX)
        if any(char.isspace() for char in qid):
            raise InputError(path, number, f"topic id {qid!r} contains white space", "use the query ids of the qrels (no spaces)")
        if qid in seen:
            raise InputError(path, number, f"topic {qid!r} already given on line {seen[qid]}", "keep one line per topic")
        seen[qid] = number
        qids.append(qid)
        queries.append(query)
    if not qids:
        raise InputError(path, None, "empty file (no topics)", empty_fix)
    return pd.Series(queries, index=pd.Index(qids, name="qid"), name="query", dtype=object)


def _text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of every line, decoded strictly, a piece at a time."""
    try:
        with open_maybe_gzip(path) as handle:
            for piece, lines_before in line_pieces(handle, PIECE_BYTES):
                check_encoding(path, piece, lines_before, at_start=lines_before == 0)
                for offset, raw in enumerate(re.split(rb"\r\n?|\n", piece.removesuffix(b"\n"))):
                    number = lines_before + offset + 1
                    if number == 1:
                        raw = raw.removeprefix(b"\xef\xbb\xbf")
                    try:
                        yield number, raw.decode("utf-8")
                    except UnicodeDecodeError:
                        raise InputError(path, number, "not valid UTF-8 text", "re-save the file as UTF-8") from None
    except GZIP_ERRORS as exc:
        raise InputError(path, None, f"corrupt gzip file ({exc})", "re-compress it or give the plain file") from None


def _tsv_topics(path: Path) -> Iterator[tuple[int, str, str]]:
    for number, line in _text_lines(path):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        qid, tab, query = line.partition("\t")
        qid = qid.strip()
        if not tab or not qid:
            raise InputError(path, number, "expected `qid<TAB>query text`", "separate the id and the text with a tab")
        yield number, qid, query.strip()


def _beir_topics(path: Path) -> Iterator[tuple[int, str, str]]:
    for number, line in _text_lines(path):
        if not line.strip():
            continue
        try:
            record = json_value(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, number, f"not valid JSON ({exc.msg} at column {exc.colno})", f"give {_BEIR}") from None
        except RecordProblem as exc:
            raise InputError(path, number, exc.problem, exc.fix) from None
        if not isinstance(record, dict):
            raise InputError(path, number, "a JSON value that is not an object", f"give {_BEIR}")
        if "_id" not in record or "text" not in record:
            missing = " and ".join(f"`{key}`" for key in ("_id", "text") if key not in record)
            raise InputError(path, number, f"no {missing} (keys: {', '.join(map(repr, record))[:200] or 'none'})",
                             f"give {_BEIR}")
        try:
            qid = identifier(record["_id"], "_id")
        except RecordProblem as exc:
            raise InputError(path, number, exc.problem, exc.fix) from None
        text = record["text"]
        if not isinstance(text, str):
            raise InputError(path, number, f"`text` is {json.dumps(text)[:40]}, not a string", "give the query text as a string")
        yield number, qid, text.strip()


_TOP = re.compile(r"<top>(.*?)</top>", re.S | re.I)
_FIELD = re.compile(r"<(num|title)>(.*?)(?=<[a-z/]|\Z)", re.S | re.I)


def _trec_topics(path: Path) -> Iterator[tuple[int, str, str]]:
    """<top> blocks: the number from <num> (after `Number:`), the text from <title> (after `Topic:`)."""
    text = "\n".join(line for _, line in _bounded(_text_lines(path), path))
    for block in _TOP.finditer(text):
        number = text.count("\n", 0, block.start()) + 1
        fields = {name.lower(): value.strip() for name, value in _FIELD.findall(block.group(1))}
        qid = re.sub(r"^(number:)\s*", "", fields.get("num", ""), flags=re.I).strip()
        title = re.sub(r"^(topic:)\s*", "", fields.get("title", ""), flags=re.I)
        if not qid or not title.strip():
            raise InputError(path, number, f"a <top> block without {'<num>' if not qid else '<title>'}",
                             "give each topic a <num> and a <title>")
        yield number, qid, " ".join(title.split())


def _bounded(lines: Iterator[tuple[int, str]], path: Path) -> Iterator[tuple[int, str]]:
    size = 0
    for number, line in lines:
        size += len(line) + 1
        if size > MAX_TOPIC_FILE:
            raise InputError(path, number, f"a TREC topic file larger than {MAX_TOPIC_FILE >> 20} MiB",
                             "give the topics as `qid<TAB>query text` lines")
        yield number, line


def _reader(read_lines: Lines, empty_fix: str) -> Callable[[Path, str], "pd.Series"]:
    return lambda path, kind: read_topics_file(path, read_lines, empty_fix)


def opens_with_top(prefix: bytes) -> bool:
    """True if the text starts with a TREC topic file's `<top>`."""
    return prefix.lstrip(b"\xef\xbb\xbf").lstrip().lower().startswith(b"<top>")


TOPICS_TSV = FORMATS.register(Format(
    "topics-tsv", "TSV", TEXT_SUFFIXES, ("topics",), None,
    _reader(_tsv_topics, "give one `qid<TAB>query text` line per topic"),
    accepted="TSV (qid<TAB>text: .tsv, .txt)", help={"topics": "qid<TAB>query text lines"},
    examples=(("topics", "TSV", "`q1<TAB>what is ndcg`"),),
))
BEIR_QUERIES = FORMATS.register(Format(
    "beir-queries", "JSON lines", JSONL_SUFFIXES, ("topics",), None, _reader(_beir_topics, f"give {_BEIR}"),
    opens="{[", expected="JSON lines (one {...} object per line)", accepted="BEIR queries (.jsonl)",
    help={"topics": "BEIR queries.jsonl"},
    examples=(("topics", "BEIR `queries.jsonl`", '`{"_id": "q1", "text": "what is ndcg"}`'),),
))
TREC_TOPICS = FORMATS.register(Format(
    "trec-topics", "TREC topics", TEXT_SUFFIXES, ("topics",), opens_with_top, _reader(_trec_topics, "give <top> blocks"),
    accepted="a TREC topic file (<top>)", help={"topics": "a TREC topic file"},
    examples=(("topics", "TREC topic file (`<top>` blocks)",
               "`<top> <num> Number: 301 <title> International Organized Crime ... </top>`"),),
))
