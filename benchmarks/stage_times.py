"""Where `ndcg-report eval` spends its time: parsing versus everything after parsing.

Each round runs two fresh processes. One times a plain pyarrow parse of the run (the yardstick:
`pyarrow.csv.read_csv` of all six columns, types inferred). The other times the stages of
`ndcg-report eval -q` on the same files: parsing the qrels and the run (our reader), the checks
and pair index of each file, evaluation, and the trec-format output. Prints the median of each
stage over the rounds and the ratio of post-parse work to the plain parse and to our own parse
(which reads only the three columns it needs, with their types given).

    .venv/bin/python benchmarks/stage_times.py [--data DIR] [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, time
from pathlib import Path

run_path, qrels_path, what = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
clock = time.perf_counter
times = {}
if what == "plain":
    import pyarrow.csv as pacsv

    start = clock()
    pacsv.read_csv(run_path, read_options=pacsv.ReadOptions(column_names=["qid", "Q0", "docid", "rank", "score", "tag"]),
                   parse_options=pacsv.ParseOptions(delimiter=" "))
    print(json.dumps({"plain pyarrow parse of the run": clock() - start}))
    sys.exit(0)
start = clock()
from ndcg_report import evaluate
from ndcg_report.core.output_formats import format_trec
from ndcg_report.inputs.duplicates import reject_duplicates
from ndcg_report.inputs.formats.trec_lines import QRELS_LAYOUT, RUN_LAYOUT
from ndcg_report.inputs.formats.trec_text import read_table
from ndcg_report.inputs.reading import Qrels, Run
times["imports"] = clock() - start

start = clock()
qrels_table, qrels_line = read_table(qrels_path, QRELS_LAYOUT)
times["parse qrels"] = clock() - start
start = clock()
run_table, run_line = read_table(run_path, RUN_LAYOUT)
times["parse run"] = clock() - start
start = clock()
qrels = Qrels(str(qrels_path), qrels_table, reject_duplicates(qrels_path, qrels_line, qrels_table, "qrels"))
run = Run(str(run_path), run_table, "", reject_duplicates(run_path, run_line, run_table, "run"))
times["checks + pair index, both files"] = clock() - start
start = clock()
evaluation = evaluate(run, qrels)
times["evaluate (join, ranks, 7 cut-offs)"] = clock() - start
start = clock()
text = format_trec(evaluation, per_query=True)
times["trec output"] = clock() - start
print(json.dumps(times))
"""

POST_PARSE = ("checks + pair index, both files", "evaluate (join, ranks, 7 cut-offs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("benchmarks/data"), help="folder with run.txt and qrels.txt")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    run_path, qrels_path = args.data / "run.txt", args.data / "qrels.txt"
    if not run_path.exists() or not qrels_path.exists():
        sys.exit(f"no run.txt / qrels.txt in {args.data}: run benchmarks/make_data.py --out {args.data} first")
    rounds = []
    for number in range(args.rounds):
        times = {}
        for what in ("plain", "ours"):
            output = subprocess.run([sys.executable, "-c", CHILD, str(run_path), str(qrels_path), what],
                                    check=True, capture_output=True, text=True).stdout
            times.update(json.loads(output))
        rounds.append(times)
        print(f"round {number + 1}/{args.rounds}: " + ", ".join(f"{k} {v:.3f}" for k, v in rounds[-1].items()))
    print(f"\nmedian over {args.rounds} fresh processes (s):")
    medians = {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}
    for name, value in medians.items():
        print(f"  {name:<40} {value:6.3f}")
    post = [sum(r[name] for name in POST_PARSE) for r in rounds]
    ratio = [p / r["plain pyarrow parse of the run"] for p, r in zip(post, rounds)]
    print(f"  {'after parsing (checks + evaluate)':<40} {statistics.median(post):6.3f}")
    print(f"after parsing / plain parse: median {statistics.median(ratio):.2f} (rounds: "
          + " ".join(f"{x:.2f}" for x in ratio) + ")")
    ours = [p / (r["parse run"] + r["parse qrels"]) for p, r in zip(post, rounds)]
    print(f"after parsing / our parse of both files: median {statistics.median(ours):.2f} (rounds: "
          + " ".join(f"{x:.2f}" for x in ours) + ")")


if __name__ == "__main__":
    main()
