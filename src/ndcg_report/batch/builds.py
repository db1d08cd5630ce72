"""How the batch executes one report's build command: the job handed over and what comes back.

LocalBuilds runs it as a subprocess of the batch (batch/dask_builds.py has DaskBuilds).
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ndcg_report.batch.leftovers import remove_build_leftovers
from ndcg_report.build.kernels.kernel_forks import FORK_SERVER_ENV
from ndcg_report.build.supervisor import SUPERVISOR_ENV

POLL_SECONDS = 1.0  # how often a build's wait looks whether its stop is overdue
GRACE_SECONDS = 15.0  # after SIGTERM, before SIGKILL: a stopping build removes its staging in a second or two


@dataclass(frozen=True)
class BuildJob:
    """One report's build, as the batch hands it to a Builds: the command (argv[0] this interpreter),
    what to add to its environment (the batch's lock and token), where a cluster task records
    that it started (ROOT/.history/NAME.attempt.json) and the report's folder (its --out)."""

    name: str
    command: list[str]
    env: dict[str, str]
    attempt: Path
    out: Path | None = None


@dataclass(frozen=True)
class BuildRun:
    """How a build command ended: exit code (negative: killed by that signal), output, where it ran."""

    returncode: int
    stdout: str
    stderr: str
    where: str = ""  # "" on this machine, else e.g. "worker tcp://10.0.0.5:40123 on node5 (pid 8123, /usr/bin/python3)"
    removed: tuple[str, ...] = ()  # working folders the build left as it ended, removed since (left_behind)


class Builds(Protocol):
    """Executes build commands; `stopping` is the signal number once asked to stop (then no build starts)."""

    stopping: int
    description: str  # a line for the log, or ""

    def run(self, job: BuildJob) -> BuildRun | None:
        """Run the build and wait for it; None if it was not started because the batch is stopping."""

    def stop(self, signum: int) -> None:
        """Stop the running builds (they end as failed) and start no new one."""


class LocalBuilds:
    """Each build a subprocess of the batch, supervised by it (build/supervisor.py); fork_server: the
    socket of the batch's kernel fork server (build/kernels/kernel_forks.py), which every build then uses
    instead of starting its own. Once a build has ended, what it left is removed (left_behind); a build
    asked to stop that has not ended within GRACE_SECONDS is killed (a stop signal Python lost in a
    finalizer, a hung import), so the batch ends, and leaves no staging, whatever a build does."""

    def __init__(self, fork_server: str = "") -> None:
        self.fork_server = fork_server
        self.lock = threading.Lock()
        self.running: set[subprocess.Popen] = set()
        self.stopping = 0
        self.stopped_at: float | None = None  # time.monotonic() of stop()
        self.description = ""

    def run(self, job: BuildJob) -> BuildRun | None:
        with self.lock:
            if self.stopping:
                return None
            process = subprocess.Popen(job.command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True, errors="replace",
                                       env={**os.environ, **job.env, SUPERVISOR_ENV: str(os.getpid()),
                                            "PYTHONSAFEPATH": "1",  # no module of the caller's folder runs
                                            **({FORK_SERVER_ENV: self.fork_server} if self.fork_server else {})})
            self.running.add(process)
        try:
            while True:
                try:
                    stdout, stderr = process.communicate(timeout=POLL_SECONDS)
                    break
                except subprocess.TimeoutExpired:
                    if self.stopped_at is not None and time.monotonic() > self.stopped_at + GRACE_SECONDS:
                        process.kill()
        finally:
            with self.lock:
                self.running.discard(process)
        return BuildRun(process.returncode, stdout, stderr, removed=left_behind(job.out, process.pid))

    def stop(self, signum: int) -> None:
        with self.lock:
            self.stopping = signum
            self.stopped_at = time.monotonic()
            for process in self.running:
                if process.poll() is None:
                    process.terminate()


def left_behind(out: Path | None, pid: int) -> tuple[str, ...]:
    """Once the build process pid has ended: remove what it left beside its report out, killed or crashed
    before its own clean-up (batch.leftovers.remove_build_leftovers); the names of the folders removed."""
    return () if out is None else tuple(entry.name for entry in remove_build_leftovers(out, pid))
