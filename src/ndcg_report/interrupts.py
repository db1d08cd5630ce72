"""Ctrl-C, SIGTERM and SIGHUP alike: one exception and routed handlers.

In the command line each raises Interrupted (a KeyboardInterrupt), so every command stops the same way:
clean-up in `finally`, one line, exit 128 + the signal number (exit_codes.exit_code).
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """A stop signal arrived (SIGINT, SIGTERM or SIGHUP); signum says which."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def signal_of(exc: BaseException) -> int:
    """The signal behind a KeyboardInterrupt (a plain one is Ctrl-C)."""
    return getattr(exc, "signum", signal.SIGINT)


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def raise_interrupted(signum: int, frame: object = None) -> None:
    raise Interrupted(signum)


def install(handler: Callable[[int, object], object] = raise_interrupted) -> dict[int, object]:
    """Route the stop signals to handler (default: raise Interrupted, so SIGTERM and SIGHUP stop the
    command as Ctrl-C does); signals the caller set to be ignored, as nohup does, stay ignored. Return
    the handlers replaced, for restore(). Main thread only; elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous = {}
    for signum in STOP_SIGNALS:
        replaced = signal.getsignal(signum)
        if replaced is not signal.SIG_IGN:
            previous[signum] = replaced
            signal.signal(signum, handler)
    return previous


def restore(previous: dict[int, object]) -> None:
    """Put back the handlers install() replaced, every one of them even if a stop signal's handler raises
    meanwhile (its exception is raised once all are back)."""
    stopped: BaseException | None = None
    for signum, handler in previous.items():
        while True:
            try:
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)  # type: ignore[arg-type]
                break
            except KeyboardInterrupt as exc:  # a stop signal handled right here: put the handlers back first
                stopped = stopped or exc
    if stopped is not None:
        raise stopped


@contextmanager
def handled(handler: Callable[[int, object], object]) -> Iterator[None]:
    """The stop signals routed to handler while the block runs (install, then restore)."""
    previous = install(handler)
    try:
        yield
    finally:
        restore(previous)


@contextmanager
def deferred() -> Iterator[list[int]]:
    """Hold the stop signals while the block runs (a publish is never cut in half): a signal that
    arrives meanwhile is recorded in the yielded list, not acted on; the caller decides. Outside
    the main thread (where Python runs no signal handler) nothing changes."""
    arrived: list[int] = []
    with handled(lambda number, frame: arrived.append(number)):
        yield arrived


@contextmanager
def whole() -> Iterator[None]:
    """Run the block whole, whatever stop signal arrives (making a working folder and taking it in
    charge, a clean-up): one arriving meanwhile is held, then raised as Interrupted once the block is
    done, unless a stop is on its way already (the first stop wins). Outside the main thread nothing
    is held."""
    held: list[int] = []
    try:
        with deferred() as arrived:
            held = arrived
            yield
    finally:  # checked once the handlers are back: a signal handled up to that moment is in held
        if held and not isinstance(sys.exc_info()[1], KeyboardInterrupt):
            raise Interrupted(held[0])
