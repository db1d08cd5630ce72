"""Writes a judges test bed: 19 systems x 3 judgment sets on DL 2019 passage, from the package's data only.

    .venv/bin/python benchmarks/make_judges_data.py OUT_FOLDER   # then the `build` command it prints

Every output is derived deterministically (no random generator: draws come from sha256 of their names):
- systems: the five shipped runs of src/ndcg_report/data/dl19-passage (bm25 is the baseline), the ten
  pairwise reciprocal-rank fusions of them (score of a document: sum over the two runs of
  1 / (60 + its rank), a run lacking it adds nothing), and four rank perturbations of the shipped
  re-rankers (in each query's top 20 of the run, walking down, each adjacent pair is swapped when
  sha256("swap|system|qid|rank") gives u < 0.4). Each system keeps its top 100 per query.
- sets: `nist` the shipped NIST qrels (the reference), `sim` the shipped simulated judge
  (qrels.dl19-simulated-judge.txt, see tests/data/judges/make_judges.py), and `strict` a stricter
  judge made from `sim`: a pair with a label above 0 drops one grade when sha256("strict|qid|docid")
  gives u < 0.3; every other label is kept.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "src" / "ndcg_report" / "data" / "dl19-passage"
SHIPPED = {"bm25": "run.msmarco-v1-passage.bm25-default.dl19.txt.gz", "monot5": "monot5.dl19.run.gz",
           "rrf": "rrf.bm25-monot5.dl19.run.gz", "interp": "interp.bm25-monot5.dl19.run.gz",
           "top20": "monot5-top20-bm25.dl19.run.gz"}
PERTURBED = ("monot5", "rrf", "interp", "top20")
DEPTH, SWAP_DEPTH, SWAP, STRICT, RRF_K = 100, 20, 0.4, 0.3, 60


def draw(*parts: str) -> float:
    """A uniform number in [0, 1) from the parts' sha256: the same on every machine and version."""
    return int.from_bytes(hashlib.sha256("|".join(parts).encode("utf-8")).digest()[:8], "big") / 2 ** 64


def ranked(path: Path) -> dict[str, list[str]]:
    """{qid: docids in trec_eval's order (score descending, then docid descending)}."""
    by_query: dict[str, list[tuple[float, str]]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()
            if fields:
                by_query.setdefault(fields[0], []).append((float(fields[4]), fields[2]))
    return {qid: [d for _, d in sorted(rows, key=lambda r: (-r[0], tuple(-b for b in r[1].encode())))]
            for qid, rows in by_query.items()}


def fused(first: dict[str, list[str]], second: dict[str, list[str]]) -> dict[str, list[str]]:
    """Reciprocal-rank fusion of two runs (ties by docid ascending)."""
    out = {}
    for qid in sorted(set(first) | set(second)):
        scores: dict[str, float] = {}
        for docids in (first.get(qid, []), second.get(qid, [])):
            for rank, docid in enumerate(docids, 1):
                scores[docid] = scores.get(docid, 0.0) + 1 / (RRF_K + rank)
        out[qid] = sorted(scores, key=lambda d: (-scores[d], d))
    return out


def perturbed(name: str, run: dict[str, list[str]]) -> dict[str, list[str]]:
    """The run with adjacent pairs of each query's top SWAP_DEPTH swapped where the draw says so."""
    out = {}
    for qid, docids in run.items():
        docids = list(docids)
        for rank in range(min(SWAP_DEPTH, len(docids)) - 1):
            if draw("swap", name, qid, str(rank)) < SWAP:
                docids[rank], docids[rank + 1] = docids[rank + 1], docids[rank]
        out[qid] = docids
    return out


def write_run(path: Path, name: str, run: dict[str, list[str]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for qid in sorted(run):
            for rank, docid in enumerate(run[qid][:DEPTH], 1):
                handle.write(f"{qid} Q0 {docid} {rank} {DEPTH + 1 - rank} {name}\n")


def main(out: Path) -> list[str]:
    """Writes the runs and qrels into `out`; returns the `build` arguments that use them."""
    out.mkdir(parents=True, exist_ok=True)
    shipped = {name: ranked(DATA / file) for name, file in SHIPPED.items()}
    systems = dict(shipped)
    for a, b in itertools.combinations(SHIPPED, 2):
        systems[f"{a}+{b}"] = fused(shipped[a], shipped[b])
    for name in PERTURBED:
        systems[f"{name}~"] = perturbed(name, shipped[name])
    for name, run in systems.items():
        write_run(out / f"{name}.txt", name, run)
    strict = []
    for line in (DATA / "qrels.dl19-simulated-judge.txt").read_text(encoding="utf-8").splitlines():
        qid, _, docid, label = line.split()
        grade = int(label)
        strict.append(f"{qid} 0 {docid} {grade - 1 if grade > 0 and draw('strict', qid, docid) < STRICT else grade}\n")
    (out / "qrels.strict.txt").write_text("".join(strict), encoding="utf-8")
    arguments = [f"--qrels nist={DATA / 'qrels.dl19-passage.txt'}",
                 f"--qrels sim={DATA / 'qrels.dl19-simulated-judge.txt'}", f"--qrels strict={out / 'qrels.strict.txt'}",
                 f"--baseline {out / 'bm25.txt'} --baseline-name bm25"]
    arguments += [f"--run '{name}={out / name}.txt'" for name in systems if name != "bm25"]
    return arguments


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_judges_data.py OUT_FOLDER")
    print("ndcg-report build " + " ".join(main(Path(sys.argv[1]))) + " -l 2 --out REPORT_FOLDER")
