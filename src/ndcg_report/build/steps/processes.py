"""The build's child processes (papermill, nbval): output kept for a failure's line, a progress bar.

On a terminal, the bar is over the notebook's cells, from the progress lines the children print; also
the imports they skip, and this process's own work meanwhile, in a thread. A child dies with the build
(Linux): killed if the process that started it ends, even by SIGKILL.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, TypeVar

from ndcg_report.console import lossy
from ndcg_report.interrupts import Interrupted, deferred

if TYPE_CHECKING:
    from concurrent.futures import Future

T = TypeVar("T")

PROGRESS_MARK = "\x1fndcg-report-progress "  # a line starting so is a child's "cell DONE of TOTAL"
REVALIDATION_ENV = "NDCG_REPORT_NBVAL"  # set by the build in nbval's re-execution of the notebook


def skip_unused_jsonschema_formats() -> None:
    """Keep rfc3987_syntax from loading in this process. jsonschema imports it, when installed (it comes
    with jupyter), to check the 'iri' format, building a grammar at import time (0.9 s of every process
    that reads a notebook); nbformat's schemas use no format, so nothing here ever needs it."""
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # None: `import` raises ImportError


def skip_unused_papermill_stores() -> None:
    """Keep pyarrow (with numpy) from loading in papermill's process: papermill imports pyarrow.fs, when
    installed, for notebooks on HDFS (0.1 s of the process's start); the build's notebooks are local files."""
    sys.modules.setdefault("pyarrow.fs", None)  # type: ignore[arg-type]  # None: `import` raises ImportError


def print_progress(done: int, total: int, stream: IO[str] | None = None) -> None:
    """Tell the parent that `done` of `total` cells have run (one line on stdout)."""
    print(f"{PROGRESS_MARK}{done} {total}", file=stream or sys.stdout, flush=True)


class Steps:
    """On a terminal, one line saying which step of the build runs, rewritten in place; else nothing.
    Its writes cannot fail (console.LossyStream): a terminal hung up mid-build cuts no clean-up short."""

    def __init__(self, enabled: bool, stream: IO[str] | None = None) -> None:
        self._enabled = enabled
        self._stream = lossy(stream or sys.stderr)
        self._shown = False

    def show(self, text: str) -> None:
        if self._enabled:
            self._stream.write(f"\r\x1b[K{text} ...")
            self._stream.flush()
            self._shown = True

    def clear(self) -> None:
        if self._shown:
            self._stream.write("\r\x1b[K")
            self._stream.flush()
            self._shown = False


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str  # without the progress lines
    stderr: str


_PR_SET_PDEATHSIG = 1


def _niced(before: Callable[[], None] | None, nice: int) -> Callable[[], None] | None:
    """A preexec_fn running `before` (if any), then lowering the child's priority by nice (if any)."""
    if not nice:
        return before

    def in_child() -> None:
        if before is not None:
            before()
        os.nice(nice)

    return in_child


def die_with_starter() -> Callable[[], None] | None:
    """Popen's preexec_fn that has Linux SIGKILL the child when this process dies (killed for memory,
    a SIGKILL: no child outlives it); None elsewhere, or off the main thread (Linux sends the signal
    when the starting thread ends, which for another thread is not the build's end)."""
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    starter = os.getpid()

    def in_child() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != starter:  # the starter died before the line above
            os._exit(1)

    return in_child


def started(command: list[str], **popen: object) -> subprocess.Popen:
    """subprocess.Popen(command, **popen) with the stop signals held while it forks; one that arrived
    meanwhile kills the child and is raised as Interrupted. With a preexec_fn, Popen runs the fork
    handlers, logging's among them: a stop raised inside one was dropped ("Exception ignored"),
    leaving logging's lock held, and the build hung at its next log line instead of stopping."""
    process = None
    try:
        with deferred() as arrived:
            process = subprocess.Popen(command, **popen)  # type: ignore[call-overload]
    except KeyboardInterrupt:  # handled as the handlers were put back
        if process is not None:
            _kill(process)
        raise
    if arrived:
        _kill(process)
        raise Interrupted(arrived[0])
    return process


def _kill(process: subprocess.Popen) -> None:
    process.kill()
    process.wait()


class ChildProcess:
    """A child process whose stdout and stderr are read as it runs; on a terminal (`label` given) a bar
    over its progress lines. Stopping the parent (Ctrl-C, a stop signal) kills it, as subprocess.run does."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: str | None = None, label: str = "",
                 talk: bool = False, line: int = 1, pass_fds: tuple[int, ...] = (), nice: int = 0) -> None:
        """talk: keep the child's stdin open for send() (else it reads nothing); line: where its bar is
        drawn, counted from the step's line (0), so that bars of children running at once do not mix;
        pass_fds: file descriptors the child inherits (subprocess.Popen's); nice: lower its priority by this
        (a child that waits on others, so that theirs go first)."""
        self._process = started(command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.PIPE if talk else subprocess.DEVNULL, text=True, encoding="utf-8",
                                errors="replace", pass_fds=pass_fds, preexec_fn=_niced(die_with_starter(), nice))
        self._label = label
        self._line = line
        self._stdout: list[str] = []
        self._stderr: list[str] = []
        self._readers = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for reader in self._readers:
            reader.start()

    def _read_stdout(self) -> None:
        bar = None
        try:
            for line in self._process.stdout:
                before, marked, rest = line.partition(PROGRESS_MARK)  # pytest's dots may precede the mark
                if not marked:
                    self._stdout.append(line)
                    continue
                if before:
                    self._stdout.append(before)
                if not self._label:
                    continue
                done, total = (int(part) for part in rest.split())
                if bar is None:
                    from tqdm import tqdm

                    bar = tqdm(total=total, desc=self._label, unit="cell", leave=False, file=lossy(sys.stderr),
                               position=self._line,
                               bar_format="{desc}: {bar:20} cell {n_fmt}/{total_fmt} [{elapsed}]")
                bar.update(done - bar.n)
        finally:
            if bar is not None:
                bar.close()
            self._process.stdout.close()

    def _read_stderr(self) -> None:
        try:
            for line in self._process.stderr:
                self._stderr.append(line)
        finally:
            self._process.stderr.close()

    def _close_stdin(self) -> None:
        if self._process.stdin is not None:
            try:
                self._process.stdin.close()
            except OSError:  # a child that did not read it all
                pass

    def wait(self) -> Finished:
        """Wait for the child; kill it if this process is stopped meanwhile."""
        try:
            returncode = self._process.wait()
        except BaseException:
            self.kill()
            raise
        for reader in self._readers:
            reader.join()
        self._close_stdin()
        return Finished(returncode, "".join(self._stdout), "".join(self._stderr))

    def send(self, line: str) -> None:
        """Write a line to the child's stdin (a child that has ended is not an error here)."""
        try:
            self._process.stdin.write(line + "\n")
            self._process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass

    def stop(self, line: str, seconds: float = 10) -> None:
        """Ask the child to end by a line on its stdin; kill it if it has not within `seconds`."""
        self.send(line)
        self._end_within(seconds)

    def terminate(self, seconds: float = 5) -> None:
        """SIGTERM the child; kill it if it has not ended within `seconds`."""
        if self._process.poll() is None:
            self._process.terminate()
        self._end_within(seconds)

    def _end_within(self, seconds: float) -> None:
        try:
            self._process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            pass
        finally:
            self.kill()

    def kill(self) -> None:
        """Kill the child (if still running) and wait for it."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        self._close_stdin()


def in_background(make: Callable[[], T]) -> "Future[T]":
    """make() run in a thread of its own (this process's imports while it waits for its children), as a Future."""
    from concurrent.futures import Future

    future: Future[T] = Future()

    def run() -> None:
        try:
            future.set_result(make())
        except BaseException as exc:  # noqa: BLE001 - handed to whoever asks for the result
            future.set_exception(exc)

    threading.Thread(target=run, daemon=True).start()
    return future
