"""A build started by another process (a batch) lives and publishes only while that process does.

The starter names itself in SUPERVISOR_ENV. The build then asks Linux to send it SIGTERM when the
starter dies (prctl PR_SET_PDEATHSIG; SIGTERM stops a build cleanly), and checks once more that
the starter is its parent right before publishing: a report is never published for a dead batch,
which could no longer record it in its history and index.

A batch also names its lock file and its token (BATCH_LOCK_ENV, BATCH_TOKEN_ENV). The starter may
then be a Dask worker on another machine, so the build checks through the shared filesystem too:
the lock must still be flock-held, name this batch's token and not say the batch is stopping; and
a build started by a Dask task (BATCH_ATTEMPT_ENV) needs the task's attempt marker, which the batch
removes once it no longer waits for the build.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import sys
from pathlib import Path

from ndcg_report.errors import BuildError

SUPERVISOR_ENV = "NDCG_REPORT_SUPERVISOR_PID"
BATCH_LOCK_ENV = "NDCG_REPORT_BATCH_LOCK"
BATCH_TOKEN_ENV = "NDCG_REPORT_BATCH_TOKEN"
BATCH_ATTEMPT_ENV = "NDCG_REPORT_BATCH_ATTEMPT"  # set by a Dask task: its attempt marker (batch/dask_builds.py)
_PR_SET_PDEATHSIG = 1


def supervisor_pid() -> int | None:
    """The pid of the process that started this build and supervises it, if any."""
    value = os.environ.get(SUPERVISOR_ENV, "")
    return int(value) if value.isdigit() else None


def die_with_supervisor() -> None:
    """If supervised: have the kernel send SIGTERM when the supervisor dies; stop now if it is gone."""
    pid = supervisor_pid()
    if pid is None:
        return
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        except (OSError, AttributeError):
            pass  # without prctl, check_supervisor still stops the publish
    check_supervisor()  # the supervisor may have died before prctl took effect


def check_supervisor() -> None:
    """BuildError if this build is supervised and its supervisor is no longer its parent (it died), or
    the batch named by BATCH_LOCK_ENV and BATCH_TOKEN_ENV no longer runs or waits for this build."""
    pid = supervisor_pid()
    if pid is not None and os.getppid() != pid:
        raise BuildError(f"step publish: the batch (pid {pid}) that started this build is gone; nothing is published")
    lock, token = os.environ.get(BATCH_LOCK_ENV, ""), os.environ.get(BATCH_TOKEN_ENV, "")
    if lock and token:
        problem = batch_problem(Path(lock), token)
        attempt = os.environ.get(BATCH_ATTEMPT_ENV, "")
        if problem is None and attempt:
            problem = attempt_problem(Path(attempt), token)
        if problem:
            raise BuildError(f"step publish: the batch that started this build {problem}; nothing is published")


def attempt_problem(attempt: Path, token: str) -> str | None:
    """None while the attempt marker of a Dask task names the batch's token; else why not."""
    try:
        record = json.loads(attempt.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = None
    if not isinstance(record, dict) or record.get("token") != token:
        return f"no longer waits for it (its attempt marker {attempt} is gone)"
    return None


def batch_problem(lock: Path, token: str) -> str | None:
    """None while the batch with this token holds its lock and has not been asked to stop; else why
    not ("is gone: ...", "was stopped by signal N"). Reads the lock and probes its flock with a shared,
    non-blocking lock taken and released at once (the batch holds it exclusively while it runs)."""
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError as exc:
        return f"is gone: its lock {lock} cannot be opened ({exc.strerror})"
    try:
        try:
            holder = json.loads(os.pread(fd, 65536, 0).decode("utf-8"))
        except (OSError, ValueError):
            holder = None
        if not isinstance(holder, dict) or holder.get("token") != token:
            return f"is gone: its lock {lock} no longer names it"
        if holder.get("stopping"):
            return f"was stopped by signal {holder['stopping']}"
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return None  # held exclusively: the batch runs
        fcntl.flock(fd, fcntl.LOCK_UN)
        return f"is gone: nothing holds its lock {lock}"
    finally:
        os.close(fd)
