"""Who owns a path, and whether another user could rename or replace what the tool makes in a folder.

A build makes its staging folder, and a batch its history, beside the paths it is given. In a folder
that belongs to another user, or that others may write without the sticky bit, that user could move
such a folder aside and put one of theirs in its place, so that the build writes, runs or publishes
through it: those folders are refused (shared_folder_problem), as git refuses a repository another
user owns.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


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
    return user_name(os.lstat(path).st_uid)


def user_name(uid: int) -> str:
    """The login name of uid, else the number."""
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


def others_can_write(status: os.stat_result) -> bool:
    """Whether a user other than the current one (and root) may write the file or folder of status: it is
    writable by all, or by a group with another member (a user's own private group, as Debian's umask
    002 gives every folder, is the user's alone)."""
    if status.st_mode & stat.S_IWOTH:
        return True
    return bool(status.st_mode & stat.S_IWGRP) and group_has_others(status.st_gid)


def group_has_others(gid: int) -> bool:
    """Whether a user other than the current one (or root) is in group gid: a listed member, or a user
    whose primary group it is. Where the user database cannot be read, a group counts as shared."""
    try:
        import grp
        import pwd

        me = {user_name(os.geteuid()), "root"}
        if set(grp.getgrgid(gid).gr_mem) - me:
            return True
        return any(user.pw_gid == gid and user.pw_name not in me for user in pwd.getpwall())
    except (KeyError, ImportError, OSError):
        return True


def shared_folder_problem(folder: Path) -> str | None:
    """Why another user could swap what the tool makes inside folder (None if no one but this user and
    root can), as `PATH belongs to NAME (mode 0700), not to you`: folder or a folder above it (as given, and with links resolved) belongs to another user, or
    may be written by another user without the sticky bit (a sticky folder such as /tmp lets each user
    rename only their own entries). Folders that do not exist yet are the tool's to make, and skipped."""
    absolute = Path(os.path.abspath(folder))
    seen: set[Path] = set()
    for path in (absolute, Path(os.path.realpath(absolute))):
        for above in (path, *path.parents):
            if above in seen:
                continue
            seen.add(above)
            try:
                status = os.stat(above)
            except OSError:
                continue
            if not stat.S_ISDIR(status.st_mode):
                continue
            mode = f"mode {stat.S_IMODE(status.st_mode):04o}"
            if status.st_uid not in (os.geteuid(), 0):
                return f"{above} belongs to {user_name(status.st_uid)} ({mode}), not to you"
            if others_can_write(status) and not status.st_mode & stat.S_ISVTX:
                return f"{above} ({mode}, owner {user_name(status.st_uid)}) is writable by other users without the sticky bit"
    return None
