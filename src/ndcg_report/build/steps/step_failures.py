"""What a failed build step says in one line: the cell that failed or timed out, a full disk.

A timeout names its limit; a step killed or its kernel dead (for memory, most likely) is named as such.
Also the check that a --notebook is one before any step starts.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
from pathlib import Path

from ndcg_report.errors import InputError

MAX_NOTEBOOK_BYTES = 256 << 20
_DISK_FULL = re.compile(r"\[Errno (?:28|122)\]|No space left on device|Disk quota exceeded")
_TIMEOUT = re.compile(r"A cell timed out while it was being executed, after (\d+) seconds\.(?:.*?\n-{5,}\n(.*?)\n-{5,})?",
                      re.S)
_ADDED_TAGS = {"injected-parameters", "papermill-error-cell-tag"}
KERNEL_DIED = "nbval's kernel died"  # the last line of an nbval session whose kernel died (nbval_plugin)
_DEAD_KERNEL = re.compile(r"DeadKernelError|" + re.escape(KERNEL_DIED))


def check_notebook(path: Path) -> dict:
    """The notebook at path as JSON; InputError unless it is a Jupyter notebook (nbformat 4) of a
    Python kernel: checked before any step starts, without importing nbformat."""
    fix = "give a copy of the report notebook saved by Jupyter (src/ndcg_report/build/notebooks/ndcg_report.ipynb)"
    try:
        if not path.is_file():
            raise InputError(path, None, "no such notebook", "check the --notebook path")
        if path.stat().st_size > MAX_NOTEBOOK_BYTES:
            raise InputError(path, None, f"larger than {MAX_NOTEBOOK_BYTES >> 20} MiB, not a report notebook", fix)
        notebook = json.loads(path.read_bytes())
    except OSError as exc:
        raise InputError(path, None, f"cannot be read ({exc.strerror or exc})", "check the --notebook path") from None
    except (ValueError, RecursionError) as exc:
        raise InputError(path, None, f"not a Jupyter notebook (not JSON: {exc})", fix) from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list) or notebook.get("nbformat") != 4:
        raise InputError(path, None, "not a Jupyter notebook of format 4 (no 'cells' list, or 'nbformat' is not 4)", fix)
    metadata = notebook.get("metadata") if isinstance(notebook.get("metadata"), dict) else {}
    kernel, info = metadata.get("kernelspec"), metadata.get("language_info")
    language = (kernel.get("language") if isinstance(kernel, dict) else None) or (
        info.get("name") if isinstance(info, dict) else None)
    if language != "python":
        raise InputError(path, None, f"not a Python notebook (its kernel language is {language or 'not set'})", fix)
    return notebook


def disk_full(text: str, folder: Path) -> str | None:
    """'no space left on the disk holding FOLDER (N MiB free)' if text reports a full disk or quota."""
    if not _DISK_FULL.search(text):
        return None
    try:
        free = f"{shutil.disk_usage(folder).free / (1 << 20):.1f} MiB free"
    except OSError:
        free = "free space unknown"
    return f"no space left on the disk holding {folder} ({free}); free some space and build again"


def cut_short(path: Path) -> bool:
    """Whether a JSON file ends before its closing brace (written by a process that ran out of disk)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, path.stat().st_size - 64))
            return not handle.read().rstrip().endswith(b"}")
    except OSError:
        return False


def killed(returncode: int, output: str) -> str | None:
    """What ended a step that did not fail by itself, or None: killed by a signal (SIGKILL: most
    likely for memory), or its kernel died (papermill's DeadKernelError, nbval's KERNEL_DIED)."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"it was killed by {name}" + (" (out of memory?)" if -returncode == signal.SIGKILL else "")
    if _DEAD_KERNEL.search(output):
        return "the kernel died (killed: out of memory?)"
    return None


def papermill_failure(executed: Path, template: Path, stderr: str, timeout: int) -> str:
    """'cell N (`first line`): Error: message', N counting the cells of the template notebook: from
    the executed notebook if papermill wrote it, else from papermill's error output (a timed-out cell,
    which papermill does not save, is found by its source); a full disk says so."""
    full = disk_full(stderr, executed.parent.parent)
    if full:
        return full
    cells = _cells(executed)
    if cells is not None:
        cells = [cell for cell in cells if not _ADDED_TAGS & set(_tags(cell))]
        for index, cell in enumerate(cells):
            for output in cell.get("outputs") or []:
                if isinstance(output, dict) and output.get("output_type") == "error":
                    return f"cell {index} (`{_first_line(cell)}`): {output.get('ename')}: {output.get('evalue')}"
    timed_out = _TIMEOUT.search(stderr)
    if timed_out:
        preview = (timed_out[2] or "").strip()
        where = "a cell"
        for index, cell in enumerate(_cells(template) or []):
            if preview and _source(cell).strip().startswith(preview):
                where = f"cell {index} (`{_first_line(cell)}`)"
                break
        return f"{where} did not finish within --timeout {timeout} s (the limit per cell); CellTimeoutError"
    lines = [line.strip() for line in stderr.splitlines() if line.strip().strip("-=")]
    return lines[-1] if lines else "no output"


def _cells(path: Path) -> list[dict] | None:
    """The cells of a notebook file, or None if it is missing or unreadable (a disk that filled up)."""
    try:
        notebook = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    return [cell for cell in cells if isinstance(cell, dict)] if isinstance(cells, list) else None


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _tags(cell: dict) -> list[str]:
    metadata = cell.get("metadata")
    tags = metadata.get("tags") if isinstance(metadata, dict) else None
    return [str(tag) for tag in tags] if isinstance(tags, list) else []


def _first_line(cell: dict) -> str:
    source = _source(cell).strip()
    return source.splitlines()[0][:60] if source else ""
