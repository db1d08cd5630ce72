"""Folders this tool makes to work in (staging, old reports), marked as its own, and what it may therefore remove.

A working folder is made private (0700) and marked; a later clean-up removes only marked folders of this
user whose process is gone, and only this user's temp files of the tool's atomic writes.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import time
import uuid
from collections.abc import Iterable
from pathlib import Path

from ndcg_report.files import umask
from ndcg_report.owners import this_users

OWNED_MARKER = ".ndcg-report-owned"  # a file inside every folder this tool makes to work in
_OWNED_FOLDER = re.compile(r"^\.(?P<name>.+)\.(?:staging|old)-(?P<pid>\d+)-[0-9a-f]{8}$")
_TEMPORARY = re.compile(r"^\.(?P<target>.+)\.ndcg-(?P<pid>\d+)\.[^.]+\.tmp$")


FolderIdentity = tuple[int, int]  # a folder's device and inode: what it is, whatever its name


def new_owned_folder(parent: Path, prefix: str) -> Path:
    """new_private_folder's folder."""
    return new_private_folder(parent, prefix)[0]


def new_private_folder(parent: Path, prefix: str) -> tuple[Path, FolderIdentity]:
    """Create `PARENT/PREFIX-PID-XXXXXXXX/` holding OWNED_MARKER, so that a later clean-up can tell it from
    a user's folder of the same shape; return it and its identity (same_folder). It is made here (mkdir
    fails on a name that exists: never one made by someone else) with mode 0700, so no other user can put
    anything in it, and its marker is written through the folder's own descriptor (PermissionError if what
    is at its name is not that folder); open_up() gives it the umask's mode when it is published."""
    folder = parent / f"{prefix}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    folder.mkdir(mode=0o700)
    descriptor = _open_folder(folder)
    try:
        status = os.fstat(descriptor)
        if status.st_uid != os.geteuid() or stat.S_IMODE(status.st_mode) & 0o077:
            raise PermissionError(errno.EPERM, "the folder just made was replaced by another", str(folder))
        _write_new(OWNED_MARKER, _marker_text(None), descriptor)
    finally:
        os.close(descriptor)
    return folder, (status.st_dev, status.st_ino)


def same_folder(folder: Path, identity: FolderIdentity) -> bool:
    """Whether folder (not followed if a link) is still the folder of identity, and this user's."""
    try:
        status = os.lstat(folder)
    except (OSError, ValueError):
        return False
    return (stat.S_ISDIR(status.st_mode) and (status.st_dev, status.st_ino) == identity
            and status.st_uid == os.geteuid())


def open_up(folder: Path, identity: FolderIdentity | None = None) -> None:
    """Give a folder made by new_private_folder the mode a plain mkdir gives (0777 & ~umask, no sticky or
    set-id bits), as it becomes a user's report: through its own descriptor, never through a link, and
    (given its identity) PermissionError if what is at its name is another folder."""
    descriptor = _open_folder(folder)
    try:
        status = os.fstat(descriptor)
        if identity is not None and (status.st_dev, status.st_ino) != identity:
            raise PermissionError(errno.EPERM, "not the folder the build made", str(folder))
        os.fchmod(descriptor, 0o777 & ~umask())
    finally:
        os.close(descriptor)


def _open_folder(folder: Path) -> int:
    """A descriptor of folder itself (OSError if it is a link or not a folder)."""
    return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)


def _write_new(name: str, text: str, folder: int) -> None:
    """Create the file name in the folder of descriptor `folder` and write text to it: never through a link,
    never over a file that is there (FileExistsError)."""
    descriptor = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=folder)
    with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
        stream.write(text)


_ONLY = "owns only: "  # a marker line listing the only entries of its folder that are the tool's


def mark_owned(folder: Path, only: Iterable[str] | None = None) -> None:
    """Put OWNED_MARKER in folder: everything in it is the tool's, or with `only`, just those entries
    (a report folder taken over to be retired may hold a user's files too). Never through a link, never
    over a marker that is there (FileExistsError)."""
    descriptor = _open_folder(folder)
    try:
        _write_new(OWNED_MARKER, _marker_text(only), descriptor)
    finally:
        os.close(descriptor)


def _marker_text(only: Iterable[str] | None) -> str:
    text = f"made by ndcg-report, process {os.getpid()}\n"
    return text if only is None else text + _ONLY + "/".join(sorted(only)) + "\n"


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


