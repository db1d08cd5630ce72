"""compare_judgments: every other judgment set against the reference, as plain data with `to_dict()`.

For each set other than the reference: label agreement on the pairs both judge (stats.agreement),
and, given systems evaluated under every set, the correlation of their orders per measure, the
verdicts against the baseline under each set (differing ones first), each system's per-query
correlation and the queries where the sets disagree most (analysis.judgments.orders).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import nan
from dataclasses import dataclass, field

from ndcg_report.analysis.judgments.orders import (
    VERDICT_TEST, QueryScores, RunCoverage, SystemOrder, SystemQueries, Verdict, coverage, means as system_means,
    ordered_systems, query_scores, system_order, system_queries, tau_interval, verdict_tables, verdicts,
)
from ndcg_report.analysis.judgments.sets import check_comparable_sets
from ndcg_report.core.evaluation import Evaluation
from ndcg_report.core.measures.names import Measure, measure_of
from ndcg_report.errors import ParameterError
from ndcg_report.inputs.reading import Qrels
from ndcg_report.inputs.tables import QrelsLike, load_qrels
from ndcg_report.stats.agreement import LabelAgreement, json_number, label_agreement
from ndcg_report.stats.paired import ALPHA, CONFIDENCE, N_RESAMPLES, check_comparable
from ndcg_report.stats.resampling import LARGE_N
from ndcg_report.stats.streams import stream

MOST_QUERIES = 10  # queries where the sets disagree most, kept per measure


@dataclass(frozen=True)
class JudgmentSet:
    """One set: its name, file ('' for data given in Python), judgements and queries; for a set made by
    fill_unjudged, the set it was filled from and how many pairs were filled."""

    name: str
    path: str
    judgments: int
    queries: int
    filled_from: str = ""
    filled_pairs: int = 0


@dataclass(frozen=True)
class SetComparison:
    """One other set against the reference: its label agreement, the queries each judges, and (with
    systems) the orders per measure, the verdicts, the per-system and per-query correlations."""

    name: str
    agreement: LabelAgreement
    shared_queries: int
    only_reference_queries: int
    only_other_queries: int
    orders: tuple[SystemOrder, ...] = ()
    verdicts: tuple[Verdict, ...] = ()
    per_system: tuple[SystemQueries, ...] = ()
    disagreeing_queries: tuple[QueryScores, ...] = ()  # per measure, the MOST_QUERIES largest disagreements

    def order(self, measure: str) -> SystemOrder:
        """The SystemOrder of one measure (by label)."""
        return next(order for order in self.orders if order.measure == measure)


@dataclass(frozen=True)
class JudgmentComparison:
    """Judgment sets compared on the same systems (made by `compare_judgments`).

    `means[set][measure label][system]` is each system's mean under each set (eval's `all` row);
    `comparisons` holds one SetComparison per set other than the reference, in the order given;
    `lacking` each (run, set) where the run lacks some of the set's judged queries.
    `to_dict()` is summary.json's `judgments` and `ndcg-report judges --format json`.
    """

    reference: str
    sets: tuple[JudgmentSet, ...]
    systems: tuple[str, ...]
    baseline: str | None
    measures: tuple[Measure, ...]
    means: Mapping[str, Mapping[str, Mapping[str, float]]]
    comparisons: tuple[SetComparison, ...]
    alpha: float = ALPHA
    seed: int = 42
    n_resamples: int = N_RESAMPLES
    verdict_test: str = field(default=VERDICT_TEST)
    lacking: tuple[RunCoverage, ...] = ()
    runs_shared_queries: int | None = None  # judges --shared-queries: the runs evaluated on these many queries only

    def comparison(self, name: str) -> SetComparison:
        """The comparison of one other set with the reference."""
        for comparison in self.comparisons:
            if comparison.name == name:
                return comparison
        raise ParameterError(f"no other judgment set is named {name!r}; they are "
                             f"{', '.join(repr(c.name) for c in self.comparisons)}")

    def measure_means(self, measure: str) -> dict[str, dict[str, float]]:
        """{set: {system: mean}} of one measure (by label): what figures.means_scatter draws."""
        return {name: dict(by_measure[measure]) for name, by_measure in self.means.items()}

    def to_latex(self, **options: object) -> str:
        """Each system's mean under each set, and the sets' agreement, as two LaTeX tables: analysis.paper.judgments."""
        from ndcg_report.analysis.paper.judgments import judgments_latex

        return judgments_latex(self.to_dict(), **options)  # type: ignore[arg-type]

    def to_markdown(self, **options: object) -> str:
        """The same two tables as GitHub Markdown: analysis.paper.judgments.judgments_markdown."""
        from ndcg_report.analysis.paper.judgments import judgments_markdown

        return judgments_markdown(self.to_dict(), **options)  # type: ignore[arg-type]

    def to_dict(self) -> dict:
        """JSON-able, NaN as None: `reference`, `sets`, `systems`, `baseline`, `measures` (labels), `means`
        {measure: {system: {set: mean}}}, `alpha`, `seed`, `verdict_test`, and `comparisons` {other set:
        LabelAgreement.to_dict()'s keys (`pairs`, `confusion`, `cohen_kappa`, `weighted_kappa`,
        `krippendorff_alpha`, `binary_kappa`, ...) with `queries`, `measures` {measure: {`kendall_tau`,
        `kendall_tau_interval`, `tau_ap`, `spearman`, `same_best_system`, `best`, `n_systems`}}, `verdicts`,
        `per_system`, `disagreeing_queries`}, and with systems `lacking` [{`system`, `set`, `lacking`, `judged`}]
        (with `runs_shared_queries` when the runs were evaluated on the queries they all have only)."""
        labels = [m.label for m in self.measures]
        return {
            "reference": self.reference,
            "sets": [{"name": s.name, "path": s.path, "judgments": s.judgments, "queries": s.queries,
                      "filled_from": s.filled_from or None, "filled_pairs": s.filled_pairs} for s in self.sets],
            "systems": list(self.systems), "baseline": self.baseline, "measures": labels,
            "means": {label: {system: {s.name: json_number(self.means[s.name][label][system]) for s in self.sets}
                              for system in self.systems} for label in labels},
            "alpha": self.alpha, "seed": self.seed, "n_resamples": self.n_resamples,
            "verdict_test": self.verdict_test if self.baseline else None,
            "comparisons": {c.name: _comparison_dict(c) for c in self.comparisons},
            **({"runs_shared_queries": self.runs_shared_queries} if self.runs_shared_queries is not None else {}),
            **({"lacking": [{"system": c.system, "set": c.set, "lacking": c.lacking, "judged": c.judged}
                            for c in self.lacking]} if self.systems else {}),
        }


def _comparison_dict(comparison: SetComparison) -> dict:
    return {
        **comparison.agreement.to_dict(),
        "queries": {"shared": comparison.shared_queries, "only_reference": comparison.only_reference_queries,
                    "only_other": comparison.only_other_queries},
        "measures": {o.measure: {"kendall_tau": json_number(o.kendall_tau),
                                 "kendall_tau_interval": [json_number(v) for v in o.kendall_tau_interval],
                                 "tau_ap": json_number(o.tau_ap),
                                 "spearman": json_number(o.spearman),
                                 "same_best_system": o.same_best_system if o.n_systems else None,
                                 "best": {"reference": list(o.best_reference), "other": list(o.best_other)},
                                 "n_systems": o.n_systems} for o in comparison.orders},
        "verdicts": [{"system": v.system, "measure": v.measure, "reference": v.reference, "other": v.other,
                      "differs": v.differs, "reference_delta": json_number(v.reference_delta),
                      "other_delta": json_number(v.other_delta), "reference_p": json_number(v.reference_p),
                      "other_p": json_number(v.other_p)} for v in comparison.verdicts],
        "per_system": [{"system": s.system, "measure": s.measure, "n_queries": s.n_queries,
                        "pearson": json_number(s.pearson), "kendall_tau": json_number(s.kendall_tau)}
                       for s in comparison.per_system],
        "disagreeing_queries": [{"qid": q.qid, "measure": q.measure, "disagreement": json_number(q.disagreement),
                                 "mean_difference": json_number(q.mean_difference),
                                 "kendall_tau": json_number(q.kendall_tau),
                                 "scores": {name: {"reference": json_number(x), "other": json_number(y)}
                                            for name, x, y in q.scores}} for q in comparison.disagreeing_queries],
    }


def compare_judgments(
    evaluations: Mapping[str, Mapping[str, Evaluation]],
    qrels: Mapping[str, QrelsLike],
    reference: str | None = None,
    baseline: str | None = None,
    measures: Sequence[Measure | str] | None = None,
    *,
    alpha: float = ALPHA,
    seed: int = 42,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    large_n: int = LARGE_N,
    filled: Mapping[str, tuple[str, int]] | None = None,
    most_queries: int = MOST_QUERIES,
    reference_comparisons: object | None = None,
) -> JudgmentComparison:
    """Every judgment set other than the reference compared with it, on the labels and on the systems.

    evaluations: {set: {system: evaluate(run, that set's qrels, ...)}}, the same systems and parameters
    under every set (empty: label agreement only). qrels: {set: judgements}, in order; the reference is
    `reference` (default: the first). baseline: the system the verdicts compare with (None: no
    verdicts). measures: those compared (default: every evaluated measure that is not a count).
    filled: {set: (the set it was filled from, pairs filled)} for sets made by fill_unjudged. The
    verdicts are the report's (stats.paired.compare_systems with seed, n_resamples, confidence and
    large_n; Holm over the systems, at alpha); tau-b's interval resamples the queries n_resamples times
    at `confidence` (orders.tau_interval, its stream named by the set and the measure). reference_comparisons:
    the reference's compare_systems table of the systems against the baseline with these settings, if known
    (compare_runs passes its own: not computed twice). Raises InputError for a set sharing no query or pair
    with the reference, ParameterError for evaluations that do not match.
    """
    sets = {name: load_qrels(value) for name, value in qrels.items()}
    reference = next(iter(sets), "") if reference is None else reference
    aligned = check_comparable_sets(sets, reference)
    systems, chosen = _check_evaluations(evaluations, sets, baseline, measures)
    filled = dict(filled or {})
    means = {name: system_means(evaluations.get(name, {}), chosen) for name in sets}
    known = {reference: reference_comparisons} if reference_comparisons is not None else {}
    tables = verdict_tables(evaluations, baseline, seed=seed, n_resamples=n_resamples, confidence=confidence,
                            large_n=large_n, known=known) if baseline is not None else {}
    evaluated = next(iter(evaluations[reference].values())).measures if systems else ()
    comparisons = []
    for name, shared in aligned.items():
        ref_systems, other_systems = evaluations.get(reference, {}), evaluations.get(name, {})
        comparisons.append(SetComparison(
            name=name,
            agreement=label_agreement(shared.reference, shared.other, only_reference=shared.only_reference,
                                      only_other=shared.only_other),
            shared_queries=len(shared.shared_queries),
            only_reference_queries=len(shared.reference_queries - shared.other_queries),
            only_other_queries=len(shared.other_queries - shared.reference_queries),
            orders=tuple(system_order(means[reference][m.label], means[name][m.label], m.label, tau_interval(
                ref_systems, other_systems, m, ordered_systems(means[reference][m.label], means[name][m.label]),
                stream(seed, "judges tau-b", name, m.label), n_resamples, confidence) if systems else (nan, nan))
                for m in chosen),
            verdicts=verdicts(tables.get(reference), tables.get(name), evaluated, chosen, alpha),
            per_system=tuple(row for m in chosen for row in system_queries(ref_systems, other_systems, m))
            if systems else (),
            disagreeing_queries=tuple(row for m in chosen
                                      for row in query_scores(ref_systems, other_systems, m, most_queries))
            if systems else (),
        ))
    return JudgmentComparison(
        reference=reference, sets=tuple(_judgment_set(name, qrels_set, filled.get(name)) for name, qrels_set in sets.items()),
        systems=systems, baseline=baseline, measures=chosen, means=means, comparisons=tuple(comparisons),
        alpha=alpha, seed=int(seed), n_resamples=int(n_resamples), lacking=coverage(evaluations) if systems else (),
    )


def _judgment_set(name: str, qrels: Qrels, filled: tuple[str, int] | None) -> JudgmentSet:
    import pyarrow.compute as pc

    return JudgmentSet(name=name, path=qrels.path, judgments=qrels.table.num_rows,
                       queries=len(pc.unique(qrels.table["qid"])), filled_from=filled[0] if filled else "",
                       filled_pairs=int(filled[1]) if filled else 0)


def _check_evaluations(evaluations: Mapping[str, Mapping[str, Evaluation]], sets: Mapping[str, Qrels],
                       baseline: str | None, measures: Sequence[Measure | str] | None) -> tuple[tuple[str, ...], tuple]:
    """(the systems, the measures compared); ParameterError unless every set has the same systems, all
    evaluated with the same measures and policies, and the baseline and measures are among them."""
    if not evaluations or not any(evaluations.values()):
        if baseline is not None:
            raise ParameterError("a baseline needs systems: give the systems' evaluations under every set")
        return (), ()
    if list(evaluations) != list(sets):
        raise ParameterError(f"evaluations are given for the sets {', '.join(map(repr, evaluations))}; give them for "
                             f"every judgment set, in the same order: {', '.join(map(repr, sets))}")
    systems = tuple(next(iter(evaluations.values())))
    first = next(iter(next(iter(evaluations.values())).values()))
    for set_name, by_system in evaluations.items():
        if tuple(by_system) != systems:
            raise ParameterError(f"judgment set {set_name!r} has the systems {', '.join(map(repr, by_system))}; every "
                                 f"set needs the same systems: {', '.join(map(repr, systems))}")
        for system, evaluation in by_system.items():
            try:
                check_comparable(evaluation, first)
            except ParameterError as exc:
                raise ParameterError(f"{system!r} under {set_name!r}: {exc}") from None
    if baseline is not None and baseline not in systems:
        raise ParameterError(f"the baseline {baseline!r} is not one of the systems {', '.join(map(repr, systems))}")
    if measures is None:
        chosen = tuple(m for m in first.measures if m.kind != "count")
    else:
        chosen = tuple(dict.fromkeys(measure_of(m, first.measures) for m in measures))
    if not chosen:
        raise ParameterError("no measure to compare the systems on (counts are not compared); add one such as nDCG@10")
    return systems, chosen
