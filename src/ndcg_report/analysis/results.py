"""The report's results: verdicts, leaderboard, comparison tables, pairwise test, per-query tables.

A comparison table per system; each as text, DataFrames and escaped HTML.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ndcg_report.core.measures.names import DEPTH_RATIO, Measure, level_text
from ndcg_report.analysis.drilldown import MAX_DRILLDOWNS, anchor, drilldown_queries
from ndcg_report.analysis.experiment import Experiment
from ndcg_report.analysis.tables.comparisons import compared_pairs, comparison_table, randomization_floors
from ndcg_report.analysis.tables.groups import NO_GROUP
from ndcg_report.analysis.html import details_html, escape, leaderboard_html, text_html
from ndcg_report.analysis.text import count_phrase, format_p, number, p_phrase, percent, signed, tint
from ndcg_report.stats.resampling import MONTE_CARLO, NORMAL_LIMIT, pvalue_floor
from ndcg_report.stats.tukey_hsd import STUDENTIZED_RANGE_LIMIT

if TYPE_CHECKING:
    from ndcg_report.analysis.report_model import Report

MAX_QUERY_ROWS = 500  # the all-queries table shows the top and bottom halves of this many beyond it
WINS_LOSSES_SHOWN = 10


# --- verdicts ----------------------------------------------------------------------------------


def verdicts(experiment: Experiment) -> list[str]:
    """One line per system, in the order given: the headline measure against the baseline, the delta
    with its family-adjusted interval, the Holm-adjusted randomization p-value, wins/ties/losses and
    what it means; where interval and test disagree, the line says why."""
    measure, base = experiment.headline, experiment.baseline_name
    lines = []
    for name in experiment.names:
        row = experiment.comparison_row(name, measure)
        p, (_, floor) = row["holm_randomization_pvalue"], randomization_floors(experiment, row["randomization_method"])
        significant = isinstance(p, float) and p < experiment.alpha
        if significant:
            meaning = f"significantly {'better' if row['delta'] > 0 else 'worse'} than {base}"
        else:
            meaning = f"not significantly different from {base} at α = {experiment.alpha:g}"
        low, high = row["family_ci_low"], row["family_ci_high"]
        lines.append(
            f"{name}: {measure.label} {row['run_mean']:.4f} against {base}'s {row['baseline_mean']:.4f}, "
            f"{row['delta']:+.4f} ({percent(row['relative_delta'])}; {interval_name(experiment)} "
            f"{signed(low)} to {signed(high)}); Holm-adjusted randomization p {p_phrase(p, floor)}; "
            f"{count_phrase(row['wins'], 'win')}, {count_phrase(row['ties'], 'tie')}, "
            f"{count_phrase(row['losses'], 'loss')}: {meaning}." + _disagreement(low, high, significant)
            + depth_note(experiment, name)
        )
    return lines


def depth_note(experiment: Experiment, name: str) -> str:
    """A sentence when a system and the baseline were retrieved to different depths (their median lines
    per judged query differ by more than DEPTH_RATIO): a measure past the shallower one's depth counts
    the ranks it did not retrieve as not relevant, so the comparison is not like with like; '' otherwise."""
    depth = experiment.depth()["median"]
    mine, theirs = float(depth[name]), float(depth[experiment.baseline_name])
    if min(mine, theirs) >= DEPTH_RATIO * max(mine, theirs):
        return ""
    shallow, deep = (name, experiment.baseline_name) if mine < theirs else (experiment.baseline_name, name)
    return (f" {shallow} was retrieved to depth {number(min(mine, theirs))} and {deep} to "
            f"{number(max(mine, theirs))} (median lines per judged query): past depth {number(min(mine, theirs))} "
            f"{shallow}'s unretrieved ranks count as not relevant, so measures without a cut-off (AP, RR, R-prec, "
            "nDCG, bpref) and cut-offs deeper than that favour the deeper run.")


def interval_name(experiment: Experiment) -> str:
    """'95% CI', or with several systems '98.75% CI (Bonferroni over 4 systems)'."""
    m = experiment.family_size
    if m == 1:
        return f"{experiment.confidence:.0%} CI"
    return f"{_level(family_level(experiment))} CI (Bonferroni over {m} systems)"


def _level(level: float) -> str:
    """0.9875 -> '98.75%', 0.95 -> '95%'."""
    return f"{100 * level:.4f}".rstrip("0").rstrip(".") + "%"


def _disagreement(low: float, high: float, significant: bool) -> str:
    """A sentence where the interval and the verdict seem to disagree, saying why; '' otherwise."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return ""
    excludes_zero = low > 0 or high < 0
    if excludes_zero and not significant:
        return (" The interval excludes 0 but the test does not reject: the bootstrap interval of the mean and the "
                "randomization test differ near the threshold; the verdict follows the test.")
    if significant and not excludes_zero:
        return (" The interval includes 0 but the test rejects: Holm's step-down adjustment is less conservative "
                "than the Bonferroni interval; the verdict follows the test.")
    return ""


def family_note(experiment: Experiment) -> str:
    """The family, the test and the correction of the verdicts and the ▲/▼ marks, in one sentence."""
    m, base = experiment.family_size, experiment.baseline_name
    systems = f"the {m} systems" if m > 1 else "the one system"
    return (f"Each verdict and mark is a paired randomization test ({experiment.n_resamples:,} sign flips, seed "
            f"{experiment.seed}) against {base}, Holm-adjusted over {systems} compared with {base} on the same "
            f"measure and cut-off (a family per measure, so asking for more measures or cut-offs changes no verdict), "
            f"at α = {experiment.alpha:g}; the verdicts' intervals are bootstrap intervals of the mean delta"
            + (f" at the Bonferroni-adjusted level for {m} systems." if m > 1 else "."))


def verdicts_note(experiment: Experiment) -> str:
    """The note under the verdicts: family_note, and with several systems which interval is which."""
    m = experiment.family_size
    if m == 1:
        return family_note(experiment)
    return (family_note(experiment) + f" The comparison tables below give the same deltas their "
            f"{experiment.confidence:.0%} CI of one comparison alone (unadjusted, as the batch index does), "
            f"narrower than the verdicts' {_level(family_level(experiment))}.")


def family_level(experiment: Experiment) -> float:
    """The confidence of the verdicts' intervals: 1 - (1 - confidence) / the systems compared with the baseline."""
    return 1 - (1 - experiment.confidence) / experiment.family_size


def comparisons_note(report: "Report") -> str:
    """The note above the comparison tables: what their interval is, beside the verdicts'."""
    experiment = report.experiment
    m, confidence = experiment.family_size, f"{experiment.confidence:.0%}"
    note = (f"Each table: one system against {experiment.baseline_name} on every measure, over the queries "
            f"averaged in both. Its {confidence} CI of delta is the bootstrap interval of the mean delta")
    if m == 1:
        note += ", the verdict's interval too."
    else:
        note += (f" of that one comparison, unadjusted (the batch index shows it too). The verdict at the top "
                 f"gives the headline delta a {_level(family_level(experiment))} CI instead, Bonferroni-adjusted over "
                 f"the {m} systems so that it matches the verdict's family-wise (Holm-adjusted) test: wider, on purpose.")
    return note + several_baselines_note(experiment)


def several_baselines_note(experiment: Experiment) -> str:
    """With several baselines, the sentence saying that each system is compared with each, and each baseline's
    Holm family; '' with one."""
    if not experiment.more_baselines:
        return ""
    families = "; ".join(f"{base}: the {len(experiment.systems) - 1} other systems" for base in experiment.baselines)
    return (f" With {len(experiment.baselines)} baselines ({', '.join(experiment.baselines)}), every system is compared "
            f"with each, and each baseline is its own Holm family ({families}), so each baseline's p-values are "
            f"those of a report against it alone; the verdicts, the figures, the groups and the judges compare with "
            f"the first, {experiment.baseline_name}.")


# --- leaderboard -------------------------------------------------------------------------------


def leaderboard(report: "Report") -> str:
    """The leaderboard as escaped HTML (systems x measures, significance marked, best per column bold)."""
    experiment = report.experiment
    letters = experiment.pairwise.letters if len(experiment.names) > 1 else None
    return leaderboard_html(experiment.leaderboard, experiment.significance, experiment.baseline_name,
                            experiment.headline, letters, experiment.shallow_measures(), measures=experiment.measures,
                            others={name: experiment.significance_with(name) for name in experiment.more_baselines})


def leaderboard_note(report: "Report") -> str:
    experiment = report.experiment
    shared = {measure: len(experiment.scores(measure)) for measure in experiment.measures}
    counts = sorted(set(shared.values()))
    over = (f"the {counts[0]:,} queries every system is averaged on" if len(counts) == 1
            else "the queries every system is averaged on for that measure")
    note = (f"Mean of each measure over {over}; binary measures count a label >= {level_text(experiment.rel_level)} "
            f"as relevant, nDCG uses the graded labels. {marks_legend(experiment)}; "
            f"bold: the best of its column. {family_note(experiment)}{several_baselines_note(experiment)}")
    if any(experiment.shallow_measures().values()):
        note += " †: k is deeper than the system retrieves for the median query (see the data checks)."
    if len(experiment.names) > 1:
        test = experiment.pairwise
        how = (f"{test.n_resamples:,} permutations" if test.method == MONTE_CARLO
               else f"in its large-sample limit over {test.n_queries:,} queries")
        note += (f" Group: systems sharing a letter do not differ significantly on {test.label} (randomized "
                 f"Tukey HSD over all {len(test.names)} systems, {how}, α = {test.alpha:g}); a compact letter "
                 "display, unlike the superscript letters of the paper tables (leaderboard.tex, leaderboard.md), "
                 "where a letter names one system.")
        both = marks_and_letters_note(experiment)
        note += (" " + both) if both else ""
    own = own_means_note(experiment)
    statistics = statistics_note(experiment)
    return note + (" " + own if own else "") + (" " + statistics if statistics else "")


def marks_legend(experiment: Experiment) -> str:
    """What ▲/▼ say: against the baseline, or with several, against the baseline of each mark's number."""
    if not experiment.more_baselines:
        return f"▲/▼: significantly above/below {experiment.baseline_name}"
    numbered = ", ".join(f"{i} {name}" for i, name in enumerate(experiment.baselines, start=1))
    return f"▲n/▼n: significantly above/below baseline n ({numbered})"


def marked_sharing_a_letter(experiment: Experiment) -> list[str]:
    """The systems marked ▲/▼ against the baseline on the headline measure that share a letter of the
    pairwise test with it (the two tests disagree, both rightly)."""
    if len(experiment.names) < 2:
        return []
    letters, base = experiment.pairwise.letters, experiment.baseline_name
    marks = experiment.significance[experiment.headline.label]  # a column: systems under test
    return [name for name in experiment.names
            if marks[name] != 0 and set(letters.get(name, "")) & set(letters.get(base, ""))]


def _tests_differ(experiment: Experiment) -> str:
    """Why a ▲/▼ and a shared letter are both right."""
    m, k = experiment.family_size, len(experiment.names) + 1
    return (f"both are right, as they are different tests: a mark is the randomization test of one system "
            f"against {experiment.baseline_name} (Holm over the {m} comparisons with it), the letters are the "
            f"Tukey HSD over all {k * (k - 1) // 2} pairs of the {k} systems at once, which guards more "
            "comparisons and so needs a larger difference")


def marks_and_letters_note(experiment: Experiment) -> str:
    """Where a system is marked ▲/▼ against the baseline on the headline and still shares a letter with it: the
    sentence saying so and why; '' where the two tests agree."""
    names = marked_sharing_a_letter(experiment)
    if not names:
        return ""
    who = ", ".join(names)
    verb = "is" if len(names) == 1 else "are"
    return (f"On {experiment.headline.label}, {who} {verb} marked ▲/▼ against {experiment.baseline_name} yet "
            f"share{'s' if len(names) == 1 else ''} a letter with it: {_tests_differ(experiment)}.")


def own_means_note(experiment: Experiment) -> str:
    """Each system's mean over its own queries, where it differs from the leaderboard's shared queries."""
    parts = []
    for name in experiment.systems:
        evaluation = experiment.evaluations[name]
        for j, measure in enumerate(experiment.measures):
            own_n = int(evaluation.averaged[:, j].sum())
            shared = experiment.scores(measure)
            if own_n != len(shared):
                parts.append(f"{name} {measure.label} {evaluation.mean(measure):.4f} over {own_n:,}")
    if not parts:
        return ""
    return ("The systems are averaged on different queries (--missing skip): each one's mean over its own "
            "queries is " + "; ".join(parts[:12]) + ("; …" if len(parts) > 12 else "") + " (summary.json has all).")


def statistics_note(experiment: Experiment) -> str:
    """What the resampling statistics became over many queries (more than experiment.large_n): how
    many used their large-sample limits; '' when every one is Monte Carlo over all its queries."""
    c = experiment.comparisons
    many = [int(c["n"].max()), len(experiment.scores(experiment.headline))]
    if max(many) <= experiment.large_n:
        return ""
    bands = experiment.mean_intervals
    counts = [f"{int((column == NORMAL_LIMIT).sum())} of {len(column)} {what}" for column, what in (
        (c["randomization_method"], "randomization p-values (the normal limit of the sign flips)"),
        (c["ci_method"], "bootstrap CIs of the delta"), (bands["method"], "bootstrap bands of the means"))]
    tukey = (" and the Tukey HSD (the studentized range, with the exact permutation variance)"
             if len(experiment.names) > 1 and experiment.pairwise.method == STUDENTIZED_RANGE_LIMIT else "")
    return (f"Over more than {experiment.large_n:,} queries, a resampling statistic uses its large-sample limit "
            "wherever that is accurate to well within the Monte Carlo error of "
            f"{experiment.n_resamples:,} resamples: here {', '.join(counts[:2])} and {counts[2]}"
            f" (the normal limit of the bootstrap){tukey}; any other is Monte Carlo over the queries that can "
            "move it (see the documentation: docs/statistics.md, 'Statistics over many queries').")


# --- comparison tables -------------------------------------------------------------------------


def medians_table(report: "Report") -> pd.DataFrame:
    """Median per-query value of every measure for every system (rows, the baseline last), over its
    averaged queries."""
    experiment = report.experiment
    return pd.DataFrame([[float(v) for v in experiment.evaluations[name].summary["median"]]
                         for name in experiment.systems], index=list(experiment.systems), columns=experiment.labels)


def pairwise_note(report: "Report") -> str:
    """The note under the pairwise table: what the letters say, and how they stand to the ▲/▼ marks."""
    experiment = report.experiment
    test = experiment.pairwise
    note = (f"Each p-value: the randomized Tukey HSD of that pair on {test.label}, adjusted for all "
            f"{len(test.names) * (len(test.names) - 1) // 2} pairs at once; systems sharing a letter do not differ "
            f"significantly at α = {test.alpha:g}. ")
    names = marked_sharing_a_letter(experiment)
    if names:
        return note + marks_and_letters_note(experiment)
    return (note + f"The leaderboard's ▲/▼ marks come from another test (each system against "
            f"{experiment.baseline_name} alone); where a mark and a shared letter disagree, {_tests_differ(experiment)}.")


def pairwise_table(report: "Report") -> pd.DataFrame:
    """The randomized Tukey HSD p-values as text (systems by mean, best first, '≤' at the permutations'
    floor), with means and letters.

    Built by position: a system may be called "group" without taking that column's place.
    """
    test = report.experiment.pairwise
    floor = pvalue_floor(test.n_resamples, sides=1) if test.method == MONTE_CARLO else None
    rows = [[f"{test.means[a]:.4f}", test.letters[a],
             *[("–" if a == b else format_p(test.pvalues.at[a, b], floor)) for b in test.names]] for a in test.names]
    return pd.DataFrame(rows, index=pd.Index(test.names), columns=[test.label, "group", *test.names])


# --- per query ---------------------------------------------------------------------------------


def wins_and_losses(report: "Report", name: str, measure: Measure | str | int | None = None,
                    n: int = WINS_LOSSES_SHOWN) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The n queries a system gains most on and the n it loses most on against the baseline, on a measure
    (default: the headline).

    Columns: qid, group (with query groups), query (with topics), the system's and the baseline's value
    (headed by their names), delta.
    """
    experiment = report.experiment
    table = experiment.scores(measure)
    paired = pd.DataFrame({"qid": table.index.to_numpy(), "system": table[name].to_numpy(),
                           "baseline": table[experiment.baseline_name].to_numpy()})
    paired["delta"] = paired["system"] - paired["baseline"]
    labels = ["qid", name, experiment.baseline_name, "delta"]
    if report.topics is not None:
        paired.insert(1, "query", report.topics.reindex(paired["qid"]).fillna("").to_numpy())
        labels.insert(1, "query")
    groups = query_groups(experiment, paired["qid"])
    if groups is not None:
        paired.insert(1, "group", groups)
        labels.insert(1, "group")
    ordered = paired.sort_values(["delta", "qid"], ascending=[False, True], kind="stable")
    wins = ordered[ordered["delta"] > 0].head(n).round(4).reset_index(drop=True)
    losses = ordered[ordered["delta"] < 0].iloc[::-1].head(n).round(4).reset_index(drop=True)
    wins.columns, losses.columns = labels, list(labels)
    return wins, losses


def query_table_html(report: "Report", measure: Measure | str | int | None = None, limit: int = MAX_QUERY_ROWS) -> str:
    """Every paired query (up to limit; beyond, the best and worst halves) x every system on a measure
    (default: the headline): the baseline's and each system's value (cells tinted by the difference),
    the mean difference, how much each system's top k differs from the baseline's (rank-biased
    overlap), its group (with query groups), query text; a qid links to its drill-down where it has one."""
    experiment = report.experiment
    table = experiment.scores(measure)
    groups = query_groups(experiment, table.index)  # by row, as table
    deltas = experiment.deltas(measure)
    linked = set(drilldown_queries(experiment, _drilldowns(report))[0])
    overlap = experiment.rank_overlap().reindex(table.index)
    mean_delta = deltas.mean(axis=1)
    order = np.lexsort((np.arange(len(table)), -mean_delta.to_numpy()))
    shown = order if len(order) <= limit else np.concatenate([order[: limit // 2], order[-(limit - limit // 2):]])
    base = experiment.baseline_name
    headers = (["qid"] + (["group"] if groups is not None else []) + (["query"] if report.topics is not None else []) + [base, *experiment.names, "mean Δ"]
               + [f"RBO: {name}" for name in experiment.names])
    head = "".join(f'<th class="{"text" if h in ("qid", "group", "query") else "num"}">{escape(h)}</th>'
                   for h in headers)
    rows = []
    for position, row in enumerate(shown):
        if len(shown) < len(order) and position == limit // 2:
            rows.append(f'<tr><td class="text" colspan="{len(headers)}">… {len(order) - len(shown):,} queries '
                        "in between are in per_query.csv …</td></tr>")
        qid = table.index[row]
        shown_qid = (f'<a class="qlink" href="#{anchor(qid)}">{escape(qid)}</a>' if qid in linked else escape(qid))
        cells = [f'<td class="text">{shown_qid}</td>']
        if groups is not None:
            cells.append(f'<td class="text">{escape(groups[row])}</td>')
        if report.topics is not None:
            cells.append(f'<td class="text query">{escape(report.topics.get(qid, ""))}</td>')
        cells.append(f'<td class="num">{table.iat[row, table.columns.get_loc(base)]:.4f}</td>')
        for name in experiment.names:
            delta = deltas.iat[row, deltas.columns.get_loc(name)]
            cells.append(f'<td class="num" style="background:{tint(delta)}">{table.iat[row, table.columns.get_loc(name)]:.4f}</td>')
        cells.append(f'<td class="num">{mean_delta.iat[row]:+.4f}</td>')
        cells += [f'<td class="num">{_overlap_text(overlap.iat[row, overlap.columns.get_loc(name)])}</td>'
                  for name in experiment.names]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<table class="ndcg-table queries"><thead><tr>{head}</tr></thead><tbody>' + "".join(rows)
            + "</tbody></table>")


def query_groups(experiment: Experiment, qids: "pd.Index | pd.Series") -> list[str] | None:
    """The query group of each qid, NO_GROUP for one in none; None without query groups."""
    if experiment.groups is None:
        return None
    return [str(group) for group in experiment.groups.reindex(list(qids)).fillna(NO_GROUP)]


def query_table_note(report: "Report", measure: Measure | str | int | None = None) -> str:
    experiment = report.experiment
    label = experiment.measure(measure).label
    n = len(experiment.scores(measure))
    note = (f"Per-query {label} of all {n:,} queries averaged in every system, sorted by the mean difference "
            f"from {experiment.baseline_name} (largest gains first). Cells are tinted green where the system beats "
            f"{experiment.baseline_name} on that query and red where it loses, darker for larger differences. "
            f"RBO: how much of its top {experiment.drilldown_depth} a system shares with {experiment.baseline_name}'s, "
            "in rank-biased overlap (1: the same list; near 0: a different one), so a reranker that reorders "
            "everything and one that moves two documents are told apart. A linked qid opens its rankings below. "
            "per_query.csv has every query, system and measure.")
    if n > MAX_QUERY_ROWS:
        note += f" With more than {MAX_QUERY_ROWS} queries, the {MAX_QUERY_ROWS // 2} best and worst are shown."
    return note


def query_section_html(report: "Report", measure: Measure | str | int | None = None) -> str:
    """The all-queries table with its note; folded away (a <details>, no script) for one system,
    whose largest wins and losses come first."""
    body = text_html(query_table_note(report, measure), "p", "note") + query_table_html(report, measure)
    if len(report.experiment.names) > 1:
        return body
    n = len(report.experiment.scores(measure))
    return details_html(f"All {n:,} queries (click to open)", body)


def _drilldowns(report: "Report") -> int:
    """How many queries get a drill-down (the report's --drilldown)."""
    params = getattr(report, "params", None)
    return params.drilldown if params is not None else MAX_DRILLDOWNS


def _overlap_text(value: float) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.2f}"
