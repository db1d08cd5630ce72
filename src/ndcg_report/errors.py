"""Errors a user can cause: each renders as one line naming the file, the line and the fix."""

from __future__ import annotations


class InputError(Exception):
    """A problem in an input file: `path:line: what is wrong; what to do`.

    The readers, `evaluate` and `compare_runs` raise it for a bad file; the command line prints its
    message as one line and exits with code 2.

    Parameters
    ----------
    path
        The file.
    line
        The line (or row) at fault, counted from 1; None when the problem is the whole file.
    problem
        What is wrong.
    fix
        What to do.

    Examples
    --------
    >>> error = InputError("run.txt", 3, "expected 6 columns, found 4", "write qid Q0 docid rank score tag")
    >>> str(error)
    'run.txt:3: expected 6 columns, found 4; write qid Q0 docid rank score tag'
    >>> error.line
    3
    """

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
    """A bad option or parameter value (not tied to a line of a file).

    A `ValueError`: raised by `evaluate`, `compare_runs` and `parse_cutoffs` for a bad value (an
    unknown measure, a cut-off out of range, a bad row of a table or dict); the command line
    prints its message as one line and exits with code 2.

    Attributes
    ----------
    args
        A one-item tuple, the message: one line naming the option or value, what is wrong and
        what to do (`str(error)`).

    Examples
    --------
    >>> try:
    ...     parse_cutoffs("0")
    ... except ParameterError as error:
    ...     print("refused")
    refused
    """


class BuildError(Exception):
    """A build step failed (exit code 1); the message names the step and, if any, the cell."""
