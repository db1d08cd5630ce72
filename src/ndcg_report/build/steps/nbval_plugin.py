"""The pytest plugin of the build's nbval step: re-executes beside papermill and compares each cell.

A pytest plugin for the build's nbval step (`pytest -p ndcg_report.build.steps.nbval_plugin -p nbval.plugin
--nbval`, with pytest's plugin autoload off): keeps jsonschema's unused format grammar from loading,
prints a progress line per cell for the parent's bar and, with --ndcg-report-cells, re-executes the
notebook while papermill still runs it.

Concurrent re-execution (build/steps/cell_snapshots.py): the session starts nbval's kernel and imports the
report's modules in it, waits for the parameterised notebook papermill executes (the path nbval is
given), collects it and re-executes every cell at once; a cell's outputs are compared, as nbval does,
with the outputs papermill's execution saved for that cell, waited for when not there yet. Lines on
stdin steer it: `go` once the executed notebook (--ndcg-report-executed) is complete, anything else or
end of input to stop at once (exit 3: papermill failed, nothing to validate). At the end every reference
compared with is checked against the executed notebook itself; a cell whose stored outputs differ from
its snapshot is compared again with the stored ones, so the verdict is always on the executed notebook.
nbval's own kernel start is used instead if its name or folder differ, or if nbval no longer starts
kernels through nbval.plugin.RunningKernel.

A kernel that dies (killed for memory) fails its cell within KERNEL_POLL seconds, not at the cell's
timeout; the session stops there and its last line is KERNEL_DIED, which the build reports as such.
"""

from __future__ import annotations

import copy
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from queue import Empty
from typing import Any

from ndcg_report.build.steps.cell_snapshots import cell_path, cell_record, load_cell
from ndcg_report.build.kernels.kernel_forks import PRELOAD
from ndcg_report.build.steps.processes import print_progress, skip_unused_jsonschema_formats
from ndcg_report.build.steps.step_failures import KERNEL_DIED

skip_unused_jsonschema_formats()  # before nbval.plugin imports nbformat

GO = "go"
POLL_SECONDS = 0.01  # how often a waiting cell looks for its snapshot
STOPPED = 3  # nbval's exit status when told to stop
STOP_SECONDS = 3.0  # told to stop, the process ends within this, its kernels stopped or not
KERNEL_POLL = 1.0  # seconds between two looks at whether the kernel a cell waits for is alive


class KernelDied(RuntimeError):
    """The kernel nbval waits for is no longer running."""


class KernelWatch:
    """Every nbval kernel's waits for a message look at whether the kernel is alive every KERNEL_POLL
    seconds: a dead one is KernelDied at once (nbval would wait for the cell's whole timeout), the
    session stops, and KERNEL_DIED is its last line."""

    def __init__(self) -> None:
        self.died = False
        self.session = None

    def pytest_sessionstart(self, session) -> None:
        self.session = session

    def watch(self) -> None:
        """Make every RunningKernel's get_message look at its kernel while it waits."""
        from nbval.kernel import RunningKernel

        wait = RunningKernel.get_message
        watch = self

        def get_message(kernel, stream, timeout=None):
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                try:
                    return wait(kernel, stream, timeout=KERNEL_POLL if left is None else min(KERNEL_POLL, left))
                except Empty:
                    if not kernel.is_alive():
                        watch.died = True
                        raise KernelDied(KERNEL_DIED) from None
                    if left is not None and left <= KERNEL_POLL:
                        raise

        RunningKernel.get_message = get_message

    def pytest_runtest_logreport(self, report) -> None:
        if self.died and self.session is not None:
            self.session.shouldstop = KERNEL_DIED

    def pytest_unconfigure(self, config) -> None:
        if self.died:
            print(KERNEL_DIED, flush=True)


class CellProgress:
    """Counts the cells nbval has run, out of those it collected."""

    def __init__(self) -> None:
        self.total = 0
        self.done = 0

    def pytest_collection_finish(self, session) -> None:
        self.total = len(session.items)

    def pytest_runtest_logreport(self, report) -> None:
        if report.when == "teardown" and self.total:
            self.done += 1
            print_progress(self.done, self.total)


class Steering:
    """The parent's lines on stdin, read by a thread from the session's start: `go`, or a stop (any other
    line, end of input) before `go`, on which the thread calls on_stop at once, wherever the main thread
    is (importing, starting its kernel, waiting): a stopped build never waits for nbval's start."""

    def __init__(self, on_stop: Callable[[], None]) -> None:
        self.go = threading.Event()
        self.stop = threading.Event()
        self._on_stop = on_stop
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in sys.stdin:
            if line.strip() == GO:
                self.go.set()
            else:
                break
        self.stop.set()
        if not self.go.is_set():
            self._on_stop()

    def wait(self, ready: Callable[[], bool]) -> None:
        """Return once ready() holds (a stop meanwhile ends the process from the reading thread)."""
        while not ready():
            time.sleep(POLL_SECONDS)


class AwaitedCell:
    """A collected cell whose reference (execution_count, outputs) is papermill's snapshot of it, waited
    for on first use; source, metadata and the rest are the parameterised notebook's."""

    def __init__(self, cell: Any, reference: Callable[[], dict]) -> None:
        self._cell = cell
        self._load = reference
        self.reference: dict | None = None  # the snapshot compared with (plain JSON data), once asked for
        self._outputs: list | None = None

    def __getattr__(self, name: str) -> Any:
        if name not in ("outputs", "execution_count"):
            return getattr(self._cell, name)
        if self.reference is None:
            import nbformat

            self.reference = self._load()
            self._outputs = [nbformat.from_dict(output) for output in self.reference["outputs"]]  # copies
        return self._outputs if name == "outputs" else self.reference["execution_count"]

    def __getitem__(self, name: str) -> Any:
        return self.__getattr__(name)

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self.__getattr__(name)
        except (AttributeError, KeyError):
            return default


class ConcurrentValidation:
    """nbval's kernel, started and warmed up before the notebook it validates exists, re-executing it
    while papermill runs it; see the module's docstring."""

    def __init__(self, kernel_name: str, cwd: str, startup_timeout: float, cells: Path, executed: Path) -> None:
        self.kernel_name, self.cwd, self.startup_timeout = kernel_name, cwd, startup_timeout
        self.cells, self.executed = cells, executed
        self.kernel = None  # until nbval takes it
        self.kernels: list = []  # every kernel started here, to stop on a stop
        self.kernels_lock = threading.Lock()
        self.steering = Steering(self._stop_now)
        self.awaited: list[tuple[Any, int, AwaitedCell]] = []  # (item, index in the notebook, its cell)
        self.verdict = ""  # why the final check failed

    def _stop_now(self) -> None:
        """Stop the kernels started here and exit STOPPED (from the thread reading stdin); the process
        ends within STOP_SECONDS whatever a kernel's stop does."""
        exit_anyway = threading.Timer(STOP_SECONDS, os._exit, (STOPPED,))
        exit_anyway.daemon = True
        exit_anyway.start()
        with self.kernels_lock:
            kernels = list(self.kernels)
        for kernel in kernels:
            try:
                kernel.stop()
            except Exception:  # noqa: BLE001 - stopping anyway
                pass
        os._exit(STOPPED)

    def pytest_sessionstart(self, session) -> None:
        import nbval.plugin
        from nbval.kernel import RunningKernel

        self.kernel = RunningKernel(self.kernel_name, cwd=self.cwd, startup_timeout=self.startup_timeout)
        with self.kernels_lock:
            self.kernels.append(self.kernel)
        code = "import importlib\nfor _name in %r:\n    importlib.import_module(_name)\ndel importlib, _name" % (PRELOAD,)
        message = self.kernel.kc.execute(code, silent=True, store_history=False, allow_stdin=False)
        self.kernel.await_reply(message, timeout=self.startup_timeout)
        self.kernel.await_idle(message, timeout=self.startup_timeout)
        start_kernel = nbval.plugin.RunningKernel

        def hand_over(kernel_name, cwd=None, startup_timeout=60):
            same_folder = cwd is not None and os.path.realpath(cwd) == os.path.realpath(self.cwd)
            if self.kernel is not None and kernel_name == self.kernel_name and same_folder:
                kernel, self.kernel = self.kernel, None
                return kernel
            kernel = start_kernel(kernel_name, cwd=cwd, startup_timeout=startup_timeout)
            with self.kernels_lock:
                self.kernels.append(kernel)
            return kernel

        nbval.plugin.RunningKernel = hand_over
        notebooks = [Path(session.config.invocation_params.dir, arg) for arg in session.config.args]
        self.steering.wait(lambda: all(path.exists() for path in notebooks))

    def pytest_collection_modifyitems(self, session, config, items) -> None:
        for item in items:
            notebook = getattr(item.parent, "nb", None)
            if notebook is None or not hasattr(item, "cell"):
                continue
            index = next(i for i, cell in enumerate(notebook.cells) if cell is item.cell)
            awaited = AwaitedCell(item.cell, self._reference(item.cell, index, len(notebook.cells)))
            item.cell = awaited
            self.awaited.append((item, index, awaited))

    def _reference(self, cell: Any, index: int, count: int) -> Callable[[], dict]:
        """The loader of a cell's reference: its snapshot; for a cell papermill does not execute (empty:
        no snapshot comes, a later cell's does), the cell as parameterised (no output); after `go`
        without either, the executed notebook's cell."""

        def ready() -> bool:
            return (cell_path(self.cells, index).exists() or self.steering.go.is_set()
                    or any(cell_path(self.cells, later).exists() for later in range(index + 1, count)))

        def load() -> dict:
            self.steering.wait(ready)
            snapshot = load_cell(self.cells, index)
            if snapshot is None and not self.steering.go.is_set():
                snapshot = _plain(cell_record(cell))
            if snapshot is None:
                import nbformat

                snapshot = _plain(cell_record(nbformat.read(self.executed, as_version=4).cells[index]))
            if snapshot["source"] != cell.source:
                raise RuntimeError(f"cell {index}'s source differs between the executed and the parameterised notebook")
            return snapshot

        return load

    def pytest_sessionfinish(self, session, exitstatus) -> None:
        """Check every reference compared with against the executed notebook, once it is complete."""
        import nbformat
        from nbval.plugin import coalesce_streams

        if self.kernel is not None:  # never handed over
            self.kernel.stop()
            self.kernel = None
        if not self.awaited:
            return
        self.steering.wait(self.steering.go.is_set)
        cells = nbformat.read(self.executed, as_version=4).cells
        failed = []
        for item, index, awaited in self.awaited:
            stored = cells[index] if index < len(cells) else None
            if stored is None or stored.source != awaited._cell.source:
                failed.append((item, "its source differs in the executed notebook"))
                continue
            used = awaited.reference
            if used is None or used == _plain(cell_record(stored)):
                continue  # not compared (nbval failed it before), or compared with what is stored
            if item.test_outputs is None:
                continue
            unrun = stored.get("execution_count") is None
            if unrun and stored.get("outputs"):
                failed.append((item, "unrun reference cell has outputs"))
            elif item.options["check"] and not unrun and not item.compare_outputs(
                    item.test_outputs, coalesce_streams(copy.deepcopy(stored.get("outputs", [])))):
                failed.append((item, "Cell outputs differ from the executed notebook's, changed after it ran"))
        for item, why in failed:
            print(f"FAILED {item.nodeid} - {why}", flush=True)
        if failed:
            session.exitstatus = 1
            names = ", ".join(item.name for item, _ in failed)
            self.verdict = (f"{names}: the executed notebook's outputs changed after the cell ran (a later cell "
                            "updated them) and differ from its re-execution")

    def pytest_unconfigure(self, config) -> None:
        if self.verdict:  # the last line, after pytest's counts of the cells, which all passed
            print(self.verdict, flush=True)


def _plain(data: Any) -> Any:
    """Notebook data (NotebookNodes) as plain JSON data, for equality."""
    import json

    return json.loads(json.dumps(data))


def pytest_addoption(parser) -> None:
    parser.addoption("--ndcg-report-cells", default="",
                     help="re-execute while papermill runs: the folder of papermill's cell snapshots")
    parser.addoption("--ndcg-report-executed", default="",
                     help="with --ndcg-report-cells: the executed notebook, complete once `go` is read")


class _PrettyWhenLogged:
    """pprint.pformat(message), made only when a log record is written: nbval's RunningKernel.get_message
    formats every kernel message for its debug log (a report's whole HTML, a sixth of nbval's process)
    whether or not anything logs at that level; with debug logging on, the log reads as before."""

    def __init__(self, message: object) -> None:
        self.message = message

    def __str__(self) -> str:
        from pprint import pformat

        return pformat(self.message)


def pytest_configure(config) -> None:
    import nbval.kernel

    if getattr(nbval.kernel, "pformat", None) is not None:
        nbval.kernel.pformat = _PrettyWhenLogged
    config.pluginmanager.register(CellProgress(), "ndcg-report-cell-progress")
    watch = KernelWatch()
    watch.watch()
    config.pluginmanager.register(watch, "ndcg-report-kernel-watch")
    cells = config.getoption("ndcg_report_cells")
    if cells:
        kernel_name = config.getoption("nbval_kernel_name") or "python3"
        config.pluginmanager.register(
            ConcurrentValidation(kernel_name, os.getcwd(), float(config.getoption("nbval_kernel_startup_timeout")),
                                 Path(cells), Path(config.getoption("ndcg_report_executed"))),
            "ndcg-report-concurrent-validation")
