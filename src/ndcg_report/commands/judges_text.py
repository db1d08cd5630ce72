"""The text of `ndcg-report judges`: the sets, the means side by side, then each other set against the reference.

Numbers to 4 decimals (as eval prints), NaN as `n/a` with the reason where the comparison gives one;
columns padded to their widest cell.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ndcg_report.analysis.judgments.comparison import JudgmentComparison, SetComparison
from ndcg_report.inputs.ids import replace_controls
from ndcg_report.stats.agreement import LabelAgreement
from ndcg_report.stats.paired import CONFIDENCE


def comparison_text(comparison: JudgmentComparison) -> str:
    """The whole text: what was compared, the system means under each set, then one block per other set."""
    ref = comparison.reference
    lines = ["Judgment sets (the first is the reference):"]
    for s in comparison.sets:
        filled = f"; the reference with {s.filled_pairs:,} unjudged pairs filled from {s.filled_from}" if s.filled_from else ""
        shown = replace_controls(str(s.path)) if s.path else "(data)"  # a file's name may hold any byte but / and NUL
        lines.append(f"  {s.name}: {shown}, {s.judgments:,} judgments of {s.queries:,} queries{filled}")
    if comparison.systems:
        over = ("every query of the set, as trec_eval -c" if comparison.runs_shared_queries is None else
                f"only the {comparison.runs_shared_queries:,} queries all the runs have, --shared-queries")
        lines += ["", f"System means under each set (eval's mean: {over}):"]
        lines += _indent(_means_table(comparison))
        lines += _lacking_lines(comparison)
    for other in comparison.comparisons:
        lines += ["", f"== {other.name} against {ref} =="]
        lines += _agreement_lines(other, ref)
        if comparison.systems:
            lines += _order_lines(other, ref)
            if comparison.baseline:
                lines += _verdict_lines(comparison, other)
            lines += _query_lines(other, ref)
    return "\n".join(lines) + "\n"


def number(value: float, digits: int = 4) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def table(rows: Sequence[Sequence[str]], right: Sequence[bool] | None = None) -> list[str]:
    """Rows of cells as aligned lines (columns two spaces apart; numbers right-aligned where `right` says)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    right = right or [i > 0 for i in range(len(widths))]
    return ["  ".join(cell.rjust(w) if r else cell.ljust(w) for cell, w, r in zip(row, widths, right)).rstrip()
            for row in rows]


def _indent(lines: list[str], by: str = "  ") -> list[str]:
    return [by + line for line in lines]


def _means_table(comparison: JudgmentComparison) -> list[str]:
    names = [s.name for s in comparison.sets]
    header = ["system", *[f"{m.label} {name}" for m in comparison.measures for name in names]]
    rows = [header]
    for system in comparison.systems:
        role = " (baseline)" if system == comparison.baseline else ""
        rows.append([system + role, *[number(comparison.means[name][m.label][system]) for m in comparison.measures
                                      for name in names]])
    return table(rows)


def _lacking_lines(comparison: JudgmentComparison) -> list[str]:
    """One line per (run, set) where the run lacks judged queries (the reference's set unnamed)."""
    if not comparison.lacking:
        return []
    lines = ["Runs lacking judged queries (0 in the means, as trec_eval -c; left out of the per-query correlations):"]
    for c in comparison.lacking:
        where = "" if c.set == comparison.reference else f" of {c.set}"
        lines.append(f"  {c.system} lacks {c.lacking:,} of {c.judged:,} judged queries{where}")
    return lines


def _agreement_lines(other: SetComparison, ref: str) -> list[str]:
    a: LabelAgreement = other.agreement
    lines = [f"Pairs: {a.shared:,} judged by both, {a.only_reference:,} by {ref} only, {a.only_other:,} by {other.name} "
             f"only; queries: {other.shared_queries:,} in both, {other.only_reference_queries:,} in {ref} only, "
             f"{other.only_other_queries:,} in {other.name} only."]
    if a.binning:
        lines.append(f"Labels for the categorical statistics: {a.binning} (interval alpha and the mean difference use "
                     "the values as they are).")
    lines.append(f"Confusion matrix (rows: {ref}, columns: {other.name}):")
    rows = [[f"{ref} \\ {other.name}", *[str(label) for label in a.labels]]]
    rows += [[str(label), *[f"{count:,}" for count in a.confusion[i]]] for i, label in enumerate(a.labels)]
    lines += _indent(table(rows))
    lines.append(f"Observed agreement {number(a.observed_agreement)}; Cohen's kappa {number(a.cohen_kappa)}, weighted "
                 f"linear {number(a.weighted_kappa_linear)}, quadratic {number(a.weighted_kappa_quadratic)}; "
                 f"Krippendorff's alpha ordinal {number(a.alpha_ordinal)}, interval {number(a.alpha_interval)}.")
    if a.binary:
        lines.append("Binary kappa (relevant: label >= level; share of the shared pairs each set calls relevant):")
        rows = [["level", "kappa", f"{ref} relevant", f"{other.name} relevant"]]
        rows += [[f">= {b.level}", number(b.kappa), f"{b.reference_relevant:.1%}", f"{b.other_relevant:.1%}"]
                 for b in a.binary]
        lines += _indent(table(rows))
    lines.append(f"Per label, {other.name} against {ref} (precision: of {other.name}'s pairs with the label, the share "
                 f"{ref} labels alike; recall: of {ref}'s, the share {other.name} labels alike):")
    rows = [["label", ref, other.name, "precision", "recall"]]
    rows += [[str(s.label), f"{s.reference_count:,}", f"{s.other_count:,}", number(s.precision), number(s.recall)]
             for s in a.per_label]
    lines += _indent(table(rows))
    difference = a.mean_difference
    leaning = ("" if math.isnan(difference) or difference == 0 else
               f" ({other.name} is more lenient)" if difference > 0 else f" ({other.name} is stricter)")
    lines.append(f"Mean label difference ({other.name} - {ref}): {difference:+.4f}{leaning}." if not math.isnan(difference)
                 else "Mean label difference: n/a.")
    lines += [f"n/a {statistic}: {reason}." for statistic, reason in a.undefined.items()]
    return lines


def _order_lines(other: SetComparison, ref: str, confidence: float = CONFIDENCE) -> list[str]:
    lines = [f"System orders ({ref}'s as the true order for tau_AP; tau-b's interval: percentile bootstrap over "
             "the queries):"]
    rows = [["measure", "systems", "Kendall tau-b", f"tau-b {confidence:.0%} interval", "tau_AP", "Spearman",
             "same best", f"best under {ref}", f"best under {other.name}"]]
    for o in other.orders:
        low, high = o.kendall_tau_interval
        rows.append([o.measure, str(o.n_systems), number(o.kendall_tau), f"[{number(low)}, {number(high)}]",
                     number(o.tau_ap), number(o.spearman), "yes" if o.same_best_system else "no",
                     ", ".join(o.best_reference), ", ".join(o.best_other)])
    lines += _indent(table(rows, [False, True, True, True, True, True, False, False, False]))
    if other.per_system:
        lines.append(f"Each system's per-query scores under {ref} and {other.name}, correlated over the queries both average "
                     "and the run has:")
        rows = [["system", "measure", "queries", "Pearson r", "Kendall tau-b"]]
        rows += [[s.system, s.measure, f"{s.n_queries:,}", number(s.pearson), number(s.kendall_tau)]
                 for s in other.per_system]
        lines += _indent(table(rows, [False, False, True, True, True]))
    return lines


def _verdict_lines(comparison: JudgmentComparison, other: SetComparison) -> list[str]:
    differ = sum(v.differs for v in other.verdicts)
    lines = [f"Verdicts against {comparison.baseline} at alpha {comparison.alpha:g} ({comparison.verdict_test}); "
             f"{differ} of {len(other.verdicts)} differ, listed first:"]
    rows = [["system", "measure", f"under {comparison.reference}", "delta", "p (Holm)", f"under {other.name}", "delta",
             "p (Holm)", ""]]
    rows += [[v.system, v.measure, v.reference, f"{v.reference_delta:+.4f}", number(v.reference_p), v.other,
              f"{v.other_delta:+.4f}", number(v.other_p), "DIFFERS" if v.differs else ""] for v in other.verdicts]
    return lines + _indent(table(rows, [False, False, False, True, True, False, True, True, False]))


def _query_lines(other: SetComparison, ref: str) -> list[str]:
    if not other.disagreeing_queries:
        return []
    lines = [f"Queries where the sets disagree most (disagreement: the mean over the systems of |score under "
             f"{other.name} - score under {ref}|; tau: the systems' order on the query under both):"]
    rows = [["measure", "qid", "disagreement", "mean difference", "tau-b"]]
    rows += [[q.measure, q.qid, number(q.disagreement), f"{q.mean_difference:+.4f}", number(q.kendall_tau)]
             for q in other.disagreeing_queries]
    return lines + _indent(table(rows, [False, False, True, True, True]))
