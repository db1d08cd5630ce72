"""The report's section "Since the last build": the report being built, gated against an earlier build of it.

The report is read as `ndcg-report gate` would read its folder once published (its summary.json record,
per_query.csv and unjudged.tsv bytes): `gate BEFORE AFTER` on the two folders gives the same verdict.
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from ndcg_report.analysis import html
from ndcg_report.analysis.gate.built import BuiltReport, per_query_values, read_report, unjudged_pairs
from ndcg_report.analysis.gate.verdict import GateVerdict, gate, gated_measures
from ndcg_report.analysis.report_model import Report
from ndcg_report.analysis.text import format_p, signed

GATE_FILE = "gate.json"  # the verdict, beside the report, when it is built --against an earlier build
MARKS = {"regression": "▼ regression", "warning": "△ warning", "improved": "▲ improved"}


def built_report(report: Report, summary: dict) -> BuiltReport:
    """The report as the gate reads a built one (summary: its summary.json record)."""
    from ndcg_report.analysis.outputs import per_query_csv_chunks
    from ndcg_report.core.toplists import pool_tsv_chunks

    per_query = io.BytesIO(b"".join(bytes(chunk) for chunk in per_query_csv_chunks(report)))
    pool = b"".join(bytes(chunk) for chunk in pool_tsv_chunks(report.experiment.unjudged_pool()))
    queries = {} if report.topics is None else {str(qid): str(text) for qid, text in report.topics.items()}
    return BuiltReport(Path("."), "this report", summary,
                       per_query_values(per_query, "this report"), unjudged_pairs(pool.decode("utf-8").splitlines()),
                       queries)


def since_last_build(report: Report) -> GateVerdict | None:
    """The verdict of the report against the earlier build it was given (params.against); None without one."""
    from ndcg_report.analysis.outputs import summary_record

    params = report.params
    if params.against is None:
        return None
    before = read_report(params.against, "--against")
    after = built_report(report, summary_record(report))
    measures = gated_measures(before, after, params.gate_measures)
    return gate(before, after, measures, float(params.gate_margin), float(params.gate_alpha))


def section_html(verdict: GateVerdict | None) -> str:
    """The section: a sentence of the verdict, the table of every system and measure, and the queries that fell
    most for each that did not pass; '' without a verdict."""
    if verdict is None:
        return ""
    failing = [result for result in verdict.results if result.status in ("regression", "warning")]
    counts = pd.Series([result.status for result in verdict.results]).value_counts()
    said = ", ".join(f"{count} {status}" for status, count in counts.items())
    parts = ['<h2 id="since-last-build">Since the last build</h2>',
             html.text_html(f"Gated against {verdict.before}: {verdict.status.upper()} ({said}). Each system against its "
                            f"own earlier build on the queries both scored: a one-sided paired randomization test "
                            f"({verdict.n_resamples:,} sign flips, seed {verdict.seed}) of 'worse', Holm over the "
                            f"{sum(r.p is not None for r in verdict.results)} systems x measures tested, at α = "
                            f"{verdict.alpha:g}, margin {verdict.margin:g}; the interval is a bootstrap "
                            f"{verdict.confidence:.0%} interval of the mean delta.", "p", "note"),
             html.table_html(_table(verdict), index=False)]
    for result in failing:
        if result.losers:
            parts.append(html.text_html(f"{result.system} on {result.measure}: the queries that fell most"
                                        + (f" ({result.losers_beyond} more fell)" if result.losers_beyond else ""), "h4"))
            parts.append(html.table_html(_losers(result.losers), index=False))
    return "\n".join(parts)


def _table(verdict: GateVerdict) -> pd.DataFrame:
    rows = []
    for result in verdict.results:
        interval = ("" if result.ci_low is None else f"[{signed(result.ci_low)}, {signed(result.ci_high)}]")
        rows.append({"system": result.system, "measure": result.measure, "status": MARKS.get(result.status, result.status),
                     "before": _number(result.before), "after": _number(result.after),
                     "delta": "" if result.delta is None else signed(result.delta), "interval": interval,
                     "p (worse)": "" if result.p is None else format_p(result.p, verdict.floors[0]),
                     "Holm's p": "" if result.p_holm is None else format_p(result.p_holm, verdict.floors[1]),
                     "queries": result.queries, "why": result.reason})
    return pd.DataFrame(rows)


def _losers(losers: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{"qid": loser["qid"], "query": loser["query"] or "", "before": _number(loser["before"]),
                          "after": _number(loser["after"]), "delta": signed(loser["delta"]),
                          "new unjudged in the top k": "" if loser["unjudged"] is None else len(loser["unjudged"])}
                         for loser in losers])


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"
