"""The demo's derived runs are what scripts/make_dl19_derived_runs.py makes from the two shipped runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

from ndcg_report.build import notebook_io
from ndcg_report import evaluate

ROOT = Path(__file__).resolve().parents[2]
DL19 = Path(str(resources.files("ndcg_report") / "data" / "dl19-passage"))
DERIVED = ("rrf.bm25-monot5.dl19.run.gz", "interp.bm25-monot5.dl19.run.gz", "monot5-top20-bm25.dl19.run.gz")


def test_the_script_rebuilds_the_shipped_runs_byte_for_byte(tmp_path):
    for name in ("run.msmarco-v1-passage.bm25-default.dl19.txt.gz", "monot5.dl19.run.gz"):
        shutil.copy(DL19 / name, tmp_path / name)
    subprocess.run([sys.executable, ROOT / "scripts" / "make_dl19_derived_runs.py", "--data", tmp_path],
                   check=True, capture_output=True)
    for name in DERIVED:
        assert (tmp_path / name).read_bytes() == (DL19 / name).read_bytes(), name


def test_the_cascade_equals_monot5_down_to_rank_20_and_differs_below():
    qrels = DL19 / "qrels.dl19-passage.txt"
    cascade = evaluate(DL19 / "monot5-top20-bm25.dl19.run.gz", qrels, cutoffs="5,10,20,100")
    monot5 = evaluate(DL19 / "monot5.dl19.run.gz", qrels, cutoffs="5,10,20,100")
    for k in (5, 10, 20):
        assert (cascade.table(k) == monot5.table(k)).all().all()
    assert cascade.mean(100) != monot5.mean(100)


def test_the_rag_demo_reads_its_json_lines_and_reports_the_rag_preset():
    from ndcg_report.build.parameters import demo_values, validate_parameters

    values = demo_values("rag")
    report = notebook_io.load_report(validate_parameters(**values, drilldown=5))
    experiment = report.experiment
    assert experiment.names == ("parent document", "RRF chunks + documents") and experiment.baseline_name == "BM25 chunks"
    assert experiment.labels[:4] == ["R@1", "R@3", "R@5", "R@10"] and len(experiment.labels) == 16
    assert experiment.headline.label == "nDCG@10" and report.params.docs.name == "chunks.jsonl.gz"
    assert experiment.baseline.counts.in_qrels == 225
    formats = dict(zip(report.files["role"], report.files["format"]))
    assert formats["run: parent document"] == formats["qrels"] == "JSON lines"
    rag = Path(str(resources.files("ndcg_report") / "data" / "rag-cranfield"))
    again = evaluate(rag / "bm25-parent-doc.jsonl", rag / "qrels.jsonl", measures="nDCG@10 RR@10")
    assert experiment.evaluations["parent document"].mean("nDCG@10") == again.mean("nDCG@10")
