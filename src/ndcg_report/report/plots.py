"""Report figures of a run against a baseline, built on `matplotlib.figure.Figure` (no pyplot).

Every figure uses the queries averaged in both evaluations. Text taken from the data (qids, run
names) is drawn literally: usetex is off and `$` is escaped, so no math text is parsed.
"""

from __future__ import annotations

import base64
import inspect
import io

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from scipy import stats

from ndcg_report.stats.paired import paired_ndcg
from ndcg_report.errors import ParameterError
from ndcg_report.core.metrics import Evaluation, cutoff_label

RUN_COLOUR = "#0072B2"  # Okabe-Ito blue
BASELINE_COLOUR = "#D55E00"  # Okabe-Ito vermillion
WIN_COLOUR = "#009E73"  # Okabe-Ito bluish green
LOSS_COLOUR = "#D55E00"
TIE_COLOUR = "#999999"
FIGSIZE = (7.0, 4.0)
DPI = 100
MAX_QID_TICKS = 60
_RC = {"text.usetex": False, "svg.hashsalt": "ndcg-report", "svg.fonttype": "path"}


def literal(text: object) -> str:
    """`text` as a string matplotlib draws verbatim: every `$` escaped, so no math text."""
    return str(text).replace("$", r"\$")


def paired_table(run: Evaluation, baseline: Evaluation) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(run, baseline) NDCG tables (qid x cut-off label) restricted to the queries averaged in both.

    Raises ParameterError as compare.paired_ndcg does (cut-offs or policies differ, no common query).
    """
    pairs = paired_ndcg(run, baseline)
    qids = pd.Index(pd.unique(pairs["qid"]), name="qid")
    labels = [cutoff_label(k) for k in run.cutoffs]
    tables = (pairs.pivot(index="qid", columns="k", values=name).loc[qids, labels] for name in ("run", "baseline"))
    run_table, baseline_table = tables
    return run_table, baseline_table


def paired_at(run: Evaluation, baseline: Evaluation, k: str | int) -> pd.DataFrame:
    """Frame indexed by qid with columns run, baseline, delta (run - baseline) of NDCG@k."""
    label = cutoff_label(k)
    if label not in {cutoff_label(c) for c in run.cutoffs}:
        raise ParameterError(f"cut-off {label!r} was not evaluated; have {run.cutoffs}")
    pairs = paired_ndcg(run, baseline)
    return pairs[pairs["k"] == label].set_index("qid")[["run", "baseline", "delta"]]


def mean_ci(
    values: np.ndarray, confidence: float, seed: int | list[int], n_resamples: int = 9999,
) -> tuple[float, float]:
    """Seeded percentile-bootstrap CI of the mean; (mean, mean) for under two values or all equal."""
    values = np.asarray(values, dtype=float)
    if len(values) < 2 or np.all(values == values[0]):
        return float(values.mean()), float(values.mean())
    rng = np.random.default_rng(seed)
    name = "rng" if "rng" in inspect.signature(stats.bootstrap).parameters else "random_state"
    result = stats.bootstrap(
        (values,), np.mean, n_resamples=n_resamples, confidence_level=confidence,
        method="percentile", vectorized=True, batch=200, **{name: rng},
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def ndcg_by_cutoff(
    run: Evaluation, baseline: Evaluation, run_name: str, baseline_name: str,
    confidence: float = 0.95, seed: int = 42, n_resamples: int = 9999,
) -> Figure:
    """Mean NDCG@k against k (categorical axis, 'all' last) for both systems with bootstrap CI bands."""
    run_table, baseline_table = paired_table(run, baseline)
    labels = [cutoff_label(k) for k in run.cutoffs]
    x = np.arange(len(labels))
    with matplotlib.rc_context(_RC):
        figure, ax = _new_figure()
        for index, (table, name, colour, marker) in enumerate((
            (run_table, run_name, RUN_COLOUR, "o"), (baseline_table, baseline_name, BASELINE_COLOUR, "s"),
        )):
            means = table[labels].mean().to_numpy()
            bands = [mean_ci(table[label].to_numpy(), confidence, [seed, index, j], n_resamples) for j, label in enumerate(labels)]
            ax.fill_between(x, [b[0] for b in bands], [b[1] for b in bands], color=colour, alpha=0.2, linewidth=0)
            ax.plot(x, means, marker=marker, color=colour, label=literal(name))
        ax.set_xticks(x, labels)
        ax.set_xlabel("cut-off k")
        ax.set_ylabel("mean NDCG@k")
        ax.set_ylim(0, 1)
        ax.grid(axis="y", alpha=0.3)
        ax.set_title(f"Mean NDCG@k with {confidence:.0%} bootstrap CI, {len(run_table)} queries")
        ax.legend(loc="best")
    return figure


def ndcg_distribution(
    run: Evaluation, baseline: Evaluation, k: str | int, run_name: str, baseline_name: str,
) -> Figure:
    """Box plot of per-query NDCG@k of baseline and run, with every query as a jittered point."""
    pairs = paired_at(run, baseline, k)
    n = len(pairs)
    jitter = ((np.arange(n) * 0.6180339887498949) % 1.0 - 0.5) * 0.5  # golden-ratio spread, no RNG
    size, alpha = (14, 0.7) if n <= 200 else (3, max(0.05, min(0.5, 30 / np.sqrt(n))))
    with matplotlib.rc_context(_RC):
        figure, ax = _new_figure()
        columns = (("baseline", baseline_name, BASELINE_COLOUR), ("run", run_name, RUN_COLOUR))
        boxes = ax.boxplot(
            [pairs[c].to_numpy() for c, _, _ in columns], positions=[1, 2], widths=0.6,
            patch_artist=True, showfliers=False, showmeans=True, medianprops={"color": "black"},
            meanprops={"marker": "D", "markerfacecolor": "white", "markeredgecolor": "black"},
        )
        for box, (_, _, colour) in zip(boxes["boxes"], columns):
            box.set(facecolor=colour, alpha=0.25)
        for position, (column, _, colour) in zip((1, 2), columns):
            ax.scatter(position + jitter, pairs[column].to_numpy(), s=size, color=colour,
                       alpha=alpha, linewidths=0, zorder=3)
        ax.set_xticks([1, 2], [literal(name) for _, name, _ in columns])
        ax.set_ylabel(f"NDCG@{literal(k)} per query")
        ax.set_ylim(-0.03, 1.03)
        ax.grid(axis="y", alpha=0.3)
        ax.set_title(f"Distribution of NDCG@{literal(k)}, {n} queries (box: quartiles, diamond: mean)")
    return figure


def per_query_scatter(
    run: Evaluation, baseline: Evaluation, k: str | int, run_name: str, baseline_name: str,
) -> Figure:
    """Per-query NDCG@k, baseline (x) against run (y), with y = x and the counts on each side."""
    pairs = paired_at(run, baseline, k)
    above, below = int((pairs["delta"] > 0).sum()), int((pairs["delta"] < 0).sum())
    ties = len(pairs) - above - below
    colours = np.where(pairs["delta"] > 0, RUN_COLOUR, np.where(pairs["delta"] < 0, BASELINE_COLOUR, TIE_COLOUR))
    size, alpha = (20, 0.8) if len(pairs) <= 200 else (4, 0.3)
    with matplotlib.rc_context(_RC):
        figure, ax = _new_figure()
        ax.plot([0, 1], [0, 1], color="black", linewidth=0.8, linestyle="--")
        ax.scatter(pairs["baseline"].to_numpy(), pairs["run"].to_numpy(), s=size, c=list(colours),
                   alpha=alpha, linewidths=0, clip_on=False, zorder=3)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.set_xlabel(f"{literal(baseline_name)}: NDCG@{literal(k)}")
        ax.set_ylabel(f"{literal(run_name)}: NDCG@{literal(k)}")
        ax.grid(alpha=0.3)
        handles = [
            Line2D([], [], linestyle="", marker="o", color=RUN_COLOUR, label=f"{literal(run_name)} better: {above}"),
            Line2D([], [], linestyle="", marker="o", color=BASELINE_COLOUR,
                   label=f"{literal(baseline_name)} better: {below}"),
            Line2D([], [], linestyle="", marker="o", color=TIE_COLOUR, label=f"equal: {ties}"),
        ]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
        ax.set_title(f"Per-query NDCG@{literal(k)}, {len(pairs)} queries")
    return figure


def per_query_delta(
    run: Evaluation, baseline: Evaluation, k: str | int, run_name: str, baseline_name: str,
) -> Figure:
    """Bars of per-query NDCG@k difference (run - baseline), sorted descending; qid labels if <= 60."""
    pairs = paired_at(run, baseline, k)
    order = np.lexsort((np.arange(len(pairs)), -pairs["delta"].to_numpy()))  # ties keep qid order
    ordered = pairs.iloc[order]
    delta = ordered["delta"].to_numpy()
    n = len(delta)
    wins, losses = int((delta > 0).sum()), int((delta < 0).sum())
    colours = np.where(delta > 0, WIN_COLOUR, np.where(delta < 0, LOSS_COLOUR, TIE_COLOUR))
    with matplotlib.rc_context(_RC):
        figure, ax = _new_figure()
        half = 0.4 if n <= MAX_QID_TICKS else 0.5
        left, right, zero = np.arange(n) - half, np.arange(n) + half, np.zeros(n)
        corners = [(left, zero), (left, delta), (right, delta), (right, zero)]
        bars = np.stack([np.column_stack(corner) for corner in corners], axis=1)  # one rectangle per query
        ax.add_collection(PolyCollection(bars, facecolors=list(colours), linewidths=0, antialiased=n <= 1000))
        ax.set_ylim(min(delta.min(), 0.0) - 0.05, max(delta.max(), 0.0) + 0.05)
        ax.axhline(0, color="black", linewidth=0.8)
        if n <= MAX_QID_TICKS:
            ax.set_xticks(np.arange(n), [literal(q) for q in ordered.index], rotation=90, fontsize=7)
            ax.set_xlabel("query id")
        else:
            ax.set_xticks([])
            ax.set_xlabel("queries, sorted by difference")
        ax.set_xlim(-0.5, n - 0.5)
        ax.set_ylabel(f"Δ NDCG@{literal(k)} (run − baseline)")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(handles=[
            Patch(color=WIN_COLOUR, label=f"{literal(run_name)} better: {wins}"),
            Patch(color=LOSS_COLOUR, label=f"{literal(baseline_name)} better: {losses}"),
        ], loc="upper right")
        ax.set_title(f"Per-query NDCG@{literal(k)} difference, {n} queries ({n - wins - losses} equal)")
    return figure


def ndcg_ecdf(
    run: Evaluation, baseline: Evaluation, k: str | int, run_name: str, baseline_name: str,
) -> Figure:
    """Empirical CDF of per-query NDCG@k of both systems (one step per query)."""
    pairs = paired_at(run, baseline, k)
    with matplotlib.rc_context(_RC):
        figure, ax = _new_figure()
        ax.ecdf(pairs["run"].to_numpy(), color=RUN_COLOUR, label=literal(run_name))
        ax.ecdf(pairs["baseline"].to_numpy(), color=BASELINE_COLOUR, label=literal(baseline_name), linestyle="--")
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel(f"NDCG@{literal(k)}")
        ax.set_ylabel("fraction of queries ≤ x")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left")
        ax.set_title(f"ECDF of per-query NDCG@{literal(k)}, {len(pairs)} queries")
    return figure


def figure_to_png_bytes(figure: Figure) -> bytes:
    """PNG of `figure` at its dpi, with no Software/date metadata: identical bytes for identical figures."""
    buffer = io.BytesIO()
    with matplotlib.rc_context(_RC):
        figure.savefig(buffer, format="png", dpi=figure.dpi, metadata={"Software": None})
    return buffer.getvalue()


def figure_to_data_uri(figure: Figure) -> str:
    """'data:image/png;base64,...' of figure_to_png_bytes(figure), for embedding in HTML."""
    return "data:image/png;base64," + base64.b64encode(figure_to_png_bytes(figure)).decode("ascii")


def figure_to_svg(figure: Figure) -> str:
    """SVG text of `figure` with text as paths, fixed hash salt and no date: deterministic."""
    buffer = io.StringIO()
    with matplotlib.rc_context(_RC):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def _new_figure() -> tuple[Figure, Axes]:
    """A fresh 7x4 in, 100 dpi Figure with constrained layout and one Axes (no pyplot registry)."""
    figure = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    return figure, figure.add_subplot()
