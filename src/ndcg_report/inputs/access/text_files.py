"""The reading of text inputs (plain or gzip) that every reader shares.

OS errors as InputErrors, the checks made before a file is parsed (readable, encoding, a bounded
look at its first line), and pieces of whole lines in bounded memory.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from ndcg_report.errors import InputError
from ndcg_report.files import open_maybe_gzip

# The longest line any reader of runs, qrels, topics or a corpus takes; a longer one is refused after
# reading this much, holding no more. A ranked list of 500,000 ids or a 16 MB document fits; a line
# past it read as JSON would take about 40 times its size in Python objects.
MAX_LINE = 16 << 20
PREFIX_BYTES = 1 << 20  # text checked before the whole file is read: garbage fails at once
_SCAN_BYTES = 1 << 20  # read at a time while looking for the end of a long first line
GZIP_ERRORS = (gzip.BadGzipFile, EOFError, zlib.error)


@contextmanager
def io_errors_as_input_errors(path: str | Path) -> Iterator[None]:
    """An operating-system error while reading an input (EIO, EISDIR, ...) is the user's InputError."""
    try:
        yield
    except OSError as exc:
        raise InputError(path, None, f"cannot be read ({exc.strerror or exc})", "check the file and the disk") from None


def check_readable(path: Path) -> None:
    """Raise InputError unless path is an existing, readable, non-empty file."""
    if not path.exists():
        raise InputError(path, None, "no such file", "check the path")
    if not path.is_file():
        raise InputError(path, None, "not a regular file", "give the path of a file")
    try:
        with path.open("rb") as handle:
            if not handle.read(1):
                raise InputError(path, None, "empty file", "give a file with data lines")
    except PermissionError:
        raise InputError(path, None, "permission denied", "make the file readable") from None


def line_ends(data: bytes, start: int = 0, end: int | None = None) -> int:
    """How many line ends (\\n, \\r\\n or a lone \\r, as pyarrow reads them) data[start:end] holds."""
    part = data[start:end] if start or end is not None else data
    ends = part.count(b"\n")
    return ends if b"\r" not in part else ends + part.count(b"\r") - part.count(b"\r\n")


def check_encoding(path: Path, data: bytes, lines_before: int = 0, at_start: bool = True) -> None:
    """Reject UTF-16/32 and other binary files before parsing (line numbers after lines_before; a
    UTF-16 byte-order mark is looked for only if data is the start of the file)."""
    if at_start and data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise InputError(path, 1, "file is UTF-16 encoded, not UTF-8", "re-save it as UTF-8 text")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InputError(path, lines_before + line_ends(data, 0, nul) + 1, "NUL byte: not UTF-8 text",
                         "re-save it as UTF-8 text")


def read_prefix(path: Path, size: int = PREFIX_BYTES) -> bytes:
    """The first `size` bytes of the file's text (decompressed if gzip); InputError for a corrupt gzip."""
    try:
        with open_maybe_gzip(path) as handle:
            return handle.read(size)
    except GZIP_ERRORS as exc:
        raise InputError(path, None, f"corrupt gzip file ({exc})", "re-compress it or give the plain file") from None


def check_first_line(path: Path, prefix: bytes, what: str = "input") -> None:
    """When the prefix (the file's first bytes of text) holds no line end: InputError if those bytes
    are not text, or if the first line runs past MAX_LINE. The rest of the line is read in pieces
    and dropped, so this costs MAX_LINE bytes of reading at most, never the file, and little memory."""
    if b"\n" in prefix or b"\r" in prefix:
        return
    check_encoding(path, prefix)
    _check_utf8(path, prefix)
    if len(prefix) < PREFIX_BYTES:
        return  # the whole file, one line without a line end
    seen = len(prefix)
    try:
        with open_maybe_gzip(path) as handle:
            handle.seek(seen)  # gzip: read forward and dropped, a piece at a time
            while seen <= MAX_LINE:
                piece = handle.read(_SCAN_BYTES)
                if not piece or b"\n" in piece or b"\r" in piece:
                    return
                if b"\x00" in piece:
                    raise InputError(path, 1, "NUL byte: not UTF-8 text", "re-save it as UTF-8 text")
                seen += len(piece)
    except GZIP_ERRORS as exc:
        raise InputError(path, None, f"corrupt gzip file ({exc})", "re-compress it or give the plain file") from None
    raise InputError(path, 1, f"a line longer than {MAX_LINE >> 20} MiB (read that far without a line end)",
                     f"give a {what} file of lines: no line of one is that long")


def _check_utf8(path: Path, prefix: bytes) -> None:
    """InputError unless the prefix is UTF-8 (a character cut at its end is fine)."""
    try:
        prefix.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(prefix) - 3 or exc.reason != "unexpected end of data":
            raise InputError(path, 1 + line_ends(prefix, 0, exc.start), "not valid UTF-8 text",
                             "re-save the file as UTF-8") from None


def line_pieces(handle: IO[bytes], size: int | Callable[[], int]) -> Iterator[tuple[bytes, int]]:
    """(piece, lines before it): the text in pieces of about `size` bytes (or size() before each
    piece) that end with \\n (the last may not); a piece's last line is finished with readline. A
    piece of blank lines holds no record and is skipped unparsed (a file of them is empty at once).
    The caller names a line longer than MAX_LINE (see line_too_long)."""
    lines = 0
    while data := handle.read(size() if callable(size) else size):
        if not data.endswith(b"\n"):
            data += handle.readline(MAX_LINE)
        if not data.isspace():
            yield data, lines
        lines += data.count(b"\n")


def line_too_long(path: Path, line: int) -> InputError:
    """The error for a line past MAX_LINE."""
    return InputError(path, line, f"a line longer than {MAX_LINE >> 20} MiB",
                      "split or remove it: no line of an input is that long")
