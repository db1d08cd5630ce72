"""The figures of judgment sets compared: the confusion matrix of labels, the scatter of system means.

Each returns a `matplotlib.figure.Figure` (no pyplot) in the report's look (analysis.figure_style), from
the plain data of a JudgmentComparison.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ndcg_report.analysis import figure_style  # figure_style.rc() looked up at each call (tests replace it)
from ndcg_report.analysis.figure_style import label, legend, literal, new_figure, set_title, system_colour
from ndcg_report.stats.agreement import LabelAgreement

MARKERS = ("o", "^", "s", "D", "v", "P", "X")


def confusion_heatmap(agreement: LabelAgreement, reference: str, other: str) -> Figure:
    """The confusion matrix: the reference's labels in rows, the other set's in columns, each cell's count
    written in it and shaded by its share of the row (how the other set labels what the reference
    labels so); the title gives the shared pairs and Cohen's kappa."""
    counts = np.array(agreement.confusion, dtype=np.int64).reshape(len(agreement.labels), len(agreement.labels))
    totals = counts.sum(axis=1, keepdims=True)
    shares = np.divide(counts, totals, out=np.zeros(counts.shape), where=totals > 0)
    m = len(agreement.labels)
    side = max(3.6, 0.7 * m + 2.4)
    with matplotlib.rc_context(figure_style.rc()):
        figure, ax = new_figure((side + 1.4, side))
        image = ax.imshow(shares, cmap="Blues", vmin=0, vmax=1, interpolation="nearest")
        for i in range(m):
            for j in range(m):
                ax.text(j, i, f"{counts[i, j]:,}", ha="center", va="center", fontsize=8 if m > 6 else 10,
                        color="white" if shares[i, j] > 0.6 else "black", fontweight="bold" if i == j else "normal")
        ticks = [str(value) for value in agreement.labels]
        ax.set_xticks(np.arange(m), ticks)
        ax.set_yticks(np.arange(m), ticks)
        binned = f" ({agreement.binning})" if agreement.binning else ""
        ax.set_xlabel(f"{label(other)}: label{binned}", fontsize=9)
        ax.set_ylabel(f"{label(reference)}: label", fontsize=9)
        colourbar = figure.colorbar(image, ax=ax, fraction=0.046, pad=0.03)
        colourbar.set_label(f"share of the {label(reference)} row", fontsize=8)
        colourbar.ax.tick_params(labelsize=7)
        kappa = "undefined" if np.isnan(agreement.cohen_kappa) else f"{agreement.cohen_kappa:.3f}"
        set_title(ax, f"Labels of {agreement.shared:,} pairs both judge: {label(reference)} (rows) "
                      f"against {label(other)} (columns), Cohen's kappa {kappa}", fontsize=10)
    return figure


def means_scatter(means: Mapping[str, Mapping[str, float]], reference: str, measure: str) -> Figure:
    """Each system's mean under the reference (x) against its mean under each other set (y, one colour and
    marker per set), every point named by its system, with the diagonal y = x (the same mean under both).
    means: {set: {system: mean}}, the reference among the sets."""
    others = [name for name in means if name != reference]
    systems = [name for name in means[reference] if np.isfinite(means[reference][name])]
    values = [means[name][system] for name in means for system in systems if np.isfinite(means[name].get(system, np.nan))]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    pad = max((high - low) * 0.08, 0.01)
    low, high = low - pad, high + pad
    with matplotlib.rc_context(figure_style.rc()):
        figure, ax = new_figure((6.2, 5.4))
        ax.plot([low, high], [low, high], color="black", linewidth=0.8, linestyle="--", zorder=1)
        handles = [Line2D([], [], color="black", linewidth=0.8, linestyle="--")]
        named: tuple[list, list, list] = ([], [], [])
        for position, name in enumerate(others):
            shown = [s for s in systems if np.isfinite(means[name].get(s, np.nan))]
            x = [means[reference][s] for s in shown]
            y = [means[name][s] for s in shown]
            colour, marker = system_colour(position), MARKERS[position % len(MARKERS)]
            ax.scatter(x, y, s=36, color=colour, marker=marker, zorder=3, linewidths=0)
            handles.append(Line2D([], [], linestyle="", marker=marker, color=colour))
            if position == 0:  # the names once, by the first set's points (the others share their x)
                named = (shown, x, y)
        ax.set_xlim(low, high)
        ax.set_ylim(low, high)
        _name_points(ax, *named)
        ax.set_aspect("equal")
        ax.grid(alpha=0.3)
        ax.set_xlabel(f"{literal(measure)} under {label(reference)} (the reference)", fontsize=9)
        ax.set_ylabel(f"{literal(measure)} under the other set", fontsize=9)
        legend(ax, handles, ["same mean under both", *[label(name) for name in others]], inside="upper left")
        set_title(ax, f"System means of {len(systems)} systems: {literal(measure)} under each judgment set", fontsize=10)
    return figure


def _name_points(ax, systems: list[str], x: list[float], y: list[float]) -> None:
    """Each point named by its system; systems at the same point named together ('a, b'), and the name of
    a point close to one already named moved down a line, so that names do not overprint."""
    at: dict[tuple[float, float], list[str]] = {}
    for system, px, py in zip(systems, x, y):
        at.setdefault((px, py), []).append(system)
    low, high = ax.get_ylim() if len(at) else (0.0, 1.0)
    near = 0.04 * (high - low)  # about a line of 7-point text on the axes' height
    placed: list[tuple[float, float]] = []
    for (px, py), names in sorted(at.items(), key=lambda item: -item[0][1]):
        crowd = sum(1 for qx, qy in placed if abs(qx - px) < 6 * near and abs(qy - py) < near)
        ax.annotate(label(", ".join(names), 40), (px, py), xytext=(5, 4 - 10 * crowd), textcoords="offset points",
                    fontsize=7)
        placed.append((px, py))
