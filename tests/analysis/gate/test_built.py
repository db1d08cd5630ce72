"""A built report as the gate reads it (analysis/gate/built.py): refused in one line, never read whole when too large."""

from __future__ import annotations

import pytest

from ndcg_report.analysis.gate.built import read_report
from ndcg_report.errors import ParameterError
from ndcg_report.files import MAX_SUMMARY_BYTES


def test_a_summary_json_past_the_limit_is_refused_without_being_read(tmp_path):
    (tmp_path / "summary.json").write_bytes(b"{")
    with open(tmp_path / "summary.json", "r+b") as handle:  # sparse: 257 MiB that take no disk
        handle.truncate(MAX_SUMMARY_BYTES + (1 << 20))
    with pytest.raises(ParameterError) as refused:
        read_report(tmp_path, "BEFORE")
    assert str(refused.value) == (f"BEFORE {tmp_path}: summary.json cannot be read ({MAX_SUMMARY_BYTES + (1 << 20):,} "
                                  "bytes, more than a report's summary.json holds); build the report again")


def test_a_suite_folder_is_refused_with_what_to_gate_instead(tmp_path):
    (tmp_path / "summary.json").write_text('{"kind": "suite", "schema_version": 4, "parameters": {}}')
    with pytest.raises(ParameterError) as refused:
        read_report(tmp_path, "AFTER")
    assert str(refused.value) == (f"AFTER {tmp_path} is a suite's folder (its means over collections have no per-query "
                                  "values); gate each collection's report (suite --with-reports: its collections/NAME "
                                  "folders)")
