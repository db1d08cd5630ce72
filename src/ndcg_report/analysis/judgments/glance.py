"""The judges comparison at a glance: per set its agreement, order correlation and flipped verdicts, and the verdict grid.

`summary_table` and `verdict_grid` are DataFrames of a JudgmentComparison's own numbers (the ones
`ndcg-report judges --format json` prints); `parts(report)` is the summary shown near the top of a
report with several judgment sets (nothing with one set); `verdicts_html` folds the reference-only
verdict lines under it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ndcg_report.analysis import html
from ndcg_report.analysis.text import format_p
from ndcg_report.analysis.judgments.comparison import JudgmentComparison, SetComparison
from ndcg_report.analysis.judgments.orders import BETTER, NO_DIFFERENCE, WORSE, Verdict
from ndcg_report.stats.resampling import pvalue_floor

if TYPE_CHECKING:
    from ndcg_report.analysis.report_model import Report

MARKS = {BETTER: "▲", WORSE: "▼", NO_DIFFERENCE: "–"}
FLIPS = "verdicts that differ from the reference's"


def flips(other: SetComparison, measure: str | None = None) -> list[Verdict]:
    """The verdicts this set gives otherwise than the reference (on `measure` only, or on every measure)."""
    return [v for v in other.verdicts if v.differs and (measure is None or v.measure == measure)]


def summary_table(comparison: JudgmentComparison, measure: str) -> pd.DataFrame:
    """One row per set other than the reference: kappa and alpha of the labels, tau-b (with its bootstrap
    interval) and tau_AP of the system order on `measure`, and how many verdicts flip, and which."""
    rows = []
    for other in comparison.comparisons:
        order = other.order(measure) if other.orders else None
        row = {"set": other.name, "Cohen's kappa": other.agreement.cohen_kappa,
               "Krippendorff's alpha (ordinal)": other.agreement.alpha_ordinal}
        if order is not None:
            low, high = order.kendall_tau_interval
            row |= {f"tau-b ({measure})": order.kendall_tau, "tau-b interval": interval_text(low, high),
                    "tau_AP": order.tau_ap, "same best system": "yes" if order.same_best_system else "no"}
        if other.verdicts:
            on_measure = [v for v in other.verdicts if v.measure == measure]
            changed = flips(other, measure)
            row |= {f"flips ({measure})": f"{len(changed)} of {len(on_measure)}",
                    "which": ", ".join(f"{v.system} {MARKS[v.reference]}→{MARKS[v.other]}" for v in changed) or "none",
                    "flips (every measure)": f"{len(flips(other))} of {len(other.verdicts)}"}
        rows.append(row)
    return pd.DataFrame(rows)


def verdict_grid(comparison: JudgmentComparison, measures: list[str], floor: float | None = None) -> pd.DataFrame:
    """Systems (rows) x `MEASURE SET` (columns, the reference first): each verdict against the baseline as
    a mark (▲ better, ▼ worse, – no difference) and its Holm-adjusted p-value ('≤' at `floor`, the
    resampling's smallest: holm_floor); the column `flips` names the (set, measure) whose verdict differs
    from the reference's."""
    if not comparison.comparisons or not comparison.comparisons[0].verdicts:
        return pd.DataFrame()
    several = len(measures) > 1
    cells: dict[str, dict[str, str]] = {}
    changed: dict[str, list[str]] = {}
    for position, other in enumerate(comparison.comparisons):
        for verdict in other.verdicts:
            if verdict.measure not in measures:
                continue
            prefix = f"{verdict.measure} " if several else ""
            row = cells.setdefault(verdict.system, {})
            if position == 0:
                row[prefix + comparison.reference] = _cell(verdict.reference, verdict.reference_p, floor)
            row[prefix + other.name] = _cell(verdict.other, verdict.other_p, floor)
            if verdict.differs:
                changed.setdefault(verdict.system, []).append(f"{other.name}{' on ' + verdict.measure if several else ''}")
    columns = [f"{m} {s.name}" if several else s.name for m in measures for s in comparison.sets
               if s.name == comparison.reference or any(c.name == s.name for c in comparison.comparisons)]
    frame = pd.DataFrame.from_dict(cells, orient="index").reindex(
        index=[s for s in comparison.systems if s in cells], columns=columns)
    frame["flips"] = [", ".join(changed.get(system, [])) for system in frame.index]
    return frame.rename_axis("system")


def grid_note(comparison: JudgmentComparison) -> str:
    """What a grid cell means."""
    return (f"Each cell: the verdict against {comparison.baseline} under that set (▲ significantly better, ▼ "
            f"significantly worse, – no significant difference at α = {comparison.alpha:g}) and its "
            "randomization-test p-value, Holm-adjusted over the systems on one measure; the same test under every set.")


def parts(report: Report) -> list[str]:
    """The summary's HTML parts near the top of the report: a heading, the summary table and the grid of
    the headline measure's verdicts; [] with one judgment set."""
    comparison = report.experiment.judgments
    if comparison is None:
        return []
    headline = report.experiment.headline.label
    found = [html.text_html(f"Judges at a glance: {len(comparison.comparisons)} other "
                            f"set{'s' if len(comparison.comparisons) > 1 else ''} against {comparison.reference}", "h3"),
             html.table_html(summary_table(comparison, headline), index=False, text_columns=("set", "which"))]
    grid = verdict_grid(comparison, [headline], holm_floor(report))
    if not grid.empty:
        found += [html.text_html(f"Verdicts on {headline} against {comparison.baseline} under each set", "h4"),
                  html.table_html(grid, text_columns=("flips",)),
                  html.text_html(grid_note(comparison) + ' Every measure, the labels and the orders: '
                                 'section "Judges compared" below.', "p", "note")]
    return found


def verdicts_html(report: Report, verdicts: str) -> str:
    """The verdict lines as given with one judgment set; with several, folded (the grid above shows them
    under every set)."""
    comparison = report.experiment.judgments
    if comparison is None or not comparison.systems:
        return verdicts
    return html.details_html(f"Verdicts under {comparison.reference} only, in words", verdicts)


def _cell(verdict: str, p: float, floor: float | None) -> str:
    return f"{MARKS[verdict]} {format_p(p, floor)}"


def holm_floor(report: Report) -> float:
    """The smallest Holm-adjusted randomization p-value of the report's verdicts (stats.resampling.pvalue_floor)."""
    experiment = report.experiment
    return pvalue_floor(experiment.n_resamples, multiplier=experiment.family_size)


def interval_text(low: float, high: float) -> str:
    """'[0.5270, 1.0000]', or '–' where there is none (a set whose mean is not a plain average)."""
    return "–" if low != low or high != high else f"[{low:.4f}, {high:.4f}]"
