"""What a reader may open: files as they are, a build's inputs from their snapshots, pipes copied once.

Regular files and folders are read as they are, except in a build, where an input the build copied is
read from its copy (inputs.access.snapshots); a process substitution (`<(zcat x.gz)`,
/dev/fd/N) or /dev/stdin is copied once into a temporary file that every later read uses, checked
while it is copied (its first MiB must be text, gzip or Parquet; the copy stops before the temporary
folder has less than COPY_RESERVE free); a named pipe, device or socket is refused with one line
instead of blocking or reading forever.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from ndcg_report.errors import InputError
from ndcg_report.inputs.ids import non_utf8
from ndcg_report.inputs.access.snapshots import original_of, snapshot_of
from ndcg_report.inputs.access.text_files import PREFIX_BYTES, check_encoding

# Free space a stream's copy leaves in the temporary folder (a tenth of a smaller one): a stream
# that would fill it (`<(cat /dev/urandom)`) is refused there, and its copy removed.
COPY_RESERVE = 256 << 20
_BINARY_STARTS = (b"\x1f\x8b", b"PAR1")  # gzip and Parquet: not checked as text
_COPY_BYTES = 1 << 20
_STREAM_PATH = re.compile(r"^/(?:dev/fd|proc/self/fd|proc/thread-self/fd|proc/(?P<pid>\d+)/fd)/(?P<fd>\d+)$")
_STDIN_PATHS = ("/dev/stdin",)
_copies: dict[tuple[int, int], Path] = {}  # (device, inode) of a pipe read -> its copy
_given: dict[str, str] = {}  # a copy's path -> the path the user gave
_sha256: dict[str, str] = {}  # a copy's path -> the sha256 of its bytes
_lock = threading.Lock()
_folder: Path | None = None


def source_path(path: str | Path) -> Path:
    """The path to read for an input path: in a build, the copy of an input it copied (its snapshot);
    else itself if it is a regular file, a folder or missing (the reader says what is missing); for a
    process substitution or /dev/stdin that is a pipe, a copy of its bytes, read once (the same copy on
    every later call, for as long as the process lives).
    InputError for a named pipe, a device or a socket, or a name that is not UTF-8 (pyarrow opens
    files by UTF-8 names; a report writes the names it read)."""
    path = Path(path)
    shown = non_utf8(str(path))
    if shown:
        raise InputError(shown, None, "the file name holds bytes that are not UTF-8",
                         "rename the file, or give a link to it with a UTF-8 name (ln -s)")
    snapshot = snapshot_of(path)
    if snapshot is not None:
        return Path(snapshot.copy)
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return path
    if stat.S_ISREG(status.st_mode) or stat.S_ISDIR(status.st_mode):
        return path
    kind = _kind(status.st_mode)
    if _is_stream_path(path) and (stat.S_ISFIFO(status.st_mode) or stat.S_ISSOCK(status.st_mode)):
        with _lock:
            key = (status.st_dev, status.st_ino)
            if key not in _copies:
                _copies[key] = _copy(path)
                _given[str(_copies[key])] = str(path)
            return _copies[key]
    raise InputError(path, None, f"is a {kind}, not a regular file (it would be read forever, or block)",
                     "give a file; to pass a command's output, use a process substitution <(command)")


@contextmanager
def readable_path(given: str | Path) -> Iterator[Path]:
    """The path to read for `given` (source_path); an InputError about it names the path the user gave."""
    readable = source_path(given)
    try:
        yield readable
    except InputError as exc:
        if given_name(exc.path) == exc.path:
            raise
        raise InputError(given_name(exc.path), exc.line, exc.problem, exc.fix) from None


def given_name(path: str | Path) -> str:
    """The path the user gave for a copy source_path reads (to name it in messages; a file in a copied
    folder, by the same file in the user's), else path itself."""
    name = read_as(path)
    return _given.get(name, name)


def read_as(path: str | Path) -> str:
    """The input path a parse of path is of: the input's, if path is a build's copy of it, else path itself
    (a stream's copy stands for the stream: given_name names it)."""
    return original_of(path) or str(path)


def stream_sha256(path: str | Path) -> str | None:
    """sha256 of the bytes of a stream's copy source_path made (hashed as it was copied), else None."""
    return _sha256.get(str(path))


def _is_stream_path(path: Path) -> bool:
    """/dev/fd/N, /proc/self/fd/N (and of this process's id) or /dev/stdin: what a shell passes for
    `<(command)`, and standard input; never a named pipe in a folder."""
    text = os.path.abspath(str(path))
    if text in _STDIN_PATHS:
        return True
    match = _STREAM_PATH.match(text)
    return bool(match) and (match["pid"] is None or int(match["pid"]) == os.getpid())


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"


def _copy(path: Path) -> Path:
    """Copy the stream's bytes into a file of the process's temporary folder (removed at exit)."""
    global _folder
    if _folder is None:
        _folder = Path(tempfile.mkdtemp(prefix="ndcg-report-streams-"))
        atexit.register(shutil.rmtree, _folder, True)
    name = os.path.abspath(str(path)).strip("/").replace("/", "-")  # dev-fd-63: the report names the input so
    target = _folder / name
    if target.exists():  # the same descriptor number read again for another stream
        target = _folder / f"{name}-{len(_copies) + 1}"
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as source, open(target, "wb") as copy:
            copy_checked(path, source, copy, digest=digest)
    except OSError as exc:
        target.unlink(missing_ok=True)
        raise InputError(path, None, f"cannot be read ({exc.strerror or exc})",
                         "check the command that writes it") from None
    except InputError:
        target.unlink(missing_ok=True)
        raise
    _sha256[str(target)] = digest.hexdigest()
    return target


def copy_checked(path: Path, source: IO[bytes], copy: IO[bytes], reserve: int = COPY_RESERVE, *,
                 digest: "hashlib._Hash | None" = None, text_only: bool = True, where: str = "the temporary folder",
                 fix: str = "give the file itself, or set TMPDIR to a folder with more room") -> int:
    """Copy source into copy (a file of the temporary folder), checking while copying: InputError
    once its first PREFIX_BYTES are not text (a NUL byte, UTF-16; gzip and Parquet pass; unless not
    text_only), or when the copy's folder would keep less than min(reserve, a tenth of its size) free
    (where, fix: what the folder is, what to do then). digest: updated with every byte copied. The bytes copied."""
    folder = os.path.dirname(copy.name)
    copied, head = 0, b""
    while piece := source.read(_COPY_BYTES):
        if text_only and len(head) < PREFIX_BYTES:
            head += piece[:PREFIX_BYTES - len(head)]
            if not head.startswith(_BINARY_STARTS[0]) and not head.startswith(_BINARY_STARTS[1][:len(head)]):
                check_encoding(path, head)
        room = os.statvfs(folder)
        left = room.f_bavail * room.f_frsize - len(piece)
        if left < min(reserve, room.f_blocks * room.f_frsize // 10):
            raise InputError(path, None, f"its copy would fill {where} {folder} "
                                         f"({left / (1 << 20):,.0f} MiB would be left after {copied >> 20:,} MiB)", fix)
        copy.write(piece)
        if digest is not None:
            digest.update(piece)
        copied += len(piece)
    return copied
