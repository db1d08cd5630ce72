"""`ndcg-report batch`: build every report of a config, N at a time, each in its own process.

One report's failure never stops another: each report is `python -m ndcg_report.cli build ...` in a
subprocess (its own kernel; a crash or a segfault stays there) publishing atomically into
ROOT/NAME. The batch holds ROOT/.batch.lock (flock) for its whole run, keeps per-report history
outside the report folders (history.py) and rewrites ROOT/index.html after every report.

How a build command is executed is a Builds object (batch/builds.py): LocalBuilds, a subprocess of
the batch, or with `--dask` DaskBuilds, a task on a Dask cluster's worker (batch/dask_builds.py).
"""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import os
import re
import shlex
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ndcg_report.version import __version__
from ndcg_report.batch.config import BM25_KEYS, BatchConfig, ReportConfig
from ndcg_report.errors import InputError, ParameterError
from ndcg_report.batch.history import (
    append_history, attempt_file, history_dir, log_file, read_batch_state, read_history, read_status, write_batch_state,
    write_status,
)
from ndcg_report.files import (
    folder_problem, path_sha256, remove_owned_folder, stale_owned_folders, stale_temporaries, write_text_atomic,
)
from ndcg_report.batch.builds import Builds, BuildJob, LocalBuilds
from ndcg_report.batch.index_page import INDEX_GENERATOR, ReportState, format_number, format_p, format_signed, write_index
from ndcg_report.report.parameters import resolve_path
from ndcg_report.report.supervisor import BATCH_LOCK_ENV, BATCH_TOKEN_ENV

if TYPE_CHECKING:
    from distributed import Client

LOCK_NAME = ".batch.lock"
EXIT_OK, EXIT_FAILED, EXIT_BUSY = 0, 1, 3
Log = Callable[[str], None]


class BatchBusy(Exception):
    """Another batch holds the lock of this output root."""


@dataclass(frozen=True)
class Outcome:
    name: str
    status: str  # built, skipped or failed
    step: str = ""
    message: str = ""
    seconds: float = 0.0
    finished: str = ""


@dataclass(frozen=True)
class BatchResult:
    outcomes: tuple[Outcome, ...]
    seconds: float
    index: Path
    interrupted: bool = False  # stopped by SIGTERM/SIGINT
    index_ok: bool = True  # index.html was written every time


    def count(self, status: str) -> int:
        return sum(outcome.status == status for outcome in self.outcomes)

    @property
    def exit_code(self) -> int:
        ok = self.count("failed") == 0 and not self.interrupted and self.index_ok
        return EXIT_OK if ok else EXIT_FAILED


def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def make_logger(stream=None) -> Log:
    """A thread-safe logger: one timestamped line per call, flushed (no progress bars, no colours)."""
    lock = threading.Lock()

    def log(message: str) -> None:
        with lock:
            print(f"{utc_now()} {message}", file=stream or sys.stderr, flush=True)

    return log


# --- fingerprint -------------------------------------------------------------------------------


def fingerprint(report: ReportConfig) -> tuple[str, dict[str, dict[str, str]]]:
    """(sha256 over the input files' sha256, the options and the ndcg-report version; per-file record).

    Raises InputError for a missing input file. BM25 options count only for a corpus baseline.
    """
    files = {}
    for item in report.inputs:
        path = resolve_path(str(item.path), item.role, folder_ok=item.role not in ("corpus", "topics"))
        files[item.role] = {"path": str(path), "sha256": path_sha256(path)}
    options = asdict(report.options)
    if not report.uses_corpus:
        for key in BM25_KEYS:
            options.pop(key)
    material = {"files": {role: record["sha256"] for role, record in files.items()}, "options": options,
                "version": __version__}
    digest = hashlib.sha256(json.dumps(material, sort_keys=True).encode("utf-8")).hexdigest()
    return digest, files


# --- the lock ----------------------------------------------------------------------------------


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
        owner = ""
        try:
            import pwd

            owner = f" (it belongs to {pwd.getpwuid(path.stat().st_uid).pw_name})"
        except (OSError, KeyError, ImportError):
            pass
        raise ParameterError(f"cannot open the lock {path}{owner}: {exc.strerror}; run the batch as the user who "
                             "owns the output root, or give another output") from None
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


def clean_stale_folders(root: Path) -> list[Path]:
    """Remove what killed processes of this tool left in ROOT, and nothing else: working folders that
    hold its marker and whose process is gone, its own temp files (named after the files it writes
    atomically, with a dead writer's pid) and the attempt markers of a killed batch's Dask tasks."""
    removed = []
    for entry in stale_owned_folders(root):
        remove_owned_folder(entry)
        removed.append(entry)
    temporaries = stale_temporaries(history_dir(root), ["*.status.json", "*.log", "*.attempt.json"])
    for entry in stale_temporaries(root, ["index.html"]) + temporaries:
        entry.unlink(missing_ok=True)
        removed.append(entry)
    for entry in sorted(history_dir(root).glob("*.attempt.json")):  # Dask task markers of an earlier batch
        entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed


def check_index_owner(root: Path) -> None:
    """ParameterError if ROOT/index.html exists and this tool did not write it (it would be replaced)."""
    index = root / "index.html"
    if index.is_symlink() or (index.exists() and not index.is_file()):
        raise ParameterError(f"{index} is not a file the batch wrote; move it, or give another output root")
    if index.is_file():
        with open(index, "rb") as handle:
            head = handle.read(4096)
        if INDEX_GENERATOR.encode() not in head and b"<h2>NDCG across builds</h2>" not in index.read_bytes()[-65536:]:
            raise ParameterError(f"{index} was not written by ndcg-report and would be replaced; move it, or give "
                                 "another output root")


# --- one report --------------------------------------------------------------------------------


def build_command(report: ReportConfig, out: Path, cache_dir: Path | None) -> list[str]:
    """The `ndcg-report build` command of a report (`--flag=value`, so no value is read as a flag)."""
    o = report.options
    command = [sys.executable, "-m", "ndcg_report.cli", "build"]
    command += [f"--run={item.name}={item.path}" if item.name else f"--run={item.path}" for item in report.runs]
    command += [f"--{item.role}={item.path}" for item in report.inputs if not item.role.startswith("run")]
    command += [f"--{flag}={value}" for flag, value in (("preset", o.preset), ("measure", o.measures),
                                                         ("cutoffs", o.cutoffs), ("rel-level", o.rel_level),
                                                         ("headline", o.headline)) if value]
    command += ["--judged-only"] if o.judged_only else []
    command += [f"--gain={o.gain}", f"--missing={o.missing}", f"--no-relevant={o.no_relevant}",
                f"--name={o.title}", f"--seed={o.seed}", f"--timeout={o.timeout}"]
    if o.run_name:
        command.append(f"--run-name={o.run_name}")
    if o.baseline_name:
        command.append(f"--baseline-name={o.baseline_name}")
    if report.uses_corpus:
        command += [f"--k1={o.k1!r}", f"--b={o.b!r}", f"--top-k={o.top_k}"]
        if cache_dir is not None:
            command.append(f"--cache-dir={cache_dir}")
    command.append(f"--out={out}")
    return command


def headline(summary: dict) -> dict:
    """The numbers the index and history keep, from a report's summary.json, on its headline measure:
    every system's value and comparison, and the best system's at the top level."""
    k = summary["parameters"]["headline"]
    keys = ("n", "run_mean", "baseline_mean", "delta", "ci_low", "ci_high", "randomization_pvalue",
            "holm_randomization_pvalue", "t_pvalue", "holm_t_pvalue", "wilcoxon_pvalue", "holm_wilcoxon_pvalue")
    alpha = summary["parameters"].get("alpha", 0.05)
    systems = []
    for name, rows in summary["comparisons"].items():
        row = rows[k]
        p = row.get("holm_randomization_pvalue")
        above = isinstance(p, (int, float)) and p < alpha and (row.get("delta") or 0) > 0
        systems.append({"name": name, **{key: row.get(key) for key in keys if key not in ("n", "baseline_mean")},
                        "significantly_above": above})
    best = max(systems, key=lambda system: (system["run_mean"] if system["run_mean"] is not None else -1.0))
    best_row = summary["comparisons"][best["name"]][k]
    record = {key: best_row.get(key) for key in keys}
    record.update(measure=k, run_name=best["name"], baseline_name=summary["baseline"], systems=systems,
                  n_systems=len(systems), n_above=sum(system["significantly_above"] for system in systems),
                  warnings=len(summary.get("warnings", [])))
    return record


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
            self.log(f"skip {name}: inputs unchanged since {last_good['time']} (use --force to rebuild)")
            write_status(self.root, name, {"status": "skipped", "time": utc_now(), "fingerprint": digest,
                                           "message": f"inputs unchanged since {last_good['time']}"})
            return Outcome(name, "skipped", message=f"inputs unchanged since {_short(last_good['time'])}",
                           finished=utc_now())
        self.log(f"start {name} ({number}/{self.total}): {_reason(last_good, status, digest, files, self.force)}")
        write_status(self.root, name, {"status": "running", "time": utc_now(), "batch_pid": os.getpid(),
                                       "fingerprint": digest})
        self.on_start()
        command = build_command(report, out, self.config.cache_dir)
        env = {BATCH_LOCK_ENV: str(self.lock.path), BATCH_TOKEN_ENV: self.lock.token} if self.lock else {}
        run = self.builds.run(BuildJob(name, command, env, attempt_file(self.root, name)))
        if run is None:
            return Outcome(name, "pending")
        seconds = time.monotonic() - started
        where = f"# on {run.where}\n" if run.where else ""
        write_text_atomic(log_file(self.root, name), f"{where}$ {shlex.join(command)}\n{run.stderr}{run.stdout}")
        if run.returncode != 0:
            step, message = _failure(run.returncode, run.stderr, self.builds.stopping)
            return self._failed(report, step, message, seconds, digest)
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        finished = utc_now()
        record = {"time": finished, "duration_s": round(seconds, 1), "fingerprint": digest, "files": files,
                  "version": __version__, **headline(summary)}
        if last_good is None or last_good.get("fingerprint") != digest:  # --force of unchanged inputs: no new point
            append_history(self.root, name, record)
        write_status(self.root, name, {"status": "built", "time": finished, "fingerprint": digest,
                                       "seconds": round(seconds, 1)})
        above = (f"; best of {record['n_systems']}: {record['run_name']}; {record['n_above']} of {record['n_systems']} "
                 "significantly above the baseline") if record["n_systems"] > 1 else ""
        self.log(f"done {name} in {seconds:.1f} s: {record['measure']} {format_number(record['run_mean'])} vs "
                 f"{format_number(record['baseline_mean'])} ({format_signed(record['delta'])}, "
                 f"Holm randomization p={format_p(record['holm_randomization_pvalue'])}){above}")
        return Outcome(name, "built", seconds=seconds, finished=finished)

    def _failed(self, report: ReportConfig, step: str, message: str, seconds: float, digest: str = "") -> Outcome:
        finished = utc_now()
        write_status(self.root, report.name, {"status": "failed", "time": finished, "step": step, "message": message,
                                              "fingerprint": digest, "seconds": round(seconds, 1)})
        self.log(f"FAILED {report.name} in {seconds:.1f} s: step {step}: {message}")
        return Outcome(report.name, "failed", step=step, message=message, seconds=seconds, finished=finished)

    def states(self, outcomes: dict[str, Outcome]) -> list[ReportState]:
        states = []
        for report in self.config.reports:
            outcome = outcomes.get(report.name) or self._unfinished(report.name)
            states.append(ReportState(
                name=report.name, title=report.options.title, status=outcome.status, step=outcome.step,
                message=outcome.message, seconds=outcome.seconds if outcome.status == "built" else None,
                finished=outcome.finished, has_report=(self.root / report.name / "report.html").is_file(),
                history=tuple(read_history(self.root, report.name)),
                previous=read_status(self.root, report.name) if outcome.status == "pending" else None,
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
    with batch_lock(config.output, config.path) as lock, _stop_on_signals(batch):
        batch.lock = lock
        if batch.builds.description:
            log(batch.builds.description)
        for stale in clean_stale_folders(config.output):
            log(f"removed {stale.name}: left by a build that did not finish")
        for line in mark_interrupted(config):
            log(line)
        write_batch_state(config.output, {"pid": os.getpid(), "started": started_at, "config": str(config.path),
                                          "state": "running"})
        outcomes: dict[str, Outcome] = {}

        def progress_line() -> str:
            return (f"Batch of {config.path.name} started {_short(started_at)}: {len(outcomes)} of {batch.total} "
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
        counts = (f"{sum(o.status == 'built' for o in outcomes.values())} built, "
                  f"{sum(o.status == 'skipped' for o in outcomes.values())} skipped, "
                  f"{sum(o.status == 'failed' for o in outcomes.values())} failed")
        stopped = f"; stopped by signal {batch.builds.stopping}" if batch.builds.stopping else ""
        final_line = (f"Batch of {config.path.name} started {_short(started_at)}, finished {_short(utc_now())} in "
                      f"{seconds:.1f} s: {counts}{stopped}.")
        index_ok &= batch.write_index(outcomes, final_line)
        write_batch_state(config.output, {"pid": os.getpid(), "started": started_at, "config": str(config.path),
                                          "state": "finished", "finished": utc_now(), "line": final_line})
        index = config.output / "index.html"
        result = BatchResult(tuple(outcomes.values()), seconds, index, interrupted=bool(batch.builds.stopping),
                             index_ok=index_ok)
        log(f"batch: {counts}{stopped} in {seconds:.1f} s; index {index}"
            + ("" if index_ok else " (NOT updated: see the error above)"))
    return result


def mark_interrupted(config: BatchConfig) -> list[str]:
    """Reports a dead batch left building (status `running`) become failed at step `interrupted`; their
    last good report and numbers stay. Call while holding the lock: no other batch is alive then."""
    lines = []
    previous = read_batch_state(config.output) or {}
    if previous.get("state") == "running":
        lines.append(f"the batch started {previous.get('started', '?')} (pid {previous.get('pid', '?')}) was "
                     "killed before it finished")
    for report in config.reports:
        status = read_status(config.output, report.name) or {}
        if status.get("status") == "running":
            message = (f"the batch (pid {status.get('batch_pid', '?')}) that started this build at "
                       f"{status.get('time', '?')} was killed before it finished")
            write_status(config.output, report.name, {**status, "status": "failed", "step": "interrupted",
                                                      "message": message, "time": utc_now()})
            lines.append(f"{report.name}: interrupted: {message}")
    return lines


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
            line = (f"The batch of {Path(previous.get('config', '?')).name} started {_short(previous.get('started', ''))} "
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
        if not batch.write_index(outcomes, f"{line} (Index rewritten {_short(utc_now())}.)"):
            raise OSError(f"could not write {config.output / 'index.html'}")
    return config.output / "index.html"


@contextmanager
def _stop_on_signals(batch: Batch) -> Iterator[None]:
    """On SIGTERM/SIGINT: stop the running builds, start no new one, and finish the index."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}
    for signum in previous:
        signal.signal(signum, lambda number, frame: batch.stop(number))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _reason(last_good: dict | None, status: dict, digest: str, files: dict, force: bool) -> str:
    """Why a report is built: what differs from its last good build (for the log)."""
    if last_good is None:
        return "no earlier successful build"
    since = f"since {last_good.get('time', '?')}"
    if last_good.get("fingerprint") == digest:
        if force:
            return f"inputs unchanged {since}, rebuilding (--force)"
        if status.get("status") == "failed":
            return f"retrying: the last attempt failed at step {status.get('step', '?')}"
        return "report.html is missing"
    old = last_good.get("files", {})
    changed = [role for role in files if old.get(role, {}).get("sha256") != files[role]["sha256"]]
    changed += [role for role in old if role not in files]
    if changed:
        return f"{', '.join(changed)} changed {since}"
    if last_good.get("version") != __version__:
        return f"ndcg-report {last_good.get('version')} -> {__version__}"
    return f"options changed {since}"


def _failure(returncode: int, stderr: str, stopping: int) -> tuple[str, str]:
    """(step, message) of a failed build from its exit code and the last line of its stderr."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    last = lines[-1] if lines else "no error output"
    last = last.removeprefix("ndcg-report: error: ")
    if stopping:
        return "interrupted", f"the batch was stopped by signal {stopping}"
    if returncode == 2:
        return "validate", last
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return "crash", f"the build process was killed by {name} ({last})"
    match = re.match(r"step (\w+) failed:?\s*", last)  # build's "step nbval failed in Cell 3: ..."
    return (match[1], last[match.end():] or last) if match else ("build", last)


def _short(time_text: str) -> str:
    """'2026-11-23T11:40:02Z' -> '2026-11-23 11:40:02 UTC'."""
    return f"{time_text[:10]} {time_text[11:19]} UTC" if len(time_text) >= 19 else time_text


def _check_output_root(root: Path) -> None:
    """Create the output root; ParameterError if it cannot be a writable folder."""
    problem = folder_problem(root)
    if problem:
        raise ParameterError(f"output root {root} {problem}; set `output` to a writable folder")


def main(config_path: str, *, jobs: int | None = None, force: bool = False, index_only: bool = False,
         dask: str = "") -> int:
    """The `batch` subcommand: exit 0 all built or skipped, 1 a report failed, 3 the root is busy.

    A config error, or with dask a scheduler address that does not answer, raises ParameterError
    (the CLI prints it and exits 2) before anything is built.
    """
    from ndcg_report.batch.config import load_config

    cpus = os.cpu_count() or 1
    if dask and index_only:
        raise ParameterError("--index builds nothing, so it takes no --dask; drop one of them")
    if dask and jobs is not None and jobs < 1:
        raise ParameterError(f"-j must be at least 1; got {jobs}")
    if not dask and jobs is not None and not 1 <= jobs <= cpus:
        raise ParameterError(f"-j must be between 1 and the number of CPUs ({cpus}); got {jobs}")
    config = load_config(config_path)
    client = None
    if dask:
        from ndcg_report.dask_cluster import connect

        client = connect(dask)  # a bad address: exit 2 before the output root is made
    try:
        _check_output_root(config.output)
        check_index_owner(config.output)
        if index_only:
            print(f"wrote {refresh_index(config)}")
            return EXIT_OK
        if client is not None:
            builds, jobs = _cluster_builds(client, dask, jobs)
            result = run_batch(config, jobs=jobs, force=force, builds=builds)
        else:
            result = run_batch(config, jobs=jobs or 1, force=force)
    except BatchBusy as exc:
        print(f"ndcg-report: error: {exc}", file=sys.stderr, flush=True)
        return EXIT_BUSY
    finally:
        if client is not None:
            client.close(timeout=10)
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
