"""Benchmark ndcg-report against pytrec_eval, ranx and ir_measures, end to end.

Every tool runs in a fresh subprocess that starts the interpreter, imports the library, reads the
qrels and the run from disk, and computes NDCG at cut-offs 1,3,5,10,20,100,1000 for every query and
the mean over queries. Wall time is taken with time.perf_counter around the child; peak memory is
the child's own max RSS from os.wait4. Each tool runs --repeat times (round-robin over the tools)
and the best wall time is reported. The child prints its mean NDCG@10 so the tools can be compared.

Usage: .venv/bin/python benchmarks/run_benchmark.py [--data DIR] [--repeat N] [--only a,b]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

CUTOFFS = (1, 3, 5, 10, 20, 100, 1000)
BENCH_DIR = Path(__file__).resolve().parent
BASELINE = "ndcg-report"

# Child programs: `python -c CODE QRELS RUN`. Each prints one JSON line with its mean NDCG@10,
# the number of queries it scored and the number of per-query values it produced (all cut-offs).
PYTREC_EVAL_CHILD = """
import json, sys
import pytrec_eval
cutoffs = [int(k) for k in sys.argv[3].split(",")]
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut." + ",".join(map(str, cutoffs))})
per_query = evaluator.evaluate(run)
means = {
    f"ndcg_cut_{k}": pytrec_eval.compute_aggregated_measure(
        f"ndcg_cut_{k}", [values[f"ndcg_cut_{k}"] for values in per_query.values()])
    for k in cutoffs
}
print(json.dumps({"ndcg@10": means["ndcg_cut_10"], "queries": len(per_query),
                  "per_query_values": sum(len(values) for values in per_query.values())}))
"""

RANX_CHILD = """
import json, sys
from ranx import Qrels, Run, evaluate
cutoffs = [int(k) for k in sys.argv[3].split(",")]
qrels = Qrels.from_file(sys.argv[1], kind="trec")
run = Run.from_file(sys.argv[2], kind="trec")
run.make_comparable(qrels)  # in place: zero-score qrels-only queries, drop run-only ones
metrics = [f"ndcg@{k}" for k in cutoffs]
means = evaluate(qrels, run, metrics)  # per-query scores are stored in run.scores
print(json.dumps({"ndcg@10": float(means["ndcg@10"]), "queries": len(run.scores["ndcg@10"]),
                  "per_query_values": sum(len(run.scores[m]) for m in metrics)}))
"""

IR_MEASURES_CHILD = """
import json, sys
import ir_measures
from ir_measures import nDCG
cutoffs = [int(k) for k in sys.argv[3].split(",")]
measures = [nDCG @ k for k in cutoffs]
qrels = ir_measures.read_trec_qrels(sys.argv[1])
run = ir_measures.read_trec_run(sys.argv[2])
# calc = iter_calc (per query) + calc_aggregate (mean) in one pass over the run.
aggregated, per_query = ir_measures.calc(measures, qrels, run)
print(json.dumps({"ndcg@10": float(aggregated[nDCG @ 10]),
                  "queries": len({m.query_id for m in per_query if m.measure == nDCG @ 10}),
                  "per_query_values": len(per_query)}))
"""


@dataclass(frozen=True)
class Inputs:
    """The files every tool evaluates."""

    qrels: Path
    run: Path


@dataclass(frozen=True)
class Tool:
    """One contender: how to start it, what must import, how to read its answer."""

    name: str
    description: str
    module: str  # imported in a quick check first; the tool is skipped if this fails
    command: Callable[[Path, Inputs], list[str]]  # (bin dir, inputs) -> argv
    parse: Callable[[str], dict]  # child stdout -> {"ndcg@10", "queries", "per_query_values"}
    numba_cache: str | None = None  # None, "cold" (fresh cache dir per run) or "warm" (primed)


@dataclass(frozen=True)
class Measurement:
    """One finished child process."""

    seconds: float
    max_rss_kib: int
    returncode: int
    timed_out: bool
    stdout: str
    stderr: str


@dataclass
class ToolResult:
    """Everything reported for one tool."""

    name: str
    description: str
    runs_seconds: list[float] = field(default_factory=list)
    best_seconds: float | None = None
    peak_rss_mib: float | None = None
    ndcg_at_10: float | None = None
    queries: int | None = None
    per_query_values: int | None = None
    ratio_to_baseline: float | None = None
    error: str | None = None


def cutoff_list() -> str:
    """The cut-offs as the comma-separated string every tool receives."""
    return ",".join(map(str, CUTOFFS))


def python_child(code: str) -> Callable[[Path, Inputs], list[str]]:
    """A command that runs `code` in a fresh interpreter of the current environment."""

    def command(bin_dir: Path, inputs: Inputs) -> list[str]:
        return [str(bin_dir / "python"), "-c", code, str(inputs.qrels), str(inputs.run), cutoff_list()]

    return command


def ndcg_report_command(bin_dir: Path, inputs: Inputs) -> list[str]:
    """Our CLI with per-query rows, as a user would run it."""
    return [str(bin_dir / "ndcg-report"), "eval", str(inputs.qrels), str(inputs.run), "-k", cutoff_list(), "-q"]


def parse_json_line(stdout: str) -> dict:
    """The last non-empty stdout line of a Python child, as JSON."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        raise ValueError("child printed nothing")
    return json.loads(lines[-1])


def parse_trec_output(stdout: str) -> dict:
    """Mean NDCG@10 and per-query row counts from `ndcg_cut_K<TAB>qid<TAB>value` lines."""
    mean = None
    qids: set[str] = set()
    per_query_values = 0
    for line in stdout.splitlines():
        parts = line.split("\t")
        if len(parts) != 3:
            continue
        measure, qid, value = (part.strip() for part in parts)
        if qid == "all":
            if measure == "ndcg_cut_10":
                mean = float(value)
            continue
        per_query_values += 1
        if measure == "ndcg_cut_10":
            qids.add(qid)
    if mean is None:
        raise ValueError("no `ndcg_cut_10 all` line in the output")
    return {"ndcg@10": mean, "queries": len(qids), "per_query_values": per_query_values}


def all_tools() -> list[Tool]:
    """Every tool, baseline first."""
    ranx_description = "ranx Qrels/Run.from_file(kind='trec') + make_comparable + evaluate(ndcg@K...)"
    return [
        Tool(BASELINE, "ndcg-report eval QRELS RUN -k ... -q (trec output, per-query rows)",
             "ndcg_report", ndcg_report_command, parse_trec_output),
        Tool("pytrec_eval", "pytrec_eval parse_qrel/parse_run + RelevanceEvaluator(ndcg_cut.K...)",
             "pytrec_eval", python_child(PYTREC_EVAL_CHILD), parse_json_line),
        Tool("ir_measures", "ir_measures read_trec_qrels/read_trec_run + calc (per query + aggregate)",
             "ir_measures", python_child(IR_MEASURES_CHILD), parse_json_line),
        Tool("ranx", ranx_description + "; empty numba cache (JIT compiles every run)",
             "ranx", python_child(RANX_CHILD), parse_json_line, numba_cache="cold"),
        Tool("ranx-warm", ranx_description + "; numba cache primed beforehand (cache=True)",
             "ranx", python_child(RANX_CHILD), parse_json_line, numba_cache="warm"),
    ]


def select_tools(tools: list[Tool], only: str | None) -> list[Tool]:
    """The tools named in --only (comma-separated), or all of them."""
    if not only:
        return tools
    wanted = [name.strip() for name in only.split(",") if name.strip()]
    known = {tool.name for tool in tools}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise SystemExit(f"unknown tool(s) {', '.join(unknown)}; choose from {', '.join(sorted(known))}")
    return [tool for tool in tools if tool.name in wanted]


def measure(argv: Sequence[str], env: dict[str, str], timeout: float) -> Measurement:
    """Run argv to completion; wall time around the child, its own rusage from os.wait4.

    stdout and stderr go to temporary files (no pipe to drain, so no deadlock while we block in
    wait4). The child is killed, with its process group, after `timeout` seconds.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        fired = threading.Event()
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, start_new_session=True)

        def kill() -> None:
            fired.set()
            try:
                os.killpg(proc.pid, 9)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4, not by Popen
        out.seek(0)
        err.seek(0)
        return Measurement(
            seconds=seconds, max_rss_kib=usage.ru_maxrss, returncode=proc.returncode,
            timed_out=fired.is_set(), stdout=out.read().decode(errors="replace"),
            stderr=err.read().decode(errors="replace"),
        )


def failure_reason(result: Measurement, timeout: float) -> str | None:
    """Why a child failed, or None if it succeeded."""
    if result.timed_out:
        return f"killed after {timeout:.0f} s (timeout)"
    if result.returncode != 0:
        tail = " | ".join(result.stderr.strip().splitlines()[-3:])
        return f"exit code {result.returncode}: {tail}"
    return None


def import_problem(tool: Tool, bin_dir: Path) -> str | None:
    """None if the tool's module imports (and its executable exists), else the reason."""
    if tool.name == BASELINE and not (bin_dir / "ndcg-report").exists():
        return f"{bin_dir / 'ndcg-report'} not found"
    proc = subprocess.run([str(bin_dir / "python"), "-c", f"import {tool.module}"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        return lines[-1] if lines else f"import {tool.module} failed"
    return None


@contextmanager
def numba_cache_env(kind: str | None, warm_dir: Path | None) -> Iterator[dict[str, str]]:
    """Environment for one child run: a fresh empty NUMBA_CACHE_DIR for "cold", the primed one for "warm"."""
    env = dict(os.environ)
    if kind == "cold":
        with tempfile.TemporaryDirectory(prefix="numba-cold-") as cold_dir:
            env["NUMBA_CACHE_DIR"] = cold_dir
            yield env
        return
    if kind == "warm":
        assert warm_dir is not None
        env["NUMBA_CACHE_DIR"] = str(warm_dir)
    yield env


def prime_numba_cache(tool: Tool, bin_dir: Path, cache_dir: Path, work_dir: Path, timeout: float) -> None:
    """Fill cache_dir by running the tool once on a tiny generated data set (same numba types)."""
    tiny = work_dir / "tiny"
    generate_data(tiny, queries=20, depth=100, quiet=True)
    with numba_cache_env("warm", cache_dir) as env:
        result = measure(tool.command(bin_dir, Inputs(tiny / "qrels.txt", tiny / "run.txt")), env, timeout)
    problem = failure_reason(result, timeout)
    if problem:
        raise RuntimeError(f"priming the numba cache failed: {problem}")


def generate_data(out: Path, queries: int, depth: int, quiet: bool = False) -> None:
    """Write run.txt and qrels.txt into `out` with make_data.py."""
    argv = [sys.executable, str(BENCH_DIR / "make_data.py"), "--queries", str(queries),
            "--depth", str(depth), "--out", str(out)]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL if quiet else None)


def ensure_data(data: Path, queries: int, depth: int) -> Inputs:
    """The run and qrels in `data`, generated first if either is missing."""
    inputs = Inputs(qrels=data / "qrels.txt", run=data / "run.txt")
    if not (inputs.qrels.exists() and inputs.run.exists()):
        print(f"generating {queries} queries x {depth} docs into {data} ...", flush=True)
        generate_data(data, queries, depth)
    return inputs


def count_lines(path: Path) -> int:
    """Newlines in a file, read in 16 MiB blocks (also warms the page cache for every tool)."""
    lines = 0
    with path.open("rb") as f:
        while block := f.read(1 << 24):
            lines += block.count(b"\n")
    return lines


def describe_files(inputs: Inputs) -> dict:
    """Path, size and line count of the inputs."""
    return {
        name: {"path": str(path), "bytes": path.stat().st_size, "lines": count_lines(path)}
        for name, path in (("run", inputs.run), ("qrels", inputs.qrels))
    }


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo, if there is one."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def total_memory_gib() -> float | None:
    """Physical memory in GiB, if the platform tells."""
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return None


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages under test."""
    versions: dict[str, str | None] = {}
    for package in ("ndcg-report", "pytrec-eval-terrier", "ranx", "ir-measures", "numba", "numpy", "pyarrow"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def describe_machine() -> dict:
    """What the numbers were measured on."""
    return {
        "nproc": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu": cpu_model(),
        "memory_gib": total_memory_gib(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": package_versions(),
    }


def run_tools(tools: list[Tool], inputs: Inputs, bin_dir: Path, repeat: int, timeout: float) -> list[ToolResult]:
    """Run every available tool `repeat` times, round-robin, and collect timings and answers."""
    results = {tool.name: ToolResult(tool.name, tool.description) for tool in tools}
    active = []
    for tool in tools:
        problem = import_problem(tool, bin_dir)
        if problem:
            print(f"skipping {tool.name}: {problem}", flush=True)
            results[tool.name].error = f"skipped: {problem}"
        else:
            active.append(tool)
    with ExitStack() as stack:
        work_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ndcg-bench-")))
        warm_dir = work_dir / "numba-warm"
        for tool in [t for t in active if t.numba_cache == "warm"]:
            print(f"priming the numba cache for {tool.name} ...", flush=True)
            try:
                prime_numba_cache(tool, bin_dir, warm_dir, work_dir, timeout)
            except (RuntimeError, subprocess.CalledProcessError) as exc:
                print(f"skipping {tool.name}: {exc}", flush=True)
                results[tool.name].error = f"skipped: {exc}"
                active.remove(tool)
        for round_number in range(1, repeat + 1):
            for tool in list(active):
                result = results[tool.name]
                with numba_cache_env(tool.numba_cache, warm_dir) as env:
                    run = measure(tool.command(bin_dir, inputs), env, timeout)
                problem = failure_reason(run, timeout)
                status = problem or f"{run.seconds:.2f} s, {run.max_rss_kib / 1024:.0f} MiB"
                print(f"  round {round_number}/{repeat}  {tool.name:<12} {status}", flush=True)
                if problem:
                    result.error = problem
                    active.remove(tool)
                    continue
                record_run(result, run, tool.parse)
    add_ratios(list(results.values()))
    return list(results.values())


def record_run(result: ToolResult, run: Measurement, parse: Callable[[str], dict]) -> None:
    """Fold one successful child run into the tool's result (best time, max RSS, its answer)."""
    result.runs_seconds.append(round(run.seconds, 3))
    result.best_seconds = min(result.runs_seconds)
    rss_mib = round(run.max_rss_kib / 1024, 1)
    result.peak_rss_mib = max(result.peak_rss_mib or 0.0, rss_mib)
    answer = parse(run.stdout)
    result.ndcg_at_10 = answer["ndcg@10"]
    result.queries = answer["queries"]
    result.per_query_values = answer["per_query_values"]


def add_ratios(results: list[ToolResult]) -> None:
    """Set each tool's best time divided by the baseline's best time (if the baseline ran)."""
    baseline = next((r for r in results if r.name == BASELINE and r.best_seconds), None)
    for result in results:
        if baseline and result.best_seconds and not result.error:
            result.ratio_to_baseline = round(result.best_seconds / baseline.best_seconds, 2)


def format_number(value: float | int | None, spec: str) -> str:
    """`value` formatted with `spec`, or a dash."""
    return "-" if value is None else format(value, spec)


def render_report(machine: dict, files: dict, results: list[ToolResult], repeat: int) -> str:
    """The plain-text report: machine, inputs, and one table row per tool."""
    packages = ", ".join(f"{name} {version}" for name, version in machine["packages"].items() if version)
    lines = [
        f"machine: nproc={machine['nproc']} (usable {machine['usable_cpus']}), {machine['cpu']}, "
        f"{machine['memory_gib']} GiB RAM, Python {machine['python']}, {machine['platform']}",
        f"packages: {packages}",
    ]
    for name, info in files.items():
        lines.append(f"{name}: {info['path']}  {info['bytes'] / 1e6:,.1f} MB  {info['lines']:,} lines")
    lines.append(f"cut-offs: {cutoff_list()}; best wall time of {repeat} fresh-process runs per tool")
    lines.append("")
    header = (f"{'tool':<12} {'best s':>8} {'peak RSS MiB':>13} {'mean nDCG@10':>13} {'queries':>8} "
              f"{'x ' + BASELINE:>14}  runs (s)")
    lines += [header, "-" * len(header)]
    for r in results:
        if r.error and r.best_seconds is None:
            lines.append(f"{r.name:<12} {r.error}")
            continue
        runs = " ".join(f"{s:.2f}" for s in r.runs_seconds)
        lines.append(
            f"{r.name:<12} {format_number(r.best_seconds, '8.2f')} {format_number(r.peak_rss_mib, '13.0f')} "
            f"{format_number(r.ndcg_at_10, '13.4f')} {format_number(r.queries, '8d')} "
            f"{format_number(r.ratio_to_baseline, '14.2f')}  {runs}"
            + (f"  [failed later: {r.error}]" if r.error else "")
        )
    lines.append("")
    lines.append(f"x {BASELINE} = tool best time / {BASELINE} best time (above 1: {BASELINE} is faster).")
    lines.append("queries = per-query nDCG@10 values the tool produced; per-query values over all cut-offs:")
    lines.append("  " + ", ".join(f"{r.name} {r.per_query_values}" for r in results if r.per_query_values))
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=BENCH_DIR / "data",
                        help="folder with run.txt and qrels.txt; generated there if missing (default: benchmarks/data)")
    parser.add_argument("--queries", type=int, default=7000, help="queries to generate (only if data is missing)")
    parser.add_argument("--depth", type=int, default=1000, help="docs per query to generate (only if data is missing)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tool; the best wall time is reported")
    parser.add_argument("--only", default=None,
                        help="comma-separated tools: ndcg-report,pytrec_eval,ir_measures,ranx,ranx-warm")
    parser.add_argument("--timeout", type=float, default=600.0, help="kill a single tool run after this many seconds")
    parser.add_argument("--json", type=Path, default=BENCH_DIR / "results.json", help="where to write the results")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    bin_dir = Path(sys.executable).parent  # the venv's bin/, not resolved through the symlink
    tools = select_tools(all_tools(), args.only)
    inputs = ensure_data(args.data, args.queries, args.depth)
    machine = describe_machine()
    files = describe_files(inputs)
    print(f"benchmarking {', '.join(t.name for t in tools)} on {inputs.run} ({args.repeat} rounds)", flush=True)
    results = run_tools(tools, inputs, bin_dir, args.repeat, args.timeout)
    report = render_report(machine, files, results, args.repeat)
    print()
    print(report)
    record = {
        "command": [Path(sys.executable).name, *sys.argv],
        "cutoffs": list(CUTOFFS),
        "repeat": args.repeat,
        "machine": machine,
        "files": files,
        "results": [asdict(r) for r in results],
    }
    args.json.write_text(json.dumps(record, indent=2) + "\n")
    print(f"\nwrote {args.json}")
    return 0 if all(r.error is None for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
