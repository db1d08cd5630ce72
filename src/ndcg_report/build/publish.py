"""Where a report goes: `--out` checked before the build and again at the swap, and the swap itself.

A report replaces only what the tool wrote: `--out` must be absent, an empty folder or an earlier
report's folder, told by its own mark (a summary.json with the tool's fields), not by file names.
Publishing swaps the finished staging folder into place; of the old folder only the report's own
files are removed (and a suite's folder of collection reports, if it holds nothing else), anything
else found there (a user's notes, added even during the build) is moved into the new folder, never removed.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

from ndcg_report.errors import ParameterError
from ndcg_report.files import MAX_SUMMARY_BYTES, overwritten_input, shown_path, unusable_path
from ndcg_report.working_folders import OWNED_MARKER, mark_owned, new_owned_folder, remove_owned_folder
from ndcg_report.owners import belongs_to, others_can_write, owner_name, shared_folder_problem, this_users
from ndcg_report.interrupts import deferred

OUTPUTS = ("report.html", "report.ipynb", "per_query.csv", "summary.json", "unjudged.tsv")  # a build checks for these
PAPER_TABLES = ("leaderboard.tex", "leaderboard.md")  # every report's too
WRITTEN_WITH = {"per_group.csv": "groups", "queries.json": "topics", "gate.json": "against"}  # a report's file, and the
# parameter of its summary.json that says it was written
OPTIONAL_OUTPUTS = (*PAPER_TABLES, *WRITTEN_WITH)  # the notebook's too
SUITE_OUTPUTS = ("report.html", "report.ipynb", "summary.json", "table.csv")  # a suite's (ndcg-report suite)
REPORTS_FOLDER = "collections"  # a suite's folder of its collections' reports (suite --with-reports)
OWN_FILES = tuple(dict.fromkeys(OUTPUTS + OPTIONAL_OUTPUTS + SUITE_OUTPUTS))  # a published folder's files that are the tool's
INPUTS_FOLDER = "inputs"  # a report's folder of the inputs it was given as Python objects (build/from_objects.py)
REPORT_FOLDERS = {"figures": (".svg",), INPUTS_FOLDER: (".parquet", ".jsonl", ".json")}  # a report's own folders, and
# the files in them that are its own: its figures as SVG; the inputs it was given as Python objects (build/from_objects.py)
_MARK_FILE = "summary.json"
WORKING_ROOM = 64  # bytes a build adds to --out: its staging folder's name beside it, the files inside it


def is_earlier_report(folder: Path) -> bool:
    """True if folder holds a summary.json the tool wrote (a JSON object with its schema_version and
    ndcg_report_version): the mark of an earlier report's folder."""
    mark = folder / _MARK_FILE
    try:
        if mark.is_symlink() or not mark.is_file() or mark.stat().st_size > MAX_SUMMARY_BYTES:
            return False
        record = json.loads(mark.read_bytes())
    except (OSError, ValueError, RecursionError):
        return False
    return (isinstance(record, dict) and isinstance(record.get("schema_version"), int)
            and isinstance(record.get("ndcg_report_version"), str))


def out_dir_problem(out_dir: Path) -> str | None:
    """Why a report may not be published as out_dir (None if it may): it must be absent, an empty
    folder or an earlier report's folder (is_earlier_report), not a link or a mount point, this user's and
    not writable by others, writable if it is to be emptied, and its entries named like the report's files
    must be regular files."""
    if out_dir.is_symlink():
        return "is a link; give the folder itself"
    if not out_dir.exists():
        return None
    if not out_dir.is_dir():
        return "is a file; give a folder for the report"
    if os.path.ismount(out_dir):
        return ("is a mount point: a report is published by renaming its folder into place, which a mount point "
                "cannot be; give a folder inside it")
    if not this_users(out_dir):  # in a sticky folder it could not be replaced: refused now, not after the build
        return (f"belongs to {owner_name(out_dir)}, not to you: a report is published by replacing the folder, "
                "which its owner can prevent or watch; give a folder of your own")
    if others_can_write(os.stat(out_dir)):
        return ("is writable by other users, who could put their files in the report; give a folder only you can "
                "write to (chmod go-w)")
    try:
        entries = sorted(entry.name for entry in out_dir.iterdir())
    except OSError as exc:
        return f"is a folder that cannot be read ({exc.strerror or exc}); give a folder you can write to"
    if not entries:
        return None
    odd = [name for name in entries if name in OWN_FILES and ((out_dir / name).is_symlink() or not (out_dir / name).is_file())]
    odd += [name for name in entries if name in REPORT_FOLDERS and ((out_dir / name).is_symlink() or not (out_dir / name).is_dir())]
    if odd:
        return (f"{odd[0]} is a folder or a link, not a report's file, and would be replaced; give an empty folder or "
                "the folder of an earlier report")
    if not is_earlier_report(out_dir):
        others = [name for name in entries if name not in OWN_FILES and name not in REPORT_FOLDERS]
        if others:
            shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
            return (f"holds files that are not a report's ({shown}) and would be replaced; give an empty folder or "
                    "the folder of an earlier report")
        return (f"is not an earlier report's folder (its {', '.join(entries)} {'was' if len(entries) == 1 else 'were'} "
                "not written by ndcg-report: an earlier report has a summary.json with the tool's fields) and would "
                "be replaced; give an empty folder or the folder of an earlier report")
    if not os.access(out_dir, os.W_OK | os.X_OK):
        return (f"is not writable{belongs_to(out_dir)}: the old report's files in it could not be removed; give a "
                "folder you can write to")
    return None


def check_out_path(out_dir: Path) -> None:
    """ParameterError if out_dir cannot be a path to write at all (files.unusable_path: a looping link,
    a name or path too long with the staging folder's name beside it): told before any work."""
    problem = unusable_path(out_dir, WORKING_ROOM)
    if problem:
        raise ParameterError(f"--out {shown_path(out_dir)} {problem}")


def check_out_dir(out_dir: Path, inputs: Iterable[Path] = ()) -> None:
    """ParameterError unless out_dir can be made, no other user could swap it or what is made beside it
    (owners.shared_folder_problem), a report may be published there (out_dir_problem), and no input is
    out_dir or inside it."""
    check_out_path(out_dir)
    out_dir = Path(os.path.abspath(out_dir))
    problem = creation_problem(out_dir.parent)  # the report is made in a folder beside it, then renamed
    if problem:
        raise ParameterError(f"--out {out_dir}: {problem}; give a folder you can write to")
    problem = shared_folder_problem(out_dir.parent)  # its staging folder is made beside it, then swapped into place
    if problem:
        raise ParameterError(f"--out {out_dir} is not safe: {problem}, so another user could swap the report's "
                             "staging folder for one of theirs while it is built; give a folder only you can write to")
    clash = overwritten_input(out_dir, inputs, folder=True)
    if clash is not None:
        raise ParameterError(f"--out {out_dir} holds the input {clash}, which the build would replace; "
                             "write the report to another folder")
    problem = out_dir_problem(out_dir)
    if problem:
        raise ParameterError(f"--out {out_dir}{_joined(problem)}")


def creation_problem(folder: Path) -> str | None:
    """Why folder could not be made (a part of the path is a file, the nearest existing folder is not
    writable or on a read-only file system), without making anything; None if nothing is in the way."""
    existing = folder
    while not existing.exists():
        if existing.parent == existing:
            return "no part of the path exists"
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    target = folder if existing == folder else existing
    if not os.access(target, os.W_OK | os.X_OK):
        return f"{target} is not writable"
    try:
        if os.statvfs(target).f_flag & os.ST_RDONLY:
            return f"{target} is on a read-only file system"
    except (OSError, AttributeError):
        pass
    return None


def check_staging(staging: Path, is_ours: bool) -> None:
    """ParameterError (nothing published) unless the finished staging folder is the one the build made
    (is_ours: not moved aside and replaced) and holds only what the build made, by name (unmade_entries)."""
    fix = "another user may write in its folder: give an --out in a folder only you can write to"
    if not is_ours:
        raise ParameterError(f"nothing is published: the staging folder {staging} was moved or replaced during the "
                             f"build; {fix}")
    unmade = unmade_entries(staging)
    if unmade:
        shown = ", ".join(unmade[:3]) + (", ..." if len(unmade) > 3 else "")
        raise ParameterError(f"nothing is published: the staging folder {staging} holds {shown}, which the build did "
                             f"not make; {fix}")


def unmade_entries(staging: Path) -> list[str]:
    """The entries of a finished staging folder that the build did not make: all but a report's files (regular
    files, not links), the files of its own folders its summary.json lists (files_it_made), and a suite's
    folder of collection reports (is_reports_folder)."""
    made = files_it_made(staging)
    unmade = []
    for entry in sorted(staging.iterdir()):
        if entry.name in made and entry.is_file() and not entry.is_symlink():
            continue
        if entry.name == REPORTS_FOLDER and is_reports_folder(entry):
            continue
        if entry.name in REPORT_FOLDERS and entry.is_dir() and not entry.is_symlink():
            unmade += [f"{entry.name}/{item.name}" for item in sorted(entry.iterdir())
                       if f"{entry.name}/{item.name}" not in made or item.is_symlink() or not item.is_file()]
            continue
        unmade.append(entry.name)
    return unmade


def publish(staging: Path, out_dir: Path) -> list[str]:
    """Swap the finished staging folder into place as out_dir, with Ctrl-C, SIGTERM and SIGHUP held
    (a publish is never cut in half; once it is done the build is done); return notes on what was
    kept. out_dir is checked again first: ParameterError, nothing published, if it changed into
    something a report may not replace. Once swapped in, nothing fails the build: what cannot be
    tidied is a note.

    Linux: one renameat2(RENAME_EXCHANGE) swaps the two folders atomically (staging then holds the
    old report). Elsewhere, or on a file system without it: the old report is renamed away, then
    staging into place (out_dir is absent between the two renames).
    """
    with deferred():
        for _ in range(2):
            problem = out_dir_problem(out_dir)
            if problem:
                raise ParameterError(f"nothing is published: --out {out_dir} changed during the build and now"
                                     f"{_joined(problem)}")
            if not os.path.lexists(out_dir):
                if _rename(staging, out_dir, _RENAME_NOREPLACE):
                    return []
                continue  # made meanwhile: check it again, then swap
            if _rename(staging, out_dir, _RENAME_EXCHANGE):
                return retire_old_report(staging, out_dir)
            old = new_owned_folder(out_dir.parent, f".{out_dir.name}.old")
            (old / OWNED_MARKER).unlink()
            old.rmdir()
            out_dir.rename(old)
            staging.rename(out_dir)
            return retire_old_report(old, out_dir)
        raise ParameterError(f"--out {out_dir} keeps changing during the build; nothing is published")


def retire_old_report(old: Path, out_dir: Path) -> list[str]:
    """Remove the old report's own files from old (its folder after the swap); move anything else
    into the new out_dir; remove old. Never raises: what cannot be done is a note."""
    moved: list[str] = []
    try:
        made = files_it_made(old)
        for name, suffixes in REPORT_FOLDERS.items():
            moved += _empty_own_folder(old / name, made, suffixes, out_dir / name)
        own = [entry.name for entry in old.iterdir()
               if entry.name in made and entry.is_file() and not entry.is_symlink()]
        mark_owned(old, only=own)  # so that if this process dies now, a clean-up removes only those
        if is_reports_folder(old / REPORTS_FOLDER):  # a suite's collection reports, nothing of a user's in them
            shutil.rmtree(old / REPORTS_FOLDER)
    except OSError as exc:
        return [f"the previous report stays in {old}: it cannot be removed ({exc.strerror or exc}); remove it yourself"]
    kept = sorted([*moved, *(entry.name for entry in old.iterdir() if entry.name not in own and entry.name != OWNED_MARKER)])
    remove_owned_folder(old, home=out_dir)
    notes = []
    if kept:
        shown = ", ".join(kept[:3]) + (", ..." if len(kept) > 3 else "")
        notes.append(f"kept {shown} in {out_dir}: not a report's file{'s' if len(kept) > 1 else ''}, "
                     "so carried over into the new report's folder")
    if old.exists():
        notes.append(f"the previous report's folder {old} could not be removed completely; what is left in it is "
                     "not the tool's to remove")
    return notes


def files_it_made(report: Path) -> set[str]:
    """The files a report says it made, by its summary.json: its own files (a report's OUTPUTS and paper
    tables, and each file of WRITTEN_WITH whose parameter it was given; a suite's SUITE_OUTPUTS), and in
    its own folders `figures/NAME.svg` (its figures) and `inputs/NAME` (the files of its table of inputs).
    An unreadable or foreign summary.json says nothing: every file there is then the user's (a user's own
    gate.json in a report built without --against is not the report's)."""
    summary = report / "summary.json"
    try:
        if summary.is_symlink() or not summary.is_file() or summary.stat().st_size > MAX_SUMMARY_BYTES:
            return set()
        record = json.loads(summary.read_text(encoding="utf-8"))
        parameters = record.get("parameters") or {}
        own = (set(SUITE_OUTPUTS) if record.get("kind") == "suite" else
               {*OUTPUTS, *PAPER_TABLES, *(name for name, key in WRITTEN_WITH.items() if parameters.get(key))})
        figures = {str(name) for name in record.get("figures") or () if isinstance(name, str)}
        inputs = {f"{INPUTS_FOLDER}/{item['file']}" for item in record.get("files") or ()
                  if isinstance(item, dict) and isinstance(item.get("file"), str)}
    except (OSError, ValueError, AttributeError, TypeError):
        return set()
    return own | figures | inputs


def _empty_own_folder(folder: Path, made: set[str], suffixes: tuple[str, ...], new: Path) -> list[str]:
    """Remove from an old report's own folder (figures/, inputs/) the files it made (`made`, of its
    suffixes, regular files of this user); move anything else (a user's file) into the new report's
    folder of that name, made if missing, as NAME.previous where the new report has a NAME; then the
    folder, if empty. Returns what was moved (`figures/notes.txt`, `figures/a.svg as a.svg.previous`)."""
    moved: list[str] = []
    if folder.is_symlink() or not folder.is_dir():
        return moved
    for entry in folder.iterdir():
        own = f"{folder.name}/{entry.name}" in made and entry.name.endswith(suffixes)
        if own and entry.is_file() and not entry.is_symlink() and this_users(entry):
            entry.unlink()
            continue
        target = next((new / name for name in (entry.name, f"{entry.name}.previous")
                       if not os.path.lexists(new / name)), None)
        try:
            if target is not None and not new.is_symlink():
                new.mkdir(exist_ok=True)
                entry.rename(target)
                moved.append(f"{folder.name}/{entry.name}" + (f" as {target.name}" if target.name != entry.name else ""))
        except OSError:
            pass
    try:
        folder.rmdir()
    except OSError:
        pass
    return moved


def is_reports_folder(folder: Path) -> bool:
    """True if folder is a suite's folder of collection reports as the tool wrote it: a real folder
    whose every entry is a real folder holding an earlier report (is_earlier_report) and only a
    report's files (OWN_FILES) and folders (REPORT_FOLDERS, holding only their own kind of file).
    Anything else in it (a user's note) makes it not the tool's to remove."""
    try:
        if folder.is_symlink() or not folder.is_dir():
            return False
        for report in folder.iterdir():
            if report.is_symlink() or not report.is_dir() or not is_earlier_report(report):
                return False
            if any(not _own_entry(entry) for entry in report.iterdir()):
                return False
    except OSError:
        return False
    return True


def _own_entry(entry: Path) -> bool:
    """Whether an entry of a report's folder is one the tool wrote: a file of OWN_FILES, or a folder of
    REPORT_FOLDERS holding only regular files of its suffixes."""
    if entry.is_symlink():
        return False
    if entry.name in OWN_FILES:
        return entry.is_file()
    suffixes = REPORT_FOLDERS.get(entry.name)
    return (suffixes is not None and entry.is_dir()
            and all(item.name.endswith(suffixes) and item.is_file() and not item.is_symlink() for item in entry.iterdir()))


def _joined(problem: str) -> str:
    """' is a file; ...' after `--out DIR`, or ': report.html is a folder ...' where the problem has its own subject."""
    return f" {problem}" if problem.startswith(("is ", "holds ")) else f": {problem}"


_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2


def _rename(source: Path, target: Path, flags: int) -> bool:
    """rename(2) source to target: with _RENAME_EXCHANGE, swap the two atomically (False if the file
    system or kernel cannot); with _RENAME_NOREPLACE, only if target does not exist (False if it does)."""
    import errno

    if sys.platform.startswith("linux"):
        result = _renameat2(source, target, flags)
        if result == 0:
            return True
        if result == errno.EEXIST and flags == _RENAME_NOREPLACE:
            return False
        if result not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, None):
            raise OSError(result, os.strerror(result), str(target))
    if flags == _RENAME_EXCHANGE:
        return False
    if os.path.lexists(target):
        return False
    source.rename(target)
    return True


def _renameat2(source: Path, target: Path, flags: int) -> int | None:
    """Linux renameat2: 0, or the errno; None if libc lacks it (glibc < 2.28, some other libc)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return None
    renameat2.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), flags) == 0:
        return 0
    return ctypes.get_errno()
