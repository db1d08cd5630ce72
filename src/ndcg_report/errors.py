"""Errors a user can cause: each renders as one line naming the file, the line and the fix."""

from __future__ import annotations


class InputError(Exception):
    """A problem in an input file: `path:line: what is wrong; what to do`."""

    def __init__(self, path: str, line: int | None, problem: str, fix: str) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        self.fix = fix
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}; {fix}")

    def __reduce__(self) -> tuple:
        """Pickled with its parts (a Dask task's error is raised again on the client)."""
        return type(self), (self.path, self.line, self.problem, self.fix)


class ParameterError(ValueError):
    """A bad option or parameter value (not tied to a line of a file)."""


class BuildError(Exception):
    """A build step failed (exit code 1); the message names the step and, if any, the cell."""
