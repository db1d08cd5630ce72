"""Make the Cranfield demo's second system: BM25 with RM3 query expansion, as Anserini's defaults.

BM25 (k1=0.9, b=0.4, the same index as the baseline) retrieves the top `fb_docs` documents; the
relevance model is the score-weighted sum of their term distributions P(t|d) = tf / |d|, cut to
the `fb_terms` heaviest terms and L1-normalised; the expanded query is
`(1 - weight) * original + weight * model`, with the original query's terms L1-normalised too;
documents are re-scored as the weighted sum of their BM25 term weights and the top 1000 kept (ties
by docid descending, as the evaluator). Anserini's RM3 defaults: 10 docs, 10 terms, weight 0.5.

    .venv/bin/python scripts/make_cranfield_rm3.py   # writes src/ndcg_report/data/cranfield/bm25-rm3.run.gz
"""

from __future__ import annotations

import argparse
import gzip
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ndcg_report.baseline.bm25 import STOPWORDS, _stemmer, _top_k, build_index, retrieve
from ndcg_report.inputs.corpus import iter_corpus
from ndcg_report.inputs.reading import read_topics

DATA = Path(__file__).resolve().parents[1] / "src" / "ndcg_report" / "data" / "cranfield"


def term_frequencies(corpus: Path, vocab: dict[str, int]) -> sp.csr_matrix:
    """Documents x tokens counts with the index's tokeniser (tokens outside vocab dropped)."""
    import bm25s

    rows, cols = [], []
    n_docs = 0
    for _, texts in iter_corpus(corpus):
        tokens = bm25s.tokenize(texts, lower=True, stopwords=STOPWORDS, stemmer=_stemmer(),
                                return_ids=False, show_progress=False)
        for doc_tokens in tokens:
            ids = [vocab[t] for t in doc_tokens if t in vocab]
            rows.extend([n_docs] * len(ids))
            cols.extend(ids)
            n_docs += 1
    counts = sp.csr_matrix((np.ones(len(rows), np.float64), (rows, cols)), shape=(n_docs, len(vocab)))
    counts.sum_duplicates()
    return counts


def rm3_run(corpus: Path, topics_path: Path, fb_docs: int, fb_terms: int, weight: float, top_k: int) -> list[str]:
    """TREC run lines of BM25+RM3 over the corpus for every topic."""
    import bm25s

    topics = read_topics(topics_path)
    index = build_index(corpus)
    first_pass = retrieve(index, topics, top_k=fb_docs).to_pandas()
    tf = term_frequencies(corpus, index.vocab)
    doc_length = np.asarray(tf.sum(axis=1)).ravel()
    row_of = {docid: i for i, docid in enumerate(index.docids.to_pylist())}
    query_tokens = bm25s.tokenize(list(topics.astype(str)), lower=True, stopwords=STOPWORDS,
                                  stemmer=_stemmer(), return_ids=False, show_progress=False)
    lines = []
    for qid, tokens in zip(topics.index.astype(str), query_tokens):
        original = np.zeros(len(index.vocab))
        for token in tokens:
            if token in index.vocab:
                original[index.vocab[token]] += 1
        if original.sum() == 0:
            continue
        original /= original.sum()
        feedback = first_pass[first_pass["qid"] == qid]
        model = np.zeros(len(index.vocab))
        for docid, score in zip(feedback["docid"], feedback["score"]):
            row = row_of[docid]
            if doc_length[row] > 0:
                model += score * tf[row].toarray().ravel() / doc_length[row]
        if model.sum() > 0:
            keep = np.argsort(-model, kind="stable")[:fb_terms]
            trimmed = np.zeros_like(model)
            trimmed[keep] = model[keep]
            model = trimmed / trimmed.sum()
        query = (1 - weight) * original + weight * model
        scores = index.weights @ query.astype(np.float64)
        docs = np.flatnonzero(scores)
        docs, values = _top_k(docs, scores[docs], index.docid_order, top_k)
        docids = index.docids.take(docs).to_pylist()
        lines.extend(f"{qid} Q0 {d} {r} {v:.9g} bm25+rm3\n" for r, (d, v) in enumerate(zip(docids, values), 1))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DATA / "corpus.jsonl")
    parser.add_argument("--topics", type=Path, default=DATA / "topics.tsv")
    parser.add_argument("--out", type=Path, default=DATA / "bm25-rm3.run.gz")
    parser.add_argument("--fb-docs", type=int, default=10)
    parser.add_argument("--fb-terms", type=int, default=10)
    parser.add_argument("--weight", type=float, default=0.5, help="weight of the feedback model")
    parser.add_argument("--top-k", type=int, default=1000)
    args = parser.parse_args()
    lines = rm3_run(args.corpus, args.topics, args.fb_docs, args.fb_terms, args.weight, args.top_k)
    with open(args.out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as out:
        out.write("".join(lines).encode("utf-8"))
    print(f"wrote {len(lines)} lines to {args.out}")


if __name__ == "__main__":
    main()
