"""Time a report of many systems: on TREC DL 2019 passage (43 queries x 1,000 documents per run),
or on synthetic click-like data of many queries (benchmarks/make_click_data.py: 200,000 queries
with 1-3 judged documents each by default).

DL 2019: the four shipped runs (monoT5 and three derived from it and BM25, see
scripts/make_dl19_derived_runs.py) plus more derived the same way (interpolations at other
weights, RRF with another k, other re-ranking depths), all against Anserini BM25. Click data:
system-1 ... system-N against the baseline of make_click_data.py (generated into --data if
missing). Prints the wall time of `ndcg-report build` and, in this process, of each stage the
notebook runs twice (papermill, then nbval): reading and evaluating, the data checks, the paired
statistics, the Tukey HSD, the bootstrap bands, the tables, the figures and the output files.

    .venv/bin/python benchmarks/multi_system_report.py [--systems 8] [--out reports/bench-8]
    .venv/bin/python benchmarks/multi_system_report.py --click 200000 --systems 2 [--no-build]
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
BENCH = Path(__file__).resolve().parent


def load_script(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_systems(folder: Path, count: int) -> list[tuple[str, Path]]:
    """count runs: the four shipped ones, then derived ones."""
    derive = load_script(ROOT / "scripts" / "make_dl19_derived_runs.py", "derive")
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


def click_systems(folder: Path, queries: int, count: int) -> tuple[list[tuple[str, Path]], Path, Path]:
    """(systems, baseline, qrels) of the click data in folder, generated there first if missing."""
    paths = [folder / "qrels.txt", folder / "baseline.run"] + [folder / f"system-{i}.run" for i in range(1, count + 1)]
    if not all(path.exists() for path in paths):
        make = load_script(BENCH / "make_click_data.py", "make_click_data")
        make.make_click_data(folder, queries, count, make.DEFAULT_SEED, make.DEFAULT_DEPTHS)
    return [(f"system-{i}", folder / f"system-{i}.run") for i in range(1, count + 1)], paths[1], paths[0]


def timed(label: str, action, rows: list) -> object:
    started = time.perf_counter()
    result = action()
    rows.append((label, time.perf_counter() - started))
    return result


def build_seconds(systems: list[tuple[str, Path]], baseline: Path, baseline_name: str, qrels: Path,
                  topics: Path | None, out: Path) -> float:
    """Wall time of `ndcg-report build` in a fresh process."""
    command = [sys.executable, "-m", "ndcg_report.cli", "build"]
    for name, path in systems:
        command += ["--run", f"{name}={path}"]
    command += ["--baseline", str(baseline), "--baseline-name", baseline_name, "--qrels", str(qrels), "--out", str(out)]
    if topics is not None:
        command += ["--topics", str(topics)]
    started = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - started


def stage_times(systems: list[tuple[str, Path]], baseline: Path, baseline_name: str, qrels: Path,
                topics: Path | None, out: Path) -> list[tuple[str, float]]:
    """One execution of the notebook's work in this process, stage by stage (seconds)."""
    from ndcg_report import evaluate
    from ndcg_report.core.ties import tie_range
    from ndcg_report.core.toplists import rankings
    from ndcg_report.analysis import checks, content, results
    from ndcg_report.build import notebook_io
    from ndcg_report.analysis.drilldown import section_html
    from ndcg_report.analysis.report_model import Report
    from ndcg_report.analysis.experiment import Experiment, RunInfo
    from ndcg_report.build.loading import check_inputs, checked_baseline, checked_runs
    from ndcg_report.build.parameters import validate_parameters
    from ndcg_report.stats.paired import compare_systems

    rows: list[tuple[str, float]] = []
    params = validate_parameters(
        runs=[{"name": name, "path": str(path)} for name, path in systems], baseline=str(baseline),
        baseline_name=baseline_name, qrels=str(qrels), topics=str(topics) if topics else "")
    qrels_read, topics_read = timed("read and check the files", lambda: check_inputs(params), rows)
    # as compare_runs does it: each run read, evaluated, ranked and its ties bounded, then let go
    evaluations, infos, ranked, ties = {}, {}, {}, {}
    seconds = {"read": 0.0, "evaluate": 0.0, "ties": 0.0, "rank": 0.0}

    def take(name, run) -> None:
        evaluations[name] = evaluation = timed_into(seconds, "evaluate", lambda: evaluate(run, qrels_read))
        infos[name] = RunInfo(path=run.path, tag=run.tag)
        ranked[name] = timed_into(seconds, "rank", lambda: rankings(run, qrels_read, 10, evaluation.rel_level))
        if evaluation.tied_lines:
            ties[name] = timed_into(seconds, "ties", lambda: tie_range(run, qrels_read, evaluation))

    runs = checked_runs(params, qrels_read)
    while (pair := timed_into(seconds, "read", lambda: next(runs, None))) is not None:
        take(*pair)
        del pair
    take(baseline_name, timed_into(seconds, "read", lambda: checked_baseline(params, qrels_read)))
    rows += [("read the files again (parsed: no build's cache here)", seconds["read"]),
             ("evaluate every system (nDCG at 7 cut-offs)", seconds["evaluate"]),
             ("data checks: ties (worst and best order of every tied system)", seconds["ties"]),
             ("rankings: every system's top 10 with labels", seconds["rank"])]
    names = [name for name, _ in systems]
    comparisons = timed("statistics: paired tests against the baseline, every system x k", lambda: compare_systems(
        {name: evaluations[name] for name in names}, evaluations[baseline_name], baseline_name), rows)
    experiment = Experiment(names=tuple(names), baseline_name=baseline_name, evaluations=evaluations, runs=infos,
                            qrels=qrels_read, comparisons=comparisons, tie_ranges=ties, rankings=ranked,
                            topics=topics_read, seed=42, n_resamples=10_000, confidence=0.95, alpha=0.05)
    if len(names) > 1:
        timed("statistics: randomized Tukey HSD at k = 10, all systems", lambda: experiment.pairwise, rows)
    timed("statistics: bootstrap bands of every system x k", lambda: experiment.mean_intervals, rows)
    files = content.pd.DataFrame([notebook_io.file_record(name, path) for name, path in systems])
    report = Report(params, experiment, qrels_read, files)
    timed("data checks: warnings, counts, depth, labels, judged, the unjudged pool", lambda: (
        report.warnings.extend(checks.data_warnings(report)), checks.query_checks(report),
        checks.depth_table(report), checks.label_distribution(report), checks.judged_table(report),
        checks.pool_note(report)), rows)
    timed("tables: leaderboard, comparisons, pairwise", lambda: (
        results.leaderboard(report), [results.comparison_table(report, name) for name in names],
        results.medians_table(report), results.pairwise_table(report) if len(names) > 1 else None), rows)
    timed("tables: per query (wins/losses, all queries, rank overlap)", lambda: (
        [results.wins_and_losses(report, name) for name in names[:1] if len(names) == 1],
        results.query_section_html(report)), rows)
    timed("drill-downs", lambda: section_html(report), rows)
    from ndcg_report.analysis.figure_style import figure_to_png_bytes
    for caption, draw in content.figure_drawers(report):
        timed(f"figure: {caption[:54]}", lambda: figure_to_png_bytes(draw()), rows)
    out.mkdir(parents=True, exist_ok=True)
    timed("outputs: per_query.csv, summary.json, unjudged.tsv", lambda: notebook_io.save_outputs(report, out), rows)
    return rows


def timed_into(seconds: dict[str, float], key: str, action) -> object:
    started = time.perf_counter()
    result = action()
    seconds[key] += time.perf_counter() - started
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=8, help="systems under test (default 8; DL 2019: at most 10)")
    parser.add_argument("--click", type=int, default=0, metavar="QUERIES",
                        help="use synthetic click data of this many queries (benchmarks/make_click_data.py)")
    parser.add_argument("--data", type=Path, default=None,
                        help="folder of the click data (default benchmarks/data/click-QUERIES; generated if missing)")
    parser.add_argument("--out", type=Path, default=None, help="keep the report here (default: a temporary folder)")
    parser.add_argument("--no-build", action="store_true", help="only the in-process stages, no `ndcg-report build`")
    parser.add_argument("--no-stages", action="store_true", help="only `ndcg-report build`")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        if args.click:
            data = args.data or BENCH / "data" / f"click-{args.click // 1000}k"
            systems, baseline, qrels = click_systems(data, args.click, args.systems)
            baseline_name, topics, what = "baseline", None, f"synthetic click data ({args.click:,} queries)"
        else:
            systems = write_systems(folder, args.systems)
            baseline, qrels = DATA / "run.msmarco-v1-passage.bm25-default.dl19.txt.gz", DATA / "qrels.dl19-passage.txt"
            baseline_name, topics, what = "BM25", DATA / "topics.dl19-passage.txt", "DL 2019 (43 queries)"
        out = args.out or folder / "report"
        if not args.no_build:
            seconds = build_seconds(systems, baseline, baseline_name, qrels, topics, out)
            print(f"{args.systems} systems + {baseline_name} on {what}: `ndcg-report build` {seconds:.1f} s wall",
                  flush=True)
        if not args.no_stages:
            rows = stage_times(systems, baseline, baseline_name, qrels, topics, folder / "stages")
            print("one execution of the notebook's work, in-process (the build runs it twice: papermill, then nbval):")
            for label, seconds in rows:
                print(f"  {label:<72} {seconds:6.2f} s")
            statistics = sum(seconds for label, seconds in rows if label.startswith("statistics"))
            print(f"  {'statistics in all':<72} {statistics:6.2f} s")
            print(f"  {'everything':<72} {sum(seconds for _, seconds in rows):6.2f} s")


if __name__ == "__main__":
    main()
