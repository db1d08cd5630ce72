"""Which format an input is in: told by its extension, confirmed by its first bytes and structure.

The formats are those registered (inputs.formats.registry). The extension is read after any .gz; a
file without a known extension is told by its structure alone. A mismatch or an unknown format is an
InputError naming what was expected.
"""

from __future__ import annotations

from pathlib import Path

from ndcg_report.errors import InputError
from ndcg_report.inputs.formats.registry import FORMATS, Format
from ndcg_report.inputs.access.text_files import check_encoding, read_prefix

UNSUPPORTED_SUFFIXES = (  # refused by name, unless a registered format claims one
    ".csv", ".xlsx", ".xls", ".ods", ".zip", ".bz2", ".xz", ".zst", ".7z", ".tar", ".tgz", ".arrow", ".feather",
    ".ipc", ".pkl", ".pickle", ".npy", ".npz", ".h5", ".hdf5", ".avro", ".orc", ".yaml", ".yml", ".html", ".pdf",
)
COMPRESSED_MAGIC = {  # other compressions than gzip, told by their first bytes (all are binary)
    b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd", b"PK\x03\x04": "zip",
    b"7z\xbc\xaf\x27\x1c": "7z",
}
_JSON_NAMES = "name a JSON file .json, JSON lines .jsonl"  # the fix for JSON named as text
_SNIFF_BYTES = 1 << 20


def format_suffix(path: Path) -> str:
    """The file's format extension, lower case, after a .gz ('' if none)."""
    suffixes = [suffix.lower() for suffix in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    return suffixes[-1] if suffixes and len(suffixes[-1]) > 1 else ""


def detect_format(path: Path, kind: str) -> str:
    """The name of the registered format of a run, qrels or topics input (kind), from its extension and its structure.

    InputError if the extension names a format this kind does not take, or if the file's first bytes
    contradict its extension (a .jsonl that is not JSON, a .txt that is JSON or Parquet, a .parquet
    that is not Parquet). A folder is read by the kind's format that reads folders (Parquet: when its
    first files are Parquet).
    """
    accepted = FORMATS.accepted(kind)
    if path.is_dir():
        return _folder_format(path, kind, accepted).name
    suffix = format_suffix(path)
    named = FORMATS.by_suffix(suffix)
    mine = [form for form in named if kind in form.kinds]
    if (suffix in UNSUPPORTED_SUFFIXES and not named) or (named and not mine):
        raise InputError(path, None, f"unknown {kind} format ({suffix})", f"give {accepted}")
    binary = [form for form in FORMATS if form.structure is not None]
    for form in binary:
        if kind in form.kinds and (form in mine or form.structure(path)):
            if not form.structure(path):  # worded as the Parquet reader words a bad file inside a folder
                raise InputError(path, None, f"cannot be read as {form.label} (named {suffix}, but "
                                 f"{_describe(read_prefix(path, 64))}, without {form.label}'s structure)",
                                 f"give a {form.label} file, or the {kind} in a format its name says ({accepted})")
            return form.name
    for form in binary:
        if kind not in form.kinds and form.structure(path):
            raise _mismatch(path, kind, suffix or "(no extension)", "text", f"a {form.label} file")
    prefix = read_prefix(path, _SNIFF_BYTES)
    for magic, name in COMPRESSED_MAGIC.items():
        if prefix.startswith(magic) and (name != "bzip2" or prefix[3:4].isdigit() and prefix[4:10] == b"1AY&SY"):
            raise InputError(path, None, f"is {name}-compressed, which is not read",
                             "decompress it, or compress it with gzip")
    check_encoding(path, prefix)  # UTF-16, binary: said as such, whatever the name
    return _text_format(path, kind, suffix, mine, prefix).name


def _folder_format(path: Path, kind: str, accepted: str) -> Format:
    """The kind's format read from a folder, if the folder holds it; else InputError."""
    form = next((form for form in FORMATS.for_kind(kind) if form.folder is not None), None)
    if form is None:
        raise InputError(path, None, "is a folder", f"give a {kind} file: {accepted}")
    problem = form.folder(path)
    if problem is not None:
        raise InputError(path, None, problem, f"give a {kind} file ({accepted}) or a folder of {form.label} files")
    return form


def _text_format(path: Path, kind: str, suffix: str, mine: list[Format], prefix: bytes) -> Format:
    """The text format: the one the extension names if its text opens with known characters (JSON's
    `{` or `[`), confirmed by the first one; else the format whose first bytes these are, among those
    opening alike (among those the extension names, if any)."""
    start = _first_character(prefix)
    strict = [form for form in mine if form.opens]
    if strict:
        if start not in (*strict[0].opens, ""):  # blank: the reader says it is empty
            raise _mismatch(path, kind, suffix, strict[0].expected, _describe(prefix))
        return strict[0]
    text = [form for form in FORMATS.for_kind(kind) if form.structure is None]
    alike = [form for form in text if start and start in form.opens]
    if alike:
        if mine:
            raise _mismatch(path, kind, suffix, mine[0].expected, "JSON (" + _describe(prefix) + ")", _JSON_NAMES)
        return FORMATS.sniffed(alike, prefix)
    lines = [form for form in text if not form.opens]
    return FORMATS.sniffed([form for form in lines if form in mine] or lines, prefix)


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
                      fix or f"give the {kind} in the format its name says ({FORMATS.accepted(kind)})")


def describe_input(path: Path, kind: str) -> str:
    """The format an input was read in, for the report's file table ('TREC text (gzip)', 'JSON lines')."""
    try:
        name = detect_format(path, kind) if kind in FORMATS.kinds() else ""
    except (InputError, OSError):
        return ""
    form = FORMATS.get(name)
    label = form.label if form is not None and kind != "corpus" else "JSON lines"
    if form is not None and form.structure is not None and path.is_dir():
        return f"{label} dataset"
    if form is None or form.structure is None:
        try:
            with open(path, "rb") as handle:
                if handle.read(2) == b"\x1f\x8b":
                    label += " (gzip)"
        except OSError:
            pass
    return label
