"""A build's parameters (build/parameters.py): drill-downs bounded by their product with the depth, refused
with one line before any work."""

from __future__ import annotations

import time

import pytest

from ndcg_report.errors import ParameterError
from tests.helpers import BASELINE as BM25, QRELS, RUN as MONOT5, cli, one_line


def test_drilldowns_times_their_depth_past_the_limit_is_one_line_before_any_work(tmp_path):
    started = time.monotonic()
    result = cli("build", "--run", MONOT5, "--qrels", QRELS, "--baseline", BM25, "--drilldown", "100000",
                 "--drilldown-depth", "1000", "--out", tmp_path / "out")
    one_line(result, 2, "drilldown 100,000 x drilldown_depth 1,000 asks for 100,000,000 ranked documents per system")
    assert time.monotonic() - started < 10 and not (tmp_path / "out").exists()


def test_the_drilldown_limit_is_on_the_product():
    from ndcg_report.analysis.drilldown import MAX_DRILLDOWN_ROWS
    from ndcg_report.build.parameters import validate_parameters

    given = dict(runs=[str(MONOT5)], qrels=str(QRELS), baseline=str(BM25))
    assert validate_parameters(**given, drilldown=MAX_DRILLDOWN_ROWS // 10, drilldown_depth=10).drilldown == 5000
    with pytest.raises(ParameterError, match="more than 50,000"):
        validate_parameters(**given, drilldown=MAX_DRILLDOWN_ROWS // 10 + 1, drilldown_depth=10)
