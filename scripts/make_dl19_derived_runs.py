"""Derive three more TREC DL 2019 passage runs from the two shipped ones, for the multi-system demo.

The shipped runs are Anserini BM25 (top 1000 per query) and a monoT5-base re-ranking of a
different first stage (seanmacavaney/sigir2022-survivor): many of BM25's top documents have no
monoT5 score, so monoT5 cannot honestly re-rank BM25's list. What can be derived honestly from the
two lists, and what the demo ships:

- rrf:        reciprocal rank fusion of BM25 and monoT5, score = sum of 1 / (60 + rank) (Cormack et
              al., SIGIR 2009), over each list's top 1000;
- interp:     linear interpolation of per-query min-max normalised scores, 0.5 * BM25 + 0.5 * monoT5
              (a document missing from one list gets 0 there);
- top20+bm25: monoT5's top 20, then BM25's ranking of every other document (a re-ranking depth
              ablation: identical to monoT5 down to rank 20, to BM25's order below).

Each run keeps the top 1000 per query, ranks in trec_eval's order (score descending, docid
descending), scores at full precision (shortest round-trip text), and is written gzip-compressed
with a zero timestamp, so rerunning gives the same bytes.

    python scripts/make_dl19_derived_runs.py [--data src/ndcg_report/data/dl19-passage]
"""

from __future__ import annotations

import argparse
import gzip
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "ndcg_report" / "data" / "dl19-passage"
BM25 = "run.msmarco-v1-passage.bm25-default.dl19.txt.gz"
MONOT5 = "monot5.dl19.run.gz"
DEPTH = 1000
RRF_K = 60
CASCADE_DEPTH = 20
Run = dict[str, dict[str, float]]


def read_run(path: Path) -> Run:
    run: Run = defaultdict(dict)
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            qid, _, docid, _, score, _ = line.split()
            run[qid][docid] = float(score)
    return run


def ranked(scores: dict[str, float]) -> list[str]:
    """Docids in trec_eval's order: score descending, then docid descending."""
    return sorted(scores, key=lambda docid: (scores[docid], docid.encode("utf-8")), reverse=True)


def reciprocal_rank_fusion(first: Run, second: Run) -> Run:
    fused: Run = {}
    for qid in sorted(set(first) | set(second)):
        scores: dict[str, float] = defaultdict(float)
        for run in (first, second):
            for rank, docid in enumerate(ranked(run.get(qid, {}))[:DEPTH], start=1):
                scores[docid] += 1.0 / (RRF_K + rank)
        fused[qid] = dict(scores)
    return fused


def interpolation(first: Run, second: Run, weight: float = 0.5) -> Run:
    def normalised(scores: dict[str, float]) -> dict[str, float]:
        if not scores:
            return {}
        low, high = min(scores.values()), max(scores.values())
        return {docid: (score - low) / (high - low) if high > low else 0.0 for docid, score in scores.items()}

    mixed: Run = {}
    for qid in sorted(set(first) | set(second)):
        a, b = normalised(first.get(qid, {})), normalised(second.get(qid, {}))
        mixed[qid] = {docid: weight * a.get(docid, 0.0) + (1 - weight) * b.get(docid, 0.0) for docid in set(a) | set(b)}
    return mixed


def cascade(reranker: Run, first_stage: Run, depth: int = CASCADE_DEPTH) -> Run:
    combined: Run = {}
    for qid in sorted(set(reranker) | set(first_stage)):
        top = ranked(reranker.get(qid, {}))[:depth]
        chosen = set(top)
        order = (top + [docid for docid in ranked(first_stage.get(qid, {})) if docid not in chosen])[:DEPTH]
        combined[qid] = {docid: float(len(order) - position) for position, docid in enumerate(order)}
    return combined


def write_run(run: Run, path: Path, tag: str) -> None:
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as packed:
        for qid in sorted(run):
            for rank, docid in enumerate(ranked(run[qid])[:DEPTH], start=1):
                packed.write(f"{qid} Q0 {docid} {rank} {run[qid][docid]!r} {tag}\n".encode("utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="folder with the two shipped runs")
    args = parser.parse_args()
    bm25, monot5 = read_run(args.data / BM25), read_run(args.data / MONOT5)
    outputs = {
        "rrf.bm25-monot5.dl19.run.gz": (reciprocal_rank_fusion(bm25, monot5), "rrf-bm25-monot5"),
        "interp.bm25-monot5.dl19.run.gz": (interpolation(bm25, monot5), "interp-bm25-monot5"),
        "monot5-top20-bm25.dl19.run.gz": (cascade(monot5, bm25), "monot5-top20-bm25"),
    }
    for name, (run, tag) in outputs.items():
        write_run(run, args.data / name, tag)
        print(f"wrote {args.data / name}: {sum(min(len(r), DEPTH) for r in run.values())} lines, tag {tag}")


if __name__ == "__main__":
    main()
