"""Whether a fork server's socket is this user's own, and bounded talk with it.

A kernel's starter finds the fork server by a path in its environment (NDCG_REPORT_KERNEL_FORKS), so a
path is never believed as it is: the socket must sit in a folder of the current user that no one else
may enter (mode 0700, as tempfile.mkdtemp makes it), be the user's own, and be served by a process of
the same user (the peer's credentials, on Linux). Every wait on it has a deadline, every line a bound,
and a pid it names is signalled only while it is that server's own child (and the server a child of the
socket's maker).
"""

from __future__ import annotations

import os
import socket
import stat
import struct
import time
from pathlib import Path

HELLO = b"ndcg-report-forks 1\n"  # the server's first line to an asker, at once
IMPORTING = b"importing\n"  # then each second while its imports run
IMPORTING_SECONDS = 3.0  # the longest an asker waits for the next IMPORTING, READY or its failure
READY = b"ready\n"  # then once it can fork: the asker answers GO, or gives up
GO = b"go\n"
ANSWER_SECONDS = 5.0  # the longest a server may keep an asker waiting for a line: slower ones are dropped
IMPORT_SECONDS = 120.0  # the longest an asker waits for a server's imports in all
MAX_LINE = 4096  # the longest line a server may send
MAX_REQUEST = 1 << 20  # the longest request a server reads: it holds the kernel's environment (often past 4 KiB)


def trusted_socket(path: str) -> bool:
    """Whether path is a Unix socket of the current user in a folder of the current user that only that
    user may enter (no group or other permission bits)."""
    try:
        folder = os.lstat(os.path.dirname(path) or ".")
        entry = os.lstat(path)
    except (OSError, ValueError):
        return False
    me = os.geteuid()
    return (stat.S_ISDIR(folder.st_mode) and folder.st_uid == me and not folder.st_mode & 0o077
            and stat.S_ISSOCK(entry.st_mode) and entry.st_uid == me)


def peer_pid(connection: socket.socket) -> int | None:
    """The pid of the process that made a connected Unix socket's listener (the build or batch that started
    the server) if it runs as the current user (Linux's SO_PEERCRED); 0 where the system cannot tell; None
    if it is another user's."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return 0
    try:
        pid, uid, _ = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
    except OSError:
        return None
    return pid if uid == os.geteuid() and pid > 0 else None


def parent_pid(pid: int) -> int | None:
    """The parent of a running process (Linux's /proc), None if it is gone or the system cannot tell."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def forked_by(pid: int, listener_maker: int) -> int | None:
    """The fork server that forked kernel pid, if it is a child of the listener's maker (peer_pid): the
    server's pid, 0 where the system cannot tell (listener_maker 0, no /proc), None if pid is not such a
    kernel (then it is not to be signalled)."""
    if pid <= 0:
        return None
    if listener_maker == 0 or not os.path.isdir("/proc/self"):
        return 0
    server = parent_pid(pid)
    return server if server is not None and parent_pid(server) == listener_maker else None


def child_of(pid: int, server: int) -> bool:
    """Whether pid is a running child of server; True where the system cannot tell (server 0, no /proc)."""
    if pid <= 0:
        return False
    if server == 0 or not os.path.isdir("/proc/self"):
        return True
    return parent_pid(pid) == server


def read_line(connection: socket.socket, deadline: float, limit: int = MAX_LINE) -> bytes:
    """One line from connection, at most limit bytes, by the monotonic deadline; b"" if the peer closed
    first; TimeoutError past the deadline, ValueError for a longer line."""
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the fork server did not answer in time")
        connection.settimeout(left)
        byte = connection.recv(1)
        if not byte:
            return b""
        line += byte
        if len(line) > limit:
            raise ValueError("the fork server's line is too long")
    return line
