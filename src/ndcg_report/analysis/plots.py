"""The report's figures of systems against a baseline, each a `matplotlib.figure.Figure` (no pyplot).

Functions take plain data (DataFrames of per-query values of a measure, counts, intervals) and the
label of the measure they show ('nDCG@10', 'RR@10'), and return a Figure; the numbers come from
tested functions elsewhere, the look (colours, titles, panels) and the PNG/SVG bytes from
analysis.figure_style.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.colors import LogNorm, TwoSlopeNorm
from matplotlib.ticker import FuncFormatter
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ndcg_report.analysis.figure_style import (
    DELTA_COLOURS, FIGSIZE, LOSS_COLOUR, MAX_LABEL, TIE_COLOUR, WIN_COLOUR, label, legend, literal, name_ticks,
    new_figure, outer_labels, panel_title, panels, qid_label, set_title, system_styles,
)
from ndcg_report.analysis import figure_style  # figure_style.rc() looked up at each call (tests replace it)

MAX_QID_TICKS = 60
# Above these many queries, a figure with one mark per query draws an aggregate instead (and says so):
MAX_POINTS = 2_000  # distribution: points for an even sample of this many queries; scatter: a 2-D histogram
MAX_HEATMAP_QUERIES = 600  # delta heatmap: queries (sorted by mean delta) in HEATMAP_BINS bins of equal size
HEATMAP_BINS = 200
MAX_BARS = 1_000  # sorted delta bars: the sorted deltas as an area (their quantile curve)
CURVE_POINTS = 2_000  # points that draw that curve (it is monotone: evenly spaced ranks trace it)
SCATTER_BINS = 25
MAX_BANDED_SYSTEMS = 3  # above this many systems, the mean against k is drawn as small multiples

def by_cutoff(
    intervals: pd.DataFrame, systems: Sequence[str], labels: Sequence[str], confidence: float, n_queries: int,
    family: str = "nDCG",
) -> Figure:
    """Mean of one measure family against its cut-off k (categorical axis, 'all' last) per system
    with its bootstrap band; above MAX_BANDED_SYSTEMS systems under test, small multiples (one panel
    per system, with the baseline in each), where one panel of overlapping bands would be unreadable.

    intervals: index (system, k label) with columns mean, low, high; systems: the baseline last.
    """
    baseline_name = systems[-1]
    style = system_styles(systems, baseline_name)
    x = np.arange(len(labels))
    ticks = [literal(text) for text in labels]
    title = f"Mean {literal(family)}@k with {confidence:.0%} bootstrap CI, {n_queries:,} queries"

    def draw(ax: Axes, names: Sequence[str]) -> list:
        handles = []
        for name in names:
            colour, marker, dashes = style[name]
            rows = intervals.loc[name].loc[list(labels)]
            ax.fill_between(x, rows["low"].to_numpy(), rows["high"].to_numpy(), color=colour, alpha=0.2, linewidth=0)
            handles += ax.plot(x, rows["mean"].to_numpy(), marker=marker, color=colour, linestyle=dashes,
                               label=label(name))
        ax.set_xticks(x, ticks)
        ax.set_ylim(0, 1)
        ax.grid(axis="y", alpha=0.3)
        return handles

    with matplotlib.rc_context(figure_style.rc()):
        if len(systems) - 1 <= MAX_BANDED_SYSTEMS:
            figure, ax = new_figure(FIGSIZE)
            handles = draw(ax, systems)
            ax.set_xlabel("cut-off k")
            ax.set_ylabel(f"mean {literal(family)}@k")
            set_title(ax, title)
            legend(ax, handles, [label(name) for name in systems])
            return figure
        figure, axes = panels(len(systems) - 1, square=False)
        for ax, name in zip(axes, systems[:-1]):
            draw(ax, [name, baseline_name])
            panel_title(ax, name, f"and {label(baseline_name)} (dashed)")
            ax.set_xlabel("cut-off k", fontsize=8)
            ax.set_ylabel(f"mean {literal(family)}@k", fontsize=8)
        outer_labels(axes)  # every panel: the same k and 0 to 1
        figure.suptitle(title, fontsize=10)
    return figure


def distribution(table: pd.DataFrame, measure: str, baseline_name: str, max_points: int | None = None) -> Figure:
    """Box plot of per-query values of the measure per system (the baseline first), every query a jittered point;
    above max_points queries the boxes are of every query and the points of an even sample of
    max_points queries (the same for every system: every (n / max_points)-th in qid order).

    table: queries x systems (the baseline among the columns). max_points: MAX_POINTS if None.
    """
    columns = [baseline_name, *[name for name in table.columns if name != baseline_name]]
    style = system_styles(list(table.columns), baseline_name)
    n = len(table)
    shown = even_sample(n, MAX_POINTS if max_points is None else max_points)
    jitter = ((np.arange(len(shown)) * 0.6180339887498949) % 1.0 - 0.5) * 0.5  # golden-ratio spread, no RNG
    size, alpha = (14, 0.7) if len(shown) <= 200 else (3, max(0.05, min(0.5, 30 / np.sqrt(len(shown)))))
    positions = np.arange(1, len(columns) + 1)
    with matplotlib.rc_context(figure_style.rc()):
        figure, ax = new_figure((max(FIGSIZE[0], 1.1 * len(columns) + 2.5), FIGSIZE[1] + (0.6 if len(columns) > 4 else 0)))
        boxes = ax.boxplot(
            [table[c].to_numpy() for c in columns], positions=positions, widths=0.6,
            patch_artist=True, showfliers=False, showmeans=True, medianprops={"color": "black"},
            meanprops={"marker": "D", "markerfacecolor": "white", "markeredgecolor": "black"},
        )
        for box, name in zip(boxes["boxes"], columns):
            box.set(facecolor=style[name][0], alpha=0.25)
        for position, name in zip(positions, columns):
            ax.scatter(position + jitter, table[name].to_numpy()[shown], s=size, color=style[name][0], alpha=alpha,
                       linewidths=0, zorder=3)
        name_ticks(ax, positions, columns)
        ax.set_ylabel(f"{literal(measure)} per query")
        ax.set_ylim(-0.03, 1.03)
        ax.grid(axis="y", alpha=0.3)
        if len(shown) < n:
            set_title(ax, f"Distribution of {literal(measure)}, {n:,} queries (box: quartiles, diamond: mean)\n"
                          f"points: an even sample of {len(shown):,} queries", fontsize=10)
        else:
            set_title(ax, f"Distribution of {literal(measure)}, {n:,} queries (box: quartiles, diamond: mean)")
    return figure


def even_sample(n: int, most: int) -> np.ndarray:
    """Positions 0..n-1, or `most` of them evenly spaced (the first and the last included) if n > most."""
    if n <= most:
        return np.arange(n)
    return np.unique(np.round(np.linspace(0, n - 1, most)).astype(np.int64))


def delta_heatmap(deltas: pd.DataFrame, measure: str, baseline_name: str, max_queries: int | None = None,
                  bins: int | None = None) -> Figure:
    """Systems (rows) x queries (columns) of the measure minus the baseline's, queries sorted by their
    mean delta over the systems (best first), labelled by id up to MAX_QID_TICKS * 2 queries.
    Above max_queries, the sorted queries fall into `bins` bins of (nearly) equal size and each
    cell is a bin's mean delta (heatmap_bins). None: MAX_HEATMAP_QUERIES and HEATMAP_BINS."""
    order = np.lexsort((np.arange(len(deltas)), -deltas.mean(axis=1).to_numpy()))
    ordered = deltas.iloc[order]
    n_queries, n_systems = ordered.shape
    binned = n_queries > (MAX_HEATMAP_QUERIES if max_queries is None else max_queries)
    cells = heatmap_bins(ordered.to_numpy(), HEATMAP_BINS if bins is None else bins) if binned else ordered.to_numpy()
    limit = max(0.1, float(np.nanmax(np.abs(cells))) if cells.size else 0.1)
    labelled = n_queries <= 2 * MAX_QID_TICKS
    height = 1.3 + 0.32 * n_systems + (0.9 if labelled else 0.45 if binned else 0.3)
    with matplotlib.rc_context(figure_style.rc()):
        figure, ax = new_figure((10.0, height))
        image = ax.imshow(cells.T, aspect="auto", cmap=DELTA_COLOURS, interpolation="nearest",
                          norm=TwoSlopeNorm(vcenter=0.0, vmin=-limit, vmax=limit))
        ax.set_yticks(np.arange(n_systems), [label(name) for name in ordered.columns], fontsize=8)
        if labelled:
            ax.set_xticks(np.arange(n_queries), [qid_label(q) for q in ordered.index], rotation=90,
                          fontsize=6 if n_queries > MAX_QID_TICKS else 7)
            ax.set_xlabel("query id, sorted by mean delta over the systems")
        elif binned:
            share = np.linspace(0, 1, 5)
            ax.set_xticks(share * len(cells) - 0.5, [f"{value:.0%}" for value in share], fontsize=8)
            ax.set_xlabel(f"{n_queries:,} queries sorted by mean delta over the systems (best first), in {len(cells)} "
                          f"bins of {n_queries // len(cells):,}; each cell: the bin's mean", fontsize=9)
        else:
            ax.set_xticks([])
            ax.set_xlabel(f"{n_queries:,} queries, sorted by mean delta over the systems")
        colourbar = figure.colorbar(image, ax=ax, fraction=0.04, pad=0.01)
        colourbar.set_label(f"{'mean ' if binned else ''}Δ {literal(measure)}", fontsize=8)
        set_title(ax, f"Per-query {literal(measure)} minus {label(baseline_name)}'s "
                      f"(green: system better, red: {label(baseline_name)} better)", fontsize=10)
    return figure


def heatmap_bins(ordered: np.ndarray, bins: int) -> np.ndarray:
    """Means of consecutive rows of `ordered` (queries x systems) in `bins` groups of (nearly) equal
    size, the larger groups first (np.array_split): bins x systems."""
    groups = np.array_split(np.arange(len(ordered)), min(bins, len(ordered)))
    starts = np.array([group[0] for group in groups])
    sums = np.add.reduceat(ordered, starts, axis=0)
    return sums / np.array([len(group) for group in groups])[:, None]


def wins_ties_losses(counts: pd.DataFrame, measure: str, baseline_name: str) -> Figure:
    """Horizontal stacked bars per system: queries won, tied and lost against the baseline on the measure."""
    names = list(counts.index)[::-1]  # first system on top
    wins, ties, losses = (counts.loc[names, column].to_numpy() for column in ("wins", "ties", "losses"))
    total = np.maximum(wins + ties + losses, 1)
    y = np.arange(len(names))
    with matplotlib.rc_context(figure_style.rc()):
        figure, ax = new_figure((FIGSIZE[0] + 1.0, 1.2 + 0.42 * len(names)))
        left = np.zeros(len(names))
        for values, colour, kind in ((wins, WIN_COLOUR, "wins"), (ties, TIE_COLOUR, "ties"), (losses, LOSS_COLOUR, "losses")):
            share = values / total
            ax.barh(y, share, left=left, color=colour, label=kind, height=0.7)
            for yi, start, part, count in zip(y, left, share, values):
                if part >= 0.06:
                    ax.text(start + part / 2, yi, str(int(count)), ha="center", va="center", fontsize=8, color="white")
            left = left + share
        ax.set_yticks(y, [label(name) for name in names], fontsize=8)
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of queries")
        set_title(ax, f"Queries won, tied and lost against {label(baseline_name)} on {literal(measure)}", fontsize=10)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=8)
    return figure


def pairwise_matrix(pvalues: pd.DataFrame, letters: pd.Series, measure: str, n_queries: int, alpha: float) -> Figure:
    """The randomized Tukey HSD p-values of every pair (pvalues: names x names, in the order shown,
    best first) with each system's letters; darker cells are smaller p-values, bold marks p < alpha."""
    names = list(pvalues.index)
    m = len(names)
    values = pvalues.loc[names, names].to_numpy()
    shade = np.clip(-np.log10(np.maximum(values, 1e-4)), 0, 4)
    np.fill_diagonal(shade, np.nan)
    side = max(4.5, 0.6 * m + 2.5)
    label_room = 0.065 * (min(MAX_LABEL, max(len(str(name)) for name in names)) + 4)  # inches for the longest tick label
    with matplotlib.rc_context(figure_style.rc()):
        figure, ax = new_figure((side + 1.2 + label_room, side + label_room * 0.6))
        image = ax.imshow(shade, cmap="Blues", vmin=0, vmax=4, interpolation="nearest")
        for i in range(m):
            for j in range(m):
                if i == j:
                    continue
                p = values[i, j]
                text = "<.0001" if p < 1e-4 else f"{p:.4f}".lstrip("0") if p < 1 else "1"
                ax.text(j, i, text, ha="center", va="center", fontsize=7 if m > 6 else 8,
                        color="white" if shade[i, j] > 2.2 else "black",
                        fontweight="bold" if p < alpha else "normal")
        tick_labels = [f"{label(name)} ({letters[name]})" for name in names]
        ax.set_xticks(np.arange(m), tick_labels, rotation=35, ha="right", fontsize=8)
        ax.set_yticks(np.arange(m), tick_labels, fontsize=8)
        colourbar = figure.colorbar(image, ax=ax, fraction=0.046, pad=0.02, ticks=[0, 1, 2, 3, 4])
        colourbar.ax.set_yticklabels(["1", "0.1", "0.01", "0.001", "≤0.0001"], fontsize=7)
        colourbar.set_label("p-value", fontsize=8)
        set_title(ax, f"Randomized Tukey HSD at {literal(measure)}, {n_queries:,} queries\n"
                      f"(bold: p < {alpha:g}; letters: groups that do not differ)", fontsize=10)
    return figure


def per_query_scatter(table: pd.DataFrame, names: Sequence[str], baseline_name: str, measure: str,
                      max_points: int | None = None) -> Figure:
    """Per system (small multiples), per-query values of the measure, the baseline (x) against the system (y),
    with y = x and the number of queries on each side. Above max_points queries, a 2-D histogram
    of every query (SCATTER_BINS x SCATTER_BINS cells, colour: queries per cell, log scale).
    max_points: MAX_POINTS if None."""
    n = len(table)
    size, alpha = (20, 0.8) if n <= 200 else (4, 0.3)
    histogram = n > (MAX_POINTS if max_points is None else max_points)
    edges = np.linspace(0, 1, SCATTER_BINS + 1)
    counts = {name: np.histogram2d(table[baseline_name].to_numpy(), table[name].to_numpy(), bins=(edges, edges))[0]
              for name in names} if histogram else {}
    most = max((float(c.max()) for c in counts.values()), default=1.0)
    with matplotlib.rc_context(figure_style.rc()):
        figure, axes = panels(len(names), square=True)
        for ax, name in zip(axes, names):
            delta = table[name].to_numpy() - table[baseline_name].to_numpy()
            above, below = int((delta > 0).sum()), int((delta < 0).sum())
            ax.plot([0, 1], [0, 1], color="black", linewidth=0.8, linestyle="--")
            if histogram:
                shown = np.where(counts[name] > 0, counts[name], np.nan).T  # rows: system, columns: baseline
                image = ax.imshow(shown, origin="lower", extent=(0, 1, 0, 1), cmap="magma_r",
                                  norm=LogNorm(vmin=1, vmax=max(most, 2)), interpolation="nearest")
                for x, y, text, align in ((0.03, 0.97, "system better", "left"),
                                          (0.97, 0.03, f"{label(baseline_name)} better", "right")):
                    ax.text(x, y, text, transform=ax.transAxes, ha=align, va="top" if y > 0.5 else "bottom", fontsize=7,
                            bbox={"facecolor": "white", "alpha": 0.8, "linewidth": 0, "pad": 1.5}, zorder=5)
            else:
                colours = np.where(delta > 0, WIN_COLOUR, np.where(delta < 0, LOSS_COLOUR, TIE_COLOUR))
                ax.scatter(table[baseline_name].to_numpy(), table[name].to_numpy(), s=size, c=list(colours), alpha=alpha,
                           linewidths=0, clip_on=False, zorder=3)
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1)
            ax.set_aspect("equal")
            ax.set_xlabel(f"{label(baseline_name)}: {literal(measure)}", fontsize=8)
            ax.set_ylabel(f"system: {literal(measure)}", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
            panel_title(ax, name, f"{above:,} better, {below:,} worse, {n - above - below:,} equal")
        outer_labels(axes)  # every panel: 0 to 1 on both axes
        if histogram:
            colourbar = figure.colorbar(image, ax=axes, location="bottom", shrink=0.6, aspect=40)
            colourbar.set_label(f"queries per cell ({SCATTER_BINS} x {SCATTER_BINS} cells; log scale)", fontsize=8)
            colourbar.ax.tick_params(labelsize=7)
            width, height = figure.get_size_inches()
            figure.set_size_inches(width, height + 0.4)  # room for the colour bar
            figure.suptitle(f"Per-query {literal(measure)} against {label(baseline_name)},{chr(10) if len(names) == 1 else ' '}"
                            f"{n:,} queries as a 2-D histogram", fontsize=10)
        else:
            handles = [
                Line2D([], [], linestyle="", marker="o", color=WIN_COLOUR, label="system better"),
                Line2D([], [], linestyle="", marker="o", color=LOSS_COLOUR, label=f"{label(baseline_name)} better"),
                Line2D([], [], linestyle="", marker="o", color=TIE_COLOUR, label="equal"),
            ]
            figure.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=8)
            figure.suptitle(f"Per-query {literal(measure)} against {label(baseline_name)}, {n:,} queries", fontsize=10)
    return figure


def per_query_delta(deltas: pd.DataFrame, baseline_name: str, measure: str, max_bars: int | None = None) -> Figure:
    """Per system (small multiples), bars of the per-query measure minus the baseline's, sorted
    descending (topic-by-topic); query ids on the axis for one system and up to 60 queries. Above
    max_bars queries, the sorted deltas as an area (their quantile curve, traced through
    CURVE_POINTS evenly spaced ranks), the x axis their rank. max_bars: MAX_BARS if None."""
    names = list(deltas.columns)
    n = len(deltas)
    limit = float(np.nanmax(np.abs(deltas.to_numpy()))) if deltas.size else 0.0
    labelled = len(names) == 1 and n <= MAX_QID_TICKS
    area = n > (MAX_BARS if max_bars is None else max_bars)
    with matplotlib.rc_context(figure_style.rc()):
        if len(names) == 1:
            figure, ax = new_figure()
            axes = [ax]
        else:
            figure, axes = panels(len(names), square=False)
        for ax, name in zip(axes, names):
            column = deltas[name]
            order = np.lexsort((np.arange(n), -column.to_numpy()))  # ties keep qid order
            delta = column.to_numpy()[order]
            wins, losses = int((delta > 0).sum()), int((delta < 0).sum())
            if area:
                _sorted_area(ax, delta)
            else:
                colours = np.where(delta > 0, WIN_COLOUR, np.where(delta < 0, LOSS_COLOUR, TIE_COLOUR))
                half = 0.4 if n <= MAX_QID_TICKS else 0.5
                left, right, zero = np.arange(n) - half, np.arange(n) + half, np.zeros(n)
                corners = [(left, zero), (left, delta), (right, delta), (right, zero)]
                bars = np.stack([np.column_stack(corner) for corner in corners], axis=1)  # one rectangle per query
                ax.add_collection(PolyCollection(bars, facecolors=list(colours), linewidths=0, antialiased=n <= 1000))
            ax.set_ylim(-limit - 0.05, limit + 0.05)
            ax.axhline(0, color="black", linewidth=0.8)
            if labelled:
                ax.set_xticks(np.arange(n), [qid_label(q) for q in column.index[order]], rotation=90, fontsize=7)
                ax.set_xlabel("query id")
            elif area:
                ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.0f}"))
                ax.set_xlabel("queries, ranked by difference", fontsize=8)
            else:
                ax.set_xticks([])
                ax.set_xlabel("queries, sorted by difference", fontsize=8)
            ax.set_xlim(-0.5, n - 0.5)
            ax.set_ylabel(f"Δ {literal(measure)}", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(axis="y", alpha=0.3)
            counts = f"{wins:,} better, {losses:,} worse, {n - wins - losses:,} equal"
            if len(names) > 1:
                panel_title(ax, name, counts)
            else:
                ax.set_title(f"{label(name)} − {label(baseline_name)}: {counts}", fontsize=10)
        if len(names) > 1:
            outer_labels(axes)  # every panel: the same queries (ranks) and the same limits of the difference
        if len(names) == 1:
            axes[0].legend(handles=[
                Patch(color=WIN_COLOUR, label=f"{label(names[0])} better: {wins:,}"),
                Patch(color=LOSS_COLOUR, label=f"{label(baseline_name)} better: {losses:,}"),
            ], loc="upper right")
        else:
            figure.suptitle(f"Per-query {literal(measure)} difference from {label(baseline_name)}, sorted, "
                            f"{n:,} queries{' (as an area)' if area else ''}", fontsize=10)
    return figure


def sorted_curve(delta: np.ndarray, points: int = CURVE_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """(ranks, values) tracing sorted values through `points` evenly spaced ranks, plus the ranks on
    either side of each sign change, so the drawn area changes colour exactly where the values do."""
    ranks = even_sample(len(delta), points)
    change = np.flatnonzero(np.sign(delta[1:]) != np.sign(delta[:-1]))
    ranks = np.unique(np.concatenate([ranks, change, change + 1]))
    return ranks, delta[ranks]


def _sorted_area(ax: Axes, delta: np.ndarray) -> None:
    """The sorted differences as an area from 0: green above, red below (one rank = one query)."""
    ranks, values = sorted_curve(delta)
    ax.fill_between(ranks, 0, values, where=values > 0, color=WIN_COLOUR, linewidth=0, step="mid")
    ax.fill_between(ranks, 0, values, where=values < 0, color=LOSS_COLOUR, linewidth=0, step="mid")
    ax.plot(ranks, values, color="black", linewidth=0.6, drawstyle="steps-mid")


def ecdf(table: pd.DataFrame, measure: str, baseline_name: str) -> Figure:
    """Empirical CDF of the per-query measure per system (one step per query); the baseline dashed."""
    style = system_styles(list(table.columns), baseline_name)
    with matplotlib.rc_context(figure_style.rc()):
        figure, ax = new_figure((8.4, 4.2) if table.shape[1] > 3 else FIGSIZE)
        handles = [ax.ecdf(table[name].to_numpy(), color=style[name][0], label=label(name), linestyle=style[name][2])
                   for name in table.columns]
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel(f"{literal(measure)}")
        ax.set_ylabel("fraction of queries ≤ x")
        ax.grid(alpha=0.3)
        legend(ax, handles, [label(name) for name in table.columns], inside="upper left")
        set_title(ax, f"ECDF of per-query {literal(measure)}, {len(table):,} queries")
    return figure

