"""Which format an input is in: told by its extension, confirmed by its first bytes and structure.

The extension is read after any .gz; a file without a known extension is told by its structure
alone. A mismatch or an unknown format is an InputError naming what was expected.
"""

from __future__ import annotations

import json
from pathlib import Path

from ndcg_report.errors import InputError
from ndcg_report.inputs.formats.parquet import SUFFIXES as PARQUET_SUFFIXES
from ndcg_report.inputs.formats.parquet import dataset_problem, has_parquet_structure
from ndcg_report.inputs.access.text_files import check_encoding, read_prefix
from ndcg_report.inputs.records import json_value

TREC = "trec"  # whitespace-separated TREC lines (run, qrels)
BEIR_TSV = "beir-tsv"  # qrels: `query-id corpus-id score` header, then tab-separated lines
JSON = "json"  # one JSON object: {qid: {docid: value}} (or {qid: [docid, ...]} for a run)
JSONL = "jsonl"  # JSON lines: one judgment / scored document, or one query, per line
PARQUET = "parquet"  # a Parquet file or a folder of them
TOPICS_TSV = "topics-tsv"  # qid<TAB>text
TREC_TOPICS = "trec-topics"  # <top> <num> ... <title> ... </top>

LABELS = {
    TREC: "TREC text", BEIR_TSV: "BEIR TSV", JSON: "JSON", JSONL: "JSON lines", PARQUET: "Parquet",
    TOPICS_TSV: "TSV", TREC_TOPICS: "TREC topics",
}
ACCEPTED = {
    "run": "TREC text (.txt, .run), JSON (.json), JSON lines (.jsonl) or Parquet (.parquet)",
    "qrels": "TREC text (.txt, .qrels), BEIR TSV (.tsv with a query-id header), JSON (.json), JSON lines (.jsonl) "
             "or Parquet (.parquet)",
    "topics": "TSV (qid<TAB>text: .tsv, .txt), BEIR queries (.jsonl) or a TREC topic file (<top>)",
}
JSON_SUFFIXES = (".json",)
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".jsonlines")
TEXT_SUFFIXES = (".txt", ".tsv", ".trec", ".run", ".res", ".qrels", ".qrel", ".topics", ".text")
UNSUPPORTED_SUFFIXES = (
    ".csv", ".xlsx", ".xls", ".ods", ".zip", ".bz2", ".xz", ".zst", ".7z", ".tar", ".tgz", ".arrow", ".feather",
    ".ipc", ".pkl", ".pickle", ".npy", ".npz", ".h5", ".hdf5", ".avro", ".orc", ".yaml", ".yml", ".html", ".pdf",
)
COMPRESSED_MAGIC = {  # other compressions than gzip, told by their first bytes (all are binary)
    b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd", b"PK\x03\x04": "zip",
    b"7z\xbc\xaf\x27\x1c": "7z",
}
BEIR_HEADER = ("query-id", "corpus-id", "score")
RECORD_KEYS = ("qid", "query_id", "query-id", "_id")  # a JSON-lines record names its query by one of these
_SNIFF_BYTES = 1 << 20


def format_suffix(path: Path) -> str:
    """The file's format extension, lower case, after a .gz ('' if none)."""
    suffixes = [suffix.lower() for suffix in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    return suffixes[-1] if suffixes and len(suffixes[-1]) > 1 else ""


def detect_format(path: Path, kind: str) -> str:
    """The format of a run, qrels or topics input (kind), from its extension and its structure.

    InputError if the extension names a format this kind does not take, or if the file's first bytes
    contradict its extension (a .jsonl that is not JSON, a .txt that is JSON or Parquet, a .parquet
    that is not Parquet). A folder is a Parquet dataset when its first files are Parquet.
    """
    if path.is_dir():
        if kind == "topics":
            raise InputError(path, None, "is a folder", f"give a topics file: {ACCEPTED[kind]}")
        problem = dataset_problem(path)
        if problem is not None:
            raise InputError(path, None, problem, f"give a {kind} file ({ACCEPTED[kind]}) or a folder of Parquet files")
        return PARQUET
    suffix = format_suffix(path)
    if suffix in UNSUPPORTED_SUFFIXES or (kind == "topics" and suffix in (*PARQUET_SUFFIXES, *JSON_SUFFIXES)):
        raise InputError(path, None, f"unknown {kind} format ({suffix})", f"give {ACCEPTED[kind]}")
    if kind != "topics" and (suffix in PARQUET_SUFFIXES or has_parquet_structure(path)):
        if not has_parquet_structure(path):  # worded as the Parquet reader words a bad file inside a folder
            raise InputError(path, None, f"cannot be read as Parquet (named {suffix}, but {_describe(read_prefix(path, 64))}"
                             ", without Parquet's structure)", f"give a Parquet file, or the {kind} in a format its "
                             f"name says ({ACCEPTED[kind]})")
        return PARQUET
    if has_parquet_structure(path):
        raise _mismatch(path, kind, suffix or "(no extension)", "text", "a Parquet file")
    prefix = read_prefix(path, _SNIFF_BYTES)
    for magic, name in COMPRESSED_MAGIC.items():
        if prefix.startswith(magic) and (name != "bzip2" or prefix[3:4].isdigit() and prefix[4:10] == b"1AY&SY"):
            raise InputError(path, None, f"is {name}-compressed, which is not read",
                             "decompress it, or compress it with gzip")
    check_encoding(path, prefix)  # UTF-16, binary: said as such, whatever the name
    start = _first_character(prefix)
    if suffix in JSON_SUFFIXES:
        if start not in ("{", "[", ""):  # blank: the reader says it is empty
            raise _mismatch(path, kind, suffix, "a JSON object ({...})", _describe(prefix))
        return JSON
    if suffix in JSONL_SUFFIXES:
        if start not in ("{", "[", ""):
            raise _mismatch(path, kind, suffix, "JSON lines (one {...} object per line)", _describe(prefix))
        return JSONL
    if start in ("{", "["):
        if suffix in TEXT_SUFFIXES:
            raise _mismatch(path, kind, suffix, "text lines", "JSON (" + _describe(prefix) + ")",
                            "name a JSON file .json, JSON lines .jsonl")
        if kind == "topics":
            return JSONL
        return JSONL if _is_json_lines(prefix) else JSON
    return _text_format(prefix, kind)


def _text_format(prefix: bytes, kind: str) -> str:
    """TREC, BEIR TSV (qrels with the BEIR header) or topics TSV / TREC topic file, by the first line."""
    text = prefix.lstrip(b"\xef\xbb\xbf")
    first = text.split(b"\n", 1)[0].strip()
    if kind == "qrels" and tuple(first.decode("utf-8", "replace").split()) == BEIR_HEADER:
        return BEIR_TSV
    if kind == "topics":
        return TREC_TOPICS if text.lstrip().lower().startswith(b"<top>") else TOPICS_TSV
    return TREC


def _is_json_lines(prefix: bytes) -> bool:
    """True if the first line is a whole JSON object naming its query (qid, query_id, query-id or _id)."""
    line = prefix.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    try:
        value = json_value(line, check_keys=False)
    except ValueError:
        return False
    return isinstance(value, dict) and any(key in value for key in RECORD_KEYS)


def _first_character(prefix: bytes) -> str:
    stripped = prefix.lstrip(b"\xef\xbb\xbf").lstrip()
    return chr(stripped[0]) if stripped else ""


def _describe(prefix: bytes) -> str:
    """What the file starts with, shortly and printably."""
    stripped = prefix.lstrip(b"\xef\xbb\xbf").lstrip()
    if not stripped:
        return "it is empty or blank"
    shown = stripped[:20].decode("utf-8", "replace")
    return f"it starts with {shown!r}"


def _mismatch(path: Path, kind: str, suffix: str, expected: str, found: str, fix: str = "") -> InputError:
    return InputError(path, None, f"named {suffix}, so {expected} was expected, but {found}",
                      fix or f"give the {kind} in the format its name says ({ACCEPTED[kind]})")


def describe_input(path: Path, kind: str) -> str:
    """The format an input was read in, for the report's file table ('TREC text (gzip)', 'JSON lines')."""
    try:
        name = detect_format(path, kind) if kind in ACCEPTED else ""
    except (InputError, OSError):
        return ""
    if kind == "corpus":
        name = JSONL
    label = LABELS.get(name, "JSON lines")
    if name == PARQUET and path.is_dir():
        return "Parquet dataset"
    if name != PARQUET:
        try:
            with open(path, "rb") as handle:
                if handle.read(2) == b"\x1f\x8b":
                    label += " (gzip)"
        except OSError:
            pass
    return label
