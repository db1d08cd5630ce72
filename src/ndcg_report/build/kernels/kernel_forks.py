"""Kernels forked from a process that has already imported what the report's kernels import.

A build runs the notebook in two kernels (papermill's and nbval's), and each used to import ipykernel,
pandas, scipy.stats, matplotlib and the report's modules for itself (1.5 s of CPU each, on two cores).
Instead the build starts one fork server, `python -m ndcg_report.build.kernels.kernel_forks SOCKET`, which
imports them once and, asked on its Unix socket, forks a process that becomes an ipykernel exactly as
`python -m ipykernel_launcher` would (its own session, the requested working folder, environment and
connection file). Every number is still computed in each kernel: only imports are shared, as when
nbval's kernel imported them before the notebook existed.

The kernels are asked for through a jupyter_client kernel provisioner, `ndcg-report-fork` (the
build's kernel.json names it; build/kernels/fork_provisioner.py): it asks for a fork when the environment
names a fork server (FORK_SERVER_ENV) and launches the kernel as usual otherwise, or if the server does
not answer. The server ends, killing the kernels it forked, on SIGTERM, on `stop` or at the end of its standard
input; a forked kernel is killed too if the server is (Linux)."""

from __future__ import annotations

import gc
import json
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ndcg_report.build.steps.processes import ChildProcess

FORK_SERVER_ENV = "NDCG_REPORT_KERNEL_FORKS"  # the fork server's socket, in the environment of a kernel's starter
NO_FORKS_ENV = "NDCG_REPORT_NO_FORKS"  # set (to anything but "" or 0): no fork server, kernels launched as usual
PROVISIONER = "ndcg-report-fork"  # its entry point in jupyter_client.kernel_provisioners
LAUNCHER = ("-m", "ipykernel_launcher")  # what a kernel.json forked here runs after the interpreter
PRELOAD = ("ipykernel.kernelapp", "IPython.display", "ndcg_report.analysis.checks", "ndcg_report.analysis.content",
           "ndcg_report.build.corpus_baseline", "ndcg_report.analysis.drilldown", "ndcg_report.analysis.html",
           "ndcg_report.analysis.outputs", "ndcg_report.build.parameters", "ndcg_report.analysis.plots",
           "ndcg_report.analysis.results", "ndcg_report.build.notebook_io", "matplotlib.backends.backend_agg")
REAP_SECONDS = 0.05
# every build child's (server, kernels, papermill, nbval), read at import too; PYTHONSAFEPATH: `python -m`
# puts no working folder first on sys.path, so no module of the caller's folder runs as code
KERNEL_ENVIRONMENT = {"PYTHONHASHSEED": "0", "MPLBACKEND": "agg", "PYTHONSAFEPATH": "1"}


def server_label(out_dir: Path) -> str:
    """What a build's fork server shows in its command line: the build's staging folder, as its
    papermill and nbval processes do (so that a build's processes can be told)."""
    out_dir = out_dir.resolve()
    return str(out_dir.parent / f".{out_dir.name}.staging")


@contextmanager
def running_fork_server(label: str = "", env: dict[str, str] | None = None) -> Iterator[str]:
    """A fork server for the block; yields its socket, for FORK_SERVER_ENV ("" if there is none: kernels
    are then launched as usual). Stopped, with every kernel it forked, when the block ends. If this
    process's FORK_SERVER_ENV already names a server's socket (a batch's, running for all of its
    builds), that one is yielded and none is started. label: shown in its command line (server_label);
    env: its environment (default: this process's with KERNEL_ENVIRONMENT, what kernels read at import)."""
    given = os.environ.get(FORK_SERVER_ENV, "")
    if given and os.path.exists(given):
        yield given
        return
    env = {**os.environ, **KERNEL_ENVIRONMENT} if env is None else env
    if not hasattr(os, "fork") or not hasattr(socket, "AF_UNIX") or os.environ.get(NO_FORKS_ENV, "0") not in ("", "0"):
        yield ""  # kernels are launched as usual
        return
    folder = tempfile.mkdtemp(prefix="ndcg-report-forks-")  # private (0700), and a short path for the socket
    path = os.path.join(folder, "socket")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:  # here: it exists before it is asked
            listener.bind(path)
            listener.listen(16)
            server = ChildProcess([sys.executable, "-m", "ndcg_report.build.kernels.kernel_forks", str(listener.fileno()),
                                   label], env, talk=True, pass_fds=(listener.fileno(),))
    except OSError:  # a socket path too long for the system (TMPDIR), no room: kernels launched as usual
        shutil.rmtree(folder, ignore_errors=True)
        yield ""
        return
    try:
        yield path
    finally:
        server.terminate()  # at once, even in its imports (bad input found meanwhile)
        shutil.rmtree(folder, ignore_errors=True)


def serve(listening: int) -> None:
    """The fork server: import PRELOAD, then fork a kernel per request on the listening socket (a file
    descriptor; requests made meanwhile wait)."""
    signal.signal(signal.SIGTERM, _end)  # asked to end: kill the kernels forked (the finally below)
    if sys.path and (sys.path[0] in ("", os.getcwd())):
        del sys.path[0]  # as ipykernel_launcher does; the kernel puts its folder back
    listener = socket.socket(fileno=listening)
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    gc.collect()
    gc.freeze()  # what is imported stays out of the kernels' collections (fewer pages copied, faster cells)
    kernels: set[int] = set()
    try:
        while True:
            ready, _, _ = select.select([listener, sys.stdin], [], [], REAP_SECONDS)
            _reap(kernels)
            if sys.stdin in ready and sys.stdin.readline().strip() in ("stop", ""):
                return
            if listener in ready:
                connection, _ = listener.accept()
                with connection:
                    try:
                        request = json.loads(connection.makefile("rb").readline())
                    except (OSError, ValueError):  # the asker went away: no kernel
                        continue
                    pid = os.fork()
                    if pid == 0:
                        listener.close()
                        connection.close()
                        _become_kernel(request)
                    kernels.add(pid)
                    connection.sendall(json.dumps({"pid": pid}).encode("utf-8") + b"\n")
    finally:
        for pid in kernels:
            try:
                os.killpg(pid, signal.SIGKILL)  # the kernel and what it started
            except OSError:
                try:
                    os.kill(pid, signal.SIGKILL)  # not yet the leader of its session
                except OSError:
                    pass
        _reap(kernels)


def _end(signum: int, frame: object) -> None:
    raise SystemExit(0)


def _reap(kernels: set[int]) -> None:
    for pid in list(kernels):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            kernels.discard(pid)


def _become_kernel(request: dict) -> None:
    """In the forked child: run ipykernel as `python -m ipykernel_launcher ARGS` would; never returns."""
    code = 1
    try:
        server = os.getppid()
        os.setsid()
        _die_with_parent()
        if os.getppid() != server:  # the server ended before the line above
            os._exit(1)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        for signum in (signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ.pop(FORK_SERVER_ENV, None)
        sys.argv = ["ipykernel_launcher", *request["args"]]
        from ipykernel import kernelapp

        kernelapp.launch_new_instance()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _die_with_parent() -> None:
    """Linux: the kernel is killed if the server ends without killing it (the server itself killed)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def main(argv: list[str]) -> None:
    """Serve, then end without the interpreter's teardown (0.3 s with scipy, pandas and matplotlib
    loaded, which the build would wait for)."""
    code = 0
    try:
        serve(int(argv[0]))  # argv[1], a label, is only shown
    except SystemExit as exc:  # SIGTERM: the build is over
        code = exc.code if isinstance(exc.code, int) else 0
    except BaseException:  # noqa: BLE001 - shown on stderr, which the build keeps
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
