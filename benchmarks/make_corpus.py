"""Generate a synthetic BEIR-style corpus (JSON lines) and, optionally, a topics file.

N passages of about 60 words (normal, sd 12, clipped to 10..120) drawn from a Zipf-like
vocabulary (probability of the r-th word ~ 1 / r**s) of made-up lower-case words; ids are "0".."N-1"
with an empty title, as in MS MARCO passages. Queries take 2-6 words whose ranks are log-uniform
between 30 and the vocabulary size, so they mix common and rare terms. Seeded: the same arguments
give the same bytes. Usage:

    .venv/bin/python benchmarks/make_corpus.py --passages 20000 --out benchmarks/data/bm25/corpus.jsonl \
        --topics benchmarks/data/bm25/topics.tsv
"""

from __future__ import annotations

import argparse
import gzip
from pathlib import Path
from typing import IO

import numpy as np

LETTERS = np.array(list("abcdefghijklmnopqrstuvwxyz"))


def make_vocabulary(size: int, rng: np.random.Generator) -> np.ndarray:
    """`size` distinct made-up words of 3..11 letters (object array, most frequent first)."""
    words: dict[str, None] = {}
    while len(words) < size:
        need = size - len(words)
        lengths = rng.integers(3, 12, size=need)
        letters = LETTERS[rng.integers(0, 26, size=int(lengths.sum()))]
        for word in np.split(letters, np.cumsum(lengths)[:-1]):
            words.setdefault("".join(word), None)
    return np.array(list(words)[:size], dtype=object)


def zipf_cdf(size: int, exponent: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, size + 1, dtype=np.float64) ** exponent
    cdf = np.cumsum(weights)
    return cdf / cdf[-1]


def write_passages(
    handle: IO[str], n: int, vocabulary: np.ndarray, cdf: np.ndarray, words: int, rng: np.random.Generator,
    chunk: int = 20_000,
) -> None:
    for start in range(0, n, chunk):
        count = min(chunk, n - start)
        lengths = np.clip(np.rint(rng.normal(words, 12, size=count)), 10, 120).astype(np.int64)
        ranks = np.searchsorted(cdf, rng.random(int(lengths.sum())), side="right")
        tokens = vocabulary[np.minimum(ranks, len(vocabulary) - 1)]
        bounds = np.concatenate(([0], np.cumsum(lengths)))
        handle.write("".join(
            f'{{"_id": "{start + i}", "title": "", "text": "{" ".join(tokens[bounds[i]:bounds[i + 1]])}"}}\n'
            for i in range(count)
        ))


def write_topics(path: Path, n: int, vocabulary: np.ndarray, rng: np.random.Generator) -> None:
    lines = []
    for qid in range(1, n + 1):
        length = int(rng.integers(2, 7))
        ranks = np.exp(rng.uniform(np.log(30), np.log(len(vocabulary)), size=length)).astype(np.int64) - 1
        lines.append(f"{qid}\t{' '.join(vocabulary[ranks])}\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines), encoding="utf-8")


def make_corpus(
    out: Path, passages: int, *, words: int = 60, vocabulary_size: int = 200_000, exponent: float = 1.1,
    seed: int = 42, topics: Path | None = None, queries: int = 1000,
) -> None:
    """Write the corpus to `out` (gzip if it ends in .gz) and, if given, `queries` topics to `topics`."""
    rng = np.random.default_rng(seed)
    vocabulary = make_vocabulary(vocabulary_size, rng)
    cdf = zipf_cdf(vocabulary_size, exponent)
    out.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if out.suffix == ".gz" else open
    with opener(out, "wt", encoding="utf-8", newline="\n") as handle:
        write_passages(handle, passages, vocabulary, cdf, words, rng)
    if topics is not None:
        write_topics(topics, queries, vocabulary, np.random.default_rng(seed + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=1_000_000)
    parser.add_argument("--words", type=int, default=60, help="mean words per passage")
    parser.add_argument("--vocabulary", type=int, default=200_000, help="distinct words")
    parser.add_argument("--zipf", type=float, default=1.1, help="Zipf exponent s")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/data/bm25/corpus.jsonl"))
    parser.add_argument("--topics", type=Path, default=None, help="also write this many --queries topics here")
    parser.add_argument("--queries", type=int, default=1000)
    args = parser.parse_args()
    make_corpus(
        args.out, args.passages, words=args.words, vocabulary_size=args.vocabulary, exponent=args.zipf,
        seed=args.seed, topics=args.topics, queries=args.queries,
    )
    print(f"wrote {args.passages} passages to {args.out}" + (f" and {args.queries} topics to {args.topics}" if args.topics else ""))


if __name__ == "__main__":
    main()
