"""A build started by another process (a batch) lives and publishes only while that process does.

The starter names itself in SUPERVISOR_ENV. The build then asks Linux to send it SIGTERM when the
starter dies (prctl PR_SET_PDEATHSIG; SIGTERM stops a build cleanly), and checks once more that
the starter is its parent right before publishing: a report is never published for a dead batch,
which could no longer record it in its history and index.
"""

from __future__ import annotations

import os
import signal
import sys

from ndcg_report.errors import BuildError

SUPERVISOR_ENV = "NDCG_REPORT_SUPERVISOR_PID"
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
    """BuildError if this build is supervised and its supervisor is no longer its parent (it died)."""
    pid = supervisor_pid()
    if pid is not None and os.getppid() != pid:
        raise BuildError(f"step publish: the batch (pid {pid}) that started this build is gone; nothing is published")
