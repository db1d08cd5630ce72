"""`batch --dask ADDRESS`: each report's build a task on a Dask cluster's workers.

The workers share the output filesystem with the batch. Only how a build command is executed differs from one machine
(builds.LocalBuilds): the batch keeps the lock, the clean-up, the statuses, the history and the index.

The task (build_on_worker) runs the same `python -m ndcg_report.cli build ...` with the worker's own
interpreter and returns (exit code, stdout, stderr, where it ran). The build is supervised by the
worker process (PR_SET_PDEATHSIG: it stops if the worker dies) and, through the shared filesystem, by
the batch: the batch's lock must still be held under the batch's token and its attempt marker
(ROOT/.history/NAME.attempt.json, written when the task starts and removed by the batch once it stops
waiting) must still be there. The task stops the build as soon as either is not so; the build checks
both again right before publishing. Dask runs a task again when its worker dies; the marker tells
that second attempt, which fails the report naming the dead worker instead of building it twice.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from distributed import Client, get_worker

from ndcg_report.batch.builds import GRACE_SECONDS, BuildJob, BuildRun, left_behind
from ndcg_report.batch.history import is_attempt_marker
from ndcg_report.dask_cluster import LOST, lost_message
from ndcg_report.build.supervisor import (
    BATCH_ATTEMPT_ENV, BATCH_LOCK_ENV, BATCH_TOKEN_ENV, SUPERVISOR_ENV, attempt_problem, batch_problem,
)

POLL_SECONDS = 1.0  # how often a task checks that its batch still waits for the build


class DaskBuilds:
    """Builds as tasks on the cluster of a connected client (builds.Builds)."""

    def __init__(self, client: Client, description: str = "") -> None:
        self.client = client
        self.stopping = 0
        self.description = description

    def run(self, job: BuildJob) -> BuildRun | None:
        if self.stopping:
            return None
        future = self.client.submit(build_on_worker, job.command, job.env, str(job.attempt),
                                    str(job.out) if job.out is not None else "", pure=False,
                                    key=f"ndcg-report-build-{job.name}-{uuid.uuid4().hex[:8]}")
        try:
            returncode, stdout, stderr, where = future.result()
        except LOST as exc:
            return BuildRun(1, "", f"ndcg-report: error: step worker failed: {lost_message(exc)}\n")
        finally:
            if is_attempt_marker(job.attempt):  # the batch no longer waits: a build still running cannot publish
                job.attempt.unlink(missing_ok=True)
            future.release()
        return BuildRun(returncode, stdout, stderr, where)

    def stop(self, signum: int) -> None:
        """Start no new build; running ones stop on their own, seeing `stopping` in the batch's lock."""
        self.stopping = signum


def build_on_worker(command: list[str], env: dict[str, str], attempt: str, out: str = "") -> tuple[int, str, str, str]:
    """The Dask task: run the build command (argv[0] replaced by this worker's interpreter) until it
    ends or its batch stops waiting for it; (exit code, stdout, stderr, which worker). out: the report's
    folder, where what the build left as it ended is removed (builds.left_behind)."""
    here = f"worker {get_worker().address} on {socket.gethostname()} (pid {os.getpid()}, {sys.executable})"
    lock, token = Path(env[BATCH_LOCK_ENV]), env[BATCH_TOKEN_ENV]
    problem = batch_problem(lock, token)
    if problem:
        hint = "" if lock.exists() else f" ({here} does not see the batch's output root: the workers must share it)"
        return 1, "", f"ndcg-report: error: step worker failed: the batch {problem}{hint}; the build did not start\n", here
    try:
        earlier = _claim(Path(attempt), token, here)
    except OSError as exc:
        return 1, "", (f"ndcg-report: error: step worker failed: {here} cannot write {attempt} ({exc.strerror or exc}); "
                       "the workers must see the output root at the batch's path and may write there\n"), here
    if earlier is not None:
        return 1, "", (f"ndcg-report: error: step worker failed: {earlier.get('worker', 'an earlier worker')} died "
                       f"while building this report (started {earlier.get('started', '?')}); Dask ran the task "
                       f"again on {here}, which does not build a report twice in one batch\n"), here
    try:
        process = subprocess.Popen([sys.executable, *command[1:]], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, errors="replace",
                                   env={**os.environ, **env, SUPERVISOR_ENV: str(os.getpid()), BATCH_ATTEMPT_ENV: attempt,
                                        "PYTHONSAFEPATH": "1"})  # no module of the worker's folder runs as code
    except OSError as exc:
        return 1, "", f"ndcg-report: error: step worker failed: {here} cannot start the build ({exc})\n", here
    kill_at = None
    while True:
        try:
            stdout, stderr = process.communicate(timeout=POLL_SECONDS)
            left_behind(Path(out) if out else None, process.pid)  # the worker sees the build's pid: it tidies
            return process.returncode, stdout, stderr, here
        except subprocess.TimeoutExpired:
            pass
        if kill_at is None:
            if batch_problem(lock, token) or attempt_problem(Path(attempt), token):
                process.terminate()  # the build removes its staging and exits
                kill_at = time.monotonic() + GRACE_SECONDS
        elif time.monotonic() > kill_at:
            process.kill()


def _claim(attempt: Path, token: str, here: str) -> dict | None:
    """Create the attempt marker of this batch's build; if this batch already made it (an earlier
    attempt on a worker that died), return what it says instead. A marker of another batch is replaced."""
    record = {"token": token, "worker": here, "started": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    temporary = attempt.with_name(f".{attempt.name}.ndcg-{os.getpid()}.{threading.get_ident():x}.tmp")
    temporary.write_text(json.dumps(record) + "\n", encoding="utf-8")
    try:
        for _ in range(2):
            try:
                os.link(temporary, attempt)  # atomic: created whole, or not at all if it exists
                return None
            except FileExistsError:
                try:
                    earlier = json.loads(attempt.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    earlier = {}
                if isinstance(earlier, dict) and earlier.get("token") == token:
                    return earlier
                if not is_attempt_marker(attempt):  # a file the tool did not write: never replaced
                    raise FileExistsError(17, "it exists and is not an attempt marker of ndcg-report; move it",
                                          str(attempt))
                attempt.unlink(missing_ok=True)  # left by another batch
        return {"worker": "another attempt", "started": "?"}
    finally:
        temporary.unlink(missing_ok=True)
