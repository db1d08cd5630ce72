"""The gate's verdicts as CI reads them: JSON, JUnit XML, Markdown and text, every text escaped for its format.

Each takes (name, verdict) pairs: one per report (`gate` has one; a batch has one per report), so a
JUnit file holds one <testsuite> per report and one <testcase> per (system, measure).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from ndcg_report.analysis.gate.verdict import STATUSES, GateResult, GateVerdict
from ndcg_report.analysis.paper.markdown import markdown_escape
from ndcg_report.analysis.text import format_p, signed

SHOWN_LOSERS = 5  # queries per system in the Markdown summary and on the terminal (JSON and JUnit: MAX_LOSERS)
# what XML 1.0 cannot hold, even as a character reference, the C1 controls and the bidirectional overrides:
# shown as their Python escapes in XML and Markdown alike
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")

Named = Sequence[tuple[str, GateVerdict]]


def overall_status(verdicts: Named) -> str:
    """The most severe status over every verdict."""
    found = {verdict.status for _, verdict in verdicts}
    return next((status for status in STATUSES if status in found), "unchanged")


def verdict_json(verdict: GateVerdict) -> str:
    """The JSON object of one verdict (GateVerdict.to_dict), indented, ending in a newline."""
    return json.dumps(verdict.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def xml_text(text: object) -> str:
    """Text XML 1.0 can hold: every character it cannot (C0 controls but tab and line breaks, C1, lone
    surrogates; and the bidirectional overrides) as its Python escape; ElementTree escapes the rest (&, <, >,
    quotes)."""
    return _NOT_XML.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), str(text))


def junit_xml(verdicts: Named) -> str:
    """JUnit XML: <testsuites>, one <testsuite> per report, one <testcase> per (system, measure) named
    'SYSTEM MEASURE'; <failure> (message: the one-line verdict) for a regression, <skipped> for not
    comparable, a warning's line in <system-out>."""
    suites = ET.Element("testsuites", name="ndcg-report gate")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for name, verdict in verdicts:
        counts = {"tests": len(verdict.results),
                  "failures": sum(result.status == "regression" for result in verdict.results),
                  "skipped": sum(result.status == "not comparable" for result in verdict.results)}
        suite = ET.SubElement(suites, "testsuite", name=xml_text(name), errors="0", time="0",
                              **{key: str(value) for key, value in counts.items()})
        properties = ET.SubElement(suite, "properties")
        for key in ("before", "after", "status"):
            ET.SubElement(properties, "property", name=key, value=xml_text(getattr(verdict, key)))
        for result in verdict.results:
            case = ET.SubElement(suite, "testcase", name=xml_text(f"{result.system} {result.measure}"),
                                 classname=xml_text(name), time="0")
            line = xml_text(result.line(verdict.confidence, verdict.floors))
            if result.status == "regression":
                failure = ET.SubElement(case, "failure", message=line, type="regression")
                failure.text = xml_text("\n".join(loser_lines(result)))
            elif result.status == "not comparable":
                ET.SubElement(case, "skipped", message=line)
            if result.status != "regression":
                out = ET.SubElement(case, "system-out")
                out.text = xml_text("\n".join([result.line(verdict.confidence, verdict.floors), *loser_lines(result)]))
        for key in totals:
            totals[key] += counts[key]
    for key, value in totals.items():
        suites.set(key, str(value))
    suites.set("errors", "0")
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def loser_lines(result: GateResult, shown: int | None = None) -> list[str]:
    """The queries that fell most (the first `shown`, or all), one line each (query text quoted), and how
    many more fell."""
    lines = []
    for loser in result.losers[:shown]:
        query = f" {json.dumps(loser['query'], ensure_ascii=False)}" if loser["query"] else ""
        unjudged = loser["unjudged"]
        new = f", {len(unjudged)} new unjudged in the top k: {' '.join(unjudged)}" if unjudged else ""
        lines.append(f"  fell: query {loser['qid']}{query} {loser['before']:.4f} -> {loser['after']:.4f} "
                     f"({signed(loser['delta'])}){new}")
    beyond = len(result.losers) - len(result.losers[:shown]) + result.losers_beyond
    if beyond:
        lines.append(f"  and {beyond} more queries fell")
    return lines


def text_lines(name: str, verdict: GateVerdict) -> list[str]:
    """The verdict for people: a head line, then one line per result (the queries that fell most under a
    regression or a warning). Control characters are the printer's to escape (commands.output.one_line)."""
    counts = {status: sum(result.status == status for result in verdict.results) for status in STATUSES}
    said = ", ".join(f"{count} {status}" for status, count in counts.items() if count)
    lines = [f"gate {name}: {verdict.status} ({said or 'nothing to gate'}) on {', '.join(verdict.measures)}; "
             f"margin {verdict.margin:g}, alpha {verdict.alpha:g}"]
    for result in verdict.results:
        lines.append("  " + result.line(verdict.confidence, verdict.floors))
        lines += ["  " + line for line in loser_lines(result, SHOWN_LOSERS)]
    return lines


def markdown_summary(verdicts: Named) -> str:
    """A short Markdown table per report (status, system, measure, means, delta, CI, p with Holm's), and
    under it the queries that fell most of each regression or warning; every text escaped."""
    parts = [f"## ndcg-report gate: {overall_status(verdicts)}", ""]
    for name, verdict in verdicts:
        parts += [f"### {_md(name)}: {verdict.status}", "",
                  f"{', '.join(_md(m) for m in verdict.measures)}; margin {verdict.margin:g}, alpha "
                  f"{verdict.alpha:g}; one-sided paired randomization test, Holm over the systems x measures tested", "",
                  f"| status | system | measure | before | after | delta | {verdict.confidence:.0%} CI | p (Holm) | note |",
                  "| --- | --- | --- | ---: | ---: | ---: | --- | --- | --- |"]
        for r in verdict.results:
            interval = f"[{signed(r.ci_low)}, {signed(r.ci_high)}]" if r.ci_low is not None else "–"
            p = f"{format_p(r.p, verdict.floors[0])} ({format_p(r.p_holm, verdict.floors[1])})" if r.p is not None else "–"
            parts.append(f"| {'**regression**' if r.status == 'regression' else r.status} | {_md(r.system)} | "
                         f"{_md(r.measure)} | {_number(r.before)} | {_number(r.after)} | {signed(r.delta)} | "
                         f"{interval} | {p} | {_md(r.reason)} |")
        for r in verdict.results:
            if r.losers:
                parts += ["", f"Fell most, {_md(r.system)} {_md(r.measure)}:", "",
                          "| qid | query | before | after | delta |", "| --- | --- | ---: | ---: | ---: |"]
                parts += [f"| {_md(loser['qid'])} | {_md(loser['query'] or '')} | "
                          f"{loser['before']:.4f} | {loser['after']:.4f} | {signed(loser['delta'])} |"
                          for loser in r.losers[:SHOWN_LOSERS]]
                beyond = len(r.losers) - SHOWN_LOSERS + r.losers_beyond
                if beyond > 0:
                    parts += ["", f"and {beyond} more queries fell"]
        parts.append("")
    return "\n".join(parts)


def _md(text: object) -> str:
    """Markdown of a text: its control characters shown as escapes (xml_text), then markdown_escape."""
    return markdown_escape(xml_text(text))


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"
