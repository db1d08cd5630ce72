"""The report's data checks: queries, depth, labels, judged@k, and the warnings to read first.

Queries: what kinds each system has; judged@k: how much of each top k is judged; the warnings: those an
analyst should read before trusting the numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ndcg_report.core.measures.names import Measure, level_text
from ndcg_report.core.conventions import left_out_counts
from ndcg_report.core.evaluation import Evaluation
from ndcg_report.core.relevance_level import binary_nothing_relevant
from ndcg_report.core.ties import TieRange
from ndcg_report.core.toplists import pool_query_counts
from ndcg_report.analysis.text import number

if TYPE_CHECKING:
    from ndcg_report.analysis.experiment import Experiment
    from ndcg_report.analysis.report_model import Report

LOW_JUDGED = 0.5
JUDGED_DEPTH = 10  # the depth whose judged share is warned about


def query_checks(report: "Report") -> pd.DataFrame:
    """Counts of each kind of query, one column per system (the baseline last)."""
    experiment = report.experiment
    rows = {}
    ties, headline = experiment.tie_ranges, experiment.headline
    binary = any(measure.kind == "binary" for measure in experiment.measures)
    for name in experiment.systems:
        evaluation = experiment.evaluations[name]
        counts = evaluation.counts
        rows[name] = {
            "queries in run": counts.in_run, "queries in qrels": counts.in_qrels, "in both": counts.in_both,
            "missing from run (relevant in qrels)": counts.missing,
            "without relevant docs in qrels": counts.no_relevant,
            **({f"without a label >= {level_text(evaluation.rel_level)} (binary measures)": counts.below_level}
               if binary else {}),
            "run only (ignored)": counts.run_only,
            "averaged (in some measure)": counts.averaged, "lines with tied scores": evaluation.tied_lines,
            f"queries whose {headline.label} the order of ties changes":
                ties[name].queries[headline.label] if name in ties else 0,
        }
    return pd.DataFrame(rows)


def tie_warning(name: str, ties: TieRange, evaluation: Evaluation, headline: Measure) -> str:
    """The warning for a system whose tied scores change a mean as printed (4 decimals): which measures,
    in how many queries and between which values; '' if the order of ties changes no printed mean."""
    shown = [label for label in ties.affected if f"{ties.worst[label]:.4f}" != f"{ties.best[label]:.4f}"]
    if not shown:
        return ""
    label = headline.label if headline.label in shown else shown[0]
    queries = int(ties.queries[label])
    return (
        f"{name}: the order of tied scores changes the mean {', '.join(shown)} ({queries} quer{'y' if queries == 1 else 'ies'} "
        f"at {label}, where tied documents differ in relevance). trec_eval's order (docid descending, used "
        f"here) gives a mean {label} of {evaluation.mean(label):.4f}; tied documents ordered worst first give "
        f"{ties.worst[label]:.4f}, best first {ties.best[label]:.4f}."
    )


def depth_table(report: "Report") -> pd.DataFrame:
    """Lines per judged query each system retrieved for: min, median, max (as text: whole numbers stay whole)."""
    return report.experiment.depth().map(number)


def label_distribution(report: "Report") -> pd.DataFrame:
    """How many qrels lines carry each relevance label."""
    labels = pd.Series(report.qrels.table["rel"].to_numpy()).value_counts().sort_index()
    return pd.DataFrame({"label": [number(v) for v in labels.index], "qrels lines": labels.to_numpy()})


def pool_note(report: "Report") -> str:
    """The unjudged pool in one sentence of HTML, with a link to unjudged.tsv beside the report."""
    experiment = report.experiment
    pool = experiment.unjudged_pool()
    queries, without = pool_query_counts(pool, experiment.qrels.table)
    none = f" ({without:,} of them with no judgement at all: they are not evaluated)" if without else ""
    return (f'<p class="note">Unjudged pool: {pool.num_rows:,} documents in the top {experiment.drilldown_depth} of some '
            f"system or the baseline have no label, over {queries:,} queries{none}; they count as not relevant. "
            '<a href="unjudged.tsv">unjudged.tsv</a> lists them for the next judging round (by query, the documents '
            "more systems retrieved and higher first; the systems that did).</p>")


def judged_share(evaluation: Evaluation, k: int | None) -> float:
    """Mean judged@k over the queries the run retrieved for (NaN if none)."""
    shares = evaluation.judged_at(k)[evaluation.in_run]
    return float(np.nanmean(shares)) if np.isfinite(shares).any() else float("nan")


def judged_table(report: "Report") -> pd.DataFrame:
    """Mean judged@k (share of the top k with a qrels label) over the queries each system retrieved for,
    systems x the cut-offs of the measures (all retrieved documents if no measure has a cut-off)."""
    experiment = report.experiment
    depths = [k for k in experiment.baseline.depths if k is not None] or [None]
    return pd.DataFrame({"all" if k is None else f"@{k}": [judged_share(experiment.evaluations[name], k)
                                                          for name in experiment.systems] for k in depths},
                        index=list(experiment.systems))


def data_warnings(report: "Report") -> list[str]:
    """Warnings an analyst should see before trusting the numbers."""
    experiment, params = report.experiment, report.params
    headline = experiment.headline
    depth = JUDGED_DEPTH if JUDGED_DEPTH in experiment.baseline.depths else headline.depth
    warnings = []
    for name in experiment.systems:
        evaluation = experiment.evaluations[name]
        share = judged_share(evaluation, depth) if depth is not None else float("nan")
        if share < LOW_JUDGED:
            warnings.append(
                f"{name}: only {share:.0%} of the top {depth} is judged; unjudged documents count as not relevant, "
                f"so {headline.label} may understate this system (unjudged.tsv lists them for judging; "
                "--judged-only shows nDCG over the judged documents alone beside it)."
            )
        ties = experiment.tie_ranges.get(name)
        tie_text = tie_warning(name, ties, evaluation, headline) if ties is not None else ""
        if tie_text:
            warnings.append(tie_text)
        shallow = experiment.shallow_measures()[name]
        if shallow:
            lines = experiment.depth().loc[name]
            warnings.append(
                f"{name} retrieves {number(lines['median'])} lines for the median query (at most "
                f"{number(lines['max'])}): at {', '.join(m.label for m in shallow)} the ranks it never retrieved "
                "count as not relevant, so it is measured at a depth it does not reach (marked † in the tables); "
                f"compare systems at k up to {number(lines['median'])}."
            )
        counts = evaluation.counts
        if counts.missing and counts.missing >= 0.05 * counts.in_qrels:
            policy = "scored 0" if params.missing == "zero" else "left out of the mean"
            warnings.append(f"{name}: {counts.missing} of {counts.in_qrels} judged queries are missing from the run ({policy}).")
        if counts.run_only:
            warnings.append(f"{name}: {counts.run_only} queries are in the run but not in the qrels (ignored).")
    if len(experiment.scores(headline)) == 0:
        warnings.append("No query is averaged in every system (with missing=skip, the runs cover different queries), "
                        "so there are no figures or pairwise tests; each system's comparison with the baseline stands.")
    warnings += _relevance_warnings(report)
    warnings += averaging_warnings(experiment)
    warnings += glyph_warnings(report)
    return warnings


def glyph_warnings(report: "Report") -> list[str]:
    """A line per name shown in the figures (systems, judgment sets, query groups) with characters the
    figures' font cannot draw: there they are empty boxes (the tables show them)."""
    from ndcg_report.analysis.figure_style import missing_glyphs

    experiment = report.experiment
    names = list(experiment.systems)
    if experiment.judgments is not None:
        names += [judgment_set.name for judgment_set in experiment.judgments.sets]
    if experiment.groups is not None:
        names += [str(group) for group in dict.fromkeys(experiment.groups.to_numpy().tolist())]
    return [f"{name}: the figures' font has no glyph for {' '.join(chars)}, drawn there as an empty box (the tables "
            "show the name as given)." for name, chars in missing_glyphs(names).items()]


def averaging_warnings(experiment: Experiment) -> list[str]:
    """Per system whose means another averaging rule would change: both means of each measure shown
    that changes (this report's, and trec_eval -c's, or, when this report averages as trec_eval -c,
    those leaving out the queries with nothing relevant), each named; and the run lines dropped as
    their docid is their qid."""
    policies = experiment.averaging
    as_trec_eval = policies.missing == "zero" and policies.no_relevant == "zero"
    origin = "given" if policies.given or not policies.source else f"as the preset {policies.source} does"
    shown = [m for m in experiment.measures if m.kind != "count"]
    warnings = []
    for name in experiment.systems:
        evaluation = experiment.evaluations[name]
        if as_trec_eval:
            other = {"no_relevant": "skip"}
            left = _left_out(evaluation, shown, "zero", "skip")
            rules = "as trec_eval -c counts them (scored 0; the means this report shows) and leaving them out"
        else:
            other = {"missing": "zero", "no_relevant": "zero"}
            left = _left_out(evaluation, shown, policies.missing, policies.no_relevant)
            rules = (f"as this report averages ({origin}) and as trec_eval -c counts them (every judged "
                     "query, scored 0 where nothing is relevant or the run lacks it)")
        changed = [(m, evaluation.mean(m), evaluation.mean_with(m, **other)) for m in shown]
        changed = [(m, a, b) for m, a, b in changed if f"{a:.4f}" != f"{b:.4f}"]
        if changed:
            warnings.append(f"{name}: {left}. Means {rules}: "
                            + ", ".join(f"{m.label} {a:.4f} and {b:.4f}" for m, a, b in changed) + ".")
        if evaluation.identical_dropped:
            warnings.append(f"{name}: {evaluation.identical_dropped} run line(s) whose docid is their qid were dropped "
                            f"before evaluating ({origin}: BEIR's ignore_identical_ids; --identical-ids keep "
                            "counts them).")
    return warnings


def _left_out(evaluation: Evaluation, measures: list[Measure], missing: str, no_relevant: str) -> str:
    """'1 judged query has no label >= 2 (the binary measures)': what these policies leave out of the
    means that trec_eval -c counts (core.conventions.left_out_counts)."""
    counts = left_out_counts(evaluation, measures, missing, no_relevant)
    parts = []
    if "missing" in counts:
        parts.append(f"{counts['missing']} judged {'query is' if counts['missing'] == 1 else 'queries are'} "
                     "missing from the run")
    if "graded" in counts:
        parts.append(_queries(counts["graded"], "no positive label (nDCG)"))
    if "binary" in counts:
        parts.append(_queries(counts["binary"], f"no label >= {level_text(evaluation.rel_level)} (the binary measures)"))
    return "; ".join(parts) or "no judged query changes"


def _queries(count: int, what: str) -> str:
    return f"{count} judged {'query has' if count == 1 else 'queries have'} {what}"


def _relevance_warnings(report: "Report") -> list[str]:
    """What the qrels' labels mean for the measures: queries with nothing relevant, a relevance level no
    label reaches, and binary labels, where nDCG carries the signal of recall and RR."""
    experiment, params = report.experiment, report.params
    kinds = {measure.kind for measure in experiment.measures}
    counts, level = experiment.baseline.counts, level_text(experiment.rel_level)
    policy = "left out of the means" if params.no_relevant == "skip" else "scored 0"
    warnings = []
    if counts.no_relevant and "graded" in kinds:
        warnings.append(f"{counts.no_relevant} judged queries have no relevant document ({policy}).")
    labels = report.qrels.table["rel"].to_numpy()
    if binary_nothing_relevant(experiment.baseline):  # evaluate and compare_runs warn on the same condition
        if not (labels >= experiment.rel_level).any():
            warnings.append(f"No judgement reaches the relevance level {level} (the largest label is "
                            f"{number(labels.max())}): every binary measure ({', '.join(sorted(kinds_of(experiment, 'binary')))}) "
                            f"counts nothing as relevant; give a lower level (-l).")
        else:
            warnings.append(f"{counts.below_level} judged queries have no document labelled {level} or more: the binary "
                            f"measures ({', '.join(sorted(kinds_of(experiment, 'binary')))}) find nothing relevant there "
                            f"({policy}).")
    if "graded" in kinds and len(labels) and np.isin(labels[labels > 0], (1.0,)).all():
        warnings.append("Every judgement is 0 or 1 (binary labels): nDCG@k then reduces to a discounted count of the "
                        "relevant documents in the top k and carries much the same signal as R@k and RR; graded "
                        "labels are what nDCG adds.")
    return warnings


def kinds_of(experiment: object, kind: str) -> set[str]:
    """The families of the experiment's measures of one kind ('binary': {'AP', 'RR', ...})."""
    return {measure.measure for measure in experiment.measures if measure.kind == kind}  # type: ignore[attr-defined]
