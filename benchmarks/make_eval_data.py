"""Generate the run and qrels `eval` is timed on (7,000 queries x 1,000 by default), fast enough for 50M
lines.

The run: QUERIES queries of DEPTH lines in rank order (about 3% of queries shorter), in random qid
order; docids `D` + 7 digits; scores with 4 decimals, descending, about 5% of lines tied with the
line above. The qrels: about 150 judged documents a query (100-200), half of them retrieved, grades
0-3, mostly 0; 1% of the queries have no relevant document; 0.5% of the queries are only in the run
and 0.5% only in the qrels. Lines are built with Arrow's string kernels, not Python formatting.

    .venv/bin/python benchmarks/make_eval_data.py --queries 7000 --out DIR      # about 7M run lines
    .venv/bin/python benchmarks/make_eval_data.py --queries 50000 --out DIR     # about 50M
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

DOC_POOL = 10_000_000  # docids D0000000-D9999999
SHORT_SHARE, TIE_SHARE, NOTHING_RELEVANT_SHARE, ONLY_ONE_SIDE_SHARE = 0.03, 0.05, 0.01, 0.005
GRADES, GRADE_WEIGHTS = np.array([0, 1, 2, 3]), np.array([0.75, 0.13, 0.08, 0.04])


def _lines(columns: list[pa.Array]) -> bytes:
    """The columns joined by spaces, a newline after each row, as one text."""
    columns = [column.cast(pa.large_string()) if isinstance(column, (pa.Array, pa.ChunkedArray)) else column
               for column in columns]  # 50M lines are past a string array's 2 GiB
    text = pc.binary_join_element_wise(*columns, pa.scalar(" ", pa.large_string()))
    text = pc.binary_join_element_wise(text, pa.scalar("", pa.large_string()), pa.scalar("\n", pa.large_string()))
    return _string_bytes(text)


def _string_bytes(strings: pa.Array) -> bytes:
    """The bytes of a string array's values, end to end."""
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int64)[strings.offset:strings.offset + len(strings) + 1]
    return strings.buffers()[2].to_pybytes()[offsets[0]:offsets[-1]]


def _docids(numbers: np.ndarray) -> pa.Array:
    return pc.binary_join_element_wise(pa.scalar("D"), pc.utf8_lpad(pa.array(numbers).cast(pa.string()), 7, "0"), "")


def _scores(ten_thousandths: np.ndarray) -> pa.Array:
    """Non-negative ten-thousandths written with 4 decimals, as `%.4f` would."""
    whole = pa.array(ten_thousandths // 10_000).cast(pa.string())
    fraction = pc.utf8_lpad(pa.array(ten_thousandths % 10_000).cast(pa.string()), 4, "0")
    return pc.binary_join_element_wise(whole, fraction, ".")


def make_run_and_qrels(queries: int, depth: int, seed: int) -> tuple[bytes, bytes]:
    """(run text, qrels text) of the shape in the module's docstring."""
    rng = np.random.default_rng(seed)
    only_run = only_qrels = max(1, round(queries * ONLY_ONE_SIDE_SHARE))
    qids = rng.choice(1_200_000, size=queries + only_qrels, replace=False)  # in random order
    lengths = np.full(queries, depth)
    short = rng.random(queries) < SHORT_SHARE
    lengths[short] = rng.integers(10, depth, size=int(short.sum()))
    run_qids, run_docs, run_ranks, run_scores = [], [], [], []
    qrels_qids, qrels_docs, qrels_grades = [], [], []
    for i, qid in enumerate(qids):
        in_run, in_qrels = i < queries, i >= only_run
        n = int(lengths[i]) if in_run else depth
        docs = rng.choice(DOC_POOL, size=n, replace=False)
        if in_run:
            scores = np.sort(np.maximum(np.rint(rng.normal(100_000, 20_000, size=n)), 0).astype(np.int64))[::-1].copy()
            tied = np.flatnonzero(rng.random(n - 1) < TIE_SHARE) + 1
            for at in tied:  # in order, so a run of ties takes the score of its first line
                scores[at] = scores[at - 1]
            run_qids.append(np.full(n, qid))
            run_docs.append(docs)
            run_ranks.append(np.arange(1, n + 1))
            run_scores.append(scores)
        if in_qrels:
            judged = int(rng.integers(100, 201))
            retrieved = docs[rng.choice(min(n, 500), size=min(judged // 2, n, 500), replace=False)]
            others = rng.choice(DOC_POOL, size=judged - len(retrieved), replace=False)
            judged_docs = np.unique(np.concatenate([retrieved, others]))
            grades = rng.choice(GRADES, size=len(judged_docs), p=GRADE_WEIGHTS)
            if rng.random() < NOTHING_RELEVANT_SHARE:
                grades[:] = 0
            qrels_qids.append(np.full(len(judged_docs), qid))
            qrels_docs.append(judged_docs)
            qrels_grades.append(grades)
    run = _lines([pa.array(np.concatenate(run_qids)).cast(pa.string()), pa.scalar("Q0", pa.large_string()),
                  _docids(np.concatenate(run_docs)), pa.array(np.concatenate(run_ranks)).cast(pa.string()),
                  _scores(np.concatenate(run_scores)), pa.scalar("synthetic", pa.large_string())])
    order = np.argsort(np.concatenate(qrels_qids), kind="stable")  # qrels sorted by qid, as NIST's are
    qrels_qid = np.concatenate(qrels_qids)[order]
    qrels = _lines([pa.array(qrels_qid).cast(pa.string()), pa.scalar("0", pa.large_string()),
                    _docids(np.concatenate(qrels_docs)[order]),
                    pa.array(np.concatenate(qrels_grades)[order]).cast(pa.string())])
    return run, qrels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=7000)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/data-eval"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    run, qrels = make_run_and_qrels(args.queries, args.depth, args.seed)
    (args.out / "run.txt").write_bytes(run)
    (args.out / "qrels.txt").write_bytes(qrels)
    newline = b"\n"
    print(f"wrote {args.out}/run.txt ({run.count(newline):,} lines) and {args.out}/qrels.txt "
          f"({qrels.count(newline):,} lines)")


if __name__ == "__main__":
    main()
