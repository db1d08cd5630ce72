"""The report's query groups: per-group table and figure (a part of section 3), and per_group.csv.

Made from `Report.group_rows` (analysis.tables.groups.group_table's rows, computed once when the report
is loaded): the headline measure's systems x groups table with each group's marks, then every measure's
numbers per group, and the delta per group with its interval.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pandas as pd

from ndcg_report.analysis import html
from ndcg_report.analysis.html import ABOVE, BELOW
from ndcg_report.analysis.tables.display import marked_table

if TYPE_CHECKING:
    from ndcg_report.analysis.report_model import Report

CSV_COLUMNS = ("group", "system", "role", "measure", "n", "mean", "delta", "ci_low", "ci_high", "ci_level", "p_holm",
               "significant")


def parts(report: Report) -> list[tuple]:
    """The groups' part of the report, each ("html", text) or ("png", caption HTML, bytes); [] without groups."""
    from ndcg_report.analysis.content import figure_pending, shown_png
    from ndcg_report.analysis.tables.figures import block_deltas

    rows = report.group_rows
    if rows is None:
        return []
    headline = report.experiment.headline.label
    sizes = rows.drop_duplicates("group").set_index("group")["n"]
    table = marked_table(rows, "group", headline)
    table.columns = [f"{group} ({int(sizes[group]):,} q)" for group in table.columns]
    table.index.name = "system"
    caption = f"Delta {headline} against {report.experiment.baseline_name} per query group"
    heading, png = figure_pending(report, caption, lambda: block_deltas(rows, "group", headline))
    return [
        ("html", html.text_html(f"Query groups: {headline} per group", "h4")),
        ("html", html.table_html(table)),
        ("html", html.text_html(note(report), "p", "note")),
        ("png", heading, shown_png(png)),
    ]


def note(report: Report) -> str:
    """What the marks mean and how the groups were tested."""
    experiment = report.experiment
    counts = report.group_rows.drop_duplicates("group")
    outside = counts.loc[counts["group"] == "(no group)", "n"]
    text = (f"{ABOVE}/{BELOW}: significantly above/below {experiment.baseline_name} within the group: the paired "
            f"randomization test on the group's queries alone, Holm over the systems within each group (each group "
            f"its own family, alpha {experiment.alpha:g}). Groups describe where a system gains; nothing corrects "
            "across groups, so read many groups as a description rather than a test. Every measure per group is in "
            "per_group.csv.")
    if len(outside) and int(outside.iloc[0]):
        text += f" {int(outside.iloc[0]):,} queries are in no group: shown as (no group)."
    return text


def per_group_csv_chunks(report: Report) -> Iterator[bytes]:
    """per_group.csv: one row per (group, system, measure), CSV_COLUMNS; numbers as pandas writes them."""
    frame = report.group_rows.loc[:, list(CSV_COLUMNS)]
    yield frame.to_csv(index=False, lineterminator="\n").encode("utf-8")


def groups_record(report: Report) -> dict | None:
    """summary.json's `groups`: the file, the groups with their sizes, the columns of per_group.csv."""
    rows = report.group_rows
    if rows is None:
        return None
    sizes = rows.drop_duplicates("group")
    return {"file": report.params.groups.name if report.params.groups else None, "per_group": "per_group.csv",
            "groups": {str(group): int(n) for group, n in zip(sizes["group"], sizes["n"])},
            "family": "Holm over the systems within each group, per measure"}
