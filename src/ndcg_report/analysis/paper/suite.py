"""A suite as a paper table: systems x collections of one measure, each cell marked by its collection's own test.

From the plain data of a Suite: its `cells` (one row per collection, system and measure, what
`table.csv` holds: analysis.tables.blocks.block_rows), as a DataFrame or as records. The means and
marks are laid out by blocks.wide_means and wide_marks, as the suite's own tables are, and the mean
over collections is the suite's (over the collections that have the system).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from ndcg_report.analysis.paper.grid import (
    ABOVE, BELOW, DIGITS, Cell, Column, Grid, Row, best_shown, checked_digits, number_text,
)
from ndcg_report.analysis.paper.latex import latex_grid
from ndcg_report.analysis.paper.markdown import markdown_grid
from ndcg_report.analysis.tables.blocks import wide_marks, wide_means
from ndcg_report.errors import ParameterError

KEY = "collection"
MEAN = "Mean"


def suite_latex(cells: pd.DataFrame | Iterable[Mapping], *, measure: str | None = None, digits: int = DIGITS,
                alpha: float | None = None, caption: str | None = None, label: str = "tab:suite") -> str:
    """The systems x collections table of one measure (default: the cells' first) as a LaTeX table
    (booktabs): ↑/↓ by each collection's own test, the mean over collections, the best of each column bold."""
    return latex_grid(suite_grid(cells, measure=measure, digits=digits, alpha=alpha, caption=caption), label=label)


def suite_markdown(cells: pd.DataFrame | Iterable[Mapping], *, measure: str | None = None, digits: int = DIGITS,
                   alpha: float | None = None, caption: str | None = None) -> str:
    """The systems x collections table of one measure as a GitHub Markdown table and a legend line."""
    return markdown_grid(suite_grid(cells, measure=measure, digits=digits, alpha=alpha, caption=caption))


def suite_grid(cells: pd.DataFrame | Iterable[Mapping], *, measure: str | None = None, digits: int = DIGITS,
               alpha: float | None = None, caption: str | None = None) -> Grid:
    """The grid of one measure: a row per system (the baseline last), a column per collection, then the mean
    over the collections that have the system. `alpha`, if given, is stated in the notes."""
    digits = checked_digits(digits)
    rows = cells if isinstance(cells, pd.DataFrame) else pd.DataFrame(list(cells))
    labels = list(pd.unique(rows["measure"]))
    label = labels[0] if measure is None and labels else measure
    if label not in labels:
        raise ParameterError(f"the suite has no measure {label!r}; it has {', '.join(map(str, labels))}")
    means, marks = wide_means(rows, KEY, label), wide_marks(rows, KEY, label)
    over, present = means.mean(axis=1), means.notna().sum(axis=1)
    baselines = set(rows.loc[rows["role"] == "baseline", "system"])
    texts = [[number_text(float(means.iat[i, j]), digits) for j in range(means.shape[1])]
             + [number_text(float(over.iat[i]), digits)] for i in range(means.shape[0])]
    best = list(zip(*[best_shown(column) for column in zip(*texts)]))
    grid_rows = []
    for i, system in enumerate(means.index):
        signs = [0 if pd.isna(marks.iat[i, j]) else int(marks.iat[i, j]) for j in range(means.shape[1])] + [0]
        grid_rows.append(Row(system, tuple(Cell(text, bold, sign) for text, bold, sign in zip(texts[i], best[i], signs)),
                             baseline=system in baselines))
    grid_rows.sort(key=lambda row: row.baseline)  # the baseline last, the others in the cells' order
    collections = [str(name) for name in means.columns]
    notes = _notes(collections, present, alpha, any(not t for text in texts for t in text[:-1]))
    return Grid("System", tuple(Column(name) for name in [*collections, MEAN]), tuple(grid_rows),
                caption if caption is not None else f"{label} of each system in each collection.", tuple(notes))


def _notes(collections: list[str], present: pd.Series, alpha: float | None, missing: bool) -> list[str]:
    level = f"α = {alpha:g}" if alpha is not None else "at the collection's α"
    notes = [f"{ABOVE}/{BELOW}: significantly better/worse than the baseline in that collection, by the collection's "
             f"own test (paired randomization test, Holm-adjusted over the systems compared with its baseline on "
             f"this measure; {level}).", "Bold: the best of each column."]
    partial = [f"{system} over {int(count)} of {len(collections)}" for system, count in present.items()
               if 0 < count < len(collections)]
    notes.append(f"{MEAN}: over the collections that have the system" + (f" ({'; '.join(partial)})." if partial else "."))
    if missing:
        notes.append("A dash: the system is not in that collection.")
    return notes
