"""What a change of judgment set does to the systems: their orders, verdicts and per-query scores.

Each function takes the systems' Evaluations under the reference set and under one other set (same
systems, same measures and policies) and returns plain records. A system's mean under a set is
`Evaluation.overall`, what `eval` prints for it on that set. Verdicts reuse stats.paired's
compare_systems, the test and Holm family of the report's verdicts, under each set alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ndcg_report.core.evaluation import Evaluation
from ndcg_report.core.measures.names import Measure
from ndcg_report.stats.paired import CONFIDENCE, N_RESAMPLES, compare_systems
from ndcg_report.stats.rank_correlation import kendall_tau_b, spearman_rho, tau_ap, tau_b_interval
from ndcg_report.stats.resampling import LARGE_N

BETTER, WORSE, NO_DIFFERENCE = "better", "worse", "no difference"
VERDICT_TEST = "paired randomization test, Holm-adjusted over the systems compared with the baseline on one measure"


@dataclass(frozen=True)
class SystemOrder:
    """The systems ordered by their means under the reference and under the other set, on one measure:
    Kendall's tau-b, tau_AP (the reference as the true order) and Spearman's rho; the best systems
    under each (every system with the highest mean: ties are all best) and whether some system is best
    under both (same_best_system; as for tau_AP, a tie of the reference allows either of its systems)."""

    measure: str
    n_systems: int
    kendall_tau: float
    tau_ap: float
    spearman: float
    best_reference: tuple[str, ...]
    best_other: tuple[str, ...]
    kendall_tau_interval: tuple[float, float] = (math.nan, math.nan)  # tau_interval's bootstrap over queries

    @property
    def same_best_system(self) -> bool:
        return bool(set(self.best_reference) & set(self.best_other))


@dataclass(frozen=True)
class Verdict:
    """One system against the baseline on one measure under the reference and under the other set:
    better, worse or no difference at alpha (stats.paired: randomization test, Holm over the systems),
    with the mean delta and the Holm-adjusted p-value under each."""

    system: str
    measure: str
    reference: str
    other: str
    reference_delta: float
    other_delta: float
    reference_p: float
    other_p: float

    @property
    def differs(self) -> bool:
        return self.reference != self.other


@dataclass(frozen=True)
class QueryScores:
    """One query on one measure: how far the systems' scores move between the sets. `disagreement` is
    the mean over the systems of |score under the other set - score under the reference| (the
    measure's units: 0 the sets agree on every system, 1 the most an nDCG can move);
    `mean_difference` the same without the absolute value (> 0: the other set scores higher);
    `kendall_tau` the tau-b of the systems' order on this query under the two sets (NaN with fewer than
    two systems or one set scoring them all alike). `scores`: (system, reference, other) each."""

    qid: str
    measure: str
    disagreement: float
    mean_difference: float
    kendall_tau: float
    scores: tuple[tuple[str, float, float], ...]


@dataclass(frozen=True)
class SystemQueries:
    """One system on one measure: its per-query scores under the two sets over the queries both sets
    judge and average and the run has (a query it lacks scores 0 under both: left out), correlated (Pearson's r, Kendall's tau-b): does the other set see the same easy
    and hard queries?"""

    system: str
    measure: str
    n_queries: int
    pearson: float
    kendall_tau: float


@dataclass(frozen=True)
class RunCoverage:
    """One run under one set: how many of the set's judged queries it lacks (in_qrels - in_both)."""

    system: str
    set: str
    lacking: int
    judged: int


def coverage(evaluations: Mapping[str, Mapping[str, Evaluation]]) -> tuple[RunCoverage, ...]:
    """Every (run, set) where the run lacks some of the set's judged queries, by run then set."""
    found = [RunCoverage(system, set_name, e.counts.in_qrels - e.counts.in_both, e.counts.in_qrels)
             for set_name, systems in evaluations.items() for system, e in systems.items()]
    order = {system: i for i, system in enumerate(next(iter(evaluations.values()), {}))}
    return tuple(sorted((c for c in found if c.lacking), key=lambda c: order[c.system]))


def means(evaluations: Mapping[str, Evaluation], measures: Sequence[Measure]) -> dict[str, dict[str, float]]:
    """{measure label: {system: mean}}: each system's `overall` (eval's `all` row) on each measure."""
    return {m.label: {name: float(e.overall(m)) for name, e in evaluations.items()} for m in measures}


def system_order(reference: Mapping[str, float], other: Mapping[str, float], measure: str,
                 interval: tuple[float, float] = (math.nan, math.nan)) -> SystemOrder:
    """The correlations of the systems' order under the two sets (systems with a finite mean under both);
    `interval`: tau-b's (tau_interval)."""
    names = ordered_systems(reference, other)
    x = np.array([reference[name] for name in names], dtype=np.float64)
    y = np.array([other[name] for name in names], dtype=np.float64)
    return SystemOrder(measure=measure, n_systems=len(names), kendall_tau=kendall_tau_b(x, y), tau_ap=tau_ap(x, y),
                       spearman=spearman_rho(x, y), best_reference=_best(names, x), best_other=_best(names, y),
                       kendall_tau_interval=interval)


def ordered_systems(reference: Mapping[str, float], other: Mapping[str, float]) -> list[str]:
    """The systems with a finite mean under both sets, in the reference's order."""
    return [name for name in reference if math.isfinite(reference[name]) and math.isfinite(other.get(name, math.nan))]


def tau_interval(reference: Mapping[str, Evaluation], other: Mapping[str, Evaluation], measure: Measure,
                 systems: Sequence[str], rng: np.random.Generator, n_resamples: int,
                 confidence: float) -> tuple[float, float]:
    """The bootstrap interval of the systems' tau-b (stats.rank_correlation.tau_b_interval) over the queries
    either set judges: each resample draws queries and takes every system's mean under each set over the
    drawn queries that set averages. (NaN, NaN) where a set's mean is not that arithmetic mean (gm_map)."""
    if len(systems) < 2:
        return math.nan, math.nan
    first, second = reference[systems[0]], other[systems[0]]
    qids = list(dict.fromkeys([*first.qids.tolist(), *second.qids.tolist()]))
    x, y = (_on_queries(evaluations, systems, measure, qids) for evaluations in (reference, other))
    for scores, evaluations in ((x, reference), (y, other)):
        with np.errstate(invalid="ignore"):
            if not np.allclose(np.nanmean(scores, axis=1), [evaluations[name].overall(measure) for name in systems],
                               rtol=0, atol=1e-12):
                return math.nan, math.nan
    return tau_b_interval(x, y, rng, n_resamples, confidence)


def _on_queries(evaluations: Mapping[str, Evaluation], systems: Sequence[str], measure: Measure,
                qids: list) -> np.ndarray:
    """systems x qids: each system's averaged values, NaN where the set does not judge or average the query."""
    where = {qid: i for i, qid in enumerate(qids)}
    scores = np.full((len(systems), len(qids)), np.nan)
    for s, name in enumerate(systems):
        e = evaluations[name]
        scores[s, [where[qid] for qid in e.qids.tolist()]] = e.column_values(measure)
    return scores


def _best(names: list[str], values: np.ndarray) -> tuple[str, ...]:
    return tuple(name for name, value in zip(names, values) if value == values.max()) if len(names) else ()


def verdict_tables(evaluations: Mapping[str, Mapping[str, Evaluation]], baseline: str, *, seed: int = 42,
                   n_resamples: int = N_RESAMPLES, confidence: float = CONFIDENCE, large_n: int = LARGE_N,
                   known: Mapping[str, object] | None = None) -> dict:
    """{set: compare_systems of every system but the baseline against it, under that set, with what a
    verdict needs (verdicts_only)}: the same statistics (and random streams) as the report's comparisons.
    known: a set's table already computed with these settings (the reference's: the report's own comparisons),
    taken as it is."""
    tables = {}
    for set_name, systems in evaluations.items():
        tested = {name: e for name, e in systems.items() if name != baseline}
        if known and set_name in known:
            tables[set_name] = known[set_name]
            continue
        tables[set_name] = compare_systems(tested, systems[baseline], baseline, seed, n_resamples, confidence,
                                           large_n, verdicts_only=True) if tested else None
    return tables


def verdicts(reference: object, other: object, evaluated: Sequence[Measure], measures: Sequence[Measure],
             alpha: float) -> tuple[Verdict, ...]:
    """Every (system, measure) verdict under the two sets (compare_systems tables, whose rows follow the
    `evaluated` measures), those that differ first, then in the systems' and measures' order."""
    if reference is None or other is None:
        return ()
    found = []
    for system in dict.fromkeys(reference.index.get_level_values("system")):
        for measure in measures:
            position = list(evaluated).index(measure)
            first, second = reference.loc[system].iloc[position], other.loc[system].iloc[position]
            found.append(Verdict(system=system, measure=measure.label, reference=_verdict(first, alpha),
                                 other=_verdict(second, alpha), reference_delta=float(first["delta"]),
                                 other_delta=float(second["delta"]), reference_p=float(first["holm_randomization_pvalue"]),
                                 other_p=float(second["holm_randomization_pvalue"])))
    return tuple(sorted(found, key=lambda v: not v.differs))  # stable: the given order within each group


def _verdict(row, alpha: float) -> str:
    """better / worse / no difference: the report's rule (Holm-adjusted randomization p < alpha, by the delta's sign)."""
    p = float(row["holm_randomization_pvalue"])
    if math.isfinite(p) and p < alpha:
        return BETTER if row["delta"] > 0 else WORSE
    return NO_DIFFERENCE


def query_tables(reference: Mapping[str, Evaluation], other: Mapping[str, Evaluation],
                 measure: Measure) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray]:
    """(qids both sets judge, in the reference's order; systems; scores under the reference and under the
    other, systems x queries, NaN where a query is not averaged)."""
    names = list(reference)
    first = next(iter(reference.values()))
    second = next(iter(other.values()))
    shared = np.isin(first.qids, second.qids)
    qids = first.qids[shared]
    where = {qid: i for i, qid in enumerate(second.qids.tolist())}
    columns = np.array([where[qid] for qid in qids.tolist()], dtype=np.int64)
    x = np.array([reference[name].column_values(measure)[shared] for name in names]).reshape(len(names), len(qids))
    y = np.array([other[name].column_values(measure)[columns] for name in names]).reshape(len(names), len(qids))
    return qids, names, x, y


def query_scores(reference: Mapping[str, Evaluation], other: Mapping[str, Evaluation], measure: Measure,
                 most: int) -> tuple[QueryScores, ...]:
    """The `most` queries where the sets disagree most on one measure (QueryScores.disagreement, largest
    first, then by qid), over the queries both sets judge with a score under both for some system."""
    qids, names, x, y = query_tables(reference, other, measure)
    found = []  # (disagreement, qid, column, systems scored under both): tau-b is computed for the `most` kept only
    for q, qid in enumerate(qids.tolist()):
        both = np.isfinite(x[:, q]) & np.isfinite(y[:, q])
        if both.any():
            found.append((float(np.abs(y[both, q] - x[both, q]).mean()), str(qid), q, both))
    found.sort(key=lambda row: (-row[0], row[1].encode("utf-8")))
    kept = []
    for disagreement, qid, q, both in found[:most]:
        kept.append(QueryScores(
            qid=qid, measure=measure.label, disagreement=disagreement,
            mean_difference=float((y[both, q] - x[both, q]).mean()), kendall_tau=kendall_tau_b(x[both, q], y[both, q]),
            scores=tuple((name, float(x[s, q]), float(y[s, q])) for s, name in enumerate(names) if both[s])))
    return tuple(kept)


def system_queries(reference: Mapping[str, Evaluation], other: Mapping[str, Evaluation],
                   measure: Measure) -> tuple[SystemQueries, ...]:
    """Per system, its per-query scores under the two sets correlated over the queries both average and
    the run has."""
    qids, names, x, y = query_tables(reference, other, measure)
    shared = np.isin(next(iter(reference.values())).qids, qids)
    rows = []
    for s, name in enumerate(names):
        both = np.isfinite(x[s]) & np.isfinite(y[s]) & reference[name].in_run[shared]
        rows.append(SystemQueries(system=name, measure=measure.label, n_queries=int(both.sum()),
                                  pearson=_pearson(x[s, both], y[s, both]), kendall_tau=kendall_tau_b(x[s, both], y[s, both])))
    return tuple(rows)


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r (scipy.stats.pearsonr); NaN with fewer than two values or one side constant."""
    from scipy import stats

    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(stats.pearsonr(x, y).statistic)
