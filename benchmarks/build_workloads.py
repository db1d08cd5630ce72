"""The reports build_stages.py times (--workload), each made the same way on every machine and commit.

- demo: `ndcg-report demo --out DIR`, the package's DL 2019 passage demo (BM25 and 4 systems, 43 queries).
- judges: 19 systems x 3 judgment sets on DL 2019 passage, written by make_judges_data.py (how: its
  docstring), built with its command (`-l 2`).
- queries200: 200 queries, a baseline and 7 runs of 1,000 documents a query. make_eval_data.py's
  make_run_and_qrels(200, 1000, seed=35) writes the graded qrels (grades 0-3, 100-200 judged a query)
  and the baseline run (about 3% of its queries shorter); each of the 7 runs re-ranks the baseline's
  documents of every query by the integer utility RELEVANCE * grade - position + noise, its noise drawn
  by numpy's PCG64 (`default_rng([35, run number])`, integers only) from [0, NOISE) (the RUNS table
  below), ranks written as scores DEPTH + 1 - rank. Nothing is downloaded.

    .venv/bin/python benchmarks/build_workloads.py queries200 OUT_FOLDER   # writes it, prints the command
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import numpy as np

import make_eval_data
import make_judges_data

QUERIES, DEPTH, SEED = 200, 1000, 35
RUNS = {  # name: (RELEVANCE, NOISE), in positions of the baseline's ranking per grade of the document
    "strong": (300, 200), "better": (120, 200), "slightly": (30, 60), "same": (0, 20),
    "noisy": (60, 800), "worse": (-40, 100), "shuffled": (0, 1_000_000),
}


def demo(data: Path, out: Path) -> list[str]:
    """The demo's arguments (data: unused)."""
    return ["demo", "--out", str(out)]


def judges(data: Path, out: Path) -> list[str]:
    """make_judges_data.py's report: its runs and qrels written into data."""
    return ["build", *shlex.split(" ".join(make_judges_data.main(data))), "-l", "2", "--out", str(out)]


def queries200(data: Path, out: Path) -> list[str]:
    """The 200-query report of the module's docstring: its files written into data."""
    data.mkdir(parents=True, exist_ok=True)
    run, qrels = make_eval_data.make_run_and_qrels(QUERIES, DEPTH, SEED)
    (data / "qrels.txt").write_bytes(qrels)
    (data / "base.txt").write_bytes(run)
    judged = np.array(qrels.split()).reshape(-1, 4)
    grades = {(qid, docid): int(grade) for qid, _, docid, grade in judged}
    lines = np.array(run.split()).reshape(-1, 6)
    starts = np.flatnonzero(np.r_[True, lines[1:, 0] != lines[:-1, 0]])  # each query's lines, in rank order
    blocks = [lines[start:end] for start, end in zip(starts, [*starts[1:], len(lines)])]
    command = ["build", "--qrels", str(data / "qrels.txt"), "--baseline", str(data / "base.txt"),
               "--baseline-name", "base"]
    for number, (name, (relevance, noise)) in enumerate(RUNS.items(), start=1):
        rng = np.random.default_rng([SEED, number])
        text = []
        for block in blocks:
            qid, docids = block[0, 0].decode(), block[:, 2]
            grade = np.array([grades.get((block[0, 0], docid), 0) for docid in docids], dtype=np.int64)
            utility = relevance * grade - np.arange(len(docids)) + rng.integers(0, noise, size=len(docids))
            order = np.argsort(-utility, kind="stable")
            text += [f"{qid} Q0 {docids[at].decode()} {rank} {DEPTH + 1 - rank} {name}\n"
                     for rank, at in enumerate(order, start=1)]
        (data / f"{name}.txt").write_text("".join(text), encoding="utf-8")
        command += ["--run", f"{name}={data / name}.txt"]
    return [*command, "--out", str(out)]


WORKLOADS = {"demo": demo, "judges": judges, "queries200": queries200}


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in WORKLOADS:
        sys.exit(f"usage: build_workloads.py {'|'.join(WORKLOADS)} OUT_FOLDER")
    folder = Path(sys.argv[2]).resolve()
    print(shlex.join(["ndcg-report", *WORKLOADS[sys.argv[1]](folder, folder / "report")]))
