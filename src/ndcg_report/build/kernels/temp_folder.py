"""Whether the temporary folder (TMPDIR) is safe for a build's private folders: no other user may swap them.

A build's kernels keep their connection files (the HMAC key and addresses) and sockets in 0700 folders made
in the temporary folder (kernel_forks.socket_folder). In a folder owned by another user, or one others may
write without the sticky bit, that user could rename such a folder and put one of theirs in its place, then
run code as the build's user in its kernels: the build is refused there before anything starts.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from ndcg_report.errors import ParameterError
from ndcg_report.files import owner_name

_FIX = "set TMPDIR to a folder of your own (mkdir -m 700)"


def check_temporary_folder(folder: str | None = None) -> None:
    """ParameterError unless folder (default: tempfile.gettempdir(), from TMPDIR) belongs to this user or to
    root and is not writable by group or others unless it has the sticky bit (as /tmp, mode 1777)."""
    folder = folder or tempfile.gettempdir()
    try:
        status = os.stat(folder)
    except OSError as exc:
        raise ParameterError(f"the temporary folder {folder} cannot be read ({exc.strerror}); {_FIX}") from None
    mode = f"mode {stat.S_IMODE(status.st_mode):04o}"
    if status.st_uid not in (os.geteuid(), 0):
        raise ParameterError(f"the temporary folder {folder} belongs to {_owner(folder)} ({mode}), not to you: its "
                             f"owner could swap a build's kernel connection files and run code as you; {_FIX}")
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not status.st_mode & stat.S_ISVTX:
        raise ParameterError(f"the temporary folder {folder} ({mode}, owner {_owner(folder)}) is writable by other "
                             "users without the sticky bit: they could swap a build's kernel connection files and run "
                             f"code as you; {_FIX}")


def _owner(folder: str) -> str:
    try:
        return owner_name(Path(os.path.realpath(folder)))
    except OSError:
        return "another user"
