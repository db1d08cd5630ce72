"""Per-report build history and last status, kept outside the report folders (they are replaced).

ROOT/.history/NAME.jsonl      one JSON line per successful build, appended with one O_APPEND write
ROOT/.history/NAME.status.json the last attempt (built, skipped or failed), replaced atomically
ROOT/.history/NAME.log        stderr of the last build attempt, replaced atomically
ROOT/.history/batch.json      the last batch: pid, start, config, state (running, finished, interrupted)
ROOT/.history/NAME.attempt.json while a build runs on a Dask worker: the batch token and the worker
ROOT/.history/NAME.last/      a gated report's last good build, what the gate reads of it (batch/gating.py)
ROOT/.history/NAME.pinned/    the build pinned with `batch --pin NAME`, likewise

They are read and written only as the current user's regular files, never through a link (a link is
replaced, not followed); batch/leftovers.py refuses a root or .history of another user.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import math
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from ndcg_report.files import write_own_text
from ndcg_report.inputs.documents import bounded_lines
from ndcg_report.owners import owner_name

HISTORY_DIR = ".history"
MAX_HISTORY_LINE = 1 << 20  # bytes of one history line read: a build's record is a few KB


def history_dir(root: Path) -> Path:
    return root / HISTORY_DIR


def history_file(root: Path, name: str) -> Path:
    return history_dir(root) / f"{name}.jsonl"


def status_file(root: Path, name: str) -> Path:
    return history_dir(root) / f"{name}.status.json"


def log_file(root: Path, name: str) -> Path:
    return history_dir(root) / f"{name}.log"


def attempt_file(root: Path, name: str) -> Path:
    return history_dir(root) / f"{name}.attempt.json"


def kept_folder(root: Path, name: str, which: str) -> Path:
    """Where a build of a report is kept for the gate: which is `last` or `pinned`."""
    return history_dir(root) / f"{name}.{which}"


def append_history(root: Path, name: str, record: dict) -> None:
    """Append record as one line: a single write() on an O_APPEND descriptor, then fsync; OSError if the
    file is a link or belongs to another user (_open_own).

    A reader never sees half a line from a finished write; a line torn by a crash mid-write is
    skipped by read_history.
    """
    line = (json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False) + "\n").encode("utf-8")
    path = history_file(root, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = _open_own(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        written = os.write(fd, line)
        if written != len(line):  # pragma: no cover - regular files write everything or raise
            raise OSError(f"short write to {path}: {written} of {len(line)} bytes")
        os.fsync(fd)
    finally:
        os.close(fd)


def read_history(root: Path, name: str) -> list[dict]:
    """The history records of a report, oldest first; unreadable lines (a torn last line) and records
    of the wrong shape are skipped (history_problems names them)."""
    return [record for record, problem in _history_lines(root, name) if problem is None]


def history_problems(root: Path, name: str) -> list[str]:
    """'line N: what is wrong' for each history line read_history skips (a torn last line is not named)."""
    lines = list(_history_lines(root, name))
    return [f"line {number}: {problem}" for number, (record, problem) in enumerate(lines, start=1)
            if problem is not None and not (problem == _TORN and number == len(lines))]


_TORN = "not a JSON object"
LARGEST = 1e12  # no mean, interval, p-value or count of a report is this large
_TEXT_KEYS = ("fingerprint", "version", "run_name", "baseline_name")
_NUMBER_KEYS = ("duration_s", "run_mean", "baseline_mean", "delta", "ci_low", "ci_high", "randomization_pvalue",
                "holm_randomization_pvalue", "t_pvalue", "holm_t_pvalue", "wilcoxon_pvalue", "holm_wilcoxon_pvalue",
                "p_floor")
_COUNT_KEYS = ("n", "n_systems", "n_above", "warnings")


def record_problem(record: object) -> str | None:
    """What keeps a history record from being shown (None if nothing): every field the index and
    the batch read must have its type (numbers may be null)."""
    if not isinstance(record, dict):
        return _TORN
    if not isinstance(record.get("time"), str) or not _utc_time(record["time"]):
        return "'time' is not a UTC time (YYYY-MM-DDTHH:MM:SSZ)"
    for key in _TEXT_KEYS:
        if key in record and not isinstance(record[key], str):
            return f"{key!r} is not text"
    for key in _NUMBER_KEYS:
        if not _number_or_null(record.get(key)):
            return f"{key!r} is not a number"
    for key in _COUNT_KEYS:
        value = record.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            return f"{key!r} is not a whole number"
    if "k" in record and (isinstance(record["k"], bool) or not isinstance(record["k"], (str, int))):
        return "'k' is not a cut-off"
    files = record.get("files", {})
    if not isinstance(files, dict) or not all(isinstance(item, dict) for item in files.values()):
        return "'files' is not a mapping of roles to files"
    gate = record.get("gate", {})
    if not isinstance(gate, dict) or not all(_number_or_null(gate.get(key)) for key in ("delta", "p_holm")) or not all(
            isinstance(gate.get(key, ""), str) for key in ("status", "against", "measure", "reason")):
        return "'gate' is not a gate's summary"
    systems = record.get("systems", [])
    if not isinstance(systems, list):
        return "'systems' is not a list"
    for system in systems:
        if not isinstance(system, dict) or not isinstance(system.get("name"), str):
            return "a system in 'systems' has no name"
        if not all(_number_or_null(system.get(key)) for key in _NUMBER_KEYS):
            return f"system {system['name']!r} has a value that is not a number"
    return None


def _number_or_null(value: object) -> bool:
    """None, or a number a report writes: finite and below LARGEST in size (a hand-edited 1e308 is not)."""
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)
                             and math.isfinite(value) and abs(value) < LARGEST)


def _utc_time(text: str) -> bool:
    """Whether text is a time as the batch writes it (utc_now), a real one: 2026-11-29T03:04:05Z."""
    try:
        dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return False
    return True


def _history_lines(root: Path, name: str) -> Iterator[tuple[object, str | None]]:
    """(record, problem) per line of a report's history file, read a line at a time: a line longer
    than MAX_HISTORY_LINE bytes is read on in pieces, never held, and named."""
    try:
        stream = os.fdopen(_open_own(history_file(root, name), os.O_RDONLY), "rb")
    except FileNotFoundError:
        return
    with stream:
        for _, line, cut in bounded_lines(stream, MAX_HISTORY_LINE):
            if cut:
                yield None, f"longer than {MAX_HISTORY_LINE >> 20} MiB (a build writes lines of a few KB)"
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                yield None, _TORN
                continue
            yield record, record_problem(record)


def is_attempt_marker(path: Path) -> bool:
    """Whether path is an attempt marker this tool wrote (batch/dask_builds.py): a small JSON object
    with the batch's token (32 hex digits), the worker and the start time, and nothing else."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > 65536:
            return False
        record = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return False
    return (isinstance(record, dict) and set(record) == {"token", "worker", "started"}
            and isinstance(record["token"], str) and re.fullmatch(r"[0-9a-f]{32}", record["token"]) is not None
            and isinstance(record["worker"], str) and isinstance(record["started"], str))


def write_status(root: Path, name: str, status: dict) -> None:
    write_own_text(status_file(root, name), json.dumps(status, indent=1, sort_keys=True) + "\n")


def write_log(root: Path, name: str, text: str) -> None:
    write_own_text(log_file(root, name), text)


def read_status(root: Path, name: str) -> dict | None:
    """A report's last status; None if there is none of this user's (missing, a link, another's, not JSON)."""
    try:
        status = json.loads(own_bytes(status_file(root, name)))
    except (OSError, ValueError):
        return None
    return status if isinstance(status, dict) else None


def batch_state_file(root: Path) -> Path:
    return history_dir(root) / "batch.json"


def write_batch_state(root: Path, state: dict) -> None:
    write_own_text(batch_state_file(root), json.dumps(state, indent=1, sort_keys=True) + "\n")


def read_batch_state(root: Path) -> dict | None:
    try:
        state = json.loads(own_bytes(batch_state_file(root)))
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def _open_own(path: Path, flags: int) -> int:
    """os.open(path) never through a link; PermissionError (closed) if it is not a regular file of this user:
    what another user put in a history folder is neither read nor written."""
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)  # O_NONBLOCK: a pipe there does not hang
    status = os.fstat(fd)
    if status.st_uid != os.geteuid() or not stat.S_ISREG(status.st_mode):
        os.close(fd)
        raise PermissionError(errno.EPERM, f"not a file of yours (it belongs to {owner_name(path)})", str(path))
    return fd


def own_bytes(path: Path) -> bytes:
    """The bytes of a regular file of this user, never read through a link (_open_own)."""
    with os.fdopen(_open_own(path, os.O_RDONLY), "rb") as stream:
        return stream.read()
