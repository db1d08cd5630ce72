"""Where a report build spends its time: the whole command, then each step of `ndcg-report build`
(the CLI's checks, the pre-kernel read of the inputs, papermill, nbval, nbconvert, publishing), then
papermill's execution cell by cell, and what a fresh kernel pays to import the report's modules; with
--kernel, the kernel's own work stage by stage instead (kernel_stages.py, no papermill).

    .venv/bin/python benchmarks/build_stages.py [--rounds 3] [--workload demo|judges|queries200]
    .venv/bin/python benchmarks/build_stages.py --workload judges --kernel --rounds 3 --json new.json
    .venv/bin/python benchmarks/build_stages.py -- build --run ... --qrels ... --out DIR
    PYTHONPATH=OLD_CHECKOUT/src OLD_CHECKOUT/.venv/bin/python benchmarks/build_stages.py --kernel --json old.json
    .venv/bin/python benchmarks/build_stages.py --compare old.json new.json   # before/after, with ratios

Workloads (build_workloads.py says how each is made; generated into a temporary folder, nothing downloaded):
demo, `ndcg-report demo --out DIR` (--dataset picks another demo); judges, make_judges_data.py's 19
systems x 3 judgment sets on DL 2019; queries200, 200 synthetic queries, a baseline and 7 runs of 1,000
documents from make_eval_data.py's generator, fixed seed. After `--` any build or demo command instead.

The steps are timed in one process by wrapping the functions of ndcg_report.build.pipeline, so the
sum of the steps is the command minus the interpreter's start-up and the CLI's own imports. Steps
that run at the same time are shown with the wall time of each: their sum is then more than the
command. --kernel runs, once a round in a fresh process, the command's checks as the CLI does them,
the build's pre-kernel read of the inputs, then what the notebook's cells do: load_report (inside it
each statistic and judgment-set part), the Tukey HSD and the mean intervals on first use, each section,
the figures cell, and then each figure drawn again with its PNG and its SVG timed apart; its share
column is of load_report for load_report's parts, of the figures cell for the figures, else of the
kernel's total. What an older checkout lacks is shown with a dash. Medians over --rounds rounds; run
on an otherwise idle machine (say what else ran). --json writes the medians, --compare sets two such
files side by side.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from build_workloads import WORKLOADS
from kernel_stages import EACH_FIGURE, FIGURES, LOAD, OUTSIDE

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys, time
started = time.perf_counter()
from pathlib import Path
try:  # the layout since report/ was split into analysis/ and build/
    import ndcg_report.build.pipeline as build
except ImportError:
    import ndcg_report.report.build as build
import ndcg_report.cli as cli

steps, cells = [], []

def timed(label, function):
    def wrapper(*args, **kwargs):
        begin = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            steps.append((label, begin - started, time.perf_counter() - begin))
    return wrapper

def cell_times(executed, *args, **kwargs):
    import nbformat
    notebook = nbformat.read(executed, as_version=4)
    for index, cell in enumerate(notebook.cells):
        seconds = cell.metadata.get("papermill", {}).get("duration")
        if cell.cell_type == "code" and seconds is not None:
            first = ("(papermill's injected parameters)" if "injected-parameters" in cell.metadata.get("tags", [])
                     else next((line for line in cell.source.splitlines() if line.strip() and not line.startswith("#")), ""))
            cells.append((index, first[:60], seconds))
    return original_drop(executed, *args, **kwargs)

original_drop = build._drop_run_specific_metadata
if hasattr(build, "check_inputs"):  # since the inputs are read, checked and saved for the kernels one run at a time
    build.check_inputs = timed("read, check and save the inputs before any kernel (bad input fails here)",
                               build.check_inputs)
else:
    build.load_inputs = timed("read the inputs before any kernel (bad input fails here)", build.load_inputs)
build._execute = timed("papermill: write the parameters, run the process, check", build._execute)
build._drop_run_specific_metadata = timed("drop run-specific metadata", cell_times)
try:  # the pipeline since papermill and nbval are child processes started together
    try:
        import ndcg_report.build.steps.processes as processes
    except ImportError:
        import ndcg_report.report.processes as processes
except ImportError:  # before it (e.g. commit 8d7a59b): one step after another
    processes = None
    build._validate_with_nbval = timed("nbval: re-execute and compare (a process)", build._validate_with_nbval)
if processes is not None:
    original_init, original_wait = processes.ChildProcess.__init__, processes.ChildProcess.wait
    original_terminate = getattr(processes.ChildProcess, "terminate", None)

    def init(self, command, *args, **kwargs):
        self._bench = ("nbval: re-execute and compare (a process)" if "--nbval" in command
                       else "fork server: import, fork both kernels (a process)"
                       if any(".kernel_forks" in str(word) for word in command)
                       else "papermill: execute the notebook (a process)", time.perf_counter())
        original_init(self, command, *args, **kwargs)

    def ended(function):
        def wrapper(self, *args, **kwargs):
            try:
                return function(self, *args, **kwargs)
            finally:
                label, begin = self._bench
                steps.append((label, begin - started, time.perf_counter() - begin))
        return wrapper

    processes.ChildProcess.__init__, processes.ChildProcess.wait = init, ended(original_wait)
    if original_terminate is not None:  # the fork server (since kernels are forked) is ended so
        processes.ChildProcess.terminate = ended(original_terminate)
build.notebook_to_html = timed("nbconvert: offline HTML", build.notebook_to_html)
publish = next(name for name in ("publish_staging", "publish", "_publish") if hasattr(build, name))
setattr(build, publish, timed("publish (rename into --out)", getattr(build, publish)))
build_report = build.build_report
cli_build = timed("build_report (all of the steps above)", build_report)
build.build_report = cli_build
code = cli.main(sys.argv[1:])
print(json.dumps({"steps": steps, "cells": cells, "total": time.perf_counter() - started, "code": code}))
"""

IMPORTS = r"""
import importlib, time
started = time.perf_counter()
for name in ("checks", "content", "html", "outputs", "results", "drilldown", "plots"):  # what a release has
    for package in ("ndcg_report.analysis", "ndcg_report.report"):  # after report/ was split, and before
        try:
            importlib.import_module(f"{package}.{name}")
            break
        except ImportError:
            pass
print(time.perf_counter() - started)
"""


def one_round(command: list[str]) -> tuple[float, dict]:
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", CHILD, *command], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if result.returncode != 0 or not result.stdout.strip():
        sys.exit(f"build failed: {result.stderr[-2000:]}")
    return wall, json.loads(result.stdout.strip().splitlines()[-1])


def command_table(command: list[str], rounds: int) -> dict[str, float]:
    """Print the whole command, its steps, papermill's cells and a kernel's imports; return their medians."""
    runs = [one_round(command) for _ in range(rounds)]
    imports = [float(subprocess.run([sys.executable, "-c", IMPORTS], capture_output=True, text=True,
                                    check=True).stdout) for _ in range(rounds)]
    median = statistics.median
    medians = {"whole command (a fresh process)": median(w for w, _ in runs)}
    print(f"`ndcg-report {' '.join(command[:2])} ...`: median of {rounds} rounds")
    print(f"  {'whole command (a fresh process)':<62} {medians['whole command (a fresh process)']:6.2f} s")
    for label in dict.fromkeys(label for _, r in runs for label, _, _ in r["steps"]):
        starts = [s for _, r in runs for lab, s, _ in r["steps"] if lab == label]
        medians[label] = median(d for _, r in runs for lab, _, d in r["steps"] if lab == label)
        print(f"  {label:<62} {medians[label]:6.2f} s  (from {median(starts):5.2f} s)")
    medians["a fresh kernel imports the report modules"] = median(imports)
    print(f"  {'a fresh kernel imports the report modules':<62} {median(imports):6.2f} s")
    print(f"papermill's execution, cell by cell (median of {rounds} rounds):")
    for index, first, _ in runs[0][1]["cells"]:
        seconds = median(d for _, r in runs for i, f, d in r["cells"] if (i, f) == (index, first))
        key = f"cell: {first}"  # by its first line, not its number: the same in every checkout
        medians[key if key not in medians else f"cell {index}: {first}"] = seconds
        print(f"  cell {index:<3} {first:<56} {seconds:6.2f} s")
    return {f"command: {label}": seconds for label, seconds in medians.items()}


def kernel_round(command: list[str], scratch: Path) -> dict:
    result = scratch / "kernel-round.json"
    done = subprocess.run([sys.executable, str(HERE / "kernel_stages.py"), str(result), *command],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"the kernel's stages failed: {done.stderr[-3000:]}")
    return json.loads(result.read_text())


def kernel_table(command: list[str], rounds: int, scratch: Path) -> tuple[dict[str, float], list[str]]:
    """Print the kernel's stages (kernel_stages.py, a fresh process a round); return their medians and
    what this checkout lacks."""
    runs = [kernel_round(command, scratch) for _ in range(rounds)]
    paths = list(dict.fromkeys(path for run in runs for path, _, _ in run["rows"]))
    seconds = {p: statistics.median(s for run in runs for q, s, _ in run["rows"] if q == p) for p in paths}
    calls = {p: round(statistics.median(c for run in runs for q, _, c in run["rows"] if q == p)) for p in paths}
    outside = [p for p in paths if p.split(" > ")[0] in OUTSIDE]
    inside = [p for p in paths if p not in outside]
    total = sum(seconds[p] for p in inside if " > " not in p)
    bases = {LOAD: seconds.get(LOAD), FIGURES: seconds.get(FIGURES), EACH_FIGURE: seconds.get(FIGURES)}
    print(f"the kernel's work in one process, `ndcg-report {' '.join(command[:2])} ...`: median of {rounds} rounds")
    print(f"  {'stage':<84} {'seconds':>8} {'calls':>6} {'share':>6}")
    for path in [*inside, None, *outside]:
        if path is None:
            print(f"  {'kernel total (load_report to the report files)':<84} {total:8.3f}")
            print("  outside the kernel's total:")
            continue
        root, depth = path.split(" > ")[0], path.count(" > ")
        base = bases.get(root, None if root in OUTSIDE else total)
        share = f"{seconds[path] / base:6.1%}" if base else ""
        label = ("  " * depth + path.split(" > ")[-1])[:84]
        print(f"  {label:<84} {seconds[path]:8.3f} {calls[path]:>6} {share:>6}")
    missing = list(dict.fromkeys(m for run in runs for m in run["missing"]))
    for name in missing:
        print(f"  {name[:84]:<84} {'-':>8}  (not in this checkout)")
    medians = {f"kernel: {path}": seconds[path] for path in inside}
    return {**medians, "kernel: kernel total": total, **{f"kernel: {path}": seconds[path] for path in outside}}, missing


def comparison(old_file: Path, new_file: Path) -> None:
    """Print two --json files' medians side by side: each stage before, after, after / before."""
    old, new = (json.loads(Path(name).read_text(encoding="utf-8")) for name in (old_file, new_file))
    keys = list(new["stages"])
    for before, key in zip([None, *old["stages"]], old["stages"]):  # a stage only before: after its predecessor
        if key not in keys:
            keys.insert(keys.index(before) + 1 if before in keys else 0, key)
    for side, name in (("before", old_file), ("after", new_file)):
        print(f"{side}: {name} (workload {side == 'before' and old['workload'] or new['workload']}, "
              f"{(old if side == 'before' else new)['rounds']} rounds, {(old if side == 'before' else new)['package']})")
    print(f"  {'stage':<84} {'before':>8} {'after':>8} {'ratio':>6}")
    shown = ""
    for key in keys:
        a, b = old["stages"].get(key), new["stages"].get(key)
        kind, _, path = key.partition(": ")
        if kind != shown:
            print(f"  {kind}:")
            shown = kind
        label = ("  " * (1 + path.count(" > ")) + path.split(" > ")[-1])[:84]
        ratio = f"{b / a:6.2f}" if a and b is not None else ""
        print(f"  {label:<84} {'-' if a is None else f'{a:.3f}':>8} {'-' if b is None else f'{b:.3f}':>8} {ratio:>6}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workload", choices=list(WORKLOADS), default="demo", help="the report to build")
    parser.add_argument("--dataset", default="dl19", help="the demo workload's dataset (default dl19)")
    parser.add_argument("--kernel", action="store_true", help="the kernel's stages in one process, not the command's")
    parser.add_argument("--json", metavar="FILE", help="write the medians there")
    parser.add_argument("--compare", nargs=2, metavar=("OLD.json", "NEW.json"), help="print two --json files side by side")
    parser.add_argument("command", nargs="*", help="a full ndcg-report command instead of the workload (after --)")
    args = parser.parse_args()
    if args.compare:
        comparison(*args.compare)
        return
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "report"
        if args.command:
            command = args.command
        elif args.workload == "demo":
            command = ["demo", args.dataset, "--out", str(out)]
        else:
            command = WORKLOADS[args.workload](Path(scratch) / "data", out)
        if args.kernel:
            medians, missing = kernel_table(command, args.rounds, Path(scratch))
        else:
            medians, missing = command_table(command, args.rounds), []
    if args.json:
        import ndcg_report

        record = {"workload": "command" if args.command else args.workload, "command": command,
                  "rounds": args.rounds, "package": str(Path(ndcg_report.__file__).parent), "stages": medians,
                  "missing": missing}
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
