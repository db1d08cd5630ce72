"""The gate's verdict: each system and gated measure of two builds, paired by query, tested one-sided, with a status.

`not comparable` is decided first (other qrels or topics, another relevance level, gain or averaging,
fewer than MIN_SHARED queries scored in both), then `unchanged` (the same run, qrels and topics
sha256: no test), then the one-sided paired randomization tests, Holm-adjusted over the systems x
measures tested: `regression`, `warning`, `improved` or `pass`; `new` and `gone` for a system in one
build only.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from ndcg_report.analysis.gate.built import AVERAGING, BuiltReport
from ndcg_report.analysis.text import p_phrase, signed
from ndcg_report.errors import ParameterError
from ndcg_report.stats.one_sided import one_sided_pvalues
from ndcg_report.stats.resampling import pvalue_floor
from ndcg_report.stats.paired import holm
from ndcg_report.stats.resampling import bootstrap_mean_interval
from ndcg_report.stats.streams import stream

MIN_SHARED = 5  # queries scored in both builds, fewer: not comparable
MAX_LOSERS = 20  # queries listed per system that did not pass; the rest counted
# every status, the most severe first: the verdict's own status is the most severe of its results
STATUSES = ("regression", "warning", "not comparable", "gone", "new", "pass", "improved", "unchanged")
FAILING = ("regression",)


@dataclass
class GateResult:
    """One system on one measure: the means on the queries both builds scored, the test, the status."""

    system: str
    measure: str
    status: str
    reason: str = ""
    before: float | None = None
    after: float | None = None
    delta: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p: float | None = None  # one-sided: is AFTER worse?
    p_holm: float | None = None
    p_better: float | None = None  # the mirror test: is AFTER better?
    p_better_holm: float | None = None
    queries: int = 0  # scored in both builds
    losers: list[dict] = field(default_factory=list)
    losers_beyond: int = 0  # queries that fell too, not listed

    def line(self, confidence: float = 0.95, floors: tuple[float | None, float | None] = (None, None)) -> str:
        """The one-line verdict: 'regression: monoT5 nDCG@10 0.7215 -> 0.6372 (-0.0843, 95% CI [...]), p = ...'
        (a p-value at its floor, GateVerdict.floors, as '≤')."""
        head = f"{self.status}: {self.system} {self.measure}"
        if self.status in ("not comparable", "new", "gone") or self.delta is None:
            return f"{head}: {self.reason}" if self.reason else head
        text = f"{head} {self.before:.4f} -> {self.after:.4f} ({signed(self.delta)}"
        if self.ci_low is not None:
            text += f", {confidence:.0%} CI [{signed(self.ci_low)}, {signed(self.ci_high)}]"
        text += ")"
        if self.p is not None:
            text += f", one-sided p {p_phrase(self.p, floors[0])}, Holm's p {p_phrase(self.p_holm, floors[1])}"
        text += f", {self.queries} queries"
        return text + (f"; {self.reason}" if self.reason else "")


@dataclass
class GateVerdict:
    """Every result of one gate (BEFORE against AFTER), and what it was run with."""

    before: str
    after: str
    title: str
    measures: tuple[str, ...]
    margin: float
    alpha: float
    confidence: float
    seed: int
    n_resamples: int
    results: list[GateResult]

    @property
    def status(self) -> str:
        """The most severe status of the results (STATUSES' order); 'unchanged' with none."""
        found = {result.status for result in self.results}
        return next((status for status in STATUSES if status in found), "unchanged")

    @property
    def floors(self) -> tuple[float, float]:
        """The smallest one-sided p and Holm-adjusted p the resampling gives: 1 / (R + 1), times the tests (a p
        there says only that the true one is at most that)."""
        tested = sum(result.p is not None for result in self.results)
        return pvalue_floor(self.n_resamples, sides=1), pvalue_floor(self.n_resamples, sides=1, multiplier=max(1, tested))

    @property
    def failed(self) -> bool:
        return any(result.status in FAILING for result in self.results)

    @classmethod
    def from_dict(cls, record: dict) -> GateVerdict:
        """The verdict of its JSON object (to_dict's, as gate.json holds it)."""
        known = {item.name for item in fields(GateResult)}
        results = [GateResult(**{key: value for key, value in result.items() if key in known})
                   for result in record["results"]]
        return cls(str(record["before"]), str(record["after"]), str(record["title"]), tuple(record["measures"]),
                   float(record["margin"]), float(record["alpha"]), float(record["confidence"]), int(record["seed"]),
                   int(record["n_resamples"]), results)

    def to_dict(self) -> dict:
        """The JSON object: a top `status`, what it was run with, and `results` (NaN as null)."""
        return {"status": self.status, "before": self.before, "after": self.after, "title": self.title,
                "measures": list(self.measures), "margin": self.margin, "alpha": self.alpha,
                "confidence": self.confidence, "seed": self.seed, "n_resamples": self.n_resamples,
                "test": "one-sided paired randomization (sign flips of the per-query deltas), Holm over the systems "
                        "x measures tested",
                "results": [{key: _plain(value) for key, value in asdict(result).items()} for result in self.results]}


def gated_measures(before: BuiltReport, after: BuiltReport, asked: str = "") -> tuple[str, ...]:
    """The labels of the measures to gate: those asked (names separated by spaces, any spelling), else
    AFTER's headline; ParameterError for one that is not in both reports."""
    labels = asked_labels(asked, str(after.parameters["headline"]))
    for label in labels:
        lacking = [report for report in (before, after) if label not in report.measures]
        if lacking:
            report = lacking[0]
            raise ParameterError(f"-m {label}: not a measure of {report.label} {report.folder} (it has "
                                 f"{', '.join(report.measures)}); gate a measure both reports computed")
    return labels


def asked_labels(asked: str, headline: str) -> tuple[str, ...]:
    """The labels of the measures a gate is asked for (names separated by spaces, any spelling), else the headline."""
    from ndcg_report.core.measures.names import resolve_measures

    return tuple(m.label for m in resolve_measures(asked).measures) if asked else (headline,)


def not_comparable_reason(before: BuiltReport, after: BuiltReport) -> str:
    """Why the two builds' numbers cannot be compared at all ('' if they can): other qrels or topics
    (sha256), another relevance level, gain or averaging."""
    reasons = []
    if before.judgments_sha256() != after.judgments_sha256():
        reasons.append("the qrels differ (sha256)")
    if before.sha256("topics") != after.sha256("topics"):
        reasons.append("the topics differ (sha256)")
    for key in AVERAGING:
        old, new = before.parameters.get(key), after.parameters.get(key)
        if old != new:
            reasons.append(f"{key.replace('_', ' ')} differs ({old} -> {new})")
    return "; ".join(reasons)


def gate(before: BuiltReport, after: BuiltReport, measures: tuple[str, ...], margin: float = 0.0,
         alpha: float = 0.05) -> GateVerdict:
    """The verdict of AFTER against BEFORE on measures (labels both reports computed: gated_measures)."""
    parameters = after.parameters
    seed, n_resamples, confidence = int(parameters["seed"]), int(parameters["n_resamples"]), float(parameters["confidence"])
    reason = not_comparable_reason(before, after)
    results: list[GateResult] = []
    for system in after.systems:
        for measure in measures:
            if system not in before.systems:
                results.append(_one_side(after, system, measure, "new", f"not in {before.label}"))
            elif reason:
                results.append(GateResult(system, measure, "not comparable", reason))
            else:
                results.append(_tested(before, after, system, measure, seed, n_resamples, confidence))
    results += [_one_side(before, system, measure, "gone", f"not in {after.label}")
                for system in before.systems if system not in after.systems for measure in measures]
    tested = [result for result in results if result.p is not None]
    for key in ("p", "p_better"):
        adjusted = holm(np.array([getattr(result, key) for result in tested], dtype=np.float64))
        for result, value in zip(tested, adjusted):
            setattr(result, f"{key}_holm", float(value))
    for result in tested:
        result.status = _status(result, margin, alpha)
        if result.status in ("regression", "warning"):
            _add_losers(result, before, after)
    return GateVerdict(str(before.folder), str(after.folder), after.title, measures, margin, alpha, confidence, seed,
                       n_resamples, results)


def _one_side(report: BuiltReport, system: str, measure: str, status: str, reason: str) -> GateResult:
    values = _values(report, system, measure)
    mean = float(np.mean(list(values.values()))) if values else None
    side = {"after": mean} if status == "new" else {"before": mean}
    return GateResult(system, measure, status, reason, queries=len(values), **side)


def _values(report: BuiltReport, system: str, measure: str) -> dict[str, float]:
    table = report.values
    rows = table[(table["system"] == system) & (table["measure"] == measure)]
    return dict(zip(rows["qid"], rows["value"].astype(float)))


def _paired(before: BuiltReport, after: BuiltReport, system: str, measure: str):
    old, new = _values(before, system, measure), _values(after, system, measure)
    qids = sorted(set(old) & set(new), key=lambda qid: qid.encode("utf-8"))
    return qids, np.array([old[q] for q in qids], dtype=np.float64), np.array([new[q] for q in qids], dtype=np.float64)


def _tested(before: BuiltReport, after: BuiltReport, system: str, measure: str, seed: int, n_resamples: int,
            confidence: float) -> GateResult:
    qids, x, y = _paired(before, after, system, measure)
    result = GateResult(system, measure, "pass", queries=len(qids))
    if len(qids):
        result.before, result.after, result.delta = float(x.mean()), float(y.mean()), float((y - x).mean())
    if len(qids) < MIN_SHARED:
        result.status = "not comparable"
        result.reason = f"{len(qids)} quer{'y' if len(qids) == 1 else 'ies'} scored in both builds; {MIN_SHARED} needed"
        return result
    if before.run_sha256(system) is not None and before.run_sha256(system) == after.run_sha256(system):
        result.status, result.reason = "unchanged", "the same run, qrels and topics (sha256)"
        return result
    d = y - x
    result.ci_low, result.ci_high = bootstrap_mean_interval(d, stream(seed, "gate", "bootstrap", system, measure),
                                                            n_resamples, confidence)
    result.p, result.p_better = one_sided_pvalues(d, stream(seed, "gate", "flips", system, measure), n_resamples)
    return result


def _status(result: GateResult, margin: float, alpha: float) -> str:
    """regression, warning, improved or pass of a tested result (its Holm p-values set)."""
    drop = -result.delta
    at_margin = drop > 0 and drop >= margin
    if result.p_holm < alpha and at_margin:
        return "regression"
    if result.p < alpha <= result.p_holm:
        result.reason = "a drop significant before Holm's adjustment, not after"
        return "warning"
    if margin > 0 and at_margin and result.p_holm >= alpha:
        result.reason = f"a drop of at least the margin ({margin:g}), not significant"
        return "warning"
    if result.p_better_holm < alpha and result.delta > 0:
        return "improved"
    return "pass"


def _add_losers(result: GateResult, before: BuiltReport, after: BuiltReport) -> None:
    """The queries that fell most (at most MAX_LOSERS; losers_beyond counts the rest), each with the
    unjudged documents of AFTER's top k that were not in BEFORE's (None where a report has no unjudged.tsv
    or the depths differ)."""
    qids, x, y = _paired(before, after, result.system, result.measure)
    fell = sorted((float(y[i] - x[i]), qids[i].encode("utf-8"), i) for i in range(len(qids)) if y[i] < x[i])
    comparable_pools = before.unjudged_depth is not None and before.unjudged_depth == after.unjudged_depth
    for delta, _, i in fell[:MAX_LOSERS]:
        qid = qids[i]
        new = (sorted(after.unjudged.get((result.system, qid), frozenset())
                      - before.unjudged.get((result.system, qid), frozenset())) if comparable_pools else None)
        result.losers.append({"qid": qid, "query": after.queries.get(qid, before.queries.get(qid)),
                              "before": float(x[i]), "after": float(y[i]), "delta": delta, "unjudged": new})
    result.losers_beyond = max(0, len(fell) - MAX_LOSERS)


def _plain(value: object) -> object:
    """A JSON value: NaN and infinities as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def untested_verdict(before: str, after: BuiltReport, measures: tuple[str, ...], status: str, reason: str,
                     margin: float = 0.0, alpha: float = 0.05) -> GateVerdict:
    """A verdict without a test: every system of AFTER on measures with one status and reason (a first build's
    `new`, a report not rebuilt's `unchanged`, `not comparable` where the build gated against cannot be read)."""
    parameters = after.parameters
    results = []
    for system in after.systems:
        for measure in measures:
            values = _values(after, system, measure)
            mean = float(np.mean(list(values.values()))) if values else None
            same = {"before": mean, "delta": 0.0} if status == "unchanged" and mean is not None else {}
            results.append(GateResult(system, measure, status, reason, after=mean, queries=len(values), **same))
    return GateVerdict(before, str(after.folder), after.title, measures, margin, alpha, float(parameters["confidence"]),
                       int(parameters["seed"]), int(parameters["n_resamples"]), results)
