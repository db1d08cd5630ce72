"""Build a report: validate -> papermill -> nbval -> nbconvert, in staging, published atomically."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from collections.abc import Iterable
from typing import TYPE_CHECKING

import yaml

from ndcg_report.errors import BuildError, ParameterError
from ndcg_report.files import OWNED_MARKER, mark_owned, new_owned_folder, remove_owned_folder, stale_owned_folders
from ndcg_report.report.loading import load_inputs
from ndcg_report.core.measures import level_text
from ndcg_report.report.parameters import ReportParameters
from ndcg_report.report.supervisor import check_supervisor

if TYPE_CHECKING:
    import nbformat

NOTEBOOK = "ndcg_report.ipynb"
BUILD_TIME_START = "<!-- build-time -->"
BUILD_TIME_END = "<!-- /build-time -->"
OUTPUTS = ("report.html", "report.ipynb", "per_query.csv", "summary.json", "unjudged.tsv")
MAX_TIMEOUT = 7 * 24 * 3600  # seconds a cell may take; nbval counts milliseconds in 32 bits (2,147,483 s)


def check_timeout(timeout: object, option: str = "--timeout") -> int:
    """timeout if it is a whole number of seconds from 1 to MAX_TIMEOUT, else ParameterError."""
    if isinstance(timeout, bool) or not isinstance(timeout, int) or not 1 <= timeout <= MAX_TIMEOUT:
        raise ParameterError(f"{option} must be a whole number of seconds from 1 to {MAX_TIMEOUT:,} (7 days); got {timeout!r}")
    return timeout


@dataclass(frozen=True)
class BuildResult:
    out_dir: Path
    seconds: float


def package_file(*parts: str) -> Path:
    """A file shipped inside the ndcg_report.report package (its notebooks and templates)."""
    return Path(str(resources.files("ndcg_report.report").joinpath(*parts)))


def notebook_parameters(params: ReportParameters) -> dict:
    """The papermill parameters of the report notebook (absolute paths, plain values)."""
    return {
        "runs": [{"name": item.name, "path": str(item.path)} for item in params.runs], "qrels": str(params.qrels),
        "baseline": str(params.baseline) if params.baseline else "", "topics": str(params.topics) if params.topics else "",
        "ks": ",".join(str(k) for k in params.cutoffs) if params.cutoffs else "",
        "measures": " ".join(measure.label for measure in params.measures), "preset": params.preset,
        "rel_level": level_text(params.rel_level), "headline": params.headline.label,
        "judged_only": params.judged_only, "docs": str(params.docs) if params.docs else "",
        "drilldown": params.drilldown, "drilldown_depth": params.rank_depth,
        "gain": params.gain, "missing": params.missing,
        "no_relevant": params.no_relevant, "title": params.title, "seed": params.seed,
        "baseline_name": params.baseline_name, "command": params.command, "output_dir": ".",
        "corpus": str(params.corpus) if params.corpus else "", "bm25_settings": params.bm25_settings,
    }


def build_report(
    params: ReportParameters, out_dir: Path, timeout: int = 600, notebook: Path | None = None
) -> BuildResult:
    """Build the report for params into out_dir; on any failure out_dir is left as it was.

    notebook: a customised copy of the report notebook (default: the one shipped in the package).
    """
    started = dt.datetime.now(dt.timezone.utc)
    check_timeout(timeout)
    out_dir = out_dir.resolve()
    template = notebook or package_file("notebooks", NOTEBOOK)
    check_out_dir(out_dir, [*input_paths(params), template])
    load_inputs(params)  # bad input fails here, before any kernel starts
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        for stale in stale_owned_folders(out_dir.parent, out_dir.name):  # left by a killed build of this report
            remove_owned_folder(stale)
        staging = new_owned_folder(out_dir.parent, f".{out_dir.name}.staging")
    except OSError as exc:
        raise ParameterError(f"--out {out_dir}: cannot be created there ({exc.strerror or exc}); "
                             "give a folder you can write to") from None
    try:
        env = _kernel_environment(staging)
        executed = staging / "report.ipynb"
        _execute(params, template, executed, env, timeout)
        _drop_run_specific_metadata(executed)
        _validate_with_nbval(executed, env, timeout)
        import nbformat  # here: its import takes ~3 s (jsonschema), and bad input must fail before it

        html_text = notebook_to_html(nbformat.read(executed, as_version=4))
        stamp = started.strftime("%Y-%m-%d %H:%M:%S UTC")
        html_text = html_text.replace(
            "<main>", f"<main>\n{BUILD_TIME_START}<p class=\"build-time\">Built {stamp}</p>{BUILD_TIME_END}", 1
        )
        (staging / "report.html").write_text(html_text, encoding="utf-8")
        for leftover in (staging / ".jupyter", staging / "params.yml", staging / OWNED_MARKER):
            if leftover.is_dir():
                shutil.rmtree(leftover)
            elif leftover.exists():
                leftover.unlink()
        missing = [name for name in OUTPUTS if not (staging / name).is_file()]
        if missing:
            raise BuildError(f"step papermill: the notebook did not write {', '.join(missing)}")
        check_supervisor()  # never publish for a batch that died meanwhile
        _publish(staging, out_dir)
    finally:
        if staging.exists():
            remove_owned_folder(staging)
    return BuildResult(out_dir=out_dir, seconds=(dt.datetime.now(dt.timezone.utc) - started).total_seconds())


def input_paths(params: ReportParameters) -> list[Path]:
    """Every input file of a report."""
    return [item.path for item in params.runs] + [path for path in (params.qrels, params.baseline, params.topics,
                                                                     params.corpus, params.docs) if path is not None]


def check_out_dir(out_dir: Path, inputs: Iterable[Path] = ()) -> None:
    """ParameterError unless out_dir can be made and is absent, empty or an earlier report (it gets
    replaced): only the report's own files there, each a regular file, and no input inside it."""
    out_dir = Path(os.path.abspath(out_dir))
    problem = creation_problem(out_dir.parent)  # the report is made in a folder beside it, then renamed
    if problem:
        raise ParameterError(f"--out {out_dir}: {problem}; give a folder you can write to")
    real_out = out_dir.resolve()
    for path in inputs:
        real = Path(path).resolve()
        if real == real_out or real_out in real.parents:
            raise ParameterError(f"--out {out_dir} holds the input {path}, which the build would replace; "
                                 "write the report to another folder")
    if not out_dir.exists():
        return
    if not out_dir.is_dir():
        raise ParameterError(f"--out {out_dir} is a file; give a folder for the report")
    others, odd = [], []
    for entry in sorted(out_dir.iterdir()):
        if entry.name not in OUTPUTS:
            others.append(entry.name)
        elif entry.is_symlink() or not entry.is_file():
            odd.append(entry.name)
    if odd:
        raise ParameterError(f"--out {out_dir}: {odd[0]} is a folder or a link, not a report's file, and would be "
                             "replaced; give an empty folder or the folder of an earlier report")
    if others:
        shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        raise ParameterError(
            f"--out {out_dir} holds files that are not a report's ({shown}) and would be replaced; "
            "give an empty folder or the folder of an earlier report"
        )


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


def _kernel_environment(staging: Path) -> dict[str, str]:
    """Environment whose `python3` kernel is this interpreter, whatever kernels the user has."""
    kernel_dir = staging / ".jupyter" / "kernels" / "python3"
    kernel_dir.mkdir(parents=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (ndcg-report)", "language": "python"}
    (kernel_dir / "kernel.json").write_text(json.dumps(spec))
    env = dict(os.environ)
    env["JUPYTER_PATH"] = str(staging / ".jupyter")
    env["PYTHONHASHSEED"] = "0"
    env["MPLBACKEND"] = "agg"
    env.pop("JUPYTER_PLATFORM_DIRS", None)
    return env


def _execute(params: ReportParameters, template: Path, executed: Path, env: dict[str, str], timeout: int) -> None:
    """papermill: run the template notebook with params; name the failing cell on error."""
    parameter_file = executed.parent / "params.yml"
    parameter_file.write_text(yaml.safe_dump(notebook_parameters(params), sort_keys=True))
    command = [
        sys.executable, "-m", "papermill", str(template), str(executed),
        "-f", str(parameter_file), "-k", "python3", "--cwd", str(executed.parent),
        "--execution-timeout", str(timeout), "--no-progress-bar", "--no-log-output", "--no-request-save-on-cell-execute",
    ]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BuildError(f"step papermill failed: {_failed_cell(executed, result.stderr)}")


def _drop_run_specific_metadata(executed: Path) -> None:
    """Make report.ipynb depend only on the inputs: fixed cell ids, no execution times."""
    import nbformat

    notebook = nbformat.read(executed, as_version=4)
    for index, cell in enumerate(notebook.cells):
        if "injected-parameters" in cell.metadata.get("tags", []):
            cell["id"] = "injected-parameters"
        cell.metadata.pop("execution", None)
        for key in ("start_time", "end_time", "duration"):
            cell.metadata.get("papermill", {}).pop(key, None)
    for key in ("start_time", "end_time", "duration", "input_path", "output_path"):
        notebook.metadata.get("papermill", {}).pop(key, None)
    nbformat.write(notebook, executed)


def _failed_cell(executed: Path, stderr: str) -> str:
    """'cell N (`first line`): Error: message', N counting the cells of the template notebook."""
    if executed.is_file():
        import nbformat

        notebook = nbformat.read(executed, as_version=4)
        added = {"injected-parameters", "papermill-error-cell-tag"}
        template_cells = [cell for cell in notebook.cells if not added & set(cell.metadata.get("tags", []))]
        for index, cell in enumerate(template_cells):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    first_line = cell.source.strip().splitlines()[0] if cell.source.strip() else ""
                    return f"cell {index} (`{first_line[:60]}`): {output['ename']}: {output['evalue']}"
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _validate_with_nbval(executed: Path, env: dict[str, str], timeout: int) -> None:
    """nbval: re-execute the executed notebook and compare every output with the stored one."""
    ini = executed.parent / ".jupyter" / "pytest.ini"
    ini.write_text("[pytest]\n")
    command = [
        sys.executable, "-m", "pytest", "--nbval", str(executed), "-c", str(ini), "--rootdir", str(executed.parent),
        "--nbval-sanitize-with", str(package_file("notebooks", "nbval_sanitize.cfg")),
        "--nbval-kernel-name", "python3", "--nbval-cell-timeout", str(timeout),
        "-p", "no:cacheprovider", "-q", "--no-header", "-W", "ignore::DeprecationWarning",
    ]
    result = subprocess.run(command, env=env, cwd=executed.parent, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        failed = re.findall(r"FAILED \S*::(Cell \d+)", result.stdout)
        where = f" in {', '.join(failed)}" if failed else ""
        last = [line for line in result.stdout.strip().splitlines() if line.strip()]
        raise BuildError(f"step nbval failed{where}: outputs differ on re-execution ({last[-1] if last else 'no output'})")


def notebook_to_html(notebook: "nbformat.NotebookNode") -> str:
    """Offline HTML: code hidden, figures embedded, no script or stylesheet from the network."""
    from ndcg_report.report.offline_html import OfflineHTMLExporter  # imports nbconvert: only once it is needed

    body, _ = OfflineHTMLExporter().from_notebook_node(notebook, resources={"metadata": {"name": "report"}})
    return body


def _publish(staging: Path, out_dir: Path) -> None:
    """Swap the finished staging folder into place; out_dir is never missing, even if killed meanwhile.

    Linux: one renameat2(RENAME_EXCHANGE) swaps the two folders atomically (staging then holds the old
    report, which the caller removes). Elsewhere, or on a file system without it: rename the old
    report away, then staging into place (out_dir is absent between the two renames).
    """
    if not out_dir.exists():
        staging.rename(out_dir)
    elif _exchange(staging, out_dir):
        mark_owned(staging)  # it holds the old report now: a clean-up may remove it if this process dies
    else:
        old = new_owned_folder(out_dir.parent, f".{out_dir.name}.old")
        shutil.rmtree(old)
        out_dir.rename(old)
        mark_owned(old)
        staging.rename(out_dir)
        remove_owned_folder(old)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(first: Path, second: Path) -> bool:
    """Atomically exchange two paths with Linux renameat2(RENAME_EXCHANGE); False if unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes
    import errno

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):  # no libc symbol (glibc < 2.28, some other libc)
        return False
    renameat2.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # the file system or kernel lacks it
        return False
    raise OSError(code, os.strerror(code), str(second))
