"""Every per-query value of `ndcg-report eval --format trec` on the shipped TREC DL 2019 runs against
pytrec_eval (trec_eval's own code), at relevance levels 1 and 2, for P, recall, map, map_cut,
recip_rank, Rprec, ndcg_cut, ndcg and success; prints how many values were compared and the largest
difference. Needs the dev extra (pytrec_eval).

    .venv/bin/python scripts/check_against_pytrec_eval.py
"""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytrec_eval

DATA = Path(__file__).resolve().parents[1] / "src" / "ndcg_report" / "data" / "dl19-passage"
QRELS = DATA / "qrels.dl19-passage.txt"
RUNS = ["monot5.dl19.run.gz", "rrf.bm25-monot5.dl19.run.gz", "interp.bm25-monot5.dl19.run.gz",
        "monot5-top20-bm25.dl19.run.gz", "run.msmarco-v1-passage.bm25-default.dl19.txt.gz"]
MEASURES = ["P.5,10,20,100,1000", "recall.5,10,100,1000", "map", "map_cut.10,100,1000", "recip_rank", "Rprec",
            "ndcg_cut.5,10,100,1000", "ndcg", "success.1,5,10"]
COUNTS = ("num_q", "runid", "num_ret", "num_rel", "num_rel_ret")


def run_lines(path: Path) -> list[str]:
    """The lines of a run, plain or gzip."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as stream:
        return stream.read().splitlines()


def main() -> None:
    with open(QRELS) as stream:
        qrels = pytrec_eval.parse_qrel(stream)
    compared, largest = 0, 0.0
    for level in (1, 2):
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES), relevance_level=level)
        for name in RUNS:
            expected = evaluator.evaluate(pytrec_eval.parse_run(run_lines(DATA / name)))
            command = [sys.executable, "-m", "ndcg_report.cli", "eval", str(QRELS), str(DATA / name), "-q",
                       "-l", str(level), "--format", "trec", "--digits", "10"]
            for measure in MEASURES:
                command += ["-m", measure]
            printed = subprocess.run(command, capture_output=True, text=True, check=True).stdout
            for line in printed.splitlines():
                measure, qid, value = line.split()
                if qid == "all" or measure in COUNTS or qid not in expected:
                    continue
                compared += 1
                largest = max(largest, abs(float(value) - expected[qid][measure]))
    print(f"{compared} per-query values compared, largest difference {largest:.2e}")


if __name__ == "__main__":
    main()
