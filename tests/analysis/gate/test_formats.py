"""The gate's JSON, JUnit XML, Markdown and text: every hostile name and query text escaped for its format."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
from junitparser import Failure, JUnitXml, Skipped

from ndcg_report.analysis.gate.formats import junit_xml, markdown_summary, text_lines, verdict_json
from ndcg_report.analysis.gate.verdict import GateResult, GateVerdict
from ndcg_report.commands.output import one_line

HOSTILE = "a|b`c <x> & \"q\" *em* _u_ [l](j) \x1b[31m \x00 \u202e ]]>"
QUERY = "why </failure> | `rm` \x07 \n second line"


@pytest.fixture
def verdict():
    loser = {"qid": "q|1", "query": QUERY, "before": 0.9, "after": 0.1, "delta": -0.8, "unjudged": ["d<1>"]}
    results = [
        GateResult(HOSTILE, "nDCG@10", "regression", "", 0.7, 0.6, -0.1, -0.15, -0.05, 0.001, 0.002, 1.0, 1.0, 43,
                   [loser], 3),
        GateResult("ICT-BERT2", "nDCG@10", "warning", "a drop significant before Holm's adjustment, not after",
                   0.7, 0.69, -0.01, -0.03, 0.0, 0.03, 0.06, 0.9, 1.0, 43),
        GateResult("RRF", "nDCG@10", "not comparable", "the qrels differ (sha256)"),
        GateResult("BM25", "nDCG@10", "unchanged", "the same run, qrels and topics (sha256)", 0.5, 0.5, 0.0, queries=43),
    ]
    return GateVerdict("before", "after", "t", ("nDCG@10",), 0.0, 0.05, 0.95, 42, 10_000, results)


def test_json_holds_every_text_as_given(verdict):
    record = json.loads(verdict_json(verdict))
    assert record["status"] == "regression"
    first = record["results"][0]
    assert first["system"] == HOSTILE and first["losers"][0]["query"] == QUERY
    assert set(first) >= {"system", "measure", "before", "after", "delta", "ci_low", "ci_high", "p", "p_holm", "status",
                          "reason", "losers"}
    assert [r["status"] for r in record["results"]] == ["regression", "warning", "not comparable", "unchanged"]


def test_junit_has_one_suite_a_case_per_system_a_failure_and_a_skip(verdict, tmp_path):
    text = junit_xml([("report <1>", verdict), ("second", verdict)])
    root = ET.fromstring(text.encode("utf-8"))  # well-formed: no raw control character, no unescaped markup
    assert root.tag == "testsuites" and root.get("tests") == "8" and root.get("failures") == "2"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["report <1>", "second"]
    cases = suites[0].findall("testcase")
    assert [c.get("name") for c in cases][1:] == ["ICT-BERT2 nDCG@10", "RRF nDCG@10", "BM25 nDCG@10"]
    assert cases[0].get("name") == HOSTILE.replace("\x1b", "\\x1b").replace("\x00", "\\x00").replace("\u202e", "\\u202e") + " nDCG@10"
    assert cases[0].find("failure").get("message").startswith("regression: a|b`c <x>")
    assert '"why </failure> | `rm` \\u0007 \\n second line"' in cases[0].find("failure").text
    assert cases[1].find("failure") is None and "before Holm" in cases[1].find("system-out").text
    assert cases[2].find("skipped").get("message") == "not comparable: RRF nDCG@10: the qrels differ (sha256)"
    path = tmp_path / "gate.xml"
    path.write_text(text, encoding="utf-8")
    parsed = JUnitXml.fromfile(str(path))
    suite = next(iter(parsed))
    assert (suite.tests, suite.failures, suite.skipped, suite.errors) == (4, 1, 1, 0)
    outcomes = {case.name: [type(item).__name__ for item in case.result] for case in suite}
    assert outcomes["RRF nDCG@10"] == [Skipped.__name__] and outcomes["ICT-BERT2 nDCG@10"] == []
    assert [type(item) for item in next(iter(suite)).result] == [Failure]


def test_markdown_escapes_what_markdown_reads_and_nothing_else(verdict):
    text = markdown_summary([("report", verdict)])
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert "| warning | ICT-BERT2 | nDCG@10 |" in text  # a hyphen is no markup
    hostile_row = next(row for row in rows if "regression" in row)
    assert "a\\|b\\`c &lt;x&gt; &amp; \"q\" \\*em\\* \\_u\\_ \\[l\\](j)" in hostile_row
    assert len(re.findall(r"(?<!\\)\|", hostile_row)) == 10  # the name's pipe is escaped: still nine cells
    assert r"\\x1b\[31m \\x00 \\u202e" in hostile_row and "\x1b" not in text and "\x00" not in text
    loser_row = next(row for row in rows if row.startswith("| q\\|1 |"))
    assert "why &lt;/failure&gt; \\| \\`rm\\`" in loser_row and "second line" in loser_row and "\n" not in loser_row


def test_text_lines_printed_one_by_one_hold_no_control_character(verdict):
    lines = [one_line(line) for line in text_lines("report", verdict)]
    assert lines[0].startswith("gate report: regression (1 regression, 1 warning, 1 not comparable, 1 unchanged)")
    assert all("\x1b" not in line and "\x07" not in line and "\x00" not in line for line in lines)
    assert any("\\x1b[31m" in line for line in lines)
    assert any(line.startswith("    fell: query q|1 ") and "1 new unjudged in the top k: d<1>" in line for line in lines)
    assert lines[-3] == "  warning: ICT-BERT2 nDCG@10 0.7000 -> 0.6900 (-0.0100, 95% CI [-0.0300, +0.0000]), one-sided p " \
                        "= 0.0300, Holm's p = 0.0600, 43 queries; a drop significant before Holm's adjustment, not after"
