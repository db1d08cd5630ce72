"""What the report notebook shows: the evaluated data, checks, verdicts, tables and figures.

Every function takes the Report (or the Experiment) and returns plain data, text or escaped HTML.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ndcg_report.core.metrics import Evaluation
from ndcg_report.core.ties import TieRange
from ndcg_report.files import path_sha256, text_line_count
from ndcg_report.inputs.formats import describe_input
from ndcg_report.inputs.parquet import is_parquet, parquet_row_count
from ndcg_report.inputs.trec import Qrels
from ndcg_report.report.experiment import HEADLINE_K, Experiment, compare_runs
from ndcg_report.report.loading import load_inputs
from ndcg_report.report.html import DEEPER, escape, leaderboard_html
from ndcg_report.report.parameters import ReportParameters, build_command, default_title
from ndcg_report.stats.resampling import MONTE_CARLO, NORMAL_LIMIT
from ndcg_report.stats.tukey_hsd import STUDENTIZED_RANGE_LIMIT
from ndcg_report.version import __version__

if TYPE_CHECKING:
    from matplotlib.figure import Figure

LOW_JUDGED = 0.5
MAX_QUERY_ROWS = 500  # the all-queries table shows the top and bottom halves of this many beyond it
WINS_LOSSES_SHOWN = 10


@dataclass(frozen=True)
class Report:
    """Everything the report shows, computed once from validated parameters."""

    params: ReportParameters
    experiment: Experiment
    qrels: Qrels
    files: pd.DataFrame
    warnings: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        return self.params.title or default_title(self.experiment.names, self.experiment.baseline_name)

    @property
    def command(self) -> str:
        return self.params.command or build_command(self.params)

    @property
    def topics(self) -> pd.Series | None:
        return self.experiment.topics


# --- reading ---------------------------------------------------------------------------------


def load_report(params: ReportParameters) -> Report:
    """Read the inputs, evaluate every system and compare each with the baseline."""
    runs, baseline, qrels, topics = load_inputs(params)
    experiment = compare_runs(
        [(item.name, run) for item, run in zip(params.runs, runs)], qrels, baseline, baseline_name=params.baseline_name,
        cutoffs=params.cutoffs, gain=params.gain, missing=params.missing, no_relevant=params.no_relevant,
        seed=params.seed, topics=topics,
    )
    records = [file_record(f"run: {name}", item.path) for name, item in zip(experiment.names, params.runs)]
    baseline = file_record(f"baseline: {experiment.baseline_name}", params.baseline)
    if params.corpus is not None:  # the run is a cache entry named by its 64-hex key
        baseline["file"] = f"BM25 of {params.corpus.name} (cached run)"
    records.append(baseline)
    records += [file_record(role, path) for role, path in (("qrels", params.qrels), ("topics", params.topics),
                                                            ("corpus", params.corpus)) if path is not None]
    report = Report(params, experiment, qrels, pd.DataFrame(records))
    report.warnings.extend(data_warnings(report))
    return report


def file_record(role: str, path: Path) -> dict:
    """Role, file name, the format it was read in, sha256 of the bytes as stored (of a Parquet folder:
    over its files), and the number of lines of its text (of a Parquet file or folder: its rows)."""
    lines = parquet_row_count(path) if is_parquet(path) else text_line_count(path)
    kind = role.split(":")[0].replace("baseline", "run")
    return {"role": role, "file": path.name, "format": describe_input(path, kind), "sha256": path_sha256(path),
            "lines": lines}


# --- verdicts and data checks ------------------------------------------------------------------


def verdicts(experiment: Experiment) -> list[str]:
    """One line per system, in the order given: NDCG@headline against the baseline, the delta with
    its CI, the Holm-adjusted randomization p-value, wins/ties/losses and what it means."""
    k, base = experiment.headline_k, experiment.baseline_name
    lines = []
    for name in experiment.names:
        row = experiment.comparisons.loc[(name, k)]
        p = row["holm_randomization_pvalue"]
        if isinstance(p, float) and p < experiment.alpha:
            meaning = f"significantly {'better' if row['delta'] > 0 else 'worse'} than {base}"
        else:
            meaning = f"not significantly different from {base} at α = {experiment.alpha:g}"
        lines.append(
            f"{name}: NDCG@{k} {row['run_mean']:.4f} against {base}'s {row['baseline_mean']:.4f}, "
            f"{row['delta']:+.4f} ({_percent(row['relative_delta'])}; {experiment.confidence:.0%} CI "
            f"{_signed(row['ci_low'])} to {_signed(row['ci_high'])}); Holm-adjusted randomization "
            f"p {_p_phrase(p)}; {_count(row['wins'], 'win')}, {_count(row['ties'], 'tie')}, "
            f"{_count(row['losses'], 'loss')}: {meaning}."
        )
    return lines


def family_note(experiment: Experiment) -> str:
    """What the Holm family was, in words."""
    n, labels = len(experiment.names), experiment.labels
    return (f"Holm's adjustment runs over the whole family of {experiment.family_size} comparisons with "
            f"{experiment.baseline_name}: {n} system{'s' if n != 1 else ''} x {len(labels)} cut-off"
            f"{'s' if len(labels) != 1 else ''} ({', '.join(labels)}), separately for each test.")


def query_checks(report: Report) -> pd.DataFrame:
    """Counts of each kind of query, one column per system (the baseline last)."""
    rows = {}
    ties, k = report.experiment.tie_ranges, report.experiment.headline_k
    for name in report.experiment.systems:
        evaluation = report.experiment.evaluations[name]
        counts = evaluation.counts
        rows[name] = {
            "queries in run": counts.in_run, "queries in qrels": counts.in_qrels, "in both": counts.in_both,
            "missing from run (relevant in qrels)": counts.missing,
            "without relevant docs in qrels": counts.no_relevant, "run only (ignored)": counts.run_only,
            "averaged": counts.averaged, "lines with tied scores": evaluation.tied_lines,
            f"queries whose NDCG@{k} the order of ties changes": ties[name].queries[k] if name in ties else 0,
        }
    return pd.DataFrame(rows)


def tie_warning(name: str, ties: TieRange, evaluation: Evaluation, headline_k: str) -> str:
    """The warning for a system whose tied scores change a mean NDCG@k as printed (4 decimals): where,
    in how many queries and between which values; '' if the order of ties changes no printed mean."""
    shown = [k for k in ties.affected if f"{ties.worst[k]:.4f}" != f"{ties.best[k]:.4f}"]
    if not shown:
        return ""
    k = headline_k if headline_k in shown else shown[0]
    return (
        f"{name}: the order of tied scores changes mean NDCG@{', @'.join(shown)} ({int(ties.queries[k])} quer{'y' if ties.queries[k] == 1 else 'ies'} "
        f"at NDCG@{k}, where tied documents differ in relevance). trec_eval's order (docid descending, used "
        f"here) gives a mean NDCG@{k} of {evaluation.mean(k):.4f}; tied documents ordered worst first give "
        f"{ties.worst[k]:.4f}, best first {ties.best[k]:.4f}."
    )


def depth_table(report: Report) -> pd.DataFrame:
    """Lines per judged query each system retrieved for: min, median, max (as text: whole numbers stay whole)."""
    return report.experiment.depth().map(_number)


def label_distribution(report: Report) -> pd.DataFrame:
    """How many qrels lines carry each relevance label."""
    labels = pd.Series(report.qrels.table["rel"].to_numpy()).value_counts().sort_index()
    return pd.DataFrame({"label": [_number(v) for v in labels.index], "qrels lines": labels.to_numpy()})


def judged_table(report: Report) -> pd.DataFrame:
    """Mean judged@k (share of the top k with a qrels label), systems x cut-offs."""
    experiment = report.experiment
    table = pd.DataFrame({name: experiment.evaluations[name].summary["judged"] for name in experiment.systems}).T
    table.columns = [f"@{k}" for k in table.columns]
    return table


def data_warnings(report: Report) -> list[str]:
    """Warnings an analyst should see before trusting the numbers."""
    experiment, params = report.experiment, report.params
    warnings = []
    for name in experiment.systems:
        evaluation = experiment.evaluations[name]
        summary = evaluation.summary
        if HEADLINE_K in summary.index and summary.at[HEADLINE_K, "judged"] < LOW_JUDGED:
            warnings.append(
                f"{name}: only {summary.at[HEADLINE_K, 'judged']:.0%} of the top 10 is judged; unjudged documents "
                "count as not relevant, so NDCG@10 may understate this system."
            )
        ties = experiment.tie_ranges.get(name)
        tie_text = tie_warning(name, ties, evaluation, experiment.headline_k) if ties is not None else ""
        if tie_text:
            warnings.append(tie_text)
        shallow = experiment.shallow_cutoffs()[name]
        if shallow:
            depth = experiment.depth().loc[name]
            warnings.append(
                f"{name} retrieves {_number(depth['median'])} lines for the median query (at most "
                f"{_number(depth['max'])}): at NDCG@{', @'.join(shallow)} the ranks it never retrieved count as not "
                "relevant, so it is measured at a depth it does not reach (marked † in the tables); compare "
                f"systems at k up to {_number(depth['median'])}."
            )
        counts = evaluation.counts
        if counts.missing and counts.missing >= 0.05 * counts.in_qrels:
            policy = "scored 0" if params.missing == "zero" else "left out of the mean"
            warnings.append(f"{name}: {counts.missing} of {counts.in_qrels} judged queries are missing from the run ({policy}).")
        if counts.run_only:
            warnings.append(f"{name}: {counts.run_only} queries are in the run but not in the qrels (ignored).")
    if len(experiment.ndcg_at(experiment.headline_k)) == 0:
        warnings.append("No query is averaged in every system (with missing=skip, the runs cover different queries), "
                        "so there are no figures or pairwise tests; each system's comparison with the baseline stands.")
    no_relevant = experiment.baseline.counts.no_relevant
    if no_relevant:
        policy = "left out of the mean" if params.no_relevant == "skip" else "scored 0"
        warnings.append(f"{no_relevant} judged queries have no relevant document ({policy}).")
    return warnings


# --- tables ----------------------------------------------------------------------------------


def leaderboard(report: Report) -> str:
    """The leaderboard as escaped HTML (systems x k, significance marked, best per column bold)."""
    experiment = report.experiment
    letters = experiment.pairwise.letters if len(experiment.names) > 1 else None
    return leaderboard_html(experiment.leaderboard, experiment.significance, experiment.baseline_name,
                            experiment.headline_k, letters, experiment.shallow_cutoffs())


def leaderboard_note(report: Report) -> str:
    experiment = report.experiment
    note = (f"Mean NDCG@k of each system over its averaged queries. ▲/▼: significantly above/below "
            f"{experiment.baseline_name} (paired randomization test, Holm-adjusted, p < {experiment.alpha:g}); "
            f"bold: the best of its column. {family_note(experiment)}")
    if any(experiment.shallow_cutoffs().values()):
        note += " †: k is deeper than the system retrieves for the median query (see the data checks)."
    if len(experiment.names) > 1:
        test = experiment.pairwise
        how = (f"{test.n_resamples:,} permutations" if test.method == MONTE_CARLO
               else f"in its large-sample limit over {test.n_queries:,} queries")
        note += (f" Group: systems sharing a letter do not differ significantly at NDCG@{test.k} (randomized "
                 f"Tukey HSD over all {len(test.names)} systems, {how}, α = {test.alpha:g}).")
    statistics = statistics_note(experiment)
    return note + (" " + statistics if statistics else "")


def statistics_note(experiment: Experiment) -> str:
    """What the resampling statistics became over many queries (more than experiment.large_n): how
    many used their large-sample limits; '' when every one is Monte Carlo over all its queries."""
    c, bands = experiment.comparisons, experiment.mean_intervals
    many = [int(c["n"].max()), len(experiment.ndcg_at(experiment.labels[0]))]
    if max(many) <= experiment.large_n:
        return ""
    counts = [f"{int((column == NORMAL_LIMIT).sum())} of {len(column)} {what}" for column, what in (
        (c["randomization_method"], "randomization p-values (the normal limit of the sign flips)"),
        (c["ci_method"], "bootstrap CIs of the delta"), (bands["method"], "bootstrap bands of the means"))]
    tukey = (" and the Tukey HSD (the studentized range, with the exact permutation variance)"
             if len(experiment.names) > 1 and experiment.pairwise.method == STUDENTIZED_RANGE_LIMIT else "")
    return (f"Over more than {experiment.large_n:,} queries, a resampling statistic uses its large-sample limit "
            "wherever that is accurate to well within the Monte Carlo error of "
            f"{experiment.n_resamples:,} resamples: here {', '.join(counts[:2])} and {counts[2]}"
            f" (the normal limit of the bootstrap){tukey}; any other is Monte Carlo over the queries that can "
            "move it (see the README, 'Statistics over many queries').")


def comparison_table(report: Report, name: str) -> pd.DataFrame:
    """One system against the baseline per cut-off, with every statistic, rounded for display.

    Column labels are fixed ("system", "baseline"): the heading above the table names both, and a
    system called "delta" or "n" cannot collide with a statistic.
    """
    experiment = report.experiment
    c = experiment.comparison(name)
    columns = {
        "n": c["n"].astype(int), "system": c["run_mean"], "baseline": c["baseline_mean"],
        "delta": c["delta"], "relative": [_percent(v) for v in c["relative_delta"]],
        f"{experiment.confidence:.0%} CI of delta": [f"[{lo:+.4f}, {hi:+.4f}]" for lo, hi in zip(c["ci_low"], c["ci_high"])],
        "W/T/L": [f"{int(w)}/{int(t)}/{int(l)}" for w, t, l in zip(c["wins"], c["ties"], c["losses"])],
        "t-test p (Holm)": [_p(p, h) for p, h in zip(c["t_pvalue"], c["holm_t_pvalue"])],
        "Wilcoxon p (Holm)": [_p(p, h) for p, h in zip(c["wilcoxon_pvalue"], c["holm_wilcoxon_pvalue"])],
        "randomization p (Holm)": [_p(p, h) for p, h in zip(c["randomization_pvalue"], c["holm_randomization_pvalue"])],
        "effect size d_z": c["effect_size"],
    }
    shallow = experiment.shallow_cutoffs()
    too_deep = [[who for who, system in (("system", name), ("baseline", experiment.baseline_name))
                 if k in shallow[system]] for k in c.index]
    if any(too_deep):
        depth = experiment.depth()["median"]
        medians = {"system": depth[name], "baseline": depth[experiment.baseline_name]}
        columns["depth"] = ["; ".join(f"{DEEPER}\u00a0{who}\u00a0{_number(medians[who])}\u00a0deep" for who in whose)
                            for whose in too_deep]  # no-break spaces: the note stays on one line
    table = pd.DataFrame({key: list(values) for key, values in columns.items()},
                         index=pd.Index([f"@{k}" for k in c.index]))
    return table.round(4)


def medians_table(report: Report) -> pd.DataFrame:
    """Median per-query NDCG@k of every system (rows, the baseline last) over its averaged queries."""
    experiment = report.experiment
    table = experiment.summary["median"].unstack("k").loc[list(experiment.systems), experiment.labels]
    table.columns = [f"@{k}" for k in table.columns]
    table.index.name = None
    return table


def pairwise_table(report: Report) -> pd.DataFrame:
    """The randomized Tukey HSD p-values as text (systems by mean, best first), with means and letters.

    Built by position: a system may be called "group" without taking that column's place.
    """
    test = report.experiment.pairwise
    rows = [[f"{test.means[a]:.4f}", test.letters[a],
             *[("–" if a == b else _format_p(test.pvalues.at[a, b])) for b in test.names]] for a in test.names]
    return pd.DataFrame(rows, index=pd.Index(test.names), columns=[f"NDCG@{test.k}", "group", *test.names])


def wins_and_losses(report: Report, name: str, k: str | None = None, n: int = WINS_LOSSES_SHOWN) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The n queries a system gains most on and the n it loses most on against the baseline, at k.

    Columns: qid, query (with topics), the system's and the baseline's NDCG (headed by their names), delta.
    """
    experiment = report.experiment
    table = experiment.ndcg_at(k)
    paired = pd.DataFrame({"qid": table.index.to_numpy(), "system": table[name].to_numpy(),
                           "baseline": table[experiment.baseline_name].to_numpy()})
    paired["delta"] = paired["system"] - paired["baseline"]
    labels = ["qid", name, experiment.baseline_name, "delta"]
    if report.topics is not None:
        paired.insert(1, "query", report.topics.reindex(paired["qid"]).fillna("").to_numpy())
        labels.insert(1, "query")
    ordered = paired.sort_values(["delta", "qid"], ascending=[False, True], kind="stable")
    wins = ordered[ordered["delta"] > 0].head(n).round(4).reset_index(drop=True)
    losses = ordered[ordered["delta"] < 0].iloc[::-1].head(n).round(4).reset_index(drop=True)
    wins.columns, losses.columns = labels, list(labels)
    return wins, losses


def query_table_html(report: Report, k: str | None = None, limit: int = MAX_QUERY_ROWS) -> str:
    """Every paired query (up to limit; beyond, the best and worst halves) x every system at k: NDCG of
    the baseline and of each system (cells tinted by the difference), the mean difference, query text."""
    experiment = report.experiment
    label = experiment.headline_k if k is None else str(k)
    table = experiment.ndcg_at(label)
    deltas = experiment.deltas_at(label)
    mean_delta = deltas.mean(axis=1)
    order = np.lexsort((np.arange(len(table)), -mean_delta.to_numpy()))
    shown = order if len(order) <= limit else np.concatenate([order[: limit // 2], order[-(limit - limit // 2):]])
    base = experiment.baseline_name
    headers = ["qid"] + (["query"] if report.topics is not None else []) + [base, *experiment.names, "mean Δ"]
    head = "".join(f'<th class="{"text" if h in ("qid", "query") else "num"}">{escape(h)}</th>' for h in headers)
    rows = []
    for position, row in enumerate(shown):
        if len(shown) < len(order) and position == limit // 2:
            rows.append(f'<tr><td class="text" colspan="{len(headers)}">… {len(order) - len(shown):,} queries '
                        "in between are in per_query.csv …</td></tr>")
        qid = table.index[row]
        cells = [f'<td class="text">{escape(qid)}</td>']
        if report.topics is not None:
            cells.append(f'<td class="text query">{escape(report.topics.get(qid, ""))}</td>')
        cells.append(f'<td class="num">{table.iat[row, table.columns.get_loc(base)]:.4f}</td>')
        for name in experiment.names:
            delta = deltas.iat[row, deltas.columns.get_loc(name)]
            cells.append(f'<td class="num" style="background:{_tint(delta)}">{table.iat[row, table.columns.get_loc(name)]:.4f}</td>')
        cells.append(f'<td class="num">{mean_delta.iat[row]:+.4f}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<table class="ndcg-table queries"><thead><tr>{head}</tr></thead><tbody>' + "".join(rows)
            + "</tbody></table>")


def query_table_note(report: Report, k: str | None = None) -> str:
    experiment = report.experiment
    label = experiment.headline_k if k is None else str(k)
    n = len(experiment.ndcg_at(label))
    note = (f"Per-query NDCG@{label} of all {n:,} queries averaged in every system, sorted by the mean difference "
            f"from {experiment.baseline_name} (largest gains first). Cells are tinted green where the system beats "
            f"{experiment.baseline_name} on that query and red where it loses, darker for larger differences. "
            "per_query.csv has every query, system and cut-off.")
    if n > MAX_QUERY_ROWS:
        note += f" With more than {MAX_QUERY_ROWS} queries, the {MAX_QUERY_ROWS // 2} best and worst are shown."
    return note


def query_section_html(report: Report, k: str | None = None) -> str:
    """The all-queries table with its note; folded away (a <details>, no script) for one system,
    whose largest wins and losses come first."""
    from ndcg_report.report.html import details_html, text_html

    body = text_html(query_table_note(report, k), "p", "note") + query_table_html(report, k)
    if len(report.experiment.names) > 1:
        return body
    n = len(report.experiment.ndcg_at(report.experiment.headline_k if k is None else k))
    return details_html(f"All {n:,} queries (click to open)", body)


def parameters_table(report: Report) -> pd.DataFrame:
    """The parameters the report was built with, as a two-column table."""
    p, experiment = report.params, report.experiment
    rows = {
        "systems": ", ".join(experiment.names), "baseline": experiment.baseline_name,
        "cut-offs": ", ".join(str(k) for k in p.cutoffs), "headline cut-off": experiment.headline_k, "gain": p.gain,
        "missing queries": p.missing, "queries without relevant docs": p.no_relevant, "seed": str(p.seed),
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
    """The report's figures as (caption, PNG bytes); the multi-system ones only with two or more systems."""
    from ndcg_report.report.plots import figure_to_png_bytes

    return [(caption, figure_to_png_bytes(draw())) for caption, draw in figure_drawers(report)]


def figure_drawers(report: Report) -> list[tuple[str, Callable[[], Figure]]]:
    """(caption, function drawing the Figure) of each report figure, in report order; a figure that
    aggregates or samples its queries (over many queries, see report.plots) says so in its caption."""
    from ndcg_report.report import plots

    experiment = report.experiment
    k, base, many = experiment.headline_k, experiment.baseline_name, len(experiment.names) > 1
    if len(experiment.ndcg_at(k)) == 0:
        return []  # no query is averaged in every system: data_warnings says so
    n = len(experiment.ndcg_at(k))
    figures = [
        (f"Mean NDCG@k against k, with {experiment.confidence:.0%} bootstrap bands", experiment.plot_ndcg_by_cutoff),
        (f"Distribution of per-query NDCG@{k}" + (
            f" ({n:,} queries: boxes of every query, points for an even sample of {plots.MAX_POINTS:,})"
            if n > plots.MAX_POINTS else ""), experiment.plot_distribution),
    ]
    if many:
        bins = min(plots.HEATMAP_BINS, n)
        figures += [
            (f"Per-query NDCG@{k} minus {base}'s, systems x queries" + (
                f" ({n:,} queries, sorted by mean delta, binned: {bins} bins of about {n // bins:,}, "
                "each cell a bin's mean)" if n > plots.MAX_HEATMAP_QUERIES else ""), experiment.plot_delta_heatmap),
            (f"Queries won, tied and lost against {base} at NDCG@{k}", experiment.plot_wins_ties_losses),
            (f"Pairwise randomized Tukey HSD p-values at NDCG@{k}", experiment.plot_pairwise),
        ]
    figures += [
        (f"Per-query NDCG@{k}: {base} (x) against {'each system' if many else experiment.names[0]} (y)" + (
            f" ({n:,} queries: a 2-D histogram, colour = queries per cell)" if n > plots.MAX_POINTS else ""),
         experiment.plot_scatter),
        (f"Per-query delta NDCG@{k} (system − {base}), sorted" + (
            f" ({n:,} queries: the sorted deltas drawn as an area, their quantile curve)" if n > plots.MAX_BARS else ""),
         experiment.plot_delta_bars),
        (f"ECDF of per-query NDCG@{k}", experiment.plot_ecdf),
    ]
    return figures


# --- formatting --------------------------------------------------------------------------------


def _tint(delta: float) -> str:
    """A background colour for a per-query difference: green gains, red losses, white for none."""
    if not np.isfinite(delta) or delta == 0:
        return "#ffffff"
    strength = min(1.0, abs(delta) / 0.5)
    low, high = ((255, 255, 255), (120, 200, 140)) if delta > 0 else ((255, 255, 255), (235, 130, 110))
    rgb = [round(a + (b - a) * strength) for a, b in zip(low, high)]
    return "#" + "".join(f"{value:02x}" for value in rgb)


def _count(value: float, noun: str) -> str:
    count = int(value)
    return f"{count} {noun}" if count == 1 else f"{count} {noun}es" if noun.endswith("s") else f"{count} {noun}s"


def _percent(value: float) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:+.1%}"


def _signed(value: float) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:+.4f}"


def _p(value: float, holm: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{_format_p(value)} ({_format_p(holm)})"


def _format_p(value: float) -> str:
    if value is None or math.isnan(value):
        return "–"
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def _p_phrase(value: float) -> str:
    if value is None or math.isnan(value):
        return "not computable"
    return "< 0.0001" if value < 1e-4 else f"= {value:.4f}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
