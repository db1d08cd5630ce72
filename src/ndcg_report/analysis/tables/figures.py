"""Figures across blocks: delta per collection or group with its interval, and the critical-difference diagram.

Each returns a matplotlib Figure (no pyplot) in the look of analysis.figure_style; the numbers come
from the tidy rows of analysis.tables.blocks and from stats.across_collections.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ndcg_report.analysis import figure_style
from ndcg_report.analysis.figure_style import FIGSIZE, label, literal, new_figure, set_title, system_styles
from ndcg_report.stats.across_collections import NO_POWER, AcrossCollections

MAX_SLOT = 0.7  # share of a block's slot on the x axis its systems' markers spread over


def block_deltas(rows: pd.DataFrame, key: str, measure: str) -> Figure:
    """One panel of a block table (analysis.tables.blocks.block_rows: a suite's cells, key "collection",
    or group_table's rows, key "group"): blocks in order on the x axis; per system under test a marker
    at its delta against the baseline with its interval (ci_low..ci_high), filled where significant in
    that block's own family, hollow where not; nothing where the system is missing."""
    chosen = rows[(rows["measure"] == measure) & (rows["role"] == "run")]
    baseline_name = str(rows.loc[rows["role"] == "baseline", "system"].iloc[0])
    blocks = list(pd.unique(rows[key]))
    names = list(pd.unique(chosen["system"]))
    style = system_styles([*names, baseline_name], baseline_name)
    width = MAX_SLOT / max(len(names), 1)
    x = np.arange(len(blocks))
    with matplotlib.rc_context(figure_style.rc()):
        figure, ax = new_figure((max(FIGSIZE[0], 0.6 * len(blocks) + 2.5), FIGSIZE[1]))
        ax.axhline(0, color="black", linewidth=0.8)
        handles = []
        for position, name in enumerate(names):
            own = chosen[chosen["system"] == name].set_index(key).reindex(blocks)
            colour, marker, _ = style[name]
            offset = (position - (len(names) - 1) / 2) * width
            present = own["delta"].notna().to_numpy()
            xs, delta = x[present] + offset, own["delta"].to_numpy(dtype=float)[present]
            low, high = own["ci_low"].to_numpy(dtype=float)[present], own["ci_high"].to_numpy(dtype=float)[present]
            spans = np.isfinite(low) & np.isfinite(high)
            ax.vlines(xs[spans], low[spans], high[spans], color=colour, linewidth=1.4)
            significant = own["significant"].fillna(False).to_numpy(dtype=bool)[present]
            for filled in (True, False):
                chosen_points = significant == filled
                ax.plot(xs[chosen_points], delta[chosen_points], linestyle="none", marker=marker, markersize=7,
                        color=colour, markerfacecolor=colour if filled else "white", markeredgewidth=1.4)
            handles.append(Line2D([], [], color=colour, marker=marker, linestyle="none", markersize=7))
        long = len(blocks) > 6 or max((len(str(b)) for b in blocks), default=0) > 12
        ax.set_xticks(x, [label(block) for block in blocks], rotation=25 if long else 0, ha="right" if long else "center")
        ax.set_xlim(-0.6, len(blocks) - 0.4)
        ax.set_xlabel(key)
        ax.set_ylabel(f"delta {literal(measure)} against {label(baseline_name)}")
        ax.grid(axis="y", alpha=0.3)
        levels = sorted(set(chosen["ci_level"].dropna().round(6)))
        level = " or ".join(f"{100 * value:.4g}%" for value in levels) or "no"
        set_title(ax, f"{literal(measure)}: delta against {label(baseline_name)} per {key}, {level} CI\n"
                      f"(filled: significant, Holm within each {key})")
        ax.legend(handles, [label(name) for name in names], loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  borderaxespad=0, fontsize=9)
        return figure


def critical_difference_diagram(test: AcrossCollections) -> Figure:
    """Demšar's (2006) critical-difference diagram: the mean ranks on an axis, best (1) on the right; each
    system's name joined to its rank, the better half on the right; a bar of the critical difference
    above the axis and thick bars under it joining systems whose mean ranks differ by less (Nemenyi)."""
    ranks = test.mean_ranks.dropna().sort_values(kind="stable")
    k = max(len(test.mean_ranks), 2)
    names, values = list(ranks.index), ranks.to_numpy(dtype=float)
    half = (len(names) + 1) // 2
    depth = 0.35 + 0.08 * len(test.groups) + 0.25 * max(half, len(names) - half)
    with matplotlib.rc_context(figure_style.rc()):
        figure, ax = new_figure((FIGSIZE[0], 1.3 + 0.28 * max(half, len(names) - half) + 0.15 * len(test.groups)))
        ax.set_xlim(k + 0.1, 0.9)  # reversed: the best rank on the right, as in Demšar's diagrams
        ax.set_ylim(-depth - 0.15, 0.75)
        ax.axis("off")
        ax.hlines(0, 1, k, color="black", linewidth=1)
        for tick in range(1, k + 1):
            ax.vlines(tick, 0, 0.08, color="black", linewidth=1)
            ax.text(tick, 0.12, str(tick), ha="center", va="bottom", fontsize=9)
        for tick in np.arange(1.5, k, 1.0):
            ax.vlines(tick, 0, 0.04, color="black", linewidth=0.7)
        if np.isfinite(test.critical_difference):
            ax.hlines(0.5, 1, 1 + test.critical_difference, color="black", linewidth=1.2)
            for end in (1, 1 + test.critical_difference):
                ax.vlines(end, 0.45, 0.55, color="black", linewidth=1.2)
            ax.text(1 + test.critical_difference / 2, 0.58, f"CD = {test.critical_difference:.2f}", ha="center",
                    va="bottom", fontsize=9)
        for position, (name, rank) in enumerate(zip(names, values)):
            best_half = position < half  # the best ranks, on the right
            level = -0.3 - 0.08 * len(test.groups) - 0.25 * (position if best_half else len(names) - 1 - position)
            edge = 0.9 if best_half else k + 0.1
            ax.plot([rank, rank, edge], [0, level, level], color="black", linewidth=0.8)
            ax.text(edge + (-0.05 if best_half else 0.05), level, f"{label(name)} ({rank:.2f})",
                    ha="left" if best_half else "right", va="center", fontsize=9)
        for row, group in enumerate(test.groups):
            members = ranks[list(group)]
            ax.hlines(-0.15 - 0.08 * row, members.min() - 0.03, members.max() + 0.03, color="black", linewidth=3.5)
        verdict = {"differ": f"Friedman p {test.friedman_pvalue:.3g}", NO_POWER: "Friedman: no power, too few collections",
                   "no difference": f"Friedman p {test.friedman_pvalue:.3g}: no difference",
                   "needs 3 systems": "Friedman needs 3 systems"}[test.friedman_verdict]
        measure = f"{literal(test.measure)}: " if test.measure else ""
        set_title(ax, f"{measure}mean rank over {len(test.ranked)} collections, "
                      f"{test.posthoc} CD at α = {test.alpha:g} ({verdict})")
        return figure
