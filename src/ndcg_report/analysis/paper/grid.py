"""A table for a paper as plain text cells (numbers shown, bold, marks, letters): what the writers lay out.

A Grid knows nothing of LaTeX or Markdown: its texts are raw (unescaped) and its notes plain Unicode
sentences (▲, ▼, †, α, ≥); analysis.paper.latex and analysis.paper.markdown escape and lay them out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ndcg_report.errors import ParameterError

DIGITS = 4  # decimals shown by default, as the report and `eval` show them
MAX_DIGITS = 15
ABOVE, BELOW = "▲", "▼"


@dataclass(frozen=True)
class Cell:
    """One cell: its number as shown ('' where missing), bold, the mark against the baseline (+1 above,
    -1 below, 0 neither; with several baselines, against the first, and more_marks against the others), the letters of the rows it is significantly better than, and whether the
    measure looks past the depth the row's system retrieved (analysis.html.DEEPER, †)."""

    text: str = ""
    bold: bool = False
    mark: int = 0
    letters: str = ""
    shallow: bool = False
    more_marks: tuple[int, ...] = ()  # with several baselines: the mark against each after the first, in order


@dataclass(frozen=True)
class Column:
    """A column: its label in a one-row header ('nDCG@10'), or its group ('nDCG') over its own header
    ('@10') in a two-row one; a column without a group spans both rows."""

    label: str
    group: str = ""
    sub: str = ""


@dataclass(frozen=True)
class Row:
    """A row: its name, its cells, its letter (shown with letters) and whether it is the baseline (a rule
    above it, '(baseline)' after its name)."""

    name: str
    cells: tuple[Cell, ...]
    letter: str = ""
    baseline: bool = False
    role: str = ""  # with several baselines: 'baseline 2' after the name ('' = '(baseline)' if baseline)


@dataclass(frozen=True)
class Grid:
    """A whole table: the header of the names column, the columns, the rows, the caption's first
    sentence and the notes (sentences saying what the bold, the marks and the letters mean)."""

    stub: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    caption: str
    notes: tuple[str, ...] = ()
    letters: bool = False
    numbered: bool = False  # several baselines: each mark carries its baseline's number (▲1 ▼2)

    @staticmethod
    def marks(cell: Cell) -> list[tuple[int, int]]:
        """(sign, baseline number from 1) of each mark of a cell, in the baselines' order."""
        return [(sign, number) for number, sign in enumerate((cell.mark, *cell.more_marks), start=1) if sign]

    @property
    def grouped(self) -> bool:
        """True if some group holds two or more adjacent columns: the header then has two rows."""
        return any(len(run) > 1 for group, run in column_groups(self.columns) if group)


def column_groups(columns: Sequence[Column]) -> list[tuple[str, list[int]]]:
    """Adjacent columns of the same group: [(group, [positions])], '' for a column without one."""
    found: list[tuple[str, list[int]]] = []
    for position, column in enumerate(columns):
        if column.group and found and found[-1][0] == column.group:
            found[-1][1].append(position)
        else:
            found.append((column.group, [position]))
    return found


LARGEST = 1e15  # a number at least this large is written as 1.2345e+15


def checked_digits(digits: int) -> int:
    """digits if it is a whole number from 0 to MAX_DIGITS; ParameterError otherwise."""
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= MAX_DIGITS:
        raise ParameterError(f"digits must be a whole number from 0 to {MAX_DIGITS}; got {digits!r}")
    return digits


def number_text(value: float | None, digits: int = DIGITS) -> str:
    """A number with `digits` decimals, no thousands separator; '' for a missing one (None, NaN); past
    LARGEST in size (no measure is: a hand-edited summary.json), in scientific notation, never 309 digits."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{value:.{digits}e}" if abs(value) >= LARGEST else f"{value:.{digits}f}"


def best_shown(texts: Sequence[str]) -> list[bool]:
    """Which of a column's shown numbers are its best (the largest as shown: ties at the digits shown are
    all best); none where the column has no number."""
    values = [float(text) if text else -math.inf for text in texts]
    top = max(values, default=-math.inf)
    return [text != "" and value == top for text, value in zip(texts, values)]


def row_letters(count: int) -> list[str]:
    """a, b, ..., z, then aa, ab, ...: one letter per row, in order."""
    import string

    letters = string.ascii_lowercase
    return [letters[i] if i < 26 else letters[i // 26 - 1] + letters[i % 26] for i in range(count)]
