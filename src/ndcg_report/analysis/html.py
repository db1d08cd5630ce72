"""HTML fragments of the report and of the Jupyter display, every text from an input escaped.

Every text that can come from an
input (names, ids, query text, file names) is escaped here: pandas Styler does not by default.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ndcg_report.core.measures.names import Measure, cutoff_text

if TYPE_CHECKING:
    import pandas as pd

ABOVE, BELOW = "▲", "▼"
DEEPER = "†"  # the cut-off is deeper than the system's retrieval


def escape(text: object) -> str:
    """HTML-escaped text, quotes included."""
    return html.escape(str(text), quote=True)


def table_html(frame: pd.DataFrame, index: bool = True, classes: str = "ndcg-table",
               text_columns: tuple[str, ...] = ("qid", "query", "role", "file", "sha256"),
               html_columns: tuple[str, ...] = ()) -> str:
    """A DataFrame as an HTML table, every header and cell escaped (but the cells of html_columns, HTML
    the caller made and escaped: a link); floats with 4 decimals, missing as '–'.

    Cells of numeric columns (numbers, or text such as '0.0132 (0.0530)' or '[+0.05, +0.36]') are
    right-aligned and never wrap; other columns, and those named in text_columns, are left-aligned.
    """
    columns = [str(column) for column in frame.columns]
    numeric = [name not in text_columns and _numeric_column(frame.iloc[:, i]) for i, name in enumerate(columns)]
    head = ""
    if index:
        head += f'<th class="text">{escape(frame.index.name or "")}</th>'
    head += "".join(f'<th class="{"num" if is_number else "text"}">{escape(name)}</th>'
                    for name, is_number in zip(columns, numeric))
    rows = []
    for label, values in zip(frame.index, frame.itertuples(index=False, name=None)):
        cells = f'<th class="text">{escape(label)}</th>' if index else ""
        cells += "".join(f'<td class="{"num" if is_number else "text"}">'
                         f'{_cell(value) if name in html_columns else escape(_cell(value))}</td>'
                         for name, value, is_number in zip(columns, values, numeric))
        rows.append(f"<tr>{cells}</tr>")
    return f'<table class="{escape(classes)}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _cell(value: object) -> str:
    if value is None or (isinstance(value, (float, np.floating)) and np.isnan(value)):
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (float, np.floating)):
        return f"{value:.4f}"
    return str(value)


_NUMBER_TEXT = re.compile(r"^\s*(?:[\[(<≤+\-–−]*\s*[\d.]|–$)")


def _numeric_column(values: pd.Series) -> bool:
    """True if every value is a number or text that reads as one (p-values, intervals, counts)."""
    for value in values:
        if value is None or isinstance(value, (bool, np.bool_)):
            continue
        if isinstance(value, (int, float, np.integer, np.floating)):
            continue
        if not _NUMBER_TEXT.match(str(value)):
            return False
    return True


def text_html(text: str, tag: str = "p", css_class: str = "") -> str:
    """Plain text in one HTML element, escaped."""
    attribute = f' class="{escape(css_class)}"' if css_class else ""
    return f"<{tag}{attribute}>{escape(text)}</{tag}>"


def command_html(command: str) -> str:
    """A shell command as an escaped <pre class="command">, one option and its value per line (joined
    by ' \\', so it still pastes into a shell); tokens are never split."""
    import shlex

    try:
        tokens = shlex.split(command)
    except ValueError:  # not shell syntax (a command given by the user): shown as it is
        return text_html(command, "pre", "command")
    lines: list[list[str]] = [[]]
    for token in tokens:
        if token.startswith("-") and lines[-1]:  # an option starts a line
            lines.append([])
        lines[-1].append(token)
    text = " \\\n    ".join(shlex.join(line) for line in lines)
    return text_html(text, "pre", "command")


def reproduce_html(command: str, inputs_folder: str = "") -> str:
    """How to reproduce: the command (command_html); for a report built from Python objects, first where
    its inputs are and where to run the command."""
    if not inputs_folder:
        return command_html(command)
    note = (f"Built from Python objects (ndcg_report.build_report): the inputs it was given as objects are in this "
            f"report's folder {inputs_folder}/ (runs and qrels as Parquet; their sha256 are in the table of files). "
            "Run in the report's folder, this command rebuilds the report into a new folder:")
    return text_html(note, "p", "note") + command_html(command)


def list_html(items: list[str], empty: str = "No warnings.") -> str:
    """An escaped bullet list (or a line saying there is nothing to list)."""
    if not items:
        return f"<p>{escape(empty)}</p>"
    return "<ul>" + "".join(f"<li>{escape(item)}</li>" for item in items) + "</ul>"


def details_html(summary: str, body_html: str) -> str:
    """A collapsed section (no script needed): summary text escaped, body already HTML."""
    return f"<details><summary>{escape(summary)}</summary>{body_html}</details>"


def leaderboard_html(
    means: pd.DataFrame, significance: pd.DataFrame, baseline_name: str, headline: Measure,
    letters: pd.Series | None = None, shallow: Mapping[str, Collection[Measure]] | None = None, *,
    measures: Sequence[Measure], others: Mapping[str, pd.DataFrame] | None = None,
) -> str:
    """Systems x measures (the columns of means and significance, in the order of `measures`):
    systems by the headline measure (best first), the baseline last; the header groups a family's
    cut-offs under its name; ▲/▼ where a system is significantly above/below the baseline, the best
    of each column in bold, † where k is deeper than the system's retrieval (`shallow`: name ->
    measures), and the letter groups of the pairwise test (on the headline) if given. others: with
    several baselines, the significance against each other one (by name, in order): the baselines are
    then the last rows, in order, and each mark carries its baseline's number (▲₁ ▼₂)."""
    shallow, others = shallow or {}, dict(others or {})
    baselines = [baseline_name, *others]
    against = {baseline_name: significance, **others}
    numbered = len(baselines) > 1
    measures = list(measures)
    values = means.to_numpy(dtype=float)
    rows_of = {name: position for position, name in enumerate(means.index)}
    head_column = measures.index(headline)
    given = [name for name in means.index if name not in baselines]
    systems = sorted(given, key=lambda name: (-values[rows_of[name], head_column], given.index(name)))
    best = [np.nanmax(values[:, j]) if np.isfinite(values[:, j]).any() else np.nan for j in range(len(measures))]
    header = _leaderboard_header(measures, letters is not None, headline)
    rows = []
    for name in [*systems, *(baselines[1:] + baselines[:1] if not numbered else baselines)]:
        role = (f"baseline {baselines.index(name) + 1}" if numbered else "baseline") if name in baselines else ""
        cells = [f'<th class="text">{escape(name)}' + (f" <small>({role})</small>" if role else "") + "</th>"]
        for j, measure in enumerate(measures):
            value = values[rows_of[name], j]
            text = "–" if np.isnan(value) else f"{value:.4f}"
            mark = ""
            for number, base in enumerate(baselines, start=1):
                table = against[base]
                sign = table.iat[table.index.get_loc(name), j] if name in table.index else 0
                if sign:
                    sub = f"<sub>{number}</sub>" if numbered else ""
                    mark += f' <span class="sig">{ABOVE if sign > 0 else BELOW}{sub}</span>'
            if not np.isnan(value) and value == best[j]:
                text = f"<strong>{text}</strong>"
            if measure in shallow.get(name, ()):
                mark += f' <span class="shallow">{DEEPER}</span>'
            css = "num headline" if measure == headline else "num"
            cells.append(f'<td class="{css}">{text}{mark}</td>')
        if letters is not None:
            cells.append(f'<td class="text">{escape(letters.get(name, ""))}</td>')
        css = ' class="baseline"' if name == baseline_name else ""
        rows.append(f"<tr{css}>" + "".join(cells) + "</tr>")
    return (f'<table class="ndcg-table leaderboard"><thead>{header}</thead><tbody>'
            + "".join(rows) + "</tbody></table>")


def _leaderboard_header(measures: list, letters: bool, headline: Measure) -> str:
    """One header row of labels, or, when a family has several cut-offs, a row of families over a row
    of cut-offs ('@10'); a measure without a cut-off spans both rows."""
    group = f'<th class="text">group ({escape(headline.label)})</th>' if letters else ""
    if len({m.measure for m in measures}) == len(measures):
        return ('<tr><th class="text">system</th>' + "".join(f'<th class="num">{escape(m.label)}</th>' for m in measures)
                + group + "</tr>")
    top, bottom = ['<th class="text" rowspan="2">system</th>'], []
    j = 0
    while j < len(measures):
        span = 1
        while j + span < len(measures) and measures[j + span].measure == measures[j].measure and measures[j + span].k is not None:
            span += 1
        if span == 1 and measures[j].k is None:
            top.append(f'<th class="num" rowspan="2">{escape(measures[j].label)}</th>')
        else:
            top.append(f'<th class="num family" colspan="{span}">{escape(measures[j].measure)}</th>')
            bottom += [f'<th class="num">@{cutoff_text(m.k)}</th>' if m.k is not None else '<th class="num">all</th>'
                       for m in measures[j:j + span]]
        j += span
    if letters:
        top.append(group.replace("<th ", '<th rowspan="2" ', 1))
    return "<tr>" + "".join(top) + "</tr><tr>" + "".join(bottom) + "</tr>"
