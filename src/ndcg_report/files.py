"""File plumbing shared by every stage: atomic writes, gzip, hashes, line counts, checked output paths.

Its users: the readers, the report, the BM25 cache, the CLI and batch builds.
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import IO, BinaryIO

from ndcg_report.owners import owner_name, this_users

_CHUNK = 1 << 20
MAX_SUMMARY_BYTES = 256 << 20  # past this, a file is not a report's summary.json: none is read whole
OUTPUT_ROOM = 32  # bytes an output file's temporary name adds to its name: `.NAME.ndcg-PID.XXXXXXXX.tmp`
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


def path_sha256(path: Path) -> str:
    """file_sha256 of a file; of a folder (a Parquet dataset), the sha256 over its files' relative
    paths and sha256 in path order (names starting with '.' or '_' left out, as readers skip them)."""
    if not path.is_dir():
        return file_sha256(path)
    files = (file.relative_to(path) for file in sorted(p for p in path.rglob("*") if p.is_file()))
    return folder_sha256((relative, file_sha256(path / relative)) for relative in files
                         if not any(part.startswith((".", "_")) for part in relative.parts))


def folder_sha256(files: Iterable[tuple[Path, str]]) -> str:
    """The sha256 of a folder over (relative path, sha256) of its files, as path_sha256 takes them (in path order)."""
    digest = hashlib.sha256()
    for relative, sha256 in files:
        digest.update(f"{relative.as_posix()}\0{sha256}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def write_lines_atomic(path: Path, lines: Iterable[str]) -> Path:
    """Write text lines (UTF-8) as path's new content, atomically (see _replacing)."""
    lines = iter(lines)
    with _replacing(path) as stream:
        while batch := list(islice(lines, 8192)):
            stream.write("".join(batch).encode("utf-8"))
    return path


def write_text_atomic(path: Path, text: str) -> Path:
    """Replace path's content with text, atomically (see write_lines_atomic)."""
    return write_lines_atomic(path, [text])


def write_own_text(path: Path, text: str) -> Path:
    """Replace path itself with text, atomically: a link there is replaced, what it leads to is left as it
    is; PermissionError (nothing written) if path is there and belongs to another user (owner_name)."""
    if os.path.lexists(path) and not this_users(path):
        raise PermissionError(errno.EPERM, f"it belongs to {owner_name(path)}, not to you", str(path))
    with _replacing(path, follow_links=False) as stream:
        stream.write(text.encode("utf-8"))
    return path


def copy_file_atomic(source: Path, target: Path) -> Path:
    """Copy source over target, atomically (see _replacing): readers never see half a file."""
    with open(source, "rb") as reading, _replacing(target) as writing:
        shutil.copyfileobj(reading, writing)
    return target


@contextmanager
def _replacing(path: Path, follow_links: bool = True) -> Iterator[BinaryIO]:
    """A binary stream whose bytes become path's content when the block ends: written to a temp file
    beside the file path leads to (through links, as `>` would write), fsynced, then renamed over it
    (atomic on POSIX). A path that is there but not a regular file (a device such as /dev/null, a
    pipe) is written in place: it holds no content to keep, and renaming over it would replace the
    device itself. With follow_links=False, path itself is replaced, whatever it is."""
    if follow_links and not_a_regular_file(path):
        with open(path, "wb") as stream:
            yield stream
        return
    target = _through_links(path) if follow_links else Path(path)
    with _temporary_beside(target) as temporary:
        with open(temporary, "wb") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, target)


def _through_links(path: Path) -> Path:
    """The file a link (or /dev/stdout, /proc/self/fd/N) leads to: the one to replace, as `>` would
    write it, rather than the link itself."""
    return Path(os.path.realpath(path))


def not_a_regular_file(path: Path) -> bool:
    """Whether path (through links) is there and is neither a regular file nor a folder: a device, a
    pipe or a socket, which an output is written into rather than replaced."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def overwritten_input(output: Path, inputs: Iterable[Path], folder: bool = False) -> Path | None:
    """The first input that writing output would replace: the same file (by its path, through a link
    or as a second hard link), or, with folder=True (output is a folder to be replaced), one inside it."""
    real_out = Path(os.path.realpath(output))
    try:
        status = os.stat(output)
        identity: tuple[int, int] | None = (status.st_dev, status.st_ino)
    except (OSError, ValueError):
        identity = None
    for path in inputs:
        real = Path(os.path.realpath(path))
        if real == real_out or (folder and real_out in real.parents):
            return Path(path)
        try:
            status = os.stat(path)
        except (OSError, ValueError):
            continue
        if identity == (status.st_dev, status.st_ino):
            return Path(path)
    return None


def shown_path(path: Path | str) -> str:
    """A path for a one-line message: as it is, or past 160 characters its start and end around '…'."""
    text = str(path)
    return text if len(text) <= 160 else f"{text[:80]}…{text[-79:]}"


def unusable_path(path: Path, room: int = 0) -> str | None:
    """Why an output path cannot be written, found without writing anything; None if it can. A link
    on the way that loops (a link to itself, a cycle of links), a name longer than the file system
    takes, or a path longer than it takes, with `room` bytes left for what the tool adds: a working
    name beside it (`.NAME.staging-...`, `.NAME.ndcg-....tmp`) or the files inside it."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "leads through a link that loops (a link to itself, or a cycle of links); remove or fix the link"
    except ValueError:  # a NUL character: the parser's and the readers' own checks name it
        return None
    absolute = os.path.abspath(path)
    existing = Path(absolute)
    while not os.path.isdir(existing) and existing.parent != existing:  # os.path's: False for a name too long
        existing = existing.parent
    name_max, path_max = _limit(existing, "PC_NAME_MAX", 255), _limit(existing, "PC_PATH_MAX", 4096)
    longest = max((len(os.fsencode(part)) for part in Path(absolute).parts[1:]), default=0)
    if longest > name_max:
        return f"holds a name of {longest:,} bytes; the file system takes {name_max} at most: give a shorter name"
    name = len(os.fsencode(Path(absolute).name))
    if name + room > name_max:
        return (f"has a name of {name:,} bytes; the file system takes {name_max} at most, and the tool makes a working "
                f"name {room} bytes longer beside it: give a name of at most {name_max - room} bytes")
    if len(os.fsencode(absolute)) + room > path_max:
        return (f"is {len(os.fsencode(absolute)):,} bytes long; the file system takes paths of {path_max:,} bytes at "
                f"most, and the tool needs {room} more for its own files: give a shorter path")
    return None


def _limit(folder: Path, name: str, default: int) -> int:
    """A file-system limit of folder (os.pathconf), or default where it cannot be told."""
    try:
        return int(os.pathconf(folder, name))
    except (OSError, ValueError):
        return default


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
    """A temp file name in target's folder, mode 0666 & ~umask; removed on exit unless renamed.

    Named `.TARGET.ndcg-PID.XXXXXXXX.tmp`: stale_temporaries() knows it for ours, and whether its
    writer is gone.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.ndcg-{os.getpid()}.", suffix=".tmp")
    os.close(handle)
    try:
        os.chmod(name, 0o666 & ~umask())  # as a plain open() would, not mkstemp's 0600
        yield name
    finally:
        if os.path.exists(name):
            os.unlink(name)


def umask() -> int:
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
