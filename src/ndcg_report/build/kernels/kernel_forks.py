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
import importlib
import json
import os
import re
import select
import shutil
import signal
import socket
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from ndcg_report.build.kernels.server_trust import (ANSWER_SECONDS, GO, HELLO, IMPORTING, MAX_REQUEST, READY, read_line,
                                                     trusted_socket)
from ndcg_report.build.kernels.temp_folder import check_temporary_folder
from ndcg_report.build.steps.processes import REVALIDATION_ENV, ChildProcess
from ndcg_report.working_folders import process_alive

FORK_SERVER_ENV = "NDCG_REPORT_KERNEL_FORKS"  # the fork server's socket, in the environment of a kernel's starter
NO_FORKS_ENV = "NDCG_REPORT_NO_FORKS"  # set (to anything but "" or 0): no fork server, kernels launched as usual
PROVISIONER = "ndcg-report-fork"  # its entry point in jupyter_client.kernel_provisioners
LAUNCHER = ("-m", "ipykernel_launcher")  # what a kernel.json forked here runs after the interpreter
PRELOAD = ("ipykernel.kernelapp", "IPython.display", "ndcg_report.analysis.checks", "ndcg_report.analysis.content",
           "ndcg_report.build.corpus_baseline", "ndcg_report.analysis.drilldown", "ndcg_report.analysis.html",
           "ndcg_report.analysis.outputs", "ndcg_report.build.parameters", "ndcg_report.analysis.plots",
           "ndcg_report.analysis.results", "ndcg_report.build.notebook_io", "matplotlib.backends.backend_agg",
           "ndcg_report.build.suite_io", "ndcg_report.analysis.tables.suite_page")
REAP_SECONDS = 0.05
# every build child's (server, kernels, papermill, nbval), read at import too; PYTHONSAFEPATH: `python -m`
# puts no working folder first on sys.path, so no module of the caller's folder runs as code
KERNEL_ENVIRONMENT = {"PYTHONHASHSEED": "0", "MPLBACKEND": "agg", "PYTHONSAFEPATH": "1",
                      # one thread per BLAS: two kernels run at once, and spinning threads would fight them
                      "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
# what the caller's environment may hold that would run code in a build's children or change a report:
# pytest's options (nbval's run), the user's Jupyter config paths, Python's warnings filters, start-up
# hooks and inspect mode (a step would end in its REPL), and the variable the build sets for nbval's re-execution only
CALLER_SETTINGS_IGNORED = frozenset({REVALIDATION_ENV, "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "JUPYTER_CONFIG_PATH",
                                     "JUPYTER_PLATFORM_DIRS", "PYTHONWARNINGS", "PYTHONSTARTUP", "PYTHONBREAKPOINT",
                                     "PYTHONINSPECT"})
SOCKET_FOLDER_PREFIX = "ndcg-report-forks-"  # + the build's pid + "-": a private folder in the temporary folder
_SOCKET_FOLDER = re.compile(rf"^{SOCKET_FOLDER_PREFIX}(?P<pid>\d+)-[A-Za-z0-9_]+$")


def server_label(out_dir: Path) -> str:
    """What a build's fork server shows in its command line: the build's staging folder, as its
    papermill and nbval processes do (so that a build's processes can be told)."""
    out_dir = out_dir.resolve()
    return str(out_dir.parent / f".{out_dir.name}.staging")


def child_environment() -> dict[str, str]:
    """The environment of a build's children (fork server, kernels, papermill, nbval): this process's, less
    CALLER_SETTINGS_IGNORED, with KERNEL_ENVIRONMENT."""
    return {**{name: value for name, value in os.environ.items() if name not in CALLER_SETTINGS_IGNORED},
            **KERNEL_ENVIRONMENT}


def forks_switched_off(env: Mapping[str, str] = os.environ) -> bool:
    """Whether NO_FORKS_ENV asks for kernels launched as usual (set to anything but "" or "0")."""
    return env.get(NO_FORKS_ENV, "0") not in ("", "0")


@contextmanager
def running_fork_server(label: str = "", env: dict[str, str] | None = None) -> Iterator[str]:
    """A fork server for the block; yields its socket, for FORK_SERVER_ENV ("" if there is none: kernels
    are then launched as usual). Stopped, with every kernel it forked, when the block ends. If this
    process's FORK_SERVER_ENV names a server's socket that is this user's own (server_trust; a batch's,
    running for all of its builds), that one is yielded and none is started. label: shown in its command
    line (server_label); env: its environment (default: child_environment(), what kernels read at import).
    Either way, a temporary folder another user could swap folders in is refused first (ParameterError,
    temp_folder), and the socket folders left by this user's processes that are gone are removed."""
    check_temporary_folder()
    remove_stale_socket_folders()  # a killed build's server's, or its kernels' (build/kernels/fork_provisioner.py)
    if forks_switched_off() or not hasattr(os, "fork") or not hasattr(socket, "AF_UNIX"):
        yield ""  # kernels are launched as usual
        return
    given = os.environ.get(FORK_SERVER_ENV, "")
    if given and trusted_socket(given):
        yield given
        return
    env = child_environment() if env is None else env
    folder = socket_folder()
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


def socket_folder() -> str:
    """A new folder for Unix sockets (and a kernel's connection file), that only this user may enter (0700),
    with a short path: named so that remove_stale_socket_folders removes it once this process has ended, if
    it is left behind."""
    return tempfile.mkdtemp(prefix=f"{SOCKET_FOLDER_PREFIX}{os.getpid()}-")


def remove_stale_socket_folders(parent: str | None = None) -> None:
    """Remove the socket folders (`ndcg-report-forks-PID-X/`, with a kernel's connection file) of this user's
    builds that are gone without removing theirs (killed): this user's own folders only, whose PID has ended."""
    parent = parent or tempfile.gettempdir()
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        match = _SOCKET_FOLDER.match(name)
        path = os.path.join(parent, name)
        try:
            owner = os.lstat(path)
        except OSError:
            continue
        if (match and stat.S_ISDIR(owner.st_mode) and owner.st_uid == os.geteuid()
                and not process_alive(int(match["pid"]))):
            shutil.rmtree(path, ignore_errors=True)


def serve(listening: int) -> None:
    """The fork server: fork a kernel per request on the listening socket (a file descriptor). PRELOAD is
    imported in a thread meanwhile; an asker is greeted at once (HELLO), told IMPORTING each second until
    the imports are done, then READY, and its kernel is forked only once it says GO (an asker that gave up
    gets none) and no thread but this one runs."""
    signal.signal(signal.SIGTERM, _end)  # asked to end: kill the kernels forked (the finally below)
    if sys.path and (sys.path[0] in ("", os.getcwd())):
        del sys.path[0]  # as ipykernel_launcher does; the kernel puts its folder back
    listener = socket.socket(fileno=listening)
    preload = _Preload()
    kernels: set[int] = set()
    waiting: list[tuple[socket.socket, dict]] = []
    told = time.monotonic()
    try:
        while True:
            ready, _, _ = select.select([listener, sys.stdin], [], [], REAP_SECONDS)
            _reap(kernels)
            if sys.stdin in ready and sys.stdin.readline().strip() in ("stop", ""):
                return
            if listener in ready:
                asker = _greet(listener)
                if asker is not None:
                    waiting.append(asker)
            if waiting and preload.done():
                preload.finish()
                for connection, request in waiting:
                    with connection:
                        _fork_kernel(connection, request, listener, kernels)
                waiting.clear()
            elif waiting and time.monotonic() - told >= 1.0:
                waiting = [asker for asker in waiting if _tell(asker[0], IMPORTING)]
                told = time.monotonic()
    finally:
        for connection, _ in waiting:
            connection.close()
        for pid in kernels:
            try:
                os.killpg(pid, signal.SIGKILL)  # the kernel and what it started
            except OSError:
                try:
                    os.kill(pid, signal.SIGKILL)  # not yet the leader of its session
                except OSError:
                    pass
        _reap(kernels)
        _remove_socket_folder(listener)


class _Preload:
    """PRELOAD imported in a thread; finish() joins it (so that no thread runs when a kernel is forked)."""

    def __init__(self) -> None:
        self.failure: BaseException | None = None
        self.finished = False
        self.thread = threading.Thread(target=self._run, name="preload", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for name in PRELOAD:
                importlib.import_module(name)
        except BaseException as exc:  # noqa: BLE001 - raised in the serving thread by finish()
            self.failure = exc

    def done(self) -> bool:
        return not self.thread.is_alive()

    def finish(self) -> None:
        if self.finished:
            return
        self.thread.join()
        if self.failure is not None:
            raise self.failure
        gc.collect()
        gc.freeze()  # what is imported stays out of the kernels' collections (fewer pages copied, faster cells)
        self.finished = True


def _greet(listener: socket.socket) -> tuple[socket.socket, dict] | None:
    """Accept an asker, say HELLO and read its request (bounded); None if it went away or sent nonsense."""
    connection, _ = listener.accept()
    try:
        connection.sendall(HELLO)
        request = json.loads(read_line(connection, time.monotonic() + ANSWER_SECONDS, MAX_REQUEST))
        if isinstance(request, dict):
            return connection, request
    except (OSError, ValueError):
        pass
    connection.close()
    return None


def _tell(connection: socket.socket, line: bytes) -> bool:
    """Send line; False (and the connection closed) if the asker went away."""
    try:
        connection.settimeout(ANSWER_SECONDS)
        connection.sendall(line)
        return True
    except OSError:
        connection.close()
        return False


def _fork_kernel(connection: socket.socket, request: dict, listener: socket.socket, kernels: set[int]) -> None:
    """Say READY; on the asker's GO, fork its kernel and answer its pid."""
    try:
        if not _tell(connection, READY) or read_line(connection, time.monotonic() + ANSWER_SECONDS) != GO:
            return  # the asker gave up (and launched its kernel as usual): no kernel here
    except (OSError, ValueError):
        return
    pid = os.fork()
    if pid == 0:
        listener.close()
        connection.close()
        _become_kernel(request)
    kernels.add(pid)
    _tell(connection, json.dumps({"pid": pid}).encode("utf-8") + b"\n")


def _remove_socket_folder(listener: socket.socket) -> None:
    """Remove the listening socket and its folder if they are a build's (the build may be gone: killed)."""
    try:
        path = listener.getsockname()
        if isinstance(path, str) and _SOCKET_FOLDER.match(os.path.basename(os.path.dirname(path))):
            shutil.rmtree(os.path.dirname(path), ignore_errors=True)
    except OSError:
        pass


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
