"""The exit codes of `ndcg-report`, each declared once with what it means (--help lists them)."""

from __future__ import annotations

import signal

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_BUSY = 3
EXIT_REGRESSION = 4


def exit_code(signum: int) -> int:
    """The shell's code for a command stopped by signum: 130 for Ctrl-C, 143 SIGTERM, 129 SIGHUP."""
    return 128 + signum


MEANINGS = {
    EXIT_OK: "done",
    EXIT_FAILED: "a step failed (a notebook cell, nbval, a timeout, writing an output); the previous report stays",
    EXIT_BAD_INPUT: "bad input or usage: one line naming the file, the line and the fix; nothing written",
    EXIT_BUSY: "batch only: another batch holds the output root",
    EXIT_REGRESSION: "gate, and build --against: a regression (a system significantly worse than in the build gated against)",
    exit_code(signal.SIGINT): f"interrupted (Ctrl-C; {exit_code(signal.SIGTERM)} SIGTERM, {exit_code(signal.SIGHUP)} "
                              "SIGHUP): one line, staging removed",
}
