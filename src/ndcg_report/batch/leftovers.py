"""What the batch finds in its output root before it builds: leftovers of killed processes.

A root, .history or bookkeeping file of another user is refused; leftovers of killed processes of this
tool (and this user) are removed, and nothing else; an index.html the batch did not write is refused,
reports a dead batch left building are marked interrupted and history lines it cannot show are named.
"""

from __future__ import annotations

import os
from pathlib import Path

from ndcg_report.batch.config import BatchConfig
from ndcg_report.batch.history import (
    batch_state_file, history_dir, history_file, history_problems, is_attempt_marker, kept_folder, log_file,
    read_batch_state, read_status, status_file, write_status,
)
from ndcg_report.batch.index_page import INDEX_GENERATOR
from ndcg_report.batch.lock import utc_now
from ndcg_report.errors import ParameterError
from ndcg_report.working_folders import owned_folder_home, owned_folder_pid, remove_owned_folder, stale_owned_folders, stale_temporaries
from ndcg_report.owners import owner_name, shared_folder_problem, this_users


def clean_stale_folders(root: Path) -> list[Path]:
    """Remove what killed processes of this tool left in ROOT, and nothing else: working folders that
    hold its marker and whose process is gone, its own temp files (named after the files it writes
    atomically, with a dead writer's pid) and the attempt markers of a killed batch's Dask tasks; all of
    them this user's (another user's, of the same shapes, stay)."""
    removed = []
    for entry in stale_owned_folders(root):
        if remove_owned_folder(entry, home=owned_folder_home(entry)):
            removed.append(entry)
    temporaries = stale_temporaries(history_dir(root), ["*.status.json", "*.log", "*.attempt.json"])
    for entry in stale_temporaries(root, ["index.html"]) + temporaries:
        entry.unlink(missing_ok=True)
        removed.append(entry)
    for entry in sorted(history_dir(root).glob("*.attempt.json")):  # Dask task markers of an earlier batch
        if this_users(entry) and is_attempt_marker(entry):  # by content: a user's notes.attempt.json stays
            entry.unlink(missing_ok=True)
            removed.append(entry)
    return removed


def remove_build_leftovers(out: Path, pid: int) -> list[Path]:
    """Remove the working folders that the build process pid, now ended, left beside its report out (a
    build killed or crashed: its staging, an old report it was retiring, whose user's files go back into
    out); only folders of that process, holding the tool's marker. Those removed."""
    return [entry for entry in stale_owned_folders(out.parent, out.name)
            if owned_folder_pid(entry) == pid and remove_owned_folder(entry, home=owned_folder_home(entry))]


def check_root_owner(config: BatchConfig) -> None:
    """ParameterError unless the output root and ROOT/.history (made here if missing) are the current
    user's, no other user could swap what is made in the root (owners.shared_folder_problem), and so is every history, status and log file of the config's reports there (and every build kept for the gate) (none of them a
    link of another user's, a history file no link at all): another user's would let them forge the
    numbers the index shows, or have the batch replace their files."""
    root, folder = config.output, history_dir(config.output)
    if os.stat(root).st_uid != os.geteuid():
        raise ParameterError(f"output root {root} belongs to {owner_name(root.resolve())}, not to you: its history and "
                             "index could be forged by its owner; give an output root you own")
    problem = shared_folder_problem(root)
    if problem:
        raise ParameterError(f"output root {root} is not safe: {problem}, so another user could swap its reports' "
                             "folders or its history while the batch writes them; give an output root only you can write to")
    try:
        folder.mkdir()
    except FileExistsError:
        pass
    if not this_users(folder) or os.stat(folder).st_uid != os.geteuid():
        raise ParameterError(f"{folder} belongs to {owner_name(folder.resolve())}, not to you: it could hold a forged "
                             "history; remove it (or ask its owner to), or give an output root you own")
    names = [report.name for report in config.reports]
    kept = [kept_folder(root, name, which).with_name(kept_folder(root, name, which).name + end) for name in names
            for which in ("last", "pinned") for end in ("", ".new", ".old")]  # batch/gating.py's folders
    for path in [batch_state_file(root), *[where(root, name) for name in names
                                           for where in (history_file, status_file, log_file)], *kept]:
        if os.path.lexists(path) and not this_users(path):
            raise ParameterError(f"{path} belongs to {owner_name(path)}, not to you, and would be read or replaced; "
                                 "remove it (or ask its owner to), or give an output root you own")
        if path.suffix == ".jsonl" and path.is_symlink():
            raise ParameterError(f"{path} is a link; the batch appends only to a history file of its own: put the "
                                 "file itself there, or remove the link")


def check_index_owner(root: Path) -> None:
    """ParameterError if ROOT/index.html exists and this tool did not write it, or another user did (it
    would be replaced)."""
    index = root / "index.html"
    if index.is_symlink() or (index.exists() and not index.is_file()):
        raise ParameterError(f"{index} is not a file the batch wrote; move it, or give another output root")
    if index.is_file() and not this_users(index):
        raise ParameterError(f"{index} belongs to {owner_name(index)}, not to you, and would be replaced; give an "
                             "output root you own")
    if index.is_file():
        with open(index, "rb") as handle:
            head = handle.read(4096)
        if INDEX_GENERATOR.encode() not in head and b"<h2>NDCG across builds</h2>" not in index.read_bytes()[-65536:]:
            raise ParameterError(f"{index} was not written by ndcg-report and would be replaced; move it, or give "
                                 "another output root")


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


def history_lines_skipped(config: BatchConfig) -> list[str]:
    """One log line per history line of a report that cannot be shown (skipped in the index)."""
    return [f"history of {report.name}: skipped {problem} in {history_dir(config.output) / (report.name + '.jsonl')}"
            for report in config.reports for problem in history_problems(config.output, report.name)]

