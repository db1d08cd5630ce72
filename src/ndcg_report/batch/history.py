"""Per-report build history and last status, kept outside the report folders (they are replaced).

ROOT/.history/NAME.jsonl      one JSON line per successful build, appended with one O_APPEND write
ROOT/.history/NAME.status.json the last attempt (built, skipped or failed), replaced atomically
ROOT/.history/NAME.log        stderr of the last build attempt, replaced atomically
ROOT/.history/batch.json      the last batch: pid, start, config, state (running, finished, interrupted)
ROOT/.history/NAME.attempt.json while a build runs on a Dask worker: the batch token and the worker
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ndcg_report.files import write_text_atomic

HISTORY_DIR = ".history"


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


def append_history(root: Path, name: str, record: dict) -> None:
    """Append record as one line: a single write() on an O_APPEND descriptor, then fsync.

    A reader never sees half a line from a finished write; a line torn by a crash mid-write is
    skipped by read_history.
    """
    line = (json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False) + "\n").encode("utf-8")
    path = history_file(root, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        written = os.write(fd, line)
        if written != len(line):  # pragma: no cover - regular files write everything or raise
            raise OSError(f"short write to {path}: {written} of {len(line)} bytes")
        os.fsync(fd)
    finally:
        os.close(fd)


def read_history(root: Path, name: str) -> list[dict]:
    """The history records of a report, oldest first; unreadable lines (a torn last line) are skipped."""
    path = history_file(root, name)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    records = []
    for line in raw.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def write_status(root: Path, name: str, status: dict) -> None:
    write_text_atomic(status_file(root, name), json.dumps(status, indent=1, sort_keys=True) + "\n")


def read_status(root: Path, name: str) -> dict | None:
    try:
        status = json.loads(status_file(root, name).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    return status if isinstance(status, dict) else None


def batch_state_file(root: Path) -> Path:
    return history_dir(root) / "batch.json"


def write_batch_state(root: Path, state: dict) -> None:
    write_text_atomic(batch_state_file(root), json.dumps(state, indent=1, sort_keys=True) + "\n")


def read_batch_state(root: Path) -> dict | None:
    try:
        state = json.loads(batch_state_file(root).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    return state if isinstance(state, dict) else None
