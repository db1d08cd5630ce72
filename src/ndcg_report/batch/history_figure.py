"""The index's history figure of a report, and what it reads of a history record (a system's mean, a test).

Left: the headline measure of every system and of the baseline per build, a gated build that regressed
marked; right: the best system's delta with its CI. Made with matplotlib's Figure API, deterministic
(figure_style.RC, no PNG metadata), memoised: the index is rewritten after every report.
"""

from __future__ import annotations

import functools
import json
import math

SIGNIFICANCE = 0.05
REGRESSION_COLOUR = "#b42318"  # the index's colour of a failure


def measure_label(record: dict) -> str:
    """The headline measure of a history record: its label ('nDCG@10', 'RR@10'); a record written
    before other measures existed names only its nDCG cut-off."""
    return str(record.get("measure") or f"nDCG@{record.get('k', '10')}")

def system_mean(record: dict, name: str) -> float:
    """The headline measure of the named system in a history record (a one-run record: its run_mean if it is that run); NaN if absent."""
    for system in record.get("systems") or ():
        if system.get("name") == name:
            return number(system.get("run_mean"))
    return number(record.get("run_mean")) if record.get("run_name") == name else math.nan

def history_data_uri(history: tuple[dict, ...]) -> str:
    """PNG data URI of the history figure (memoised: the index is rewritten after every report)."""
    return _history_data_uri(json.dumps(history, sort_keys=True, default=str))

@functools.lru_cache(maxsize=256)
def _history_data_uri(history_json: str) -> str:
    from ndcg_report.analysis.figure_style import figure_to_data_uri

    return figure_to_data_uri(history_figure(tuple(json.loads(history_json))))

def history_figure(history: tuple[dict, ...]):
    """Left: the headline measure of every system of the latest build and of the baseline per build, each gated
    build that regressed marked (a red band, in the legend); right: the best system's delta with its 95% CI (filled =
    significant) per build."""
    import matplotlib
    from matplotlib.figure import Figure

    from ndcg_report.analysis.figure_style import RC, BASELINE_COLOUR, MARKERS, RUN_COLOUR, literal, system_colour

    x = list(range(1, len(history) + 1))
    k = literal(measure_label(history[-1]))
    best = history[-1].get("run_name") or "run"
    names = [system.get("name") for system in history[-1].get("systems") or ()] or [best]
    base = [number(r.get("baseline_mean")) for r in history]
    best_delta = [_delta_of(r, best) for r in history]
    delta = [d[0] for d in best_delta]
    low = [d[0] - d[1] for d in best_delta]
    high = [d[2] - d[0] for d in best_delta]
    ticks = _tick_positions(len(history))
    labels = tick_labels([history[i - 1].get("time", "") for i in ticks])
    with matplotlib.rc_context(RC):
        figure = Figure(figsize=(9.6, 2.8), dpi=100, layout="constrained")
        left, right = figure.subplots(1, 2, width_ratios=(3, 2))
        values = [v for v in base if not math.isnan(v)]
        handles, legend_labels = [], []
        for position, name in enumerate(names):
            means = [system_mean(r, name) for r in history]
            values += [v for v in means if not math.isnan(v)]
            handles += left.plot(x, means, marker=MARKERS[position % len(MARKERS)], color=system_colour(position),
                                 linewidth=1.6 if name == best else 1.0)
            legend_labels.append(literal(_short_name(str(name))))
        handles += left.plot(x, base, marker="s", color=BASELINE_COLOUR, linestyle="--")
        legend_labels.append(literal(_short_name(str(history[-1].get("baseline_name") or "baseline"))))
        regressed = [xi for xi, r in zip(x, history) if _gate_status(r) == "regression"]
        for xi in regressed:  # a band behind each build the gate found a regression in: no system's marker
            band = left.axvspan(xi - 0.4, xi + 0.4, color=REGRESSION_COLOUR, alpha=0.15, linewidth=0, zorder=0)
        if regressed:
            handles.append(band)
            legend_labels.append("gate: regression")
        if values:
            span = max(values) - min(values)
            pad = max(0.02, 0.15 * span)
            left.set_ylim(max(0.0, min(values) - pad), min(1.0, max(values) + pad))
        left.set_ylabel(k)
        left.set_title(f"Mean {k} per build", fontsize=10)
        # beside the axes, never over the points; handles and labels explicit: a name starting with '_' stays
        left.legend(handles, legend_labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
                    fontsize=7 if len(legend_labels) > 4 else 8)
        right.axhline(0.0, color="#999999", linewidth=0.8)
        for i, (xi, d, r) in enumerate(zip(x, delta, history)):
            significant = best_delta[i][3]
            right.errorbar([xi], [d], yerr=[[low[i]], [high[i]]], fmt="o", color=RUN_COLOUR, capsize=3,
                           markerfacecolor=RUN_COLOUR if significant else "white")
        right.set_ylabel(f"delta of {literal(_short_name(best))}", fontsize=8)
        right.set_title("Best system's delta over collections\n(filled: Wilcoxon over collections, Holm)"
                        if history[-1].get("kind") == "suite" else
                        "Best system's delta, 95% CI (unadjusted)\n(filled: p < 0.05, Holm)", fontsize=9)
        for ax in (left, right):
            ax.set_xticks(ticks, labels, fontsize=7, rotation=30, ha="right")
            ax.set_xlim(0.5, len(history) + 0.5)
            ax.set_xlabel("build", fontsize=8)
            ax.grid(axis="y", alpha=0.3)
    return figure

def _gate_status(record: dict) -> str:
    """The status of a history record's gate ('' if it was not gated)."""
    gate = record.get("gate")
    return gate.get("status", "") if isinstance(gate, dict) else ""


def _delta_of(record: dict, name: str) -> tuple[float, float, float, bool]:
    """(delta, CI low, CI high, significant) of the named system in a history record (NaN if absent)."""
    for system in record.get("systems") or ():
        if system.get("name") == name:
            return (number(system.get("delta")), number(system.get("ci_low")), number(system.get("ci_high")),
                    is_significant(system))
    if record.get("systems") and record.get("run_name") != name:
        return math.nan, math.nan, math.nan, False
    return (number(record.get("delta")), number(record.get("ci_low")), number(record.get("ci_high")),
            is_significant(record))

def _short_name(name: str, most: int = 24) -> str:
    return name if len(name) <= most else name[: most - 1] + "…"

def _tick_positions(n: int, most: int = 8) -> list[int]:
    if n <= most:
        return list(range(1, n + 1))
    step = math.ceil(n / most)
    positions = list(range(n, 0, -step))[::-1]
    return positions

def _tick_label(time: str, seconds: bool = False) -> str:
    """'2026-11-23T11:40:02Z' -> '11-23 11:40' (with seconds: '11-23 11:40:02')."""
    return f"{time[5:10]} {time[11:19 if seconds else 16]}" if len(time) >= 16 else time

def tick_labels(times: list[str]) -> list[str]:
    """The builds' tick labels: to the minute, to the second where two builds share a minute, and
    numbered (`#2`) where they share even that, so no two ticks read alike."""
    labels = [_tick_label(time) for time in times]
    if len(set(labels)) < len(labels):
        labels = [_tick_label(time, seconds=True) for time in times]
    seen: dict[str, int] = {}
    unique = []
    for text in labels:
        seen[text] = seen.get(text, 0) + 1
        unique.append(text if seen[text] == 1 else f"{text} #{seen[text]}")
    return unique

def is_significant(record: dict) -> bool:
    """Whether a record's (or a system's) comparison is significant: Holm randomization p below SIGNIFICANCE;
    a suite's, its verdict over collections."""
    over = record.get("over_collections")
    if isinstance(over, dict):
        return over.get("verdict") in ("better", "worse")
    p = record.get("holm_randomization_pvalue")
    return isinstance(p, (int, float)) and p < SIGNIFICANCE

def number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan
