"""What a command prints: its output, and an error as one line on standard error."""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Iterable

from ndcg_report.console import say
from ndcg_report.exit_codes import EXIT_FAILED, EXIT_OK

MAX_MESSAGE = 1000  # characters of an error line: a message built from hostile input stays readable


class Note(str):
    """What a command prints about work whose product is elsewhere (`built DIR/report.html`, `wrote FILE`):
    a message (console.say), so a standard output that cannot take it changes nothing of the outcome."""


def log(message: str) -> None:
    """A line on standard error (dropped if it cannot be written: console.say)."""
    say(message + "\n", sys.stderr)


def write_output(output: str | Iterable[bytes | memoryview]) -> int:
    """Print the output (text, or chunks of UTF-8 bytes as they come); a failed write (a full disk, a
    closed standard output) is one line and exit 1. A Note is a message: if it cannot be printed, the
    exit code is still the work's (0), and standard error says so (console.say)."""
    if isinstance(output, Note):
        if not say(output):
            silence_stdout()
        return EXIT_OK
    try:
        if sys.stdout is None:
            raise OSError(errno.EBADF, "standard output is closed")
        if isinstance(output, str):
            sys.stdout.write(output)
        else:
            sys.stdout.flush()
            binary = getattr(sys.stdout, "buffer", None)
            for chunk in output:
                if binary is not None:
                    binary.write(chunk)
                else:
                    sys.stdout.write(bytes(chunk).decode("utf-8"))
        sys.stdout.flush()
    except BrokenPipeError:  # the reader stopped reading (`| head`): not an error
        silence_stdout()
    except (OSError, ValueError) as exc:  # ValueError: writing to a closed file
        silence_stdout()
        error_line(f"cannot write the output ({getattr(exc, 'strerror', None) or exc})")
        return EXIT_FAILED
    return EXIT_OK


def silence_stdout() -> None:
    """Point standard output at /dev/null, so Python's flush at exit does not fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


def one_line(message: str) -> str:
    """message on one line, cut at MAX_MESSAGE characters, every other control character (ESC, BEL, TAB,
    C1, the bidirectional overrides) shown as its escape, so that no text a user gave colours, rings or
    reorders the terminal."""
    text = _CONTROLS.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"),
                         " ".join(str(message).splitlines()))
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # C0, DEL, C1 and bidi controls


def error_line(message: str, prefix: str = "ndcg-report: error: ") -> None:
    """One line on standard error, cut at MAX_MESSAGE characters (quietly nothing if stderr is closed too)."""
    try:
        print(one_line(f"{prefix}{message}"), file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass
