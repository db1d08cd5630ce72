"""The batch's lock: ROOT/.batch.lock, flock-held for the batch's whole run.

Held exclusively, released by the kernel if the process dies; it names the batch and its token so builds
anywhere can tell it runs.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ndcg_report.errors import ParameterError
from ndcg_report.owners import belongs_to

LOCK_NAME = ".batch.lock"


class BatchBusy(Exception):
    """Another batch holds the lock of this output root."""


def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class HeldLock:
    """ROOT/.batch.lock while this batch holds it: the path, this batch's token (written in the lock,
    so a build anywhere on the shared filesystem can tell this batch runs), the open descriptor."""

    path: Path
    token: str
    fd: int
    holder: dict

    def mark_stopping(self, signum: int) -> None:
        """Write into the lock that this batch was asked to stop: builds that read it stop too."""
        os.pwrite(self.fd, (json.dumps({**self.holder, "stopping": signum}) + "\n").encode("utf-8"), 0)


_LOCK_TRIES = 5  # a build probing the lock holds it shared for microseconds: try again before saying busy


@contextmanager
def batch_lock(root: Path, config_path: Path) -> Iterator[HeldLock]:
    """Hold an exclusive flock on ROOT/.batch.lock (released by the kernel if this process dies)."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise ParameterError(f"cannot open the lock {path}{belongs_to(path)}: {exc.strerror}; run the batch as "
                             "the user who owns the output root, or give another output") from None
    try:
        for attempt in range(_LOCK_TRIES):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if attempt == _LOCK_TRIES - 1:
                    holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
                    raise BatchBusy(f"another batch is running on {root} ({_describe_holder(holder)}); "
                                    f"this one stops without building (lock {path})") from None
                time.sleep(0.02)
        os.ftruncate(fd, 0)
        holder = {"pid": os.getpid(), "started": utc_now(), "host": socket.gethostname(), "config": str(config_path),
                  "token": uuid.uuid4().hex}
        os.pwrite(fd, (json.dumps(holder) + "\n").encode("utf-8"), 0)
        yield HeldLock(path, holder["token"], fd, holder)
    finally:
        os.close(fd)


def _describe_holder(text: str) -> str:
    try:
        holder = json.loads(text)
        return f"pid {holder['pid']} on {holder['host']}, started {holder['started']}, config {holder['config']}"
    except (ValueError, KeyError, TypeError):
        return "holder unknown"
