"""A pytest plugin for the build's nbval step (`pytest -p ndcg_report.report.nbval_plugin -p nbval.plugin
--nbval`, with pytest's plugin autoload off): keeps jsonschema's unused format grammar from loading,
prints a progress line per cell for the parent's bar and, with --ndcg-report-prestart, starts the kernel
while papermill still runs.

Prestart: the session starts nbval's kernel and imports the report's modules in it, then waits for a
line on stdin: `go` once the executed notebook is written (nbval then collects it and re-executes every
cell in that kernel), anything else or end of input to stop. nbval's own kernel start is used instead if
its name or folder differ, or if nbval no longer starts kernels through nbval.plugin.RunningKernel."""

from __future__ import annotations

import os
import sys

from ndcg_report.report.processes import print_progress, skip_unused_jsonschema_formats

skip_unused_jsonschema_formats()  # before nbval.plugin imports nbformat

PRELOAD = ("IPython.display", "ndcg_report.report.checks", "ndcg_report.report.content",
           "ndcg_report.report.corpus_baseline", "ndcg_report.report.drilldown", "ndcg_report.report.html",
           "ndcg_report.report.outputs", "ndcg_report.report.parameters", "ndcg_report.report.plots",
           "ndcg_report.report.results", "matplotlib.backends.backend_agg")
GO = "go"


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


class PrestartedKernel:
    """nbval's kernel, started and warmed up before the notebook it validates exists."""

    def __init__(self, kernel_name: str, cwd: str, startup_timeout: float) -> None:
        self.kernel_name, self.cwd, self.startup_timeout = kernel_name, cwd, startup_timeout
        self.kernel = None

    def pytest_sessionstart(self, session) -> None:
        import nbval.plugin
        from nbval.kernel import RunningKernel

        self.kernel = RunningKernel(self.kernel_name, cwd=self.cwd, startup_timeout=self.startup_timeout)
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
            return start_kernel(kernel_name, cwd=cwd, startup_timeout=startup_timeout)

        nbval.plugin.RunningKernel = hand_over
        if sys.stdin.readline().strip() != GO:
            self.kernel.stop()
            self.kernel = None
            os._exit(3)  # told to stop (papermill failed): nothing to validate

    def pytest_sessionfinish(self, session) -> None:
        if self.kernel is not None:  # never handed over
            self.kernel.stop()
            self.kernel = None


def pytest_addoption(parser) -> None:
    parser.addoption("--ndcg-report-prestart", action="store_true",
                     help="start the kernel first, then wait for `go` on stdin before collecting")


def pytest_configure(config) -> None:
    config.pluginmanager.register(CellProgress(), "ndcg-report-cell-progress")
    if config.getoption("ndcg_report_prestart"):
        kernel_name = config.getoption("nbval_kernel_name") or "python3"
        config.pluginmanager.register(
            PrestartedKernel(kernel_name, os.getcwd(), float(config.getoption("nbval_kernel_startup_timeout"))),
            "ndcg-report-prestarted-kernel")
