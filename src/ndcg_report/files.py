"""File plumbing shared by the readers, the report, the BM25 cache, the CLI and batch builds:
opening maybe-gzip files, hashes, line counts, atomic writes, folders."""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import IO

_CHUNK = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: Path) -> bool:
    """True if the file starts with the gzip magic bytes (raises OSError)."""
    with open(path, "rb") as handle:
        return handle.read(2) == _GZIP_MAGIC


def open_maybe_gzip(path: Path) -> IO[bytes]:
    """The file's bytes for reading, decompressed if it starts with the gzip magic bytes."""
    return gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")


def text_line_count(path: Path) -> int:
    """Lines of a (maybe gzip) text file, read in 1 MiB chunks; a last line without a newline counts."""
    lines, last = 0, b"\n"
    with open_maybe_gzip(path) as handle:
        while chunk := handle.read(_CHUNK):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (last != b"\n")


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB chunks (raises OSError)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def write_lines_atomic(path: Path, lines: Iterable[str]) -> Path:
    """Write text lines to a temp file beside path, fsync, then rename it over path (atomic on POSIX)."""
    lines = iter(lines)
    with _temporary_beside(path) as temporary:
        with open(temporary, "w", encoding="utf-8", newline="\n") as stream:
            while batch := list(islice(lines, 8192)):
                stream.write("".join(batch))
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    return path


def write_text_atomic(path: Path, text: str) -> Path:
    """Replace path's content with text, atomically (see write_lines_atomic)."""
    return write_lines_atomic(path, [text])


def copy_file_atomic(source: Path, target: Path) -> Path:
    """Copy source over target through a temp file and a rename: readers never see half a file."""
    with _temporary_beside(target) as temporary:
        shutil.copyfile(source, temporary)
        os.replace(temporary, target)
    return target


def folder_problem(folder: Path) -> str | None:
    """Create folder if needed; None if it is a writable folder, else what is wrong with it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"cannot be created ({exc.strerror})"
    if not os.access(folder, os.W_OK | os.X_OK):
        return "is not writable"
    return None


@contextmanager
def _temporary_beside(target: Path) -> Iterator[str]:
    """A temp file name in target's folder, mode 0666 & ~umask; removed on exit unless renamed."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(handle)
    try:
        os.chmod(name, 0o666 & ~_umask())  # as a plain open() would, not mkstemp's 0600
        yield name
    finally:
        if os.path.exists(name):
            os.unlink(name)


def _umask() -> int:
    """The process umask, read without changing it where Linux shows it (setting it, even back,
    races with threads that create files or start processes meanwhile)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask
