"""Whether an input stayed one version while it was read: its files' identity, size and times, before and after.

eval may read an input more than once (the qrels once per run, a run streamed and then read whole),
and a build reads each input as it copies it (build/input_snapshots.py; a corpus, read where it is,
throughout). A file replaced meanwhile (`mv B run.txt`) or written to would mix two versions: A's
numbers under B's sha256. An InputWatch stamps every input before its first read; check() raises
InputError when one is no longer the same: another file at its path (device and inode), or other
bytes (size, modification time, and the change time, which no one can set back; a page written
through a memory map may change none of them: a build reads only its copies of the inputs, so its
sha256 stays that of the bytes it parsed). A folder (a Parquet dataset) is the files a reader takes
from it, and a file added to or removed from it changes it too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ndcg_report.errors import InputError
from ndcg_report.inputs.access.sources import given_name

FileStamp = tuple[str, int, int, int, int, int]  # name in the input ("" for a file), device, inode, size, mtime, ctime
Stamp = tuple[FileStamp, ...]


def stamp(path: Path) -> Stamp | None:
    """The stamp of the input at path (through links): of a file, its own; of a folder, its files' (path
    order; names starting with '.' or '_' left out, as readers skip them). None if it cannot be read (a
    reader says why)."""
    try:
        if not os.path.isdir(path):
            return (_file_stamp("", os.stat(path)),)
        files = []
        for folder, subfolders, names in os.walk(path):
            subfolders[:] = [name for name in subfolders if not name.startswith((".", "_"))]
            for name in names:
                if not name.startswith((".", "_")):
                    file = os.path.join(folder, name)
                    files.append(_file_stamp(os.path.relpath(file, path), os.stat(file)))
        return tuple(sorted(files))
    except (OSError, ValueError):
        return None


def _file_stamp(name: str, status: os.stat_result) -> FileStamp:
    return (name, status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


@dataclass(frozen=True)
class InputWatch:
    """Inputs stamped before their first read; check() says whether one changed since."""

    stamps: tuple[tuple[Path, Stamp | None], ...] = ()

    @classmethod
    def of(cls, paths: Iterable[Path | None]) -> InputWatch:
        """The inputs at paths (None skipped), stamped now."""
        return cls().including(paths)

    def including(self, paths: Iterable[Path | None]) -> InputWatch:
        """This watch and the inputs at paths it does not watch yet, stamped now."""
        watched = {path for path, _ in self.stamps}
        added = []
        for path in paths:
            if path is not None and Path(path) not in watched:
                watched.add(Path(path))
                added.append((Path(path), stamp(Path(path))))
        return InputWatch(self.stamps + tuple(added))

    def without(self, paths: Iterable[str | Path]) -> InputWatch:
        """This watch, no longer watching the inputs at paths (a build's, once copied: it reads only the copies)."""
        left_out = {Path(path) for path in paths}
        return InputWatch(tuple((path, before) for path, before in self.stamps if path not in left_out))

    def changed(self) -> Path | None:
        """The first input whose stamp is no longer the one taken, else None."""
        return next((path for path, before in self.stamps if stamp(path) != before), None)

    def check(self, task: str = "build") -> None:
        """InputError naming the first input that changed since it was stamped, if one did."""
        path = self.changed()
        if path is not None:
            raise InputError(given_name(path), None, f"changed during the {task} (replaced, or written to), so what was "
                             "read of it may mix two versions", f"run the {task} again once the file is complete")
