"""Messages to a terminal or a log: a write that fails is dropped (noted once if it can be), never raised.

What the tool says while it works (a progress line, a note, `built ...`, an error's one line) goes to a
terminal or a log that can fail under it: a terminal hung up (EIO), a reader gone (EPIPE), a full disk
(ENOSPC), a closed stream. A lost message must not change what a command did, its exit code, or cut a
clean-up short, so messages go through a LossyStream, which drops every write from its first failure
on. A command's product printed on standard output (eval's table, `--help`) is not a message: it is
written as it is, and a failure to write it fails the command.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TextIO

_FAILURES = (OSError, ValueError, AttributeError)  # ValueError: a closed file; AttributeError: no stream (None)


class LossyStream:
    """A text stream whose writes are dropped, not raised, from the first one that fails; `lost` says
    why ("" while writes go through). Everything else (fileno, encoding, buffer) is the stream's."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.lost = "" if stream is not None else "it is closed"

    def write(self, text: str) -> int:
        if not self.lost:
            try:
                self.stream.write(text)  # type: ignore[union-attr]
            except _FAILURES as exc:
                self._lose(exc)
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not self.lost:
            try:
                self.stream.flush()  # type: ignore[union-attr]
            except _FAILURES as exc:
                self._lose(exc)

    def isatty(self) -> bool:
        try:
            return not self.lost and self.stream.isatty()  # type: ignore[union-attr]
        except _FAILURES:
            return False

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)

    def _lose(self, exc: BaseException) -> None:
        self.lost = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def lossy(stream: TextIO | LossyStream | None) -> LossyStream:
    """stream as a LossyStream (itself if it is one already)."""
    return stream if isinstance(stream, LossyStream) else LossyStream(stream)


@contextmanager
def lossy_stderr() -> Iterator[LossyStream]:
    """sys.stderr as a LossyStream while the block runs (a command's messages never fail it), then put back."""
    original = sys.stderr
    sys.stderr = lossy(original)  # type: ignore[assignment]
    try:
        yield sys.stderr  # type: ignore[misc]
    finally:
        sys.stderr = original


def say(text: str, stream: TextIO | LossyStream | None = None) -> bool:
    """Write a message to stream (default: standard output) and flush it; True if written. If it cannot
    be written it is dropped; from standard output, it is said on standard error instead, with why (if
    that works)."""
    target = lossy(sys.stdout if stream is None else stream)
    target.write(text)
    target.flush()
    if target.lost and (stream is None or stream is sys.stdout):
        say(f"ndcg-report: note: could not print this on the standard output ({target.lost}): {text.strip()}\n",
            sys.stderr)
    return not target.lost
