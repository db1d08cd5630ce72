"""The report's tables of what was evaluated (parameters, files) and its list of figures.

The data checks are in analysis.checks, the verdicts and result tables in analysis.results.
Every function takes the Report and returns plain data, text or HTML.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

import pandas as pd

from ndcg_report.core.measures.names import level_text
from ndcg_report.core.measures.registry import FAMILIES
from ndcg_report.core.presets import preset as find_preset
from ndcg_report.analysis.report_model import Report
from ndcg_report.analysis.results import statistics_note
from ndcg_report.version import __version__

if TYPE_CHECKING:
    from matplotlib.figure import Figure


# --- tables ----------------------------------------------------------------------------------


def parameters_table(report: Report) -> pd.DataFrame:
    """The parameters the report was built with, as a two-column table."""
    p, experiment = report.params, report.experiment
    rows = {
        "systems": ", ".join(experiment.names), "baseline": experiment.baseline_name,
        **({"preset": f"{p.preset}: {find_preset(p.preset).describe()}"} if p.preset else {}),
        "measures": ", ".join(experiment.labels), "headline measure": experiment.headline.label,
        "relevance level (binary measures)": f"label >= {level_text(experiment.rel_level)}",
        "gain (nDCG)": p.gain, "missing queries": p.averaging.describe("missing"),
        "queries without relevant docs": p.averaging.describe("no_relevant"),
        **({"run lines whose docid is their qid": p.averaging.describe("identical_ids")}
           if p.identical_ids != "keep" or "identical_ids" in p.averaging_given else {}),
        **({"lines of a query that count (trec_eval -M)": f"the first {p.max_retrieved:,}"} if p.max_retrieved else {}),
        "seed": str(p.seed),
        "resamples (bootstrap, randomization, Tukey HSD)": f"{experiment.n_resamples:,}" + (
            f" (over more than {experiment.large_n:,} queries, large-sample limits where accurate: see Results)"
            if statistics_note(experiment) else ""),
        "ndcg-report version": __version__,
    }
    if p.bm25_settings:
        rows["baseline built from the corpus"] = p.bm25_settings
    return pd.DataFrame({"value": rows})


def files_table(report: Report) -> pd.DataFrame:
    """The input files as shown: role, file name, the first 12 hex digits of the sha256 (summary.json
    has all 64), lines."""
    table = report.files.copy()
    table["sha256"] = [digest[:12] for digest in table["sha256"]]
    return table.rename(columns={"sha256": "sha256 (first 12)"})


# --- figures ---------------------------------------------------------------------------------


def report_figures(report: Report) -> list[tuple[str, bytes]]:
    """The report's figures as (caption HTML with its SVG link, PNG bytes); the multi-system ones only
    with two or more systems. Each is handed to report.figures as it is drawn, the PNGs taken at the end
    (so that figures forked to be drawn beside the kernel are drawn at once: build.kernels.forked_figures)."""
    pending = [figure_pending(report, caption, draw) for caption, draw in figure_drawers(report)]
    return [(heading, shown_png(png)) for heading, png in pending]


def figure_pending(report: Report, caption: str, draw: Callable[[], "Figure"]) -> tuple[str, Callable[[], bytes | None]]:
    """(the caption as an <h4> linking the figure's SVG, a function giving its PNG) of the figure `draw` makes:
    numbered in the report's order as `figures/NN-words-of-its-caption.svg` and handed to report.figures, which
    makes and draws it (its PNG and, when the report's files are written, its SVG, of one layout), perhaps beside
    the kernel, and not at all in the build's re-execution; the link is the same either way, so both executions
    show the same. Take the PNG (shown_png) once every figure of a cell is handed over."""
    import re

    from ndcg_report.analysis.html import escape

    words = re.sub(r"[^a-z0-9]+", "-", caption.lower()).strip("-")[:48].rstrip("-") or "figure"
    name = f"{FIGURES_FOLDER}/{len(report.figure_names) + 1:02d}-{words}.svg"
    report.figure_names.append(name)
    heading = f'<h4>{escape(caption)} <a class="svg" href="{escape(name)}">SVG</a></h4>'
    return heading, report.figures.add(name, draw)


def shown_png(png: Callable[[], bytes | None]) -> bytes:
    """The PNG a pending figure shows: its own, or figure_style.NOT_DRAWN where it is not drawn."""
    from ndcg_report.analysis.figure_style import NOT_DRAWN

    drawn = png()
    return drawn if drawn is not None else NOT_DRAWN


FIGURES_FOLDER = "figures"  # beside report.html: every figure of the report as SVG


def figure_drawers(report: Report) -> list[tuple[str, Callable[[], Figure]]]:
    """(caption, function drawing the Figure) of each report figure, in report order; a figure that
    aggregates or samples its queries (over many queries, see report.plots) says so in its caption.
    The mean against k is drawn for each family with two or more cut-offs (the headline's first);
    the rest show the headline measure."""
    from ndcg_report.analysis import plots

    experiment = report.experiment
    label, base, many = experiment.headline.label, experiment.baseline_name, len(experiment.names) > 1
    n = len(experiment.scores(experiment.headline))
    if n == 0:
        return []  # no query is averaged in every system: data_warnings says so
    families = sorted((family for family, measures in experiment.families.items() if len(measures) > 1
                       and FAMILIES[family].kind != "count"), key=lambda family: family != experiment.headline.measure)
    figures = [(f"Mean {family}@k against k, with {experiment.confidence:.0%} bootstrap bands",
                partial(experiment.plot_by_cutoff, family)) for family in families]
    figures.append((f"Distribution of per-query {label}" + (
        f" ({n:,} queries: boxes of every query, points for an even sample of {plots.MAX_POINTS:,})"
        if n > plots.MAX_POINTS else ""), experiment.plot_distribution))
    if many:
        bins = min(plots.HEATMAP_BINS, n)
        figures += [
            (f"Per-query {label} minus {base}'s, systems x queries (a query's rankings: follow its qid in the "
             "per-query table, section 5)" + (
                f" ({n:,} queries, sorted by mean delta, binned: {bins} bins of about {n // bins:,}, "
                "each cell a bin's mean)" if n > plots.MAX_HEATMAP_QUERIES else ""), experiment.plot_delta_heatmap),
            (f"Queries won, tied and lost against {base} on {label}", experiment.plot_wins_ties_losses),
            (f"Pairwise randomized Tukey HSD p-values on {label}", experiment.plot_pairwise),
        ]
    figures += [
        (f"Per-query {label}: {base} (x) against {'each system' if many else experiment.names[0]} (y)" + (
            f" ({n:,} queries: a 2-D histogram, colour = queries per cell)" if n > plots.MAX_POINTS else ""),
         experiment.plot_scatter),
        (f"Per-query delta {label} (system − {base}), sorted" + (
            f" ({n:,} queries: the sorted deltas drawn as an area, their quantile curve)" if n > plots.MAX_BARS else ""),
         experiment.plot_delta_bars),
        (f"ECDF of per-query {label}", experiment.plot_ecdf),
    ]
    return figures
