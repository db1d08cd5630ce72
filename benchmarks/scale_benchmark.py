"""Past memory: ndcg-report eval on 50M run lines (50,000 queries x 1,000, about 2 GB of text) in
memory and streamed, side by side with pytrec_eval, and on 200M lines streamed.

Runs are generated on the fly to disk (pyarrow writes them: rank-ordered lines per query, scores
with ties, graded labels, unjudged retrieved documents), measured, and deleted after unless --keep.
Each tool runs in its own fresh process; wall time and peak RSS come from os.wait4.

    .venv/bin/python benchmarks/scale_benchmark.py                 # 50M: eval as it picks, in memory, streamed,
                                                                   # pytrec_eval; then 200M as eval picks (streams)
    .venv/bin/python benchmarks/scale_benchmark.py --repeat 3 --keep --data /big/disk   # reuse the data next time
    .venv/bin/python benchmarks/scale_benchmark.py --skip-200m --skip-pytrec-eval
"""

from __future__ import annotations

import argparse
import json
import os
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


def ndcg_report(bin_dir: Path, qrels: Path, run: Path, mode: str = "") -> list[str]:
    """`ndcg-report eval` with the 7 default cut-offs, a mode flag if given (none: eval picks)."""
    return [str(bin_dir / "ndcg-report"), "eval", *([mode] if mode else []), str(qrels), str(run), "-k",
            ",".join(map(str, CUTOFFS))]


def timed(label: str, lines: int, argv: list[str], timeout: float) -> dict:
    """One fresh-process run: wall seconds and peak RSS (MiB), printed as it ends."""
    result = measure(argv, env=dict(os.environ), timeout=timeout)
    status = "ok" if result.returncode == 0 and not result.timed_out else f"FAILED ({result.stderr.strip()[-200:]})"
    row = {"tool": label, "lines": lines, "seconds": round(result.seconds, 2),
           "peak_rss_mib": round(result.max_rss_kib / 1024), "status": status}
    print(f"{label:<28} {lines:>12,} lines  {row['seconds']:>8.2f} s  {row['peak_rss_mib']:>7,} MiB  {status}", flush=True)
    return row


def side_by_side(tools: dict[str, list[str]], lines: int, repeat: int, timeout: float) -> dict[str, list[dict]]:
    """Every tool `repeat` times, round-robin (so drift of the machine hits all alike); runs per tool."""
    runs: dict[str, list[dict]] = {label: [] for label in tools}
    for round_number in range(1, repeat + 1):
        print(f"-- round {round_number}", flush=True)
        for label, argv in tools.items():
            if runs[label] and runs[label][-1]["status"] != "ok":
                continue  # failed once: not again
            runs[label].append(timed(label, lines, argv, timeout))
        if "pytrec_eval" in tools:
            base = runs["pytrec_eval"][-1]["seconds"]
            print("   " + ", ".join(f"pytrec_eval / {label}: {base / rows[-1]['seconds']:.2f}x"
                                    for label, rows in runs.items() if label != "pytrec_eval"), flush=True)
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("benchmarks/data-scale"), help="where runs are written")
    parser.add_argument("--queries", type=int, default=50_000, help="queries of the first run (x --depth lines)")
    parser.add_argument("--big-queries", type=int, default=200_000, help="queries of the streamed-only run")
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1, help="rounds of the 50M comparison (best time reported)")
    parser.add_argument("--skip-200m", action="store_true", help="leave out the large streamed run")
    parser.add_argument("--skip-pytrec-eval", action="store_true")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--keep", action="store_true", help="keep the generated files (and reuse them next time)")
    parser.add_argument("--json", type=Path, default=Path("benchmarks/scale_results.json"), help="results written here")
    args = parser.parse_args(argv)
    bin_dir = Path(sys.executable).parent
    results: dict[str, object] = {"cutoffs": CUTOFFS}
    try:
        run, qrels = generated(args.data / "50m", args.queries, args.depth)
        lines = args.queries * args.depth
        tools = {"ndcg-report (no flag)": ndcg_report(bin_dir, qrels, run),
                 "ndcg-report --in-memory": ndcg_report(bin_dir, qrels, run, "--in-memory"),
                 "ndcg-report --stream": ndcg_report(bin_dir, qrels, run, "--stream")}
        if not args.skip_pytrec_eval:
            tools["pytrec_eval"] = [str(bin_dir / "python"), "-c", PYTREC_EVAL_CHILD, str(qrels), str(run),
                                    ",".join(map(str, CUTOFFS))]
        runs = side_by_side(tools, lines, args.repeat, args.timeout)
        results["50m"] = {"lines": lines, "text_bytes": run.stat().st_size, "runs": runs}
        print(f"\n{lines:,} lines ({run.stat().st_size / 1e9:.2f} GB), best of {args.repeat}:")
        best = {label: min((row["seconds"] for row in rows if row["status"] == "ok"), default=None)
                for label, rows in runs.items()}
        for label, rows in runs.items():
            peak = max(row["peak_rss_mib"] for row in rows)
            ratio = (f"  pytrec_eval / this: {best['pytrec_eval'] / best[label]:.2f}x"
                     if best.get("pytrec_eval") and best[label] and label != "pytrec_eval" else "")
            print(f"  {label:<26} {best[label] or float('nan'):8.2f} s  peak {peak:>6,} MiB{ratio}")
        if not args.keep:
            shutil.rmtree(args.data / "50m")
        if not args.skip_200m:
            run, qrels = generated(args.data / "200m", args.big_queries, args.depth)
            lines = args.big_queries * args.depth
            row = timed("ndcg-report (no flag)", lines, ndcg_report(bin_dir, qrels, run), args.timeout)
            results["200m"] = {"lines": lines, "text_bytes": run.stat().st_size, "runs": {row["tool"]: [row]}}
            if not args.keep:
                shutil.rmtree(args.data / "200m")
    finally:
        if not args.keep:
            shutil.rmtree(args.data, ignore_errors=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.json}")
    failed = [row for part in ("50m", "200m") if part in results for rows in results[part]["runs"].values()
              for row in rows if row["status"] != "ok"]
    return 1 if failed else 0


def generated(folder: Path, queries: int, depth: int) -> tuple[Path, Path]:
    """The run and qrels in folder, generated unless both are there already (kept by --keep)."""
    run, qrels = folder / "run.txt", folder / "qrels.txt"
    if run.is_file() and qrels.is_file():
        print(f"reusing {run} ({run.stat().st_size / 1e9:.2f} GB)", flush=True)
        return run, qrels
    started = time.perf_counter()
    write_run_and_qrels(folder, queries, depth)
    print(f"generated {run} ({run.stat().st_size / 1e9:.2f} GB) in {time.perf_counter() - started:.0f} s", flush=True)
    return run, qrels


if __name__ == "__main__":
    sys.exit(main())
