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
from matplotlib.transforms import Bbox

from ndcg_report.analysis import figure_style  # figure_style.rc() looked up at each call (tests replace it)
from ndcg_report.analysis.figure_style import label, legend, literal, new_figure, set_title, system_colour
from ndcg_report.stats.agreement import LabelAgreement

MARKERS = ("o", "^", "s", "D", "v", "P", "X")
# where a point's name may go, in points from the point, tried in order: beside it, then above and below, farther out
OFFSETS = tuple((dx, dy) for distance in (1, 2, 3) for dx, dy in
                ((5, 0), (-5, 0), (5, 8), (5, -8), (-5, 8), (-5, -8), (0, 11), (0, -11))
                for dx, dy in [(dx * distance, dy * distance)])


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
    marker per set), each point named by its system where its name fits without overprinting (the
    systems whose rank moves first: _name_points), with the diagonal y = x (the same mean under both).
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
        ax.set_aspect("equal")
        ax.grid(alpha=0.3)
        ax.set_xlabel(f"{literal(measure)} under {label(reference)} (the reference)", fontsize=9)
        ax.set_ylabel(f"{literal(measure)} under the other set", fontsize=9)
        legend(ax, handles, ["same mean under both", *[label(name) for name in others]], inside="upper left")
        set_title(ax, f"System means of {len(systems)} systems: {literal(measure)} under each judgment set", fontsize=10)
        _name_points(ax, *named, _rank_moves(means, reference, systems))
    return figure


def _name_points(ax, systems: list[str], x: list[float], y: list[float], first: set[str]) -> int:
    """Each point named by its system (systems at one point named together, 'a, b'), the systems in `first`
    (those whose rank moves) placed first; a name goes to the first of OFFSETS where its box overlaps
    no name, point or legend and stays inside the axes, or is left out (their count written in the
    lower right corner). Returns how many names were left out.
    Call after everything else is drawn: the placement measures the laid-out figure."""
    at: dict[tuple[float, float], list[str]] = {}
    for system, px, py in zip(systems, x, y):
        at.setdefault((px, py), []).append(system)
    figure = ax.figure
    figure.draw_without_rendering()  # lays out the figure: the axes' place is final
    renderer = figure._get_renderer()  # noqa: SLF001 (the renderer draw_without_rendering used; no canvas needed)
    frame = ax.get_window_extent(renderer)
    scale = figure.dpi / 72  # points to pixels
    points = [ax.transData.transform(p) for p in zip(x, y)]
    note = ax.text(0.98, 0.02, "99 crowded points unnamed", transform=ax.transAxes, ha="right", va="bottom",
                   fontsize=7, color="0.35")
    note.set_in_layout(False)
    taken = [Bbox.from_extents(px - 4, py - 4, px + 4, py + 4) for px, py in points]
    taken += [artist.get_window_extent(renderer) for artist in (ax.get_legend(), note) if artist is not None]
    left_out = 0
    for (px, py), names in sorted(at.items(), key=lambda item: (not set(item[1]) & first, -item[0][1], item[0][0])):
        for dx, dy in OFFSETS:
            text = ax.annotate(label(", ".join(names), 40), (px, py), xytext=(dx, dy), textcoords="offset points",
                               fontsize=7, ha="left" if dx >= 0 else "right", va="center", annotation_clip=False)
            text.set_in_layout(False)
            box = text.get_window_extent(renderer)
            inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
            if inside and not any(box.overlaps(other) for other in taken):
                taken.append(box.expanded(1.0, 1.0).padded(0.5 * scale))
                break
            text.remove()
        else:
            left_out += 1
    if left_out:  # said in the corner kept free for it
        note.set_text(f"{left_out} crowded point{'s' if left_out > 1 else ''} unnamed")
    else:
        note.remove()
    return left_out


def _rank_moves(means: Mapping[str, Mapping[str, float]], reference: str, systems: list[str]) -> set[str]:
    """The systems whose rank (by mean, highest first) under some other set is not their rank under the reference."""
    def ranks(name: str) -> dict[str, int]:
        ordered = sorted(systems, key=lambda s: -means[name].get(s, np.nan) if np.isfinite(means[name].get(s, np.nan))
                         else np.inf)
        return {system: position for position, system in enumerate(ordered)}

    first = ranks(reference)
    return {s for name in means if name != reference for s, position in ranks(name).items() if first[s] != position}
