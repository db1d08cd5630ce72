"""File plumbing shared by every stage: atomic writes, gzip, hashes, line counts, safe folders.

Its users: the readers, the report, the BM25 cache, the CLI and batch builds.
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import os
import re
import shutil
import stat
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import IO, BinaryIO

_CHUNK = 1 << 20
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
        os.chmod(name, 0o666 & ~_umask())  # as a plain open() would, not mkstemp's 0600
        yield name
    finally:
        if os.path.exists(name):
            os.unlink(name)


# --- what this tool made, and may therefore remove --------------------------------------------

OWNED_MARKER = ".ndcg-report-owned"  # a file inside every folder this tool makes to work in
_OWNED_FOLDER = re.compile(r"^\.(?P<name>.+)\.(?:staging|old)-(?P<pid>\d+)-[0-9a-f]{8}$")
_TEMPORARY = re.compile(r"^\.(?P<target>.+)\.ndcg-(?P<pid>\d+)\.[^.]+\.tmp$")


def new_owned_folder(parent: Path, prefix: str) -> Path:
    """Create `PARENT/PREFIX-PID-XXXXXXXX/` holding OWNED_MARKER, so that a later clean-up can tell it from
    a user's folder of the same shape. It is made here (mkdir fails on a name that exists: never one made
    by someone else) with mode 0700, so no other user can put anything in it; open_up() gives it the
    umask's mode when it is published."""
    folder = parent / f"{prefix}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    folder.mkdir(mode=0o700)
    mark_owned(folder)
    return folder


def open_up(folder: Path) -> None:
    """Give a folder made by new_owned_folder the mode a plain mkdir gives (0777 & ~umask, no sticky or
    set-id bits), as it becomes a user's report."""
    os.chmod(folder, 0o777 & ~_umask())


def this_users(path: Path, writable_by_all: bool = True) -> bool:
    """Whether path (not followed if a link) belongs to the current user (and, with writable_by_all=False,
    is not writable by every user): what another user made is never taken for this tool's."""
    try:
        status = os.lstat(path)
    except (OSError, ValueError):
        return False
    return status.st_uid == os.geteuid() and (writable_by_all or not status.st_mode & 0o002)


def owner_name(path: Path) -> str:
    """The name of the user path (not followed if a link) belongs to: its login name, else its uid."""
    uid = os.lstat(path).st_uid
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (KeyError, ImportError):
        return str(uid)


def belongs_to(path: Path) -> str:
    """' (it belongs to NAME)' for a message naming path (through links), or '' if that cannot be told."""
    try:
        return f" (it belongs to {owner_name(Path(os.path.realpath(path)))})"
    except (OSError, ValueError):
        return ""


_ONLY = "owns only: "  # a marker line listing the only entries of its folder that are the tool's


def mark_owned(folder: Path, only: Iterable[str] | None = None) -> None:
    """Put OWNED_MARKER in folder: everything in it is the tool's, or with `only`, just those entries
    (a report folder taken over to be retired may hold a user's files too)."""
    text = f"made by ndcg-report, process {os.getpid()}\n"
    if only is not None:
        text += _ONLY + "/".join(sorted(only)) + "\n"
    (folder / OWNED_MARKER).write_text(text, encoding="utf-8")


def owned_entries(folder: Path) -> frozenset[str] | None:
    """The entries of a marked folder that are the tool's: None if all of them are."""
    try:
        text = (folder / OWNED_MARKER).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(_ONLY):
            return frozenset(name for name in line[len(_ONLY):].split("/") if name)
    return None


def remove_owned_folder(folder: Path, attempts: int = 5, home: Path | None = None) -> bool:
    """Remove a folder this tool made, its marker last: if a process still writing into it (a dying
    kernel) keeps it alive, the marker stays and a later clean-up can still tell it for ours. If its
    marker lists the only entries that are the tool's, only those go; the others are moved into home
    (if given and free there) or left, with the folder. An entry of another user is neither removed nor
    moved. Retries a few times, 0.2 s apart; True if gone."""
    only = owned_entries(folder)
    foreign = False
    for attempt in range(attempts):
        for entry in list(folder.iterdir()) if folder.is_dir() else ():
            if entry.name == OWNED_MARKER:
                continue
            if not this_users(entry):
                foreign = True  # it stays, and so does the folder
                continue
            if only is not None and (entry.name not in only or (entry.is_dir() and not entry.is_symlink())):
                if home is not None and home.is_dir() and not os.path.lexists(home / entry.name):
                    try:
                        entry.rename(home / entry.name)
                    except OSError:
                        pass
            elif entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
        try:
            if [entry.name for entry in folder.iterdir()] in ([], [OWNED_MARKER]):
                (folder / OWNED_MARKER).unlink(missing_ok=True)
                folder.rmdir()
                return True
        except FileNotFoundError:
            return True
        except OSError:
            pass
        if only is not None or foreign:
            return False  # a user's entry stays: waiting will not make it go
        time.sleep(0.2)
    return not folder.exists()


def missing_folders(folder: Path) -> list[Path]:
    """The folders `folder.mkdir(parents=True)` would create, deepest first."""
    missing = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    return missing


def remove_empty_folders(folders: list[Path]) -> None:
    """Remove each of folders (deepest first) that is empty; stop at the first that is not."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def owned_folder_home(folder: Path) -> Path | None:
    """PARENT/NAME for a working folder `PARENT/.NAME.staging-PID-X` (or `.old-`): the folder it was made for."""
    match = _OWNED_FOLDER.match(folder.name)
    return folder.parent / match["name"] if match else None


def stale_owned_folders(parent: Path, name: str | None = None) -> list[Path]:
    """Working folders (`.NAME.staging-PID-X` / `.NAME.old-PID-X`) in parent that this tool made for a
    process that is gone, only those of NAME if given: they hold OWNED_MARKER, and folder and marker are
    the current user's (the folder not writable by all), whatever their names or contents say: in a shared
    parent another user may plant a folder of that shape."""
    found = []
    for entry in sorted(parent.iterdir()) if parent.is_dir() else ():
        match = _OWNED_FOLDER.match(entry.name)
        if (match and (name is None or match["name"] == name) and entry.is_dir() and not entry.is_symlink()
                and this_users(entry, writable_by_all=False) and this_users(entry / OWNED_MARKER)
                and (entry / OWNED_MARKER).is_file() and not process_alive(int(match["pid"]))):
            found.append(entry)
    return found


def stale_temporaries(folder: Path, targets: Iterable[str] | None = None) -> list[Path]:
    """Temp files of atomic writes (`.TARGET.ndcg-PID.X.tmp`) in folder whose writer is gone and that
    belong to the current user (another user's, of that shape, are not ours to remove); only those of
    the given target names if given (a target name may end with '*' to match a suffix)."""
    wanted = list(targets) if targets is not None else None
    found = []
    for entry in sorted(folder.iterdir()) if folder.is_dir() else ():
        match = _TEMPORARY.match(entry.name)
        if (not match or not entry.is_file() or entry.is_symlink() or not this_users(entry)
                or process_alive(int(match["pid"]))):
            continue
        target = match["target"]
        if wanted is None or any(target == w or (w.startswith("*") and target.endswith(w[1:])) for w in wanted):
            found.append(entry)
    return found


def owned_folder_pid(folder: Path) -> int | None:
    """The process that made a working folder `.NAME.staging-PID-X` (or `.old-`), by its name."""
    match = _OWNED_FOLDER.match(folder.name)
    return int(match["pid"]) if match else None


def process_alive(pid: int) -> bool:
    """Whether pid is a running process (a zombie, killed but not yet reaped, counts as dead)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


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
