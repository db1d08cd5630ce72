"""`ndcg-report batch`: build every report of a config, N at a time, each in its own process.

One report's failure never stops another: each report is `python -m ndcg_report.cli build ...` in a
subprocess (its own kernel; a crash or a segfault stays there) publishing atomically into
ROOT/NAME. The batch holds ROOT/.batch.lock (flock) for its whole run, keeps per-report history
outside the report folders (history.py) and rewrites ROOT/index.html after every report.

How a build command is executed is a Builds object (batch/builds.py): LocalBuilds, a subprocess of
the batch, or with `--dask` DaskBuilds, a task on a Dask cluster's worker (batch/dask_builds.py).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ndcg_report.console import say
from ndcg_report.version import __version__
from ndcg_report.batch.config import BatchConfig, ReportConfig
from ndcg_report.errors import InputError, ParameterError
from ndcg_report.exit_codes import EXIT_BUSY, EXIT_FAILED, EXIT_OK, EXIT_REGRESSION, exit_code
from ndcg_report.batch.history import (
    append_history, attempt_file, read_batch_state, read_history, read_status, write_batch_state, write_log,
    write_status,
)
from ndcg_report.batch.reports import (
    failed_step, build_reason, short_time, build_argv, fingerprint, headline, test_text,
)
from ndcg_report.batch.leftovers import (
    check_index_owner, check_root_owner, clean_stale_folders, history_lines_skipped, mark_interrupted,
)
from ndcg_report.batch.lock import BatchBusy, HeldLock, batch_lock, utc_now
from ndcg_report.files import folder_problem
from ndcg_report.batch.builds import Builds, BuildJob, LocalBuilds
from ndcg_report.batch.gating import (
    ReportGate, against_words, check_gate_outputs, gate_report, gate_text, keep_build, pin, write_gate_json,
    write_gate_outputs,
)
from ndcg_report.analysis.gate.outputs import STEP_SUMMARY
from ndcg_report.batch.index_page import ReportState, format_number, format_signed, write_index
from ndcg_report.interrupts import handled, signal_name
from ndcg_report.build.supervisor import BATCH_LOCK_ENV, BATCH_TOKEN_ENV

if TYPE_CHECKING:
    from distributed import Client

Log = Callable[[str], None]


@dataclass(frozen=True)
class Outcome:
    name: str
    status: str  # built, skipped or failed
    step: str = ""
    message: str = ""
    seconds: float = 0.0
    finished: str = ""
    gate: ReportGate | None = None  # a gated report's gate, once built or skipped


@dataclass(frozen=True)
class BatchResult:
    outcomes: tuple[Outcome, ...]
    seconds: float
    index: Path
    stopped_by: int = 0  # the signal (SIGINT, SIGTERM, SIGHUP) that stopped the batch, if any
    index_ok: bool = True  # index.html was written every time

    @property
    def interrupted(self) -> bool:
        return bool(self.stopped_by)

    def count(self, status: str) -> int:
        return sum(outcome.status == status for outcome in self.outcomes)

    @property
    def gates(self) -> list[ReportGate]:
        return [outcome.gate for outcome in self.outcomes if outcome.gate is not None]

    @property
    def exit_code(self) -> int:
        """128 + the signal if stopped by one (130 for Ctrl-C), else 1 if a report failed (or the index), else 4
        if a gate failed, else 0."""
        if self.stopped_by:
            return exit_code(self.stopped_by)
        if self.count("failed") or not self.index_ok:
            return EXIT_FAILED
        return EXIT_REGRESSION if any(gate.failed for gate in self.gates) else EXIT_OK


def make_logger(stream=None) -> Log:
    """A thread-safe logger: one timestamped line per call, flushed (no progress bars, no colours); a
    line that cannot be written is dropped (console.say): a lost log line fails no report."""
    lock = threading.Lock()

    def log(message: str) -> None:
        with lock:
            say(f"{utc_now()} {message}\n", stream or sys.stderr)

    return log


class Batch:
    def __init__(self, config: BatchConfig, *, jobs: int, force: bool, log: Log, builds: Builds | None = None) -> None:
        self.config, self.jobs, self.force, self.log = config, jobs, force, log
        self.root = config.output
        self.builds: Builds = builds or LocalBuilds()
        self.lock: HeldLock | None = None  # run_batch sets it once the lock is held
        self.total = len(config.reports)
        self.on_start: Callable[[], object] = lambda: None  # run_batch: rewrite the index to show the build

    def stop(self, signum: int) -> None:
        """SIGTERM/SIGINT: say so in the lock (builds elsewhere read it), stop the running builds."""
        if self.lock is not None:
            self.lock.mark_stopping(signum)
        self.builds.stop(signum)

    def run_report(self, report: ReportConfig, number: int) -> Outcome:
        try:
            return self._run_report(report, number)
        except Exception as exc:  # noqa: BLE001 - one report's surprise must not stop the batch
            return self._failed(report, "batch", f"{type(exc).__name__}: {exc}", 0.0)

    def _run_report(self, report: ReportConfig, number: int) -> Outcome:
        name = report.name
        if self.builds.stopping:
            return Outcome(name, "pending")
        started = time.monotonic()
        try:
            digest, files = fingerprint(report)
        except (InputError, ParameterError, OSError) as exc:
            return self._failed(report, "validate", str(exc), time.monotonic() - started)
        history = read_history(self.root, name)
        status = read_status(self.root, name) or {}
        last_good = history[-1] if history else None
        out = self.root / name
        if (not self.force and last_good is not None and last_good.get("fingerprint") == digest
                and status.get("status") != "failed" and (out / "report.html").is_file()):
            gated = gate_report(self.root, report, False, last_good["time"]) if report.gate else None
            said = f"; {gate_text(gated.summary())}" if gated else ""
            self.log(f"skip {name}: inputs unchanged since {last_good['time']} (use --force to rebuild){said}")
            write_status(self.root, name, {"status": "skipped", "time": utc_now(), "fingerprint": digest,
                                           "message": f"inputs unchanged since {last_good['time']}",
                                           **({"gate": gated.summary()} if gated else {})})
            return Outcome(name, "skipped", message=f"inputs unchanged since {short_time(last_good['time'])}",
                           finished=utc_now(), gate=gated)
        self.log(f"start {name} ({number}/{self.total}): {build_reason(last_good, status, digest, files, self.force)}")
        write_status(self.root, name, {"status": "running", "time": utc_now(), "batch_pid": os.getpid(),
                                       "fingerprint": digest})
        self.on_start()
        if report.gate:
            try:  # before the build can replace it: the build gated against
                keep_build(self.root, name, "last")
            except OSError as exc:
                return self._failed(report, "gate", f"the last build could not be kept to gate against: {exc}",
                                    time.monotonic() - started, digest)
        command = build_argv(report, out, self.config.cache_dir) + (against_words(self.root, report) if report.gate else [])
        env = {BATCH_LOCK_ENV: str(self.lock.path), BATCH_TOKEN_ENV: self.lock.token} if self.lock else {}
        env[STEP_SUMMARY] = ""  # the batch's summary is the batch's to write, not each build's (build --against)
        run = self.builds.run(BuildJob(name, command, env, attempt_file(self.root, name), out))
        if run is None:
            return Outcome(name, "pending")
        for folder in run.removed:
            self.log(f"removed {folder}: left by the build of {name} as it ended")
        seconds = time.monotonic() - started
        where = f"# on {run.where}\n" if run.where else ""
        write_log(self.root, name, f"{where}$ {shlex.join(command)}\n{run.stderr}{run.stdout}")
        if run.returncode not in (EXIT_OK, EXIT_REGRESSION):  # 4: built --against the kept build, and regressed
            step, message = failed_step(run.returncode, run.stderr, self.builds.stopping)
            return self._failed(report, step, message, seconds, digest)
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        finished = utc_now()
        record = {"time": finished, "duration_s": round(seconds, 1), "fingerprint": digest, "files": files,
                  "version": __version__, **headline(summary)}
        try:
            gated = gate_report(self.root, report, True) if report.gate else None
        except ParameterError as exc:  # the build published is not one the gate can read
            return self._failed(report, "gate", str(exc), seconds, digest)
        if gated:
            record["gate"] = gated.summary()
        if last_good is None or last_good.get("fingerprint") != digest:  # --force of unchanged inputs: no new point
            append_history(self.root, name, record)
        write_status(self.root, name, {"status": "built", "time": finished, "fingerprint": digest,
                                       "seconds": round(seconds, 1), **({"gate": gated.summary()} if gated else {})})
        above = (f"; best of {record['n_systems']}: {record['run_name']}; {record['n_above']} of {record['n_systems']} "
                 "significantly above the baseline") if record["n_systems"] > 1 else ""
        self.log(f"done {name} in {seconds:.1f} s: {record['measure']} {format_number(record['run_mean'])} vs "
                 f"{format_number(record['baseline_mean'])} ({format_signed(record['delta'])}, {test_text(record)}){above}"
                 + (f"; {gate_text(gated.summary())}" if gated else ""))
        return Outcome(name, "built", seconds=seconds, finished=finished, gate=gated)

    def _failed(self, report: ReportConfig, step: str, message: str, seconds: float, digest: str = "") -> Outcome:
        finished = utc_now()
        write_status(self.root, report.name, {"status": "failed", "time": finished, "step": step, "message": message,
                                              "fingerprint": digest, "seconds": round(seconds, 1)})
        if not (step == "interrupted" and self.builds.stopping):  # a stopped batch says so once, at its end
            self.log(f"FAILED {report.name} in {seconds:.1f} s: step {step}: {message}")
        return Outcome(report.name, "failed", step=step, message=message, seconds=seconds, finished=finished)

    def states(self, outcomes: dict[str, Outcome]) -> list[ReportState]:
        states = []
        for report in self.config.reports:
            outcome = outcomes.get(report.name) or self._unfinished(report.name)
            gate = outcome.gate.summary() if outcome.gate else None
            if gate is None and report.gate and outcome.status in ("built", "skipped"):  # --index: the status file's
                gate = (read_status(self.root, report.name) or {}).get("gate")
            states.append(ReportState(
                name=report.name, title=report.options.title, status=outcome.status, step=outcome.step,
                message=outcome.message, seconds=outcome.seconds if outcome.status == "built" else None,
                finished=outcome.finished, has_report=(self.root / report.name / "report.html").is_file(),
                history=tuple(read_history(self.root, report.name)),
                previous=read_status(self.root, report.name) if outcome.status == "pending" else None,
                gated=report.gate is not None, gate=gate if isinstance(gate, dict) else None,
            ))
        return states

    def _unfinished(self, name: str) -> Outcome:
        """A report this batch has not finished: building now, or pending."""
        status = read_status(self.root, name) or {}
        if status.get("status") == "running" and status.get("batch_pid") == os.getpid():
            return Outcome(name, "building", finished=status.get("time", ""))
        return Outcome(name, "pending")

    def write_index(self, outcomes: dict[str, Outcome], batch_line: str) -> bool:
        """Rewrite ROOT/index.html atomically; on error log it and return False (the batch goes on)."""
        try:
            write_index(self.root, self.states(outcomes), heading=f"NDCG reports: {self.config.path.name}",
                        batch_line=batch_line)
        except Exception as exc:  # noqa: BLE001 - a broken index must not stop the builds
            self.log(f"index: FAILED to write {self.root / 'index.html'}: {type(exc).__name__}: {exc}")
            return False
        return True


def run_batch(config: BatchConfig, *, jobs: int = 1, force: bool = False, log: Log | None = None,
              builds: Builds | None = None) -> BatchResult:
    """Build every report of config (jobs at a time, each executed by builds, default LocalBuilds);
    raise BatchBusy if another batch holds the root."""
    log = log or make_logger()
    if jobs < 1:
        raise ParameterError(f"-j must be at least 1; got {jobs}")
    started_at, started = utc_now(), time.monotonic()
    batch = Batch(config, jobs=jobs, force=force, log=log, builds=builds)
    stop = lambda number, frame: batch.stop(number)  # noqa: E731  Ctrl-C, SIGTERM, SIGHUP: stop the builds, finish the index
    with batch_lock(config.output, config.path) as lock, handled(stop):
        batch.lock = lock
        if batch.builds.description:
            log(batch.builds.description)
        for stale in clean_stale_folders(config.output):
            log(f"removed {stale.name}: left by a build that did not finish")
        for line in mark_interrupted(config) + history_lines_skipped(config):
            log(line)
        write_batch_state(config.output, {"pid": os.getpid(), "started": started_at, "config": str(config.path),
                                          "state": "running"})
        outcomes: dict[str, Outcome] = {}

        def progress_line() -> str:
            return (f"Batch of {config.path.name} started {short_time(started_at)}: {len(outcomes)} of {batch.total} "
                    "reports finished so far.")

        index_lock = threading.Lock()
        index_ok = batch.write_index(outcomes, progress_line())

        def show_progress() -> None:
            nonlocal index_ok
            with index_lock:
                index_ok &= batch.write_index(dict(outcomes), progress_line())

        batch.on_start = show_progress
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="report") as pool:
            futures = {pool.submit(batch.run_report, report, number): report
                       for number, report in enumerate(config.reports, start=1)}
            for future in as_completed(futures):
                try:
                    outcome = future.result()
                except Exception as exc:  # noqa: BLE001 - e.g. the status file could not be written
                    outcome = Outcome(futures[future].name, "failed", "batch", f"{type(exc).__name__}: {exc}")
                    log(f"FAILED {outcome.name}: step batch: {outcome.message}")
                if outcome.status != "pending":
                    with index_lock:
                        outcomes[outcome.name] = outcome
                    show_progress()
        seconds = time.monotonic() - started
        stopping = batch.builds.stopping
        interrupted = sum(o.status == "failed" and o.step == "interrupted" for o in outcomes.values()) if stopping else 0
        counts = (f"{sum(o.status == 'built' for o in outcomes.values())} built, "
                  f"{sum(o.status == 'skipped' for o in outcomes.values())} skipped, "
                  f"{sum(o.status == 'failed' for o in outcomes.values()) - interrupted} failed")
        if stopping:
            counts += f", {interrupted} stopped, {batch.total - len(outcomes)} not started"
        stopped = f"; stopped by signal {stopping}" if stopping else ""
        final_line = (f"Batch of {config.path.name} started {short_time(started_at)}, finished {short_time(utc_now())} in "
                      f"{seconds:.1f} s: {counts}{stopped}.")
        index_ok &= batch.write_index(outcomes, final_line)
        write_batch_state(config.output, {"pid": os.getpid(), "started": started_at, "config": str(config.path),
                                          "state": "finished", "finished": utc_now(), "line": final_line})
        index = config.output / "index.html"
        result = BatchResult(tuple(outcomes.values()), seconds, index, stopped_by=stopping, index_ok=index_ok)
        if any(report.gate for report in config.reports):
            write_gate_json(config.output, result.gates)
        if stopping:
            log(f"batch: interrupted by {signal_name(stopping)} after {seconds:.1f} s: {counts}; index {index}"
                + ("" if index_ok else " (NOT updated: see the error above)"))
        else:
            log(f"batch: {counts} in {seconds:.1f} s; index {index}"
                + ("" if index_ok else " (NOT updated: see the error above)"))
    return result


def refresh_index(config: BatchConfig, log: Log | None = None) -> Path:
    """Rewrite ROOT/index.html from the recorded history and statuses, building nothing (reports a dead
    batch left building show as interrupted); raise BatchBusy if a batch is running (its index is live)."""
    log = log or make_logger()
    batch = Batch(config, jobs=1, force=False, log=log)
    with batch_lock(config.output, config.path):
        for line in mark_interrupted(config):
            log(line)
        previous = read_batch_state(config.output) or {}
        if previous.get("state") == "running":
            write_batch_state(config.output, {**previous, "state": "interrupted"})
            line = (f"The batch of {Path(previous.get('config', '?')).name} started {short_time(previous.get('started', ''))} "
                    "was killed before it finished; reports it did not finish show as interrupted.")
        else:
            line = previous.get("line") or "No batch has run on this output root yet."
        outcomes = {}
        for report in config.reports:
            status = read_status(config.output, report.name) or {}
            if status.get("status") in ("built", "skipped", "failed"):
                outcomes[report.name] = Outcome(report.name, status["status"], step=status.get("step", ""),
                                                message=status.get("message", ""), seconds=status.get("seconds", 0.0),
                                                finished=status.get("time", ""))
            else:
                outcomes[report.name] = Outcome(report.name, "pending", message="not built yet")
        if not batch.write_index(outcomes, f"{line} (Index rewritten {short_time(utc_now())}.)"):
            raise OSError(f"could not write {config.output / 'index.html'}")
    return config.output / "index.html"


def _check_output_root(root: Path) -> None:
    """Create the output root; ParameterError if it cannot be a writable folder."""
    problem = folder_problem(root)
    if problem:
        raise ParameterError(f"output root {root} {problem}; set `output` to a writable folder")


def main(config_path: str, *, jobs: int | None = None, force: bool = False, index_only: bool = False,
         dask: str = "", pin_name: str = "", gate_outputs: dict[str, Path] | None = None) -> int:
    """The `batch` subcommand: exit 0 all built or skipped, 1 a report failed, 4 (none failed) a gate failed,
    3 the root is busy. gate_outputs: {"junit" or "markdown": FILE} of the batch's gates (with the Markdown
    appended to $GITHUB_STEP_SUMMARY); pin_name: pin that report's build, build nothing.

    A config error, or with dask a scheduler address that does not answer, raises ParameterError
    (the CLI prints it and exits 2) before anything is built.
    """
    from ndcg_report.batch.config import load_config

    cpus = os.cpu_count() or 1
    if dask and index_only:
        raise ParameterError("--index builds nothing, so it takes no --dask; drop one of them")
    gate_outputs = gate_outputs or {}
    if pin_name and (index_only or dask or force or gate_outputs):
        raise ParameterError("--pin builds nothing, so it takes no --index, --dask, --force, --junit or --markdown; "
                             "drop them")
    if dask and jobs is not None and jobs < 1:
        raise ParameterError(f"-j must be at least 1; got {jobs}")
    if not dask and jobs is not None and not 1 <= jobs <= cpus:
        raise ParameterError(f"-j must be between 1 and the number of CPUs ({cpus}); got {jobs}")
    config = load_config(config_path)
    check_gate_outputs(config, gate_outputs)
    if not dask and not index_only and not pin_name:  # refused before the output root is made (the builds' check, done again)
        from ndcg_report.build.kernels.temp_folder import check_temporary_folder

        check_temporary_folder()
    client = None
    if dask:
        from ndcg_report.dask_cluster import connect

        client = connect(dask)  # a bad address: exit 2 before the output root is made
    try:
        _check_output_root(config.output)
        check_root_owner(config)
        check_index_owner(config.output)
        if pin_name:
            say(f"pinned {config.output / pin_name}: `against: pinned` gates against this build (kept in "
                f"{pin(config, pin_name)})\n")
            return EXIT_OK
        if index_only:
            for line in history_lines_skipped(config):
                say(f"ndcg-report: note: {line}\n", sys.stderr)
            say(f"wrote {refresh_index(config)}\n")
            return EXIT_OK
        if client is not None:
            builds, jobs = _cluster_builds(client, dask, jobs)
            result = run_batch(config, jobs=jobs, force=force, builds=builds)
        else:
            from ndcg_report.build.kernels.kernel_forks import running_fork_server

            with running_fork_server(f"batch {Path(config_path).resolve()}") as fork_server:  # one for every build
                result = run_batch(config, jobs=jobs or 1, force=force, builds=LocalBuilds(fork_server))
    except BatchBusy as exc:
        print(f"ndcg-report: error: {exc}", file=sys.stderr, flush=True)
        return EXIT_BUSY
    finally:
        if client is not None:
            client.close(timeout=10)
    write_gate_outputs(result.gates, gate_outputs)
    return result.exit_code


def _cluster_builds(client: "Client", address: str, jobs: int | None) -> tuple[Builds, int]:
    """DaskBuilds on the connected client (batch/dask_builds.py), and how many reports to build at
    once: jobs, else the cluster's worker threads now."""
    from ndcg_report.batch.dask_builds import DaskBuilds
    from ndcg_report.dask_cluster import worker_threads

    threads, workers = worker_threads(client), len(client.nthreads())
    jobs = jobs or max(1, threads)
    description = (f"dask: scheduler {address} with {workers} worker{'' if workers == 1 else 's'} ({threads} "
                   f"threads); up to {jobs} report{'' if jobs == 1 else 's'} at a time")
    return DaskBuilds(client, description=description), jobs
