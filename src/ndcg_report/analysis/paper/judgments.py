"""Judgment sets compared, as paper tables: each system's mean under each set, and the sets' agreement.

From the plain data of `JudgmentComparison.to_dict()` (summary.json's `judgments`, `ndcg-report judges
--format json`): the means table (systems x (measure, set), the best of each column bold) and the
agreement table (statistics x the sets compared with the reference: label agreement on the pairs both
judge, then the correlation of the systems' orders per measure).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ndcg_report.analysis.paper.grid import DIGITS, Cell, Column, Grid, Row, best_shown, checked_digits, number_text
from ndcg_report.analysis.paper.latex import latex_grid
from ndcg_report.analysis.paper.markdown import markdown_grid
from ndcg_report.errors import ParameterError

ORDER_STATISTICS = (("kendall_tau", "Kendall's tau-b"), ("tau_ap", "tau_AP"), ("spearman", "Spearman's rho"))


def judgments_latex(record: Mapping, *, measures: Iterable[str] | None = None, digits: int = DIGITS) -> str:
    """The means table and the agreement table of a judgment-set comparison, as two LaTeX tables (booktabs)."""
    means, agreement = judgment_grids(record, measures=measures, digits=digits)
    return latex_grid(means, label="tab:judgment-means") + "\n" + latex_grid(agreement, label="tab:judgment-agreement")


def judgments_markdown(record: Mapping, *, measures: Iterable[str] | None = None, digits: int = DIGITS) -> str:
    """The means table and the agreement table of a judgment-set comparison, as two GitHub Markdown tables."""
    means, agreement = judgment_grids(record, measures=measures, digits=digits)
    return markdown_grid(means) + "\n" + markdown_grid(agreement)


def judgment_grids(record: Mapping, *, measures: Iterable[str] | None = None,
                   digits: int = DIGITS) -> tuple[Grid, Grid]:
    """(means, agreement) of a JudgmentComparison.to_dict() record; measures by label (default: all)."""
    digits = checked_digits(digits)
    labels = list(record["measures"])
    chosen = labels if measures is None else list(dict.fromkeys(measures))
    unknown = [label for label in chosen if label not in labels]
    if unknown:
        raise ParameterError(f"the judgment sets were not compared on {', '.join(unknown)}; they were on "
                             f"{', '.join(labels)}")
    return _means_grid(record, chosen, digits), _agreement_grid(record, chosen, digits)


def _means_grid(record: Mapping, labels: list[str], digits: int) -> Grid:
    sets = [s["name"] for s in record["sets"]]
    baseline = record.get("baseline")
    systems = [name for name in record["systems"] if name != baseline] + ([baseline] if baseline else [])
    columns = tuple(Column(f"{label} ({name})", label, name) for label in labels for name in sets)
    texts = [[number_text(record["means"][label][system][name], digits) for label in labels for name in sets]
             for system in systems]
    best = list(zip(*[best_shown(column) for column in zip(*texts)])) if columns and systems else []
    rows = tuple(Row(system, tuple(Cell(text, bold) for text, bold in zip(texts[i], best[i])),
                     baseline=system == baseline) for i, system in enumerate(systems))
    reference = record["reference"]
    caption = (f"Each system's mean under each judgment set (the reference: {reference}), over every query of "
               "the set, a query missing from a run scoring 0.")
    return Grid("System", columns, rows, caption, ("Bold: the best of each column.",))


def _agreement_grid(record: Mapping, labels: list[str], digits: int) -> Grid:
    others = list(record["comparisons"])
    found: dict[str, list[str]] = {}

    def add(name: str, values: list[object]) -> None:
        found[name] = [_text(value, digits) for value in values]

    comparisons = [record["comparisons"][other] for other in others]
    add("pairs both judge", [c["pairs"]["shared"] for c in comparisons])
    add("observed agreement", [c["observed_agreement"] for c in comparisons])
    add("Cohen's kappa", [c["cohen_kappa"] for c in comparisons])
    for weight in ("linear", "quadratic"):
        add(f"weighted kappa, {weight}", [c["weighted_kappa"][weight] for c in comparisons])
    for kind in ("ordinal", "interval"):
        add(f"Krippendorff's alpha, {kind}", [c["krippendorff_alpha"][kind] for c in comparisons])
    levels = list(dict.fromkeys(level for c in comparisons for level in c["binary_kappa"]))
    for level in levels:
        add(f"binary kappa, label ≥ {level}", [c["binary_kappa"].get(level) for c in comparisons])
    add("mean label difference (set − reference)", [c["mean_label_difference"] for c in comparisons])
    for label in labels:
        orders = [c["measures"].get(label, {}) for c in comparisons]
        for key, name in ORDER_STATISTICS:
            add(f"{name} of the systems' {label}", [order.get(key) for order in orders])
            if key == "kendall_tau":  # its bootstrap interval over the queries, where the record has it
                found[f"tau-b's bootstrap interval over queries, {label}"] = [
                    _interval(order.get("kendall_tau_interval"), digits) for order in orders]
        add(f"same best system on {label}", [order.get("same_best_system") for order in orders])
    rows = tuple(Row(name, tuple(Cell(text) for text in texts)) for name, texts in found.items())
    caption = (f"Each judgment set against the reference, {record['reference']}: agreement on the labels of the "
               "pairs both judge, and the correlation of the systems' orders.")
    notes = ("Kappas from scikit-learn, alphas from the krippendorff package; a mean label difference above 0: the "
             "set is more lenient than the reference; a dash: undefined.",)
    return Grid("Statistic", tuple(Column(other) for other in others), rows, caption, notes)


def _interval(bounds: object, digits: int) -> str:
    """'[0.81, 0.93]' of a [low, high] pair; '' where the record has none or a bound is undefined."""
    if not isinstance(bounds, (list, tuple)) or len(bounds) != 2 or any(b is None for b in bounds):
        return ""
    return f"[{number_text(bounds[0], digits)}, {number_text(bounds[1], digits)}]"


def _text(value: object, digits: int) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return number_text(value, digits)  # type: ignore[arg-type]
