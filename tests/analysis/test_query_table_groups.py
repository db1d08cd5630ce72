"""The report's per-query tables (all queries; largest wins and losses) show each query's group when groups are given."""

from __future__ import annotations

import re
from types import SimpleNamespace

from ndcg_report import compare_runs
from ndcg_report.analysis.results import query_table_html, wins_and_losses
from tests.helpers import BASELINE, QRELS, RUN

FOLDS = {"1": ["1037798", "104861"], "2": ["1063750", "1103812", "1106007"]}  # the other three in no group


def report(groups=None) -> SimpleNamespace:
    experiment = compare_runs({"monoT5": RUN}, QRELS, baseline=BASELINE, baseline_name="BM25", groups=groups)
    return SimpleNamespace(experiment=experiment, topics=None, params=None)


def test_the_all_queries_table_has_a_group_column_with_each_query_s_group():
    html = query_table_html(report(FOLDS))
    assert re.search(r'<th class="text">qid</th><th class="text">group</th><th class="num">BM25</th>', html)
    rows = dict(re.findall(r'<tr><td class="text">(?:<a[^>]*>)?(\d+)(?:</a>)?</td><td class="text">([^<]*)</td>', html))
    assert len(rows) == 8 and {qid: rows[qid] for qid in ("1037798", "1063750")} == {"1037798": "1", "1063750": "2"}
    assert sorted(set(rows.values())) == ["(no group)", "1", "2"] and list(rows.values()).count("(no group)") == 3


def test_wins_and_losses_show_the_group_and_nothing_changes_without_groups():
    wins, losses = wins_and_losses(report(FOLDS), "monoT5")
    assert list(wins.columns) == ["qid", "group", "monoT5", "BM25", "delta"]
    group_of = {qid: group for group, qids in FOLDS.items() for qid in qids}
    for table in (wins, losses):
        assert list(table["group"]) == [group_of.get(qid, "(no group)") for qid in table["qid"]]
    plain_wins, _ = wins_and_losses(report(), "monoT5")
    assert list(plain_wins.columns) == ["qid", "monoT5", "BM25", "delta"]
    assert plain_wins.equals(wins.drop(columns="group"))
    assert "<th class=\"text\">group</th>" not in query_table_html(report())
