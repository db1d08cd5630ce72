"""A JudgmentComparison as one tidy table: one row per number, for CSV and for pandas.

Columns (TIDY_COLUMNS): `set` (the other set the row compares with the reference; for `sets` and
`means` rows the set itself), `section`, `measure`, `system`, `qid`, `label` and `other_label` (a label or
relevance level; the confusion matrix's reference and other label), `statistic`, `value` (a number;
the verdicts' words for `verdict` rows and the reason of each NaN statistic for `undefined` rows;
empty for NaN). docs/command-line.md lists each section's statistics.
"""

from __future__ import annotations

import pandas as pd

from ndcg_report.analysis.judgments.comparison import JudgmentComparison, SetComparison

TIDY_COLUMNS = ("set", "section", "measure", "system", "qid", "label", "other_label", "statistic", "value")


def tidy(comparison: JudgmentComparison) -> pd.DataFrame:
    """Every figure of the comparison, one per row (TIDY_COLUMNS), sets and means first, then each other set."""
    rows: list[dict] = []
    for judgment_set in comparison.sets:
        for statistic in ("judgments", "queries", "filled_pairs"):
            rows.append(_row(judgment_set.name, "sets", statistic, getattr(judgment_set, statistic)))
    for set_name, by_measure in comparison.means.items():
        for measure, by_system in by_measure.items():
            rows += [_row(set_name, "means", "mean", mean, measure=measure, system=system)
                     for system, mean in by_system.items()]
    for c in comparison.lacking:
        rows += [_row(c.set, "lacking", statistic, value, system=c.system)
                 for statistic, value in (("lacking", c.lacking), ("judged", c.judged))]
    for other in comparison.comparisons:
        rows += _agreement_rows(other)
        rows += _system_rows(other)
    frame = pd.DataFrame(rows, columns=list(TIDY_COLUMNS))
    frame["value"] = pd.Series([row["value"] for row in rows], dtype=object)  # counts stay whole, verdicts words
    return frame


def _row(set_name: str, section: str, statistic: str, value: object, **where: object) -> dict:
    return {"set": set_name, "section": section, "statistic": statistic, "value": value,
            **{column: where.get(column, "") for column in ("measure", "system", "qid", "label", "other_label")}}


def _agreement_rows(other: SetComparison) -> list[dict]:
    agreement, name = other.agreement, other.name
    rows = [_row(name, "agreement", statistic, value) for statistic, value in (
        ("pairs_shared", agreement.shared), ("pairs_only_reference", agreement.only_reference),
        ("pairs_only_other", agreement.only_other), ("queries_shared", other.shared_queries),
        ("queries_only_reference", other.only_reference_queries), ("queries_only_other", other.only_other_queries),
        ("observed_agreement", agreement.observed_agreement), ("cohen_kappa", agreement.cohen_kappa),
        ("weighted_kappa_linear", agreement.weighted_kappa_linear),
        ("weighted_kappa_quadratic", agreement.weighted_kappa_quadratic),
        ("krippendorff_alpha_ordinal", agreement.alpha_ordinal), ("krippendorff_alpha_interval", agreement.alpha_interval),
        ("mean_label_difference", agreement.mean_difference))]
    rows += [_row(name, "undefined", statistic, reason) for statistic, reason in agreement.undefined.items()]
    for binary in agreement.binary:
        rows += [_row(name, "binary", statistic, value, label=binary.level) for statistic, value in (
            ("binary_kappa", binary.kappa), ("reference_relevant", binary.reference_relevant),
            ("other_relevant", binary.other_relevant))]
    for i, reference_label in enumerate(agreement.labels):
        rows += [_row(name, "confusion", "count", count, label=reference_label, other_label=other_label)
                 for other_label, count in zip(agreement.labels, agreement.confusion[i])]
    for score in agreement.per_label:
        rows += [_row(name, "per_label", statistic, value, label=score.label) for statistic, value in (
            ("reference_count", score.reference_count), ("other_count", score.other_count),
            ("precision", score.precision), ("recall", score.recall))]
    return rows


def _system_rows(other: SetComparison) -> list[dict]:
    name, rows = other.name, []
    for order in other.orders:
        rows += [_row(name, "order", statistic, value, measure=order.measure) for statistic, value in (
            ("n_systems", order.n_systems), ("kendall_tau", order.kendall_tau),
            ("kendall_tau_low", order.kendall_tau_interval[0]), ("kendall_tau_high", order.kendall_tau_interval[1]),
            ("tau_ap", order.tau_ap),
            ("spearman", order.spearman), ("same_best_system", int(order.same_best_system)))]
    for verdict in other.verdicts:
        rows += [_row(name, "verdict", statistic, value, measure=verdict.measure, system=verdict.system)
                 for statistic, value in (
                     ("reference", verdict.reference), ("other", verdict.other), ("differs", int(verdict.differs)),
                     ("reference_delta", verdict.reference_delta), ("other_delta", verdict.other_delta),
                     ("reference_p", verdict.reference_p), ("other_p", verdict.other_p))]
    for system in other.per_system:
        rows += [_row(name, "system_queries", statistic, value, measure=system.measure, system=system.system)
                 for statistic, value in (("n_queries", system.n_queries), ("pearson", system.pearson),
                                          ("kendall_tau", system.kendall_tau))]
    for query in other.disagreeing_queries:
        rows += [_row(name, "query", statistic, value, measure=query.measure, qid=query.qid) for statistic, value in (
            ("disagreement", query.disagreement), ("mean_difference", query.mean_difference),
            ("kendall_tau", query.kendall_tau))]
        for system, reference_score, other_score in query.scores:
            rows += [_row(name, "query", "reference_score", reference_score, measure=query.measure, qid=query.qid,
                          system=system),
                     _row(name, "query", "other_score", other_score, measure=query.measure, qid=query.qid, system=system)]
    return rows
