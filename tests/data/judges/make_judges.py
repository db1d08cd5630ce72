"""Writes the judges test data from tests/data/small and the package's DL 2019 runs (run it to rebuild).

- `llm.txt`: a SIMULATED second judgment set, not any real LLM's labels. From the human qrels of
  tests/data/small, each (qid, docid) draws u in [0, 1) from sha256("llm|qid|docid"): below 0.60 the
  label is kept, below 0.82 it goes one grade up (at most 3: the lenient judge of the LLM papers),
  below 0.94 one grade down (at least 0), else the pair is left unjudged. The documents of monot5.txt's
  top 20 that the human qrels do not judge are added, labelled 0 to 2 by the same kind of draw, so
  each set judges pairs the other lacks.
- `llm-float.txt`: the same labels with float grades, as a judge giving a probability-like score: the
  label plus an offset in [-0.45, 0.45) drawn from sha256("float|qid|docid"), kept within [0, 3], two
  decimals.
- `src/ndcg_report/data/dl19-passage/qrels.dl19-simulated-judge.txt`: the same simulated judge over the
  whole DL 2019 qrels (pooling monoT5's top 20), the second set of `ndcg-report demo judges`.
- `rrf.txt`, `interp.txt`, `monot5-top20.txt`: the top 100 lines of the 8 queries of tests/data/small
  from the package's DL 2019 fusion and re-ranking runs (src/ndcg_report/data/dl19-passage/), so the
  judges command has five systems to order.
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
SMALL = HERE.parent / "small"
PACKAGE_DATA = HERE.parents[2] / "src" / "ndcg_report" / "data" / "dl19-passage"
RUNS = {"rrf.txt": "rrf.bm25-monot5.dl19.run.gz", "interp.txt": "interp.bm25-monot5.dl19.run.gz",
        "monot5-top20.txt": "monot5-top20-bm25.dl19.run.gz"}
DEPTH = 100
POOL_DEPTH = 20


def draw(*parts: str) -> float:
    """A uniform number in [0, 1) from the parts' sha256: the same on every machine and version."""
    return int.from_bytes(hashlib.sha256("|".join(parts).encode("utf-8")).digest()[:8], "big") / 2 ** 64


def top(path: Path, depth: int, qids: set[str]) -> list[list[str]]:
    """The first `depth` lines of each query in `qids`, by score descending then docid descending (trec_eval's order)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        lines = [line.split() for line in handle if line.strip()]
    by_query: dict[str, list[list[str]]] = {}
    for fields in lines:
        if fields[0] in qids:
            by_query.setdefault(fields[0], []).append(fields)
    kept = []
    for qid in sorted(by_query):
        ranked = sorted(by_query[qid], key=lambda f: (-float(f[4]), tuple(-b for b in f[2].encode())))
        kept += ranked[:depth]
    return kept


def simulated_judge(qrels: Path, pooled_run: Path) -> list[tuple[str, str, int]]:
    """The simulated second judge's labels of qrels (and of pooled_run's top POOL_DEPTH it lacks), as described above."""
    human = [line.split() for line in qrels.read_text(encoding="utf-8").splitlines() if line.strip()]
    judged = {(qid, docid) for qid, _, docid, _ in human}
    qids = {qid for qid, *_ in human}
    llm: list[tuple[str, str, int]] = []
    for qid, _, docid, label in human:
        u, grade = draw("llm", qid, docid), int(label)
        if u < 0.60:
            llm.append((qid, docid, grade))
        elif u < 0.82:
            llm.append((qid, docid, min(grade + 1, 3)))
        elif u < 0.94:
            llm.append((qid, docid, max(grade - 1, 0)))
    for qid, _, docid, *_ in top(pooled_run, POOL_DEPTH, qids):
        if (qid, docid) not in judged:
            llm.append((qid, docid, min(int(draw("pool", qid, docid) * 3), 2)))
    return llm


def main() -> None:
    llm = simulated_judge(SMALL / "qrels.txt", SMALL / "monot5.txt")
    qids = {qid for qid, _, _ in llm}
    (HERE / "llm.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in llm), encoding="utf-8")
    floats = [(q, d, min(max(g + draw("float", q, d) * 0.9 - 0.45, 0.0), 3.0)) for q, d, g in llm]
    (HERE / "llm-float.txt").write_text("".join(f"{q} 0 {d} {g:.2f}\n" for q, d, g in floats), encoding="utf-8")
    for name, source in RUNS.items():
        lines = top(PACKAGE_DATA / source, DEPTH, qids)
        (HERE / name).write_text("".join(" ".join(fields) + "\n" for fields in lines), encoding="utf-8")
    demo = simulated_judge(PACKAGE_DATA / "qrels.dl19-passage.txt", PACKAGE_DATA / "monot5.dl19.run.gz")
    (PACKAGE_DATA / "qrels.dl19-simulated-judge.txt").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, d, g in demo), encoding="utf-8")


if __name__ == "__main__":
    main()
