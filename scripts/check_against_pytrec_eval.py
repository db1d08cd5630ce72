"""Every per-query value of `ndcg-report eval --format trec` on the shipped TREC DL 2019 runs against
pytrec_eval (trec_eval's own code), at relevance levels 1 and 2, for P, recall, map, map_cut,
recip_rank, Rprec, ndcg_cut, ndcg and success; prints how many values were compared and the largest
difference. Needs the dev extra (pytrec_eval).

    .venv/bin/python scripts/check_against_pytrec_eval.py
"""
import subprocess
import sys
from pathlib import Path
import pytrec_eval
ROOT = Path(__file__).resolve().parents[1]
P = str(ROOT / "src/ndcg_report/data/dl19-passage") + "/"
qrels_path = P + "qrels.dl19-passage.txt"
runs = ["monot5.dl19.run.gz", "rrf.bm25-monot5.dl19.run.gz", "interp.bm25-monot5.dl19.run.gz",
        "monot5-top20-bm25.dl19.run.gz", "run.msmarco-v1-passage.bm25-default.dl19.txt.gz"]
measures = ["P.5,10,20,100,1000", "recall.5,10,100,1000", "map", "map_cut.10,100,1000", "recip_rank", "Rprec",
            "ndcg_cut.5,10,100,1000", "ndcg", "success.1,5,10"]
import gzip
def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return f.read()
qrels = pytrec_eval.parse_qrel(open(qrels_path))
total = 0; worst = 0.0
for level in (1, 2):
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(measures), relevance_level=level)
    for name in runs:
        run = pytrec_eval.parse_run(read(P + name).splitlines())
        ref = ev.evaluate(run)
        args = [sys.executable, "-m", "ndcg_report.cli", "eval", qrels_path, P + name, "-q", "-l", str(level), "--format", "trec", "--digits", "10"]
        for m in measures: args += ["-m", m]
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            measure, qid, value = line.split()
            if qid == "all" or measure in ("num_q", "runid", "num_ret", "num_rel", "num_rel_ret"):
                continue
            if qid not in ref:
                continue
            diff = abs(float(value) - ref[qid][measure]); total += 1; worst = max(worst, diff)
print(f"{total} per-query values compared, largest difference {worst:.2e}")
