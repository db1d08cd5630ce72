"""HTML fragments the report and the Jupyter display are made of. Every text that can come from an
input (names, ids, query text, file names) is escaped here: pandas Styler does not by default."""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Mapping

import numpy as np
import pandas as pd

ABOVE, BELOW = "▲", "▼"
DEEPER = "†"  # the cut-off is deeper than the system's retrieval


def escape(text: object) -> str:
    """HTML-escaped text, quotes included."""
    return html.escape(str(text), quote=True)


def table_html(frame: pd.DataFrame, index: bool = True, classes: str = "ndcg-table",
               text_columns: tuple[str, ...] = ("qid", "query", "role", "file", "sha256")) -> str:
    """A DataFrame as an HTML table, every header and cell escaped; floats with 4 decimals, missing as '–'.

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
        cells += "".join(f'<td class="{"num" if is_number else "text"}">{escape(_cell(value))}</td>'
                         for value, is_number in zip(values, numeric))
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


_NUMBER_TEXT = re.compile(r"^\s*(?:[\[(<+\-–−]*\s*[\d.]|–$)")


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


def list_html(items: list[str], empty: str = "No warnings.") -> str:
    """An escaped bullet list (or a line saying there is nothing to list)."""
    if not items:
        return f"<p>{escape(empty)}</p>"
    return "<ul>" + "".join(f"<li>{escape(item)}</li>" for item in items) + "</ul>"


def details_html(summary: str, body_html: str) -> str:
    """A collapsed section (no script needed): summary text escaped, body already HTML."""
    return f"<details><summary>{escape(summary)}</summary>{body_html}</details>"


def leaderboard_html(
    means: pd.DataFrame, significance: pd.DataFrame, baseline_name: str, headline_k: str,
    letters: pd.Series | None = None, shallow: Mapping[str, Collection[str]] | None = None,
) -> str:
    """Systems x cut-offs of mean NDCG@k: systems by NDCG@headline (best first), the baseline last;
    ▲/▼ where a system is significantly above/below the baseline, the best of each column in bold,
    † where k is deeper than the system's retrieval (`shallow`: name -> cut-off labels), and the
    letter groups of the pairwise test if given."""
    shallow = shallow or {}
    given = [name for name in means.index if name != baseline_name]
    systems = sorted(given, key=lambda name: (-means.at[name, headline_k], given.index(name)))
    best = {k: means[k].max() for k in means.columns}
    header = '<th class="text">system</th>' + "".join(f'<th class="num">NDCG@{escape(k)}</th>' for k in means.columns)
    if letters is not None:
        header += f'<th class="text">group @{escape(headline_k)}</th>'
    rows = []
    for name in [*systems, baseline_name]:
        cells = [f'<th class="text">{escape(name)}' + (" <small>(baseline)</small>" if name == baseline_name else "") + "</th>"]
        for k in means.columns:
            value = means.at[name, k]
            text = "–" if np.isnan(value) else f"{value:.4f}"
            mark = ""
            if name != baseline_name:
                sign = significance.at[name, k]
                mark = f' <span class="sig">{ABOVE}</span>' if sign > 0 else f' <span class="sig">{BELOW}</span>' if sign < 0 else ""
            if not np.isnan(value) and value == best[k]:
                text = f"<strong>{text}</strong>"
            if k in shallow.get(name, ()):
                mark += f' <span class="shallow">{DEEPER}</span>'
            cells.append(f'<td class="num">{text}{mark}</td>')
        if letters is not None:
            cells.append(f'<td class="text">{escape(letters.get(name, ""))}</td>')
        css = ' class="baseline"' if name == baseline_name else ""
        rows.append(f"<tr{css}>" + "".join(cells) + "</tr>")
    return (f'<table class="ndcg-table leaderboard"><thead><tr>{header}</tr></thead><tbody>'
            + "".join(rows) + "</tbody></table>")
