"""Where `ndcg-report eval` spends its time, stage by stage, on any checkout.

Each round runs the real command (`ndcg-report eval QRELS RUN` with the options given) in a fresh
process of the checkout's own venv, with timers around the functions each stage is made of (the
table STAGES below; a name a checkout lacks is skipped, so one script times old and new code
alike). The pipeline runs stages on several threads at once, so a stage's figure is its busy time
summed over threads; `main thread waits` is the time the evaluating thread spent waiting for the
next parsed block. `whole process` is the process's wall time, from before the interpreter starts.
Prints the medians over the rounds as a Markdown table, one column per checkout; with --peers, the
whole-process times of the floor (benchmarks/eval_floor.py: pyarrow reading the run's three
columns) and of the peers named (benchmarks/peer_eval.py), timed in the same rounds, beneath it.

    .venv/bin/python benchmarks/eval_stages.py --data DIR [--checkout DIR ...] [--rounds N] \
        [--peers floor,pytrec_eval,ranx,ir_measures] [-- EVAL OPTIONS]
        (default options: -k 1,3,5,10,20,100,1000 -q --format csv)

DIR holds run.txt and qrels.txt (default benchmarks/data-eval; benchmarks/make_eval_data.py writes
them there first if either is missing). Timers add a few microseconds a call; stages are called a
few times a block, so they change nothing measurable.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_OPTIONS = ["-k", "1,3,5,10,20,100,1000", "-q", "--format", "csv"]

# (stage, module, attribute): the function is timed where the caller looks it up. A generator's time is
# the time spent making each item. Outermost calls count once: a stage inside another is not subtracted.
STAGES = [
    ("imports", "importlib._bootstrap", "_find_and_load"),
    ("qrels read and indexed", "ndcg_report.core.streaming", "load_qrels"),
    ("run parsed into blocks", "ndcg_report.core.streaming", "_query_blocks"),
    ("run parsed into blocks", "ndcg_report.inputs.run_blocks", "query_blocks"),

    ("run pair index", "ndcg_report.core.streaming", "index_pairs"),
    ("qrels of a block's queries", "ndcg_report.core.streaming", "select_queries"),
    ("qrels of a block's queries", "ndcg_report.core.streaming", "group_by_query"),
    ("run lines joined to qrels", "ndcg_report.core.evaluation_pass", "judged_run_lines"),
    ("ranking", "ndcg_report.core.evaluation_pass", "rank_within_query"),
    ("measures (the rest of a block's pass)", "ndcg_report.core.partitions", "evaluate_pass"),
    ("measures (the rest of a block's pass)", "ndcg_report.core.streaming", "merge"),
    ("output", "ndcg_report.commands.eval", "_rendered"),
    ("main thread waits", "ndcg_report.core.streaming", "ReadAhead.__next__"),
    ("main thread waits", "ndcg_report.inputs.run_blocks", "ReadAhead.__next__"),
]
NESTED = {"measures (the rest of a block's pass)": ("run lines joined to qrels", "ranking")}  # subtracted

CHILD = r"""
import importlib, json, os, sys, threading, time, types
clock = time.perf_counter
busy, depth = {}, threading.local()
stages = json.loads(sys.argv[1])

def timed(stage, function):
    def call(*args, **kwargs):
        level = getattr(depth, stage, 0)
        setattr(depth, stage, level + 1)
        start = clock()
        try:
            result = function(*args, **kwargs)
        finally:
            setattr(depth, stage, level)
            if level == 0:
                busy[stage] = busy.get(stage, 0.0) + clock() - start
        if isinstance(result, types.GeneratorType) or (hasattr(result, "__next__") and stage == "output"):
            return items(stage, result)
        return result
    call.__wrapped__ = function
    return call

def items(stage, iterator):
    while True:
        start = clock()
        try:
            item = next(iterator)
        except StopIteration:
            busy[stage] = busy.get(stage, 0.0) + clock() - start
            return
        busy[stage] = busy.get(stage, 0.0) + clock() - start
        yield item

import importlib.abc, importlib.machinery
wanted = {}
for stage, module_name, attribute in stages[1:]:
    wanted.setdefault(module_name, []).append((stage, attribute))
missing = []  # loaded modules without the function

def patch(module, stage, attribute):
    owner, name = module, attribute
    if "." in attribute:
        cls, name = attribute.split(".")
        owner = getattr(module, cls, None)
    if owner is not None and hasattr(owner, name):
        setattr(owner, name, timed(stage, getattr(owner, name)))
    else:
        missing.append(f"{module.__name__}.{attribute}")

class TimedLoader(importlib.abc.Loader):
    def __init__(self, inner):
        self.inner = inner
    def create_module(self, spec):
        return self.inner.create_module(spec)
    def exec_module(self, module):
        self.inner.exec_module(module)
        for stage, attribute in wanted[module.__name__]:
            patch(module, stage, attribute)

class Timers(importlib.abc.MetaPathFinder):
    # each module of STAGES gets its timers as soon as it has run: nothing is imported early or in another order
    def find_spec(self, name, path, target=None):
        if name not in wanted:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                spec.loader = TimedLoader(spec.loader)
                return spec
        return None

import importlib._bootstrap
importlib._bootstrap._find_and_load = timed(stages[0][0], importlib._bootstrap._find_and_load)
sys.meta_path.insert(0, Timers())
from ndcg_report import cli
sys.argv = ["ndcg-report", "eval", *sys.argv[2:]]
stdout = sys.stdout
sys.stdout = open(os.devnull, "w")
try:
    code = cli.main(sys.argv[1:])
finally:
    sys.stdout = stdout
skipped = missing
busy["imports"] = busy.get("imports", 0.0)
print(json.dumps({"busy": busy, "skipped": skipped, "code": code}))
"""


def run_once(python: Path, stages: list, eval_args: list[str]) -> dict[str, float]:
    """One fresh process of the checkout's python: the stages' busy times and the whole wall time."""
    start = time.perf_counter()
    done = subprocess.run([str(python), "-c", CHILD, json.dumps(stages), *eval_args],
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0 or not done.stdout.strip():
        sys.exit(f"{python}: eval failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["code"] != 0:
        sys.exit(f"{python}: eval exited {result['code']}: {done.stderr.strip()[-500:]}")
    times = dict(result["busy"])
    for stage, inner in NESTED.items():
        if stage in times:
            times[stage] -= sum(times.get(name, 0.0) for name in inner)
    times["whole process"] = wall
    times["skipped"] = result["skipped"]
    return times


def time_peer(peer: str, data: Path) -> float:
    """Wall time of one fresh process of this venv's python: the floor, or a peer's whole evaluation."""
    here = Path(__file__).resolve().parent
    if peer == "floor":
        argv = [str(here / "eval_floor.py"), str(data / "run.txt")]
    else:
        argv = [str(here / "peer_eval.py"), peer, str(data / "qrels.txt"), str(data / "run.txt")]
    start = time.perf_counter()
    subprocess.run([sys.executable, *argv], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("benchmarks/data-eval"), help="folder with run.txt and qrels.txt")
    parser.add_argument("--checkout", type=Path, action="append", default=[],
                        help="a checkout with its .venv (repeatable; default: this one)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--peers", default="", help="comma-separated: floor, pytrec_eval, ranx, ir_measures")
    parser.add_argument("eval_options", nargs="*", help="after --: eval's options")
    args = parser.parse_args()
    peers = [peer for peer in args.peers.split(",") if peer]
    checkouts = args.checkout or [Path(__file__).resolve().parent.parent]
    if not (args.data / "run.txt").exists() or not (args.data / "qrels.txt").exists():
        subprocess.run([sys.executable, str(Path(__file__).resolve().parent / "make_eval_data.py"), "--out",
                        str(args.data)], check=True)
    eval_args = [*(args.eval_options or DEFAULT_OPTIONS), str(args.data / "qrels.txt"), str(args.data / "run.txt")]
    stages = [list(stage) for stage in STAGES]
    rounds: dict[Path, list[dict]] = {checkout: [] for checkout in checkouts}
    peer_times: dict[str, list[float]] = {}
    for number in range(args.rounds):  # round-robin, so drift falls on every checkout alike
        for checkout in checkouts:
            rounds[checkout].append(run_once(checkout / ".venv" / "bin" / "python", stages, eval_args))
        for peer in peers:
            peer_times.setdefault(peer, []).append(time_peer(peer, args.data))
        print(f"round {number + 1}/{args.rounds} done", file=sys.stderr)
    names = list(dict.fromkeys([stage for stage, _, _ in STAGES] + ["whole process"]))
    header = "| stage (median s over %d rounds) | " % args.rounds + " | ".join(
        _label(checkout) for checkout in checkouts) + " |"
    print(f"\n`ndcg-report eval {' '.join(args.eval_options or DEFAULT_OPTIONS)}` on {args.data}\n")
    print(header)
    print("|" + "---|" * (len(checkouts) + 1))
    for name in names:
        cells = []
        for checkout in checkouts:
            values = [r.get(name) for r in rounds[checkout]]
            cells.append(f"{statistics.median(values):.3f}" if None not in values else "-")
        print(f"| {name} | " + " | ".join(cells) + " |")
    for peer, times in peer_times.items():
        name = "floor: pyarrow reads qid, docid, score" if peer == "floor" else peer
        print(f"| whole process, {name} | " + " | ".join(f"{statistics.median(times):.3f}" for _ in checkouts) + " |")
    print("\n-: the stage did not run (an in-memory evaluation has no blocks), or that checkout has none of its functions")
    for checkout in checkouts:
        skipped = set(rounds[checkout][0]["skipped"])
        untimed = [stage for stage in dict.fromkeys(s for s, _, _ in STAGES)
                   if all(f"{m}.{a}" in skipped for s, m, a in STAGES if s == stage)]
        if untimed:
            print(f"{_label(checkout)} has no function of: {', '.join(untimed)}")


def _label(checkout: Path) -> str:
    """The checkout's short commit, or its folder name."""
    done = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or checkout.name


if __name__ == "__main__":
    main()
