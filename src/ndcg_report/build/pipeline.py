"""Build a report: validate -> papermill -> nbval -> nbconvert, in staging, published atomically.

build_notebook is the machinery, for any parameterised notebook (a NotebookJob: the template, its
parameters, its inputs' check, the files it writes); build_report is the report's job, and the suite's
is in build/suite_build.py.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import partial
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from ndcg_report.errors import BuildError, InputError, ParameterError
from ndcg_report.working_folders import OWNED_MARKER, remove_empty_folders, remove_owned_folder
from ndcg_report.build.input_cache import INPUT_CACHE_ENV, save_parsed
from ndcg_report.build.kernels.kernel_forks import (FORK_SERVER_ENV, LAUNCHER, PROVISIONER, child_environment,
                                             running_fork_server, server_label)
from ndcg_report.build.input_snapshots import take_snapshots, with_formats
from ndcg_report.build.loading import check_inputs, parsed_inputs
from ndcg_report.build.steps.nbval_plugin import GO as NBVAL_GO
from ndcg_report.analysis.options.checks import check
from ndcg_report.analysis.options.command import FILE_ROLES
from ndcg_report.analysis.options.table import MAX_TIMEOUT
from ndcg_report.analysis.report_model import ReportParameters, baseline_inputs, option_values
from ndcg_report.build.steps.processes import (REVALIDATION_ENV, ChildProcess, Finished, Steps, in_background,
                                               skip_unused_jsonschema_formats)
from ndcg_report.build.publish import OUTPUTS, check_out_dir
from ndcg_report.build.staging import Staging, publish_staging, staging_folder
from ndcg_report.build.steps.step_failures import check_notebook, cut_short, disk_full, killed, papermill_failure
from ndcg_report.inputs.access.snapshots import registered, write_manifest
from ndcg_report.inputs.access.stamps import InputWatch

if TYPE_CHECKING:
    from concurrent.futures import Future

    import nbformat

    from ndcg_report.build.steps.offline_html import OfflineHTMLExporter

NOTEBOOK = "ndcg_report.ipynb"
NBVAL_STOP = "stop"
INPUTS_FOLDER = ".inputs"  # the copied and parsed inputs the kernels read (input_snapshots, input_cache), in staging
PARAMETERISED = ".parameterised.ipynb"  # papermill's notebook before it runs, which nbval re-executes meanwhile
CELLS_FOLDER = ".cells"  # papermill's outputs of each cell as soon as it has run (report.cell_snapshots)
BUILD_TIME_START = "<!-- build-time -->"
BUILD_TIME_END = "<!-- /build-time -->"
def check_timeout(timeout: object, option: str = "--timeout") -> int:
    """timeout if it is a whole number of seconds from 1 to MAX_TIMEOUT, else ParameterError."""
    return check("timeout", timeout, option)  # type: ignore[return-value]


@dataclass(frozen=True)
class NotebookJob:
    """What build_notebook builds: `template` executed with `parameters` (papermill's, plain values),
    after `check_inputs(keep=...)` has read and checked every input (InputError or ParameterError for bad
    input), handing each parsed run and qrels to keep; `inputs`, every input file (none may be in
    --out; each stamped, so a change before it is copied, or of one read in place, is bad input);
    `outputs`, the files the notebook must write into its folder; `prepare(staging, fork_server)`, what
    to make in the staging folder
    once the inputs are checked, before the notebook runs (a suite's collection reports); `parsed`, the
    inputs check_inputs and the notebook read (path -> kind: build.loading.parsed_inputs), each copied
    once before it is read, every later read going to the copy (build/input_snapshots.py)."""

    template: Path
    parameters: Mapping[str, object]
    inputs: tuple[Path, ...]
    check_inputs: Callable[..., object]
    outputs: tuple[str, ...] = OUTPUTS
    prepare: Callable[[Path, str], object] | None = None
    parsed: Mapping[Path, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BuildResult:
    out_dir: Path
    seconds: float
    notes: tuple[str, ...] = ()  # what publishing kept (a user's files in --out) or could not tidy


def package_file(*parts: str) -> Path:
    """A file shipped inside the ndcg_report.build package (its notebooks and templates)."""
    return Path(str(resources.files("ndcg_report.build").joinpath(*parts)))


def notebook_parameters(params: ReportParameters) -> dict:
    """The papermill parameters of the report notebook (absolute paths, plain values)."""
    def path(value: Path | None) -> str:
        return str(value) if value else ""

    return {
        "runs": [{"name": item.name, "path": str(item.path)} for item in params.runs],
        "qrels": [{"name": item.name, "path": str(item.path)} for item in params.judgment_sets] or str(params.qrels),
        **{name: path(getattr(params, name)) for name in FILE_ROLES},
        **({"baseline": [{"name": item.name, "path": str(item.path)} for item in baseline_inputs(params)]}
           if params.more_baselines else {}),
        **option_values(params),
        "command": params.command, "output_dir": ".", "bm25_settings": params.bm25_settings,
    }


def build_report(
    params: ReportParameters, out_dir: Path, timeout: int = 600, notebook: Path | None = None,
    progress: bool = False, fork_server: str | None = None, inputs: InputWatch | None = None,
) -> BuildResult:
    """Build the report for params into out_dir; on any failure out_dir is left as it was.

    notebook: a customised copy of the report notebook (default: the one shipped in the package).
    progress: show the step and a bar over the cells on stderr (for a terminal).
    fork_server: the socket of a running kernel fork server (kernel_forks.running_fork_server) to
    use; None starts one for this build, "" launches the kernels as usual.
    inputs: the inputs as stamped before the caller first read them (inputs.access.stamps); those it lacks are
    stamped now. The build copies each input it parses (not a corpus or documents file) before it reads it
    and reads only the copy from then on (build/input_snapshots.py): one that changed before it was copied
    is bad input (InputError); a change after is never read. A corpus or documents file that changed is bad
    input too, checked when a step fails and right before publishing: a report is of one version of each input.
    """
    return build_notebook(report_job(params, notebook), out_dir, timeout, progress=progress, fork_server=fork_server,
                          inputs=inputs)


def report_job(params: ReportParameters, notebook: Path | None = None) -> NotebookJob:
    """The report's NotebookJob: the report notebook (or a customised copy) with params' parameters."""
    return NotebookJob(template=notebook or package_file("notebooks", NOTEBOOK), parameters=notebook_parameters(params),
                       inputs=tuple(input_paths(params)), check_inputs=partial(check_inputs, params),
                       parsed=parsed_inputs(params))


def build_notebook(
    job: NotebookJob, out_dir: Path, timeout: int = 600, progress: bool = False, fork_server: str | None = None,
    inputs: InputWatch | None = None,
) -> BuildResult:
    """Build job into out_dir as build_report builds a report (its arguments mean the same): inputs
    checked, papermill -> nbval -> nbconvert in staging, published atomically; on any failure out_dir
    is left as it was."""
    started = dt.datetime.now(dt.timezone.utc)
    out_dir = _check_job(job, out_dir, timeout)
    steps = Steps(progress)
    inputs = (inputs or InputWatch()).including(job.inputs)
    steps.show("reading the inputs")
    forks = nullcontext(fork_server) if fork_server is not None else running_fork_server(server_label(out_dir))
    with forks as fork_server:  # it imports while the inputs are read
        exporter = in_background(html_exporter)  # nbconvert imported meanwhile too, not beside the kernels
        with staging_folder(out_dir, inputs, steps) as staging, _read_inputs(job, staging):
            if job.prepare is not None:
                job.prepare(staging.folder, fork_server)
            env = {**_kernel_environment(staging.folder), FORK_SERVER_ENV: fork_server}
            executed = staging.folder / "report.ipynb"
            steps.show("papermill and nbval: executing the notebook twice at once")
            validation = _execute_beside_nbval(job, executed, env, timeout, progress)
            steps.show("nbval: comparing the last cells (the HTML is written meanwhile)")
            html_text = _html_once_validated(executed, validation, exporter)
            steps.show("publishing")
            _write_report_page(staging.folder, html_text, started)
            _remove_build_files(staging.folder)
            _check_outputs(job, staging.folder)
            notes = publish_staging(staging, out_dir)
        return BuildResult(out_dir=out_dir, seconds=(dt.datetime.now(dt.timezone.utc) - started).total_seconds(),
                           notes=tuple(notes))


def _check_job(job: NotebookJob, out_dir: Path, timeout: int) -> Path:
    """out_dir resolved, once the timeout, the notebook and out_dir are checked (ParameterError): nothing read yet."""
    check_timeout(timeout)
    skip_unused_jsonschema_formats()  # this process reads notebooks too (nbformat, nbconvert)
    out_dir = out_dir.resolve()
    check_notebook(job.template)
    check_out_dir(out_dir, [*job.inputs, job.template])
    return out_dir


@contextmanager
def _read_inputs(job: NotebookJob, staging: Staging) -> Iterator[None]:
    """Copy each input the job parses into the staging folder (build/input_snapshots.py), then read and
    check every input (InputError or ParameterError, and nothing left behind, for bad input); within, this
    thread reads those inputs from their copies, and the kernels are told them (the manifest)."""
    folder = staging.folder / INPUTS_FOLDER
    try:
        taken = take_snapshots(job.parsed, folder)
        staging.inputs.check()  # each copy is of one version of its input
        staging.inputs = staging.inputs.without(taken)  # from here on only the copies are read
        with registered(taken):  # bad input fails here, before any kernel starts; each run is saved for the
            # kernels and let go before the next is read
            job.check_inputs(keep=partial(save_parsed, folder))
        taken = with_formats(taken, job.parsed)
        write_manifest(folder, taken)
    except (InputError, ParameterError):
        if staging.is_ours():
            remove_owned_folder(staging.folder)
        remove_empty_folders(staging.created)  # bad input leaves no folder behind, as if nothing had been made
        staging.inputs.check()  # a file changed while it was read explains what was read in it
        raise
    with registered(taken):
        yield


def _execute_beside_nbval(job: NotebookJob, executed: Path, env: dict[str, str], timeout: int,
                          progress: bool) -> ChildProcess:
    """papermill executes the notebook into executed while nbval re-executes it; nbval, still running, is returned."""
    validation = _start_nbval(executed, env, timeout, progress=progress)  # re-executes as papermill executes
    try:
        _execute(job.parameters, job.template, executed, env, timeout, progress=progress)
        _drop_run_specific_metadata(executed)
    except BaseException:
        validation.stop(NBVAL_STOP)
        raise
    return validation


def _html_once_validated(executed: Path, validation: ChildProcess, exporter: "Future[OfflineHTMLExporter]") -> str:
    """The executed notebook's HTML, written while nbval checks its last cells; BuildError unless both succeed."""
    validation.send(NBVAL_GO)  # the executed notebook is complete: nbval checks it against what it compared
    try:  # nbconvert beside nbval's re-execution: nothing is published unless both pass
        html_text, html_failure = notebook_to_html(_read_notebook(executed), exporter.result()), None
    except Exception as exc:  # noqa: BLE001 - reported once nbval has had its say
        html_text, html_failure = "", exc
    except BaseException:
        validation.kill()
        raise
    _check_nbval(validation.wait(), executed)
    if html_failure is not None:
        raise html_failure
    return html_text


def _write_report_page(folder: Path, html_text: str, started: dt.datetime) -> None:
    """report.html, with the time the build started."""
    stamp = started.strftime("%Y-%m-%d %H:%M:%S UTC")
    html_text = html_text.replace(
        "<main>", f"<main>\n{BUILD_TIME_START}<p class=\"build-time\">Built {stamp}</p>{BUILD_TIME_END}", 1
    )
    (folder / "report.html").write_text(html_text, encoding="utf-8")


def _remove_build_files(folder: Path) -> None:
    """What only the build used: the kernels' settings, the copied and parsed inputs, papermill's files, the
    owner's mark."""
    for leftover in (folder / ".jupyter", folder / INPUTS_FOLDER, folder / PARAMETERISED, folder / CELLS_FOLDER,
                     folder / "params.yml", folder / OWNED_MARKER):
        if leftover.is_dir():
            shutil.rmtree(leftover)
        elif leftover.exists():
            leftover.unlink()


def _check_outputs(job: NotebookJob, folder: Path) -> None:
    """BuildError naming the files the notebook should have written and did not."""
    missing = [name for name in job.outputs if not (folder / name).is_file()]
    if missing:
        raise BuildError(f"step papermill: the notebook did not write {', '.join(missing)}")


def input_paths(params: ReportParameters) -> list[Path]:
    """Every input file of a report."""
    return ([item.path for item in params.compared_runs] + [item.path for item in params.judgment_sets[1:]]
            + [path for path in (params.qrels, params.baseline, params.topics, params.corpus, params.docs, params.groups)
               if path is not None])


def _kernel_environment(staging: Path) -> dict[str, str]:
    """Environment of a build's children: its `python3` kernel is this interpreter, whatever kernels the
    user has, and no IPython profile, Jupyter config or pytest option of the user's applies."""
    kernel_dir = staging / ".jupyter" / "kernels" / "python3"
    kernel_dir.mkdir(parents=True)
    spec = {"argv": [sys.executable, *LAUNCHER, "-f", "{connection_file}"],
            "display_name": "Python 3 (ndcg-report)", "language": "python",
            "metadata": {"kernel_provisioner": {"provisioner_name": PROVISIONER}}}  # build/kernels/kernel_forks.py
    (kernel_dir / "kernel.json").write_text(json.dumps(spec))
    env = child_environment()
    env["JUPYTER_PATH"] = str(staging / ".jupyter")
    env["JUPYTER_CONFIG_DIR"] = str(staging / ".jupyter" / "config")  # no ~/.jupyter config in the kernels
    env["IPYTHONDIR"] = str(staging / ".jupyter" / "ipython")  # no profile or startup file of the user's
    env[INPUT_CACHE_ENV] = str(staging / INPUTS_FOLDER)
    return env


def _execute(parameters: Mapping[str, object], template: Path, executed: Path, env: dict[str, str], timeout: int,
             progress: bool = False) -> None:
    """papermill (build/steps/papermill_process.py): run the template notebook with parameters; name the
    failing cell on error."""
    parameter_file = executed.parent / "params.yml"
    parameter_file.write_text(yaml.safe_dump(dict(parameters), sort_keys=True))
    command = [sys.executable, "-m", "ndcg_report.build.steps.papermill_process", str(template), str(executed),
               str(parameter_file), str(executed.parent), str(timeout), str(executed.parent / PARAMETERISED),
               str(executed.parent / CELLS_FOLDER)]
    result = ChildProcess(command, env, label="papermill" if progress else "").wait()
    if result.returncode != 0:
        reason = killed(result.returncode, result.stderr) or papermill_failure(executed, template, result.stderr, timeout)
        raise BuildError(f"step papermill failed: {reason}")


def _read_notebook(executed: Path) -> "nbformat.NotebookNode":
    """The executed notebook; BuildError (one line) if it cannot be read (a disk that filled up)."""
    import nbformat  # here: its import takes ~3 s (jsonschema), and bad input must fail before it

    try:
        return nbformat.read(executed, as_version=4)
    except OSError:
        raise
    except Exception as exc:  # noqa: BLE001 - nbformat's NotJSONError, ValidationError, ...
        if cut_short(executed):  # papermill ran out of disk while writing it, or was killed meanwhile
            full = disk_full("No space left on device", executed.parent.parent) or ""
            raise BuildError(f"step papermill failed: {executed.name} was cut short; {full}") from None
        reason = " ".join(str(exc).split())[:200]
        raise BuildError(f"step papermill failed: the executed notebook {executed.name} cannot be read "
                         f"({type(exc).__name__}: {reason})") from None


def _drop_run_specific_metadata(executed: Path) -> None:
    """Make report.ipynb depend only on the inputs: fixed cell ids, no execution times; its title (the
    HTML page's <title>) is the report's, from the summary.json the notebook wrote beside it."""
    import nbformat

    notebook = _read_notebook(executed)
    try:
        title = json.loads((executed.parent / "summary.json").read_text(encoding="utf-8")).get("title")
    except (OSError, ValueError, AttributeError):
        title = None
    if isinstance(title, str) and title:
        notebook.metadata["title"] = title
    for index, cell in enumerate(notebook.cells):
        if "injected-parameters" in cell.metadata.get("tags", []):
            cell["id"] = "injected-parameters"
        cell.metadata.pop("execution", None)
        for key in ("start_time", "end_time", "duration"):
            cell.metadata.get("papermill", {}).pop(key, None)
    for key in ("start_time", "end_time", "duration", "input_path", "output_path"):
        notebook.metadata.get("papermill", {}).pop(key, None)
    nbformat.write(notebook, executed)


# nbval's own process (its kernel is the fork server's child) waits on papermill's cells; niced, its start-up
# does not slow the fork server's imports, which both kernels wait for
NBVAL_NICE = 10


def _start_nbval(executed: Path, env: dict[str, str], timeout: int, progress: bool = False) -> ChildProcess:
    """nbval: re-execute the executed notebook and compare every output with the stored one (pytest
    with only the plugins it needs: autoloading every installed one costs a second). Started with
    papermill: it re-executes each cell of the parameterised notebook as papermill does, compares it with
    papermill's outputs of that cell, and once it reads NBVAL_GO on its stdin checks what it compared
    with against the executed notebook (build/steps/nbval_plugin.py)."""
    ini = executed.parent / ".jupyter" / "pytest.ini"
    ini.write_text("[pytest]\n")
    command = [
        sys.executable, "-m", "pytest", "-p", "ndcg_report.build.steps.nbval_plugin", "-p", "nbval.plugin",
        "--nbval", str(executed.parent / PARAMETERISED), "-c", str(ini), "--rootdir", str(executed.parent),
        "--nbval-sanitize-with", str(package_file("notebooks", "nbval_sanitize.cfg")),
        "--nbval-kernel-name", "python3", "--nbval-cell-timeout", str(timeout),
        "-p", "no:cacheprovider", "-q", "-s", "--no-header", "-W", "ignore::DeprecationWarning",
        "--ndcg-report-cells", str(executed.parent / CELLS_FOLDER), "--ndcg-report-executed", str(executed),
    ]
    return ChildProcess(command, {**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", REVALIDATION_ENV: "1"},
                        cwd=str(executed.parent),
                        label="nbval" if progress else "", talk=True, line=2, nice=NBVAL_NICE)


def _check_nbval(result: Finished, executed: Path) -> None:
    """BuildError naming the cells whose outputs differed, unless nbval passed."""
    if result.returncode != 0:
        failed = re.findall(r"FAILED \S*::(Cell \d+)", result.stdout)
        where = f" in {', '.join(failed)}" if failed else ""
        full = disk_full(result.stdout + result.stderr, executed.parent.parent)
        if full:
            raise BuildError(f"step nbval failed: {full}")
        reason = killed(result.returncode, result.stdout + result.stderr)
        if reason:
            raise BuildError(f"step nbval failed{where}: {reason}")
        last = [line for line in result.stdout.strip().splitlines() if line.strip()]
        raise BuildError(f"step nbval failed{where}: outputs differ on re-execution ({last[-1] if last else 'no output'})")


def html_exporter() -> "OfflineHTMLExporter":
    """The offline HTML exporter with its template loaded (nbconvert and nbformat imported: 0.4 s)."""
    import nbformat  # noqa: F401 - _read_notebook and _drop_run_specific_metadata use it next
    from ndcg_report.build.steps.offline_html import OfflineHTMLExporter  # imports nbconvert: only once it is needed

    exporter = OfflineHTMLExporter()
    exporter.template  # noqa: B018 - loads and compiles the template now
    return exporter


def notebook_to_html(notebook: "nbformat.NotebookNode", exporter: "OfflineHTMLExporter | None" = None) -> str:
    """Offline HTML: code hidden, figures embedded, no script or stylesheet from the network."""
    exporter = exporter or html_exporter()
    body, _ = exporter.from_notebook_node(notebook, resources={"metadata": {"name": "report"}})
    return body
