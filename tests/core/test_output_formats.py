"""eval's per-query output (core/output_formats.py): in every format, past one chunk of queries, the
evaluation's own values."""

from __future__ import annotations

import json

from ndcg_report import evaluate
from tests.helpers import cli


def test_per_query_output_in_every_format_equals_the_evaluation(tmp_path):
    import csv
    import io

    n = 120_001  # past one chunk of QUERIES_PER_CHUNK
    lines = [f"q{i} Q0 d{i} 1 1.5 t" for i in range(n)]
    (tmp_path / "run").write_text("\n".join(lines) + "\n")
    (tmp_path / "qrels").write_text("".join(f"q{i} 0 d{i} {1 + i % 3}\n" for i in range(n)) + "qx 0 d 1\n")
    evaluation = evaluate(tmp_path / "run", tmp_path / "qrels", cutoffs="1,all")
    result = cli("eval", "-q", "-k", "1,all", "--format", "csv", tmp_path / "qrels", tmp_path / "run")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 2 * (n + 1) and rows[-1]["qid"] == "qx" and rows[-1]["in_run"] == "False"
    assert rows[2] == {"qid": "q1", "measure": "nDCG", "k": "1", "value": "1.0000", "num_ret": "1", "num_rel": "1",
                       "dcg": "2.0000", "idcg": "2.0000", "judged": "1.0000", "in_run": "True", "averaged": "True"}
    record = json.loads(cli("eval", "-q", "-k", "1,all", "--format", "json", tmp_path / "qrels", tmp_path / "run").stdout)
    assert len(record["per_query"]) == 2 * (n + 1) and record["per_query"][-2]["value"] == 0
    assert [r["qid"] for r in record["per_query"][::2]] == evaluation.qids.tolist()
    trec_lines = cli("eval", "-q", "-k", "1,all", tmp_path / "qrels", tmp_path / "run").stdout.splitlines()
    assert len(trec_lines) == 2 * (n + 1) + 2 and trec_lines[0] == "ndcg                  \tq0\t1.0000"
    assert trec_lines[-4:-2] == ["ndcg                  \tqx\t0.0000", "ndcg_cut_1            \tqx\t0.0000"]  # as -c -q
