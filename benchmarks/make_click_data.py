"""Generate a synthetic click-like evaluation set: many queries, few judged documents each.

Shape of click logs turned into qrels: every query has 1-3 judged documents, mostly label 1
(a click), some 2 (a long click) and a few 0 (skipped); runs retrieve 10-100 documents per
query. Each system scores a query's candidates: a judged document with label > 0 scores
N(quality, 1), with part of the noise shared by every system (so systems are paired, as real
ones are), every other candidate N(0, 1); the run is the top `depth` by score. Scores are
rounded (the baseline to 3 decimals, so it has ties as BM25 runs do; the others to 5).
Deterministic: the same arguments write the same bytes.

    .venv/bin/python benchmarks/make_click_data.py --queries 200000 --systems 2 --out benchmarks/data/click-200k
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv

BASELINE_QUALITY = 1.0
SYSTEM_QUALITIES = (1.3, 1.15, 1.0, 1.4, 1.2, 1.05, 1.35, 1.1)  # the third ties the baseline: a null comparison
SHARED_NOISE = 0.6  # share of a relevant document's noise that all systems see alike
DEFAULT_SEED = 7
DEFAULT_DEPTHS = (10, 100)  # documents retrieved per query: uniform between the two


def judged_documents(rng: np.random.Generator, n_queries: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query index, position within the query, label) of every judged document."""
    per_query = rng.choice([1, 2, 3], size=n_queries, p=[0.6, 0.3, 0.1])
    query = np.repeat(np.arange(n_queries), per_query)
    starts = np.cumsum(per_query) - per_query
    position = np.arange(len(query)) - np.repeat(starts, per_query)
    label = rng.choice([0, 1, 2], size=len(query), p=[0.05, 0.85, 0.10])
    return query, position, label


def system_run(
    rng: np.random.Generator, n_queries: int, judged: tuple[np.ndarray, np.ndarray, np.ndarray],
    shared: np.ndarray, quality: float, depths: tuple[int, int], decimals: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(query index, is judged, document number, score) of one system's run, in rank order per query."""
    query, position, label = judged
    depth = rng.integers(depths[0], depths[1] + 1, size=n_queries)
    relevant_score = np.where(
        label > 0, quality + SHARED_NOISE * shared + np.sqrt(1 - SHARED_NOISE**2) * rng.standard_normal(len(query)),
        rng.standard_normal(len(query)),
    )
    other_query = np.repeat(np.arange(n_queries), depth)
    starts = np.cumsum(depth) - depth
    other_number = np.arange(len(other_query)) - np.repeat(starts, depth)
    candidates_query = np.concatenate([query, other_query])
    candidates_judged = np.concatenate([np.ones(len(query), bool), np.zeros(len(other_query), bool)])
    candidates_number = np.concatenate([position, other_number])
    scores = np.round(np.concatenate([relevant_score, rng.standard_normal(len(other_query))]) * 10 + 50, decimals)
    order = np.lexsort((-scores, candidates_query))
    candidates_query, candidates_judged = candidates_query[order], candidates_judged[order]
    candidates_number, scores = candidates_number[order], scores[order]
    first = np.searchsorted(candidates_query, np.arange(n_queries))
    rank = np.arange(len(candidates_query)) - first[candidates_query]
    kept = rank < depth[candidates_query]
    return candidates_query[kept], candidates_judged[kept], candidates_number[kept], scores[kept]


def docids(qids: pa.Array, judged: np.ndarray, number: np.ndarray) -> pa.Array:
    """'Q-jN' for judged documents, 'Q-dN' for the others."""
    kind = pa.array(np.where(judged, "-j", "-d"))
    return pc.binary_join_element_wise(qids, kind, pc.cast(pa.array(number), pa.string()), "")


def write_lines(path: Path, columns: list[pa.Array]) -> None:
    """One line per row: the columns joined by spaces."""
    lines = pc.binary_join_element_wise(*columns, " ")
    csv.write_csv(pa.table({"line": lines}), path, csv.WriteOptions(include_header=False, quoting_style="none"))


def make_click_data(folder: Path, n_queries: int, n_systems: int, seed: int, depths: tuple[int, int]) -> list[Path]:
    """Write qrels.txt, baseline.run and system-1.run ... into folder; return the run paths (baseline first)."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    qid_text = pc.cast(pa.array(np.arange(n_queries) + 1_000_000), pa.string())
    judged = judged_documents(rng, n_queries)
    query, position, label = judged
    qids = qid_text.take(pa.array(query))
    write_lines(folder / "qrels.txt", [qids, pa.array(np.full(len(query), "0")),
                                       docids(qids, np.ones(len(query), bool), position),
                                       pc.cast(pa.array(label), pa.string())])
    shared = rng.standard_normal(len(query))
    paths = []
    systems = [("baseline", BASELINE_QUALITY, 3)] + [
        (f"system-{i + 1}", SYSTEM_QUALITIES[i % len(SYSTEM_QUALITIES)], 5) for i in range(n_systems)]
    for name, quality, decimals in systems:
        run_query, run_judged, number, scores = system_run(rng, n_queries, judged, shared, quality, depths, decimals)
        qids = qid_text.take(pa.array(run_query))
        first = np.searchsorted(run_query, np.arange(n_queries))
        rank = np.arange(len(run_query)) - first[run_query] + 1
        path = folder / f"{name}.run"
        write_lines(path, [qids, pa.array(np.full(len(run_query), "Q0")), docids(qids, run_judged, number),
                           pc.cast(pa.array(rank), pa.string()), pc.cast(pa.array(scores), pa.string()),
                           pa.array(np.full(len(run_query), name))])
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200_000)
    parser.add_argument("--systems", type=int, default=2, help="systems besides the baseline (default 2)")
    parser.add_argument("--min-depth", type=int, default=DEFAULT_DEPTHS[0])
    parser.add_argument("--max-depth", type=int, default=DEFAULT_DEPTHS[1])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/data/click"))
    args = parser.parse_args()
    paths = make_click_data(args.out, args.queries, args.systems, args.seed, (args.min_depth, args.max_depth))
    print(f"wrote {args.out}/qrels.txt and {', '.join(path.name for path in paths)}")


if __name__ == "__main__":
    main()
