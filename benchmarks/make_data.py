"""Generate a realistic synthetic TREC run and qrels for benchmarking.

Shape of MS MARCO dev: many queries, 1,000 docs each, ids drawn from a large passage pool,
scores with ties (rounded to 4 decimals), graded labels with unjudged retrieved docs, a few
queries only in the run and a few only in the qrels. Lines are written in rank order per query
as real runs are, unless --shuffle is given.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def make_run_and_qrels(
    n_queries: int, depth: int, seed: int, shuffle: bool
) -> tuple[list[bytes], list[bytes]]:
    """Return (run lines, qrels lines) as byte chunks, one chunk per query."""
    rng = np.random.default_rng(seed)
    pool = 8_841_823
    n_run_only = max(1, n_queries // 100)
    n_qrels_only = max(1, n_queries // 200)
    qids = rng.choice(1_200_000, size=n_queries + n_qrels_only, replace=False)
    run_chunks: list[bytes] = []
    qrels_chunks: list[bytes] = []
    for i, qid in enumerate(qids):
        in_run = i < n_queries
        in_qrels = i >= n_run_only
        docs = rng.choice(pool, size=depth, replace=False)
        scores = np.sort(np.round(rng.normal(10.0, 2.0, size=depth), 4))[::-1]
        if in_run:
            order = rng.permutation(depth) if shuffle else np.arange(depth)
            lines = [
                f"{qid} Q0 {docs[j]} {j + 1} {scores[j]:.4f} synthetic\n" for j in order
            ]
            run_chunks.append("".join(lines).encode())
        if in_qrels:
            n_judged = int(rng.integers(20, 200))
            in_run_judged = docs[rng.choice(min(depth, 300), size=min(n_judged // 2, 300), replace=False)]
            extra = rng.choice(pool, size=n_judged - len(in_run_judged), replace=False)
            judged = np.unique(np.concatenate([in_run_judged, extra]))
            labels = rng.choice([0, 0, 0, 1, 1, 2, 3], size=len(judged))
            qrels_chunks.append(
                "".join(f"{qid} 0 {d} {lab}\n" for d, lab in zip(judged, labels)).encode()
            )
    return run_chunks, qrels_chunks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=7000)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--shuffle", action="store_true", help="write run lines in random order")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/data"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    run_chunks, qrels_chunks = make_run_and_qrels(args.queries, args.depth, args.seed, args.shuffle)
    (args.out / "run.txt").write_bytes(b"".join(run_chunks))
    (args.out / "qrels.txt").write_bytes(b"".join(qrels_chunks))
    print(f"wrote {args.out}/run.txt and {args.out}/qrels.txt")


if __name__ == "__main__":
    main()
