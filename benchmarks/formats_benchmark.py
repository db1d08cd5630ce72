"""Paired timings of `ndcg-report eval` on the same run as TREC text and as JSON lines (each form).

Makes the JSON-lines files from the TREC run if missing (convert_run.py; the flat form here), then
runs the commands in turn, round after round (so a busy moment hits all of them alike), and prints
each one's median wall time and peak memory, its median ratio to TREC text within a round, and
whether every output equals the TREC text's byte for byte.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def ensure_json_lines(run: Path) -> dict[str, Path]:
    """{form: path} of the run as JSON lines, written beside it on first use."""
    paths = {form: run.with_name(f"{run.stem}.{form}.jsonl") for form in ("retrieved", "docs", "flat")}
    for form in ("retrieved", "docs"):
        if not paths[form].exists():
            subprocess.run([sys.executable, str(HERE / "convert_run.py"), str(run), str(paths[form]), "--form", form],
                           check=True)
    if not paths["flat"].exists():
        with open(run, encoding="utf-8") as lines, open(paths["flat"], "w", encoding="utf-8") as out:
            for line in lines:
                qid, _, docid, _, score, _ = line.split()
                out.write(f'{{"qid": {json.dumps(qid)}, "docid": {json.dumps(docid)}, "score": {score}}}\n')
    return paths


def timed(argv: list[str]) -> tuple[float, int, bytes]:
    """(wall seconds, peak resident KiB, stdout) of one command under /usr/bin/time."""
    result = subprocess.run(["/usr/bin/time", "-f", "%e %M", *argv], capture_output=True, check=True)
    seconds, peak = result.stderr.decode().strip().splitlines()[-1].split()
    return float(seconds), int(peak), result.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=HERE / "data", help="folder with run.txt and qrels.txt")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    run, qrels = args.data / "run.txt", args.data / "qrels.txt"
    inputs = {"TREC text": run, **{f"JSON lines ({form})": path for form, path in ensure_json_lines(run).items()}}
    binary = str(Path(sys.executable).with_name("ndcg-report"))
    times: dict[str, list[float]] = {name: [] for name in inputs}
    peaks: dict[str, list[int]] = {name: [] for name in inputs}
    ratios: dict[str, list[float]] = {name: [] for name in inputs}
    same = {name: True for name in inputs}
    for _ in range(args.rounds):
        outputs = {}
        for name, path in inputs.items():
            seconds, peak, outputs[name] = timed([binary, "eval", str(qrels), str(path)])
            times[name].append(seconds)
            peaks[name].append(peak)
        for name in inputs:
            ratios[name].append(times[name][-1] / times["TREC text"][-1])
            same[name] &= outputs[name] == outputs["TREC text"]
    print(f"{'input':<26} {'size MB':>8} {'median s':>9} {'all s':<32} {'ratio':>6} {'peak MB':>8} same")
    for name, path in inputs.items():
        print(f"{name:<26} {path.stat().st_size / 1e6:>8.0f} {statistics.median(times[name]):>9.2f} "
              f"{' '.join(f'{t:.2f}' for t in times[name]):<32} {statistics.median(ratios[name]):>6.2f} "
              f"{statistics.median(peaks[name]) / 1024:>8.0f} {same[name]}")


if __name__ == "__main__":
    main()
