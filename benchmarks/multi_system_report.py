"""Time a report of many systems on TREC DL 2019 passage (43 queries x 1,000 documents per run).

The systems: the four shipped runs (monoT5 and three derived from it and BM25, see
scripts/make_dl19_derived_runs.py) plus more derived the same way (interpolations at other
weights, RRF with another k, other re-ranking depths), all against Anserini BM25. Prints the
wall time of `ndcg-report build` and, in this process, of each stage the notebook runs twice
(papermill, then nbval): reading and evaluating, the paired statistics, the Tukey HSD, the
bootstrap bands and the figures.

    .venv/bin/python benchmarks/multi_system_report.py [--systems 8] [--out reports/bench-8]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "ndcg_report" / "data" / "dl19-passage"


def derive_module():
    spec = importlib.util.spec_from_file_location("derive", ROOT / "scripts" / "make_dl19_derived_runs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_systems(folder: Path, count: int) -> list[tuple[str, Path]]:
    """count runs: the four shipped ones, then derived ones."""
    derive = derive_module()
    shipped = [("monoT5", DATA / "monot5.dl19.run.gz"), ("RRF k60", DATA / "rrf.bm25-monot5.dl19.run.gz"),
               ("Interp 0.5", DATA / "interp.bm25-monot5.dl19.run.gz"),
               ("monoT5 top 20 + BM25", DATA / "monot5-top20-bm25.dl19.run.gz")]
    bm25, monot5 = derive.read_run(DATA / derive.BM25), derive.read_run(DATA / derive.MONOT5)
    more = [
        ("Interp 0.25", lambda: derive.interpolation(bm25, monot5, 0.25)),
        ("Interp 0.75", lambda: derive.interpolation(bm25, monot5, 0.75)),
        ("monoT5 top 10 + BM25", lambda: derive.cascade(monot5, bm25, 10)),
        ("monoT5 top 100 + BM25", lambda: derive.cascade(monot5, bm25, 100)),
        ("Interp 0.1", lambda: derive.interpolation(bm25, monot5, 0.1)),
        ("monoT5 top 5 + BM25", lambda: derive.cascade(monot5, bm25, 5)),
    ]
    systems = shipped[:count]
    for name, make in more[: max(0, count - len(shipped))]:
        path = folder / (name.replace(" ", "-").replace("+", "plus") + ".run.gz")
        derive.write_run(make(), path, name.replace(" ", "-"))
        systems.append((name, path))
    return systems


def timed(label: str, action, rows: list) -> object:
    started = time.perf_counter()
    result = action()
    rows.append((label, time.perf_counter() - started))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=8, help="systems under test (default 8, at most 10)")
    parser.add_argument("--out", type=Path, default=None, help="keep the report here (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        systems = write_systems(folder, args.systems)
        out = args.out or folder / "report"
        command = [sys.executable, "-m", "ndcg_report.cli", "build"]
        for name, path in systems:
            command += ["--run", f"{name}={path}"]
        command += ["--baseline", str(DATA / "run.msmarco-v1-passage.bm25-default.dl19.txt.gz"), "--baseline-name", "BM25",
                    "--qrels", str(DATA / "qrels.dl19-passage.txt"), "--topics", str(DATA / "topics.dl19-passage.txt"),
                    "--out", str(out)]
        started = time.perf_counter()
        subprocess.run(command, check=True)
        build_seconds = time.perf_counter() - started

        from ndcg_report import evaluate
        from ndcg_report.report import content
        from ndcg_report.report.experiment import Experiment
        from ndcg_report.report.loading import load_inputs
        from ndcg_report.report.parameters import validate_parameters
        from ndcg_report.stats.paired import compare_systems

        rows: list[tuple[str, float]] = []
        params = validate_parameters(
            runs=[{"name": name, "path": str(path)} for name, path in systems],
            baseline=str(DATA / "run.msmarco-v1-passage.bm25-default.dl19.txt.gz"), baseline_name="BM25",
            qrels=str(DATA / "qrels.dl19-passage.txt"), topics=str(DATA / "topics.dl19-passage.txt"))
        runs, baseline, qrels, topics = timed("read and check the files", lambda: load_inputs(params), rows)
        read = {name: run for (name, _), run in zip(systems, runs)} | {"BM25": baseline}
        evaluations = timed("evaluate every system (7 cut-offs)",
                            lambda: {name: evaluate(run, qrels) for name, run in read.items()}, rows)
        names = [name for name, _ in systems]
        comparisons = timed("paired statistics against BM25, every system x k (section 4)", lambda: compare_systems(
            {name: evaluations[name] for name in names}, evaluations["BM25"], "BM25"), rows)
        experiment = Experiment(names=tuple(names), baseline_name="BM25", evaluations=evaluations, runs=read, qrels=qrels,
                                comparisons=comparisons, topics=topics, seed=42, n_resamples=10_000,
                                confidence=0.95, alpha=0.05)
        timed("randomized Tukey HSD at k = 10, all systems", lambda: experiment.pairwise, rows)
        timed("bootstrap bands of every system x k", lambda: experiment.mean_intervals, rows)
        files = content.pd.DataFrame([content.file_record(name, path) for name, path in systems])
        report = content.Report(params, experiment, qrels, files)
        timed(f"figures ({5 if len(systems) == 1 else 8} PNGs)", lambda: content.report_figures(report), rows)
    print(f"{args.systems} systems + BM25 on DL 2019 (43 queries): `ndcg-report build` {build_seconds:.1f} s wall")
    print("one execution of the notebook's work, in-process (the build runs it twice: papermill, then nbval):")
    for label, seconds in rows:
        print(f"  {label:<62} {seconds:6.2f} s")


if __name__ == "__main__":
    main()
