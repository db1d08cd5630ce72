"""Past memory: ndcg-report eval on 50M run lines (50,000 queries x 1,000, about 2 GB of text) in
memory and streamed, side by side with pytrec_eval, and on 200M lines streamed.

Runs are generated on the fly to disk (pyarrow writes them: rank-ordered lines per query, scores
with ties, graded labels, unjudged retrieved documents), measured, and deleted after unless --keep.
Each tool runs in its own fresh process; wall time and peak RSS come from os.wait4.

    .venv/bin/python benchmarks/scale_benchmark.py                 # 50M in memory, streamed, pytrec_eval; 200M streamed
    .venv/bin/python benchmarks/scale_benchmark.py --skip-200m --skip-pytrec-eval
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

sys.path.insert(0, str(Path(__file__).parent))
from run_benchmark import CUTOFFS, PYTREC_EVAL_CHILD, measure  # noqa: E402

QUERIES_PER_BLOCK = 1000


def write_run_and_qrels(folder: Path, queries: int, depth: int, seed: int = 7) -> tuple[Path, Path]:
    """A run of queries x depth lines and its qrels, written block by block (memory stays small)."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    run_path, qrels_path = folder / "run.txt", folder / "qrels.txt"
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    with pa.OSFile(str(run_path), "wb") as run_file, pa.OSFile(str(qrels_path), "wb") as qrels_file:
        for first in range(0, queries, QUERIES_PER_BLOCK):
            n = min(QUERIES_PER_BLOCK, queries - first)
            qids = np.repeat(np.arange(first, first + n) + 1_000_000, depth)
            docs = rng.integers(0, 8_841_823, size=n * depth)
            scores = -np.sort(-np.round(rng.normal(10.0, 2.0, size=(n, depth)), 3), axis=1).ravel()
            ranks = np.tile(np.arange(1, depth + 1), n)
            run = pa.table({"qid": qids, "q0": pa.array(["Q0"] * len(qids)), "docid": docs, "rank": ranks,
                            "score": scores, "tag": pa.array(["synthetic"] * len(qids))})
            unique = np.unique(np.stack([qids, docs], axis=1), axis=0, return_index=True)[1]
            run = run.take(pa.array(np.sort(unique)))  # a document once per query
            pacsv.write_csv(run, run_file, options)
            judged_rows = np.flatnonzero(rng.random(len(unique)) < 0.05)  # about 50 judged per query
            judged = run.take(pa.array(judged_rows))
            labels = rng.choice([0, 0, 0, 1, 1, 2, 3], size=len(judged_rows))
            qrels = pa.table({"qid": judged["qid"], "iter": pa.array(["0"] * len(labels)), "docid": judged["docid"],
                              "rel": labels})
            pacsv.write_csv(qrels, qrels_file, options)
    return run_path, qrels_path


def ndcg_report(bin_dir: Path, qrels: Path, run: Path, mode: str) -> list[str]:
    return [str(bin_dir / "ndcg-report"), "eval", mode, str(qrels), str(run), "-k", ",".join(map(str, CUTOFFS))]


def report(label: str, lines: int, argv: list[str], timeout: float) -> dict:
    result = measure(argv, env={**__import__("os").environ}, timeout=timeout)
    status = "ok" if result.returncode == 0 and not result.timed_out else f"FAILED ({result.stderr.strip()[-200:]})"
    row = {"tool": label, "lines": lines, "seconds": round(result.seconds, 2),
           "peak_rss_mib": round(result.max_rss_kib / 1024), "status": status}
    print(f"{label:<28} {lines:>12,} lines  {row['seconds']:>8.2f} s  {row['peak_rss_mib']:>7,} MiB  {status}", flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("benchmarks/data-scale"), help="where runs are written")
    parser.add_argument("--queries", type=int, default=50_000, help="queries of the first run (x --depth lines)")
    parser.add_argument("--big-queries", type=int, default=200_000, help="queries of the streamed-only run")
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--skip-200m", action="store_true", help="leave out the large streamed run")
    parser.add_argument("--skip-pytrec-eval", action="store_true")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    args = parser.parse_args(argv)
    bin_dir = Path(sys.executable).parent
    rows = []
    try:
        started = time.perf_counter()
        run, qrels = write_run_and_qrels(args.data / "50m", args.queries, args.depth)
        lines = args.queries * args.depth
        print(f"generated {run} ({run.stat().st_size / 1e9:.2f} GB) in {time.perf_counter() - started:.0f} s", flush=True)
        rows.append(report("ndcg-report --in-memory", lines, ndcg_report(bin_dir, qrels, run, "--in-memory"), args.timeout))
        rows.append(report("ndcg-report --stream", lines, ndcg_report(bin_dir, qrels, run, "--stream"), args.timeout))
        if not args.skip_pytrec_eval:
            child = [str(bin_dir / "python"), "-c", PYTREC_EVAL_CHILD, str(qrels), str(run), ",".join(map(str, CUTOFFS))]
            rows.append(report("pytrec_eval", lines, child, args.timeout))
        if not args.keep:
            shutil.rmtree(args.data / "50m")
        if not args.skip_200m:
            started = time.perf_counter()
            run, qrels = write_run_and_qrels(args.data / "200m", args.big_queries, args.depth)
            lines = args.big_queries * args.depth
            print(f"generated {run} ({run.stat().st_size / 1e9:.2f} GB) in {time.perf_counter() - started:.0f} s", flush=True)
            rows.append(report("ndcg-report --stream", lines, ndcg_report(bin_dir, qrels, run, "--stream"), args.timeout))
    finally:
        if not args.keep:
            shutil.rmtree(args.data, ignore_errors=True)
    base = {row["tool"]: row for row in rows if row["lines"] == args.queries * args.depth}
    if "pytrec_eval" in base:
        for mode in ("ndcg-report --in-memory", "ndcg-report --stream"):
            if mode in base:
                print(f"pytrec_eval / {mode}: {base['pytrec_eval']['seconds'] / base[mode]['seconds']:.2f}x")
    return 0 if all(row["status"] == "ok" for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
