"""Where a report build spends its time: the whole command, then each step of `ndcg-report build`
(the CLI's checks, the pre-kernel read of the inputs, papermill, nbval, nbconvert, publishing), then
papermill's execution cell by cell, and what a fresh kernel pays to import the report's modules.

    .venv/bin/python benchmarks/build_stages.py [--rounds 3] [--dataset dl19]
    .venv/bin/python benchmarks/build_stages.py -- build --run ... --qrels ... --out DIR
    PYTHONPATH=OLD_CHECKOUT/src .venv/bin/python benchmarks/build_stages.py   # an older commit's pipeline

The steps are timed in one process by wrapping the functions of ndcg_report.build.pipeline, so the
sum of the steps is the command minus the interpreter's start-up and the CLI's own imports. Steps
that run at the same time are shown with the wall time of each: their sum is then more than the
command. Medians over --rounds rounds; runs on an otherwise idle machine (say what else ran).
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

ROOT = Path(__file__).resolve().parents[1]

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
            first = next((line for line in cell.source.splitlines() if line.strip() and not line.startswith("#")), "")
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dataset", default="dl19", help="the demo to build (default dl19)")
    parser.add_argument("command", nargs="*", help="a full ndcg-report command instead of the demo (after --)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        command = args.command or ["demo", args.dataset, "--out", str(Path(scratch) / "report")]
        rounds = [one_round(command) for _ in range(args.rounds)]
        imports = [float(subprocess.run([sys.executable, "-c", IMPORTS], capture_output=True, text=True,
                                        check=True).stdout) for _ in range(args.rounds)]
    median = statistics.median
    print(f"`ndcg-report {' '.join(command[:2])} ...`: median of {args.rounds} rounds")
    print(f"  {'whole command (a fresh process)':<62} {median(w for w, _ in rounds):6.2f} s")
    labels = list(dict.fromkeys(label for _, r in rounds for label, _, _ in r["steps"]))
    for label in labels:
        starts = [s for _, r in rounds for lab, s, _ in r["steps"] if lab == label]
        seconds = [d for _, r in rounds for lab, _, d in r["steps"] if lab == label]
        print(f"  {label:<62} {median(seconds):6.2f} s  (from {median(starts):5.2f} s)")
    print(f"  {'a fresh kernel imports the report modules':<62} {median(imports):6.2f} s")
    print("papermill's execution, cell by cell (first round):")
    for index, first, seconds in rounds[0][1]["cells"]:
        print(f"  cell {index:<3} {first:<56} {seconds:6.2f} s")


if __name__ == "__main__":
    main()
