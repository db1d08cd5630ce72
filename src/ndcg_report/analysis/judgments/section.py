"""The report's section comparing judgment sets: tables and figures of an Experiment's JudgmentComparison.

`parts(report)` gives the section in order, each ("html", text) or ("png", caption HTML, bytes), for the
notebook to display; nothing when the report has one set of judgements. Every table is a DataFrame
made here from the comparison's plain data and shown by analysis.html.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ndcg_report.analysis import html
from ndcg_report.analysis.drilldown import anchor, drilldown_queries
from ndcg_report.analysis.judgments.comparison import JudgmentComparison, SetComparison
from ndcg_report.analysis.judgments.glance import grid_note, holm_floor, interval_text, verdict_grid

if TYPE_CHECKING:
    from ndcg_report.analysis.report_model import Report

Part = tuple  # ("html", text) or ("png", caption HTML with its SVG link, PNG bytes): analysis.content.figure_pending


def parts(report: Report) -> list[Part]:
    """The section's parts in order: heading and note, the sets, label agreement, per other set its
    confusion matrix and per-label table, the systems' means and orders, the grid of verdicts under
    each set, the queries the sets disagree on most; [] without several judgment sets."""
    from functools import partial

    from ndcg_report.analysis.content import figure_pending, shown_png
    from ndcg_report.analysis.judgments.figures import confusion_heatmap, means_scatter

    comparison = report.experiment.judgments
    if comparison is None:
        return []
    headline = report.experiment.headline.label
    found: list[Part] = [("html", '<h2 id="judges">Judges compared</h2>'), ("html", html.text_html(intro(comparison), "p", "note")),
                         ("html", html.table_html(sets_table(comparison), index=False)),
                         ("html", html.text_html("Label agreement on the pairs both sets judge", "h4")),
                         ("html", html.table_html(agreement_table(comparison))),
                         ("html", html.text_html(agreement_note(comparison), "p", "note"))]
    for other in comparison.comparisons:
        if _filled(comparison, other.name):
            continue  # the reference's labels wherever it has one: agreement 1 by construction
        found.append(("png", *figure_pending(report, f"Labels: {comparison.reference} (rows) against {other.name} (columns)",
                                             partial(confusion_heatmap, other.agreement, comparison.reference, other.name))))
        found.append(("html", html.table_html(per_label_table(other, comparison.reference), index=False)))
    if comparison.systems:
        found += [("html", html.text_html("Each system's mean under each set (as eval prints it on that set)", "h4")),
                  ("html", html.table_html(means_table(comparison))),
                  *([("html", html.text_html(lacking_note(comparison), "p", "note"))] if comparison.lacking else []),
                  ("html", html.text_html("System orders: the reference's against each other set's", "h4")),
                  ("html", html.table_html(orders_table(comparison), index=False)),
                  ("html", html.text_html(ORDERS_NOTE, "p", "note"))]
        found.append(("png", *figure_pending(
            report, f"Mean {headline} of each system: {comparison.reference} (x) against each other set (y)",
            partial(means_scatter, comparison.measure_means(headline), comparison.reference, headline))))
        grid = verdict_grid(comparison, [m.label for m in comparison.measures], holm_floor(report))
        if not grid.empty:
            found += [("html", html.text_html(f"Verdicts against {comparison.baseline} under each set, every measure",
                                              "h4")),
                      ("html", html.table_html(grid, text_columns=("flips",))),
                      ("html", html.text_html(grid_note(comparison), "p", "note"))]
        linked, _ = drilldown_queries(report.experiment, report.params.drilldown)
        queries = disagreement_table(comparison, headline, set(linked))
        if not queries.empty:
            found += [("html", html.text_html(f"Queries where the sets disagree most on {headline}", "h4")),
                      ("html", html.table_html(queries, index=False, html_columns=("set", "qid"))),
                      ("html", html.text_html(QUERIES_NOTE, "p", "note"))]
    # every figure handed over before any PNG is taken, so that they are drawn at once (content.figure_pending)
    return [("png", part[1], shown_png(part[2])) if part[0] == "png" else part for part in found]


ORDERS_NOTE = ("Kendall's tau-b and Spearman's rho of the systems' means under the two sets (1: the same order), tau-b "
               "with a 95% percentile bootstrap interval over the queries (the systems' means recomputed on each draw); "
               "tau_AP (Yilmaz, Aslam and Robertson, SIGIR 2008) weighs swaps near the top more, the reference's order "
               "taken as the true one. With few systems these move in coarse steps: 5 systems give tau-b in steps of 0.2.")
QUERIES_NOTE = ("Disagreement: the mean over the systems of |score under the other set − score under the reference|, "
                "in the measure's units. A qid links to its drill-down where the report has one.")


def intro(comparison: JudgmentComparison) -> str:
    """What the section compares, in a sentence or two."""
    others = ", ".join(other.name for other in comparison.comparisons)
    return (f"Every other section of this report uses the reference judgements, {comparison.reference}. Here each "
            f"other set ({others}) is compared with it: on the labels of the pairs both judge, then on what they "
            "say of the systems (each system evaluated under each set with the same measures and averaging).")


def sets_table(comparison: JudgmentComparison) -> pd.DataFrame:
    """One row per judgment set: its name, role, judgements, queries and, for a filled set, its source."""
    rows = []
    for judgment_set in comparison.sets:
        role = "reference" if judgment_set.name == comparison.reference else "compared"
        if judgment_set.filled_from:
            role = f"the reference filled from {judgment_set.filled_from} ({judgment_set.filled_pairs:,} pairs)"
        rows.append({"set": judgment_set.name, "role": role, "judgements": judgment_set.judgments,
                     "queries": judgment_set.queries})
    return pd.DataFrame(rows)


def agreement_table(comparison: JudgmentComparison) -> pd.DataFrame:
    """Statistics (rows) of each other set's labels against the reference's (columns)."""
    columns = {}
    for other in comparison.comparisons:
        agreement = other.agreement
        values = {
            "pairs both judge": agreement.shared, f"pairs only {comparison.reference} judges": agreement.only_reference,
            "pairs only this set judges": agreement.only_other, "observed agreement": agreement.observed_agreement,
            "Cohen's kappa": agreement.cohen_kappa, "weighted kappa, linear": agreement.weighted_kappa_linear,
            "weighted kappa, quadratic": agreement.weighted_kappa_quadratic,
            "Krippendorff's alpha, ordinal": agreement.alpha_ordinal,
            "Krippendorff's alpha, interval": agreement.alpha_interval,
        }
        values.update({f"binary kappa at level {binary.level:g} (label ≥ {binary.level:g})": binary.kappa
                       for binary in agreement.binary})
        values["mean label difference (this set − reference)"] = agreement.mean_difference
        columns[other.name] = pd.Series(values, dtype=object)  # counts stay whole numbers
    frame = pd.DataFrame(columns)
    return frame.where(frame.notna(), "undefined")


def agreement_note(comparison: JudgmentComparison) -> str:
    """How the statistics were computed, and when to distrust them."""
    binned = {other.agreement.binning for other in comparison.comparisons if other.agreement.binning}
    undefined = [f"{other.name}: {statistic} ({reason})" for other in comparison.comparisons
                 for statistic, reason in other.agreement.undefined.items()]
    text = ("Kappas from scikit-learn (cohen_kappa_score), alphas from the krippendorff package. Skewed labels (most "
            "pairs 0) depress kappa while agreement stays high: alpha and the weighted kappas say more there. "
            "A mean label difference above 0: this set is more lenient than the reference.")
    if binned:
        text += " Categorical statistics on float grades: " + "; ".join(sorted(binned)) + "."
    if undefined:
        text += " Undefined: " + "; ".join(undefined) + "."
    return text


def per_label_table(other: SetComparison, reference: str) -> pd.DataFrame:
    """Per reference label: how many pairs each set gives it, and this set's precision and recall on it."""
    return pd.DataFrame([{"label": score.label, f"pairs ({reference})": score.reference_count,
                          f"pairs ({other.name})": score.other_count, "precision": score.precision,
                          "recall": score.recall} for score in other.agreement.per_label])


def means_table(comparison: JudgmentComparison) -> pd.DataFrame:
    """Systems (rows) x `MEASURE (SET)` (columns): each system's mean under each set."""
    data = {f"{measure} ({set_name})": {system: comparison.means[set_name][measure][system]
                                        for system in comparison.systems}
            for measure in (m.label for m in comparison.measures) for set_name in comparison.means}
    return pd.DataFrame(data).rename_axis("system")


def lacking_note(comparison: JudgmentComparison) -> str:
    """Which runs lack which share of each set's judged queries (as the data checks say it)."""
    lacks = "; ".join(f"{c.system} lacks {c.lacking:,} of {c.judged:,} judged queries"
                      + ("" if c.set == comparison.reference else f" of {c.set}") for c in comparison.lacking)
    return (f"{lacks}. A query a run lacks scores 0 in its means (as trec_eval -c) and is left out of its per-query "
            "correlations.")


def orders_table(comparison: JudgmentComparison) -> pd.DataFrame:
    """One row per (other set, measure): tau-b and its bootstrap interval over queries, tau_AP, rho and whether
    the best system is the same."""
    return pd.DataFrame([{"set": other.name, "measure": order.measure, "Kendall's tau-b": order.kendall_tau,
                          "tau-b 95% interval": interval_text(*order.kendall_tau_interval), "tau_AP": order.tau_ap,
                          "Spearman's rho": order.spearman,
                          "best (reference)": ", ".join(order.best_reference), "best (this set)": ", ".join(order.best_other),
                          "same best": "yes" if order.same_best_system else "no"}
                         for other in comparison.comparisons for order in other.orders])


def disagreement_table(comparison: JudgmentComparison, measure: str, linked: set[str]) -> pd.DataFrame:
    """The queries where each other set disagrees most with the reference on `measure` (HTML cells: a
    qid links to its drill-down `#q-<qid>` when the report has one)."""
    rows = []
    for other in comparison.comparisons:
        for query in other.disagreeing_queries:
            if query.measure != measure:
                continue
            shown = html.escape(query.qid)
            qid = f'<a href="#{anchor(query.qid)}">{shown}</a>' if query.qid in linked else shown
            rows.append({"set": html.escape(other.name), "qid": qid, "disagreement": _number(query.disagreement),
                         "mean difference": _number(query.mean_difference),
                         "systems' tau-b": _number(query.kendall_tau)})
    return pd.DataFrame(rows)


def _filled(comparison: JudgmentComparison, name: str) -> bool:
    """Whether the set `name` is the reference filled from another set."""
    return any(judgment_set.name == name and judgment_set.filled_from for judgment_set in comparison.sets)


def _number(value: float) -> str:
    return "" if value is None or not np.isfinite(value) else f"{value:.4f}"
