"""Write a TREC run as JSON lines, one query per line, to time the JSON-lines reader against TREC text.

--form retrieved: {"qid": ..., "retrieved": [docid, ...]} in trec_eval's order (score descending,
ties by docid descending), so the ranking, and every NDCG, equals the TREC file's;
--form docs: {"qid": ..., "docs": [{"docid": ..., "score": ...}, ...]} with the file's scores.
Queries must be contiguous in the run (as written by make_data.py).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def convert(run: Path, out: Path, form: str) -> None:
    from ndcg_report.inputs.reading import read_run

    table = read_run(run).table
    qids = table["qid"].chunk(0)
    codes = qids.indices.to_numpy()
    names = qids.dictionary.to_pylist()
    docids = np.array(table["docid"].to_pylist(), dtype=object)
    scores = table["score"].to_numpy()
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    ends = np.append(starts[1:], len(codes))
    with open(out, "w", encoding="utf-8") as stream:
        for start, end in zip(starts.tolist(), ends.tolist()):
            ids, values = docids[start:end], scores[start:end]
            if form == "retrieved":
                order = sorted(range(end - start), key=lambda i: (-values[i], _descending(ids[i])))
                record = {"qid": names[codes[start]], "retrieved": [ids[i] for i in order]}
            else:
                record = {"qid": names[codes[start]],
                          "docs": [{"docid": d, "score": float(s)} for d, s in zip(ids, values)]}
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")


class _descending:
    """A sort key that orders strings by descending UTF-8 bytes."""

    def __init__(self, text: str) -> None:
        self.data = text.encode("utf-8")

    def __lt__(self, other: "_descending") -> bool:
        return self.data > other.data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _descending) and self.data == other.data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--form", choices=("retrieved", "docs"), default="retrieved")
    args = parser.parse_args()
    convert(args.run, args.out, args.form)


if __name__ == "__main__":
    main()
