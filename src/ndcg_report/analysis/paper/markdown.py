"""A Grid as a GitHub Markdown table and a legend line, every text escaped (no tabulate needed).

Marks are ▲/▼ and † as in the HTML report, the best of a column **bold**, letters `<sup>` (GitHub keeps
it), the numbers right-aligned; the legend line after the table says what they mean.
"""

from __future__ import annotations

import re

from ndcg_report.analysis.html import DEEPER
from ndcg_report.analysis.paper.grid import ABOVE, BELOW, Cell, Grid, Row

# what Markdown or GitHub would read as markup inside a line (emphasis, code, links, tables; HTML, entities,
# math, strikethrough): backslash escapes for the first, which every Markdown takes, entities for the others,
# whose backslash escapes only CommonMark takes (Python-Markdown would show the backslash)
_ESCAPED = re.compile(r"([\\`*_\[\]|])")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "$": "&#36;", "~": "&#126;"}
MISSING = "–"
LEFT, RIGHT = " :-- ", " --: "  # the names' alignment, the numbers'


def markdown_escape(text: object) -> str:
    """Text that Markdown (GitHub's, CommonMark, Python-Markdown) shows as it is: markup characters escaped,
    line breaks as spaces."""
    text = " ".join(str(text).replace("\r", " ").replace("\t", " ").split("\n"))
    return "".join(_ENTITIES.get(char) or char for char in _ESCAPED.sub(r"\\\1", text))


def markdown_grid(grid: Grid) -> str:
    """The grid as a GitHub table (one header row: each column's label; names left-aligned, numbers
    right-aligned), then a blank line and the legend: the caption's sentence and the notes, on one line."""
    head = (["\\#"] if grid.letters else []) + [markdown_escape(grid.stub)]
    lead = len(head)
    head += [markdown_escape(column.label) for column in grid.columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join([LEFT] * lead + [RIGHT] * len(grid.columns)) + "|"]
    lines += [_row(row, grid) for row in grid.rows]
    legend = " ".join([markdown_escape(grid.caption), *(markdown_escape(note) for note in grid.notes)])
    return "\n".join(lines) + "\n\n" + legend + "\n"


SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")  # a mark's baseline number, with several baselines


def _row(row: Row, grid: Grid) -> str:
    name = markdown_escape(row.name) + (f" ({row.role})" if row.role else " (baseline)" if row.baseline else "")
    cells = ([markdown_escape(row.letter)] if grid.letters else []) + [name] + [_cell(cell, grid.numbered)
                                                                                for cell in row.cells]
    return "| " + " | ".join(cells) + " |"


def _cell(cell: Cell, numbered: bool = False) -> str:
    if not cell.text:
        return MISSING
    text = markdown_escape(cell.text)
    text = f"**{text}**" if cell.bold else text
    for sign, number in Grid.marks(cell):
        text += " " + (ABOVE if sign > 0 else BELOW) + (str(number).translate(SUBSCRIPTS) if numbered else "")
    if cell.shallow:
        text += " " + DEEPER
    if cell.letters:
        text += f" <sup>{markdown_escape(cell.letters)}</sup>"
    return text
