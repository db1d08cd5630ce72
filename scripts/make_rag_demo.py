"""Make the RAG demo (`ndcg-report demo rag`) from the Cranfield data shipped in the package.

Retrieval for RAG ranks chunks, not documents. Each Cranfield document is split into chunks of about
three sentences (ids `DOCID-N`); a chunk carries the graded judgement of its document (Cranfield's
judgements are of documents: every chunk of a relevant document counts as relevant, which is the usual
way document-level qrels are projected onto passages, and an upper bound on what a chunk-level judge
would find). Three retrievers return 20 chunks per query, as a RAG pipeline hands them to a generator:

- `bm25-chunks` (the baseline): BM25 over the chunks (k1=0.9, b=0.4, the package's bm25s settings);
- `bm25-parent-doc`: BM25 over whole documents, each retrieved document's chunks in turn, best
  chunk first (a "parent document" retriever);
- `rrf-chunks-docs`: reciprocal rank fusion (k = 60) of the two lists.

Written as RAG pipelines hold them: qrels as JSON lines with a `grades` dict per query, runs as JSON
lines of ranked `retrieved` lists (first is best, no scores), topics as BEIR `queries.jsonl`, chunk
text as a BEIR `corpus.jsonl.gz` for the drill-downs.

    .venv/bin/python scripts/make_rag_demo.py   # writes src/ndcg_report/data/rag-cranfield/
"""

from __future__ import annotations

import gzip
import json
import re
import tempfile
from collections import defaultdict
from pathlib import Path

from ndcg_report.baseline.bm25 import build_index, retrieve
from ndcg_report.inputs.corpus import iter_corpus
from ndcg_report.inputs.reading import read_topics

DATA = Path(__file__).resolve().parents[1] / "src" / "ndcg_report" / "data"
SOURCE, OUT = DATA / "cranfield", DATA / "rag-cranfield"
SENTENCES_PER_CHUNK = 3
DEPTH = 20
RRF_K = 60


def chunks_of(text: str) -> list[str]:
    """The text in chunks of SENTENCES_PER_CHUNK sentences (Cranfield's sentences end in ' .')."""
    sentences = [s.strip() for s in re.split(r"(?<= \.)\s+", text) if s.strip()]
    return [" ".join(sentences[i:i + SENTENCES_PER_CHUNK]) for i in range(0, len(sentences), SENTENCES_PER_CHUNK)]


def ranked(table) -> dict[str, list[str]]:
    """{qid: docids in rank order} of a retrieve() table (already ranked)."""
    lists: dict[str, list[str]] = defaultdict(list)
    for qid, docid in zip(table["qid"].to_pylist(), table["docid"].to_pylist()):
        lists[qid].append(docid)
    return lists


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    titles = {json.loads(line)["_id"]: json.loads(line)["title"] for line in (SOURCE / "corpus.jsonl").open()}
    chunk_ids: dict[str, list[str]] = {}
    records = []
    for ids, texts in iter_corpus(SOURCE / "corpus.jsonl"):
        for docid, text in zip(ids, texts):
            body = text[len(titles[docid]):].strip() if text.startswith(titles[docid]) else text
            pieces = chunks_of(body) or [body]
            chunk_ids[docid] = [f"{docid}-{n}" for n in range(1, len(pieces) + 1)]
            records += [{"_id": cid, "title": titles[docid], "text": piece} for cid, piece in zip(chunk_ids[docid], pieces)]
    with gzip.open(OUT / "chunks.jsonl.gz", "wt", encoding="utf-8", compresslevel=9) as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")

    grades: dict[str, dict[str, int]] = defaultdict(dict)
    for line in (SOURCE / "qrels.txt").read_text().splitlines():
        qid, _, docid, label = line.split()
        for cid in chunk_ids[docid]:
            grades[qid][cid] = int(label)
    with open(OUT / "qrels.jsonl", "w", encoding="utf-8") as out:
        for qid in sorted(grades, key=int):
            out.write(json.dumps({"qid": qid, "grades": grades[qid]}) + "\n")

    topics = read_topics(SOURCE / "topics.tsv")
    with open(OUT / "queries.jsonl", "w", encoding="utf-8") as out:
        for qid, text in topics.items():
            out.write(json.dumps({"_id": qid, "text": text}) + "\n")

    with tempfile.TemporaryDirectory() as folder:
        plain = Path(folder) / "chunks.jsonl"
        plain.write_text("".join(json.dumps(r) + "\n" for r in records))
        chunk_lists = ranked(retrieve(build_index(plain), topics, top_k=DEPTH))
        per_doc = ranked(retrieve(build_index(SOURCE / "corpus.jsonl"), topics, top_k=DEPTH))
        chunk_rank = ranked(retrieve(build_index(plain), topics, top_k=5000))
    parent: dict[str, list[str]] = {}
    for qid in topics.index:
        order = {cid: position for position, cid in enumerate(chunk_rank.get(qid, []))}
        listed = [cid for docid in per_doc.get(qid, [])
                  for cid in sorted(chunk_ids[docid], key=lambda c: (order.get(c, len(order)), c))]
        parent[qid] = listed[:DEPTH]
    fused: dict[str, list[str]] = {}
    for qid in topics.index:
        scores: dict[str, float] = defaultdict(float)
        for lists in (chunk_lists, parent):
            for position, cid in enumerate(lists.get(qid, []), start=1):
                scores[cid] += 1 / (RRF_K + position)
        fused[qid] = sorted(scores, key=lambda c: (-scores[c], c))[:DEPTH]
    for name, lists in (("bm25-chunks", chunk_lists), ("bm25-parent-doc", parent), ("rrf-chunks-docs", fused)):
        with open(OUT / f"{name}.jsonl", "w", encoding="utf-8") as out:
            for qid in topics.index:
                if lists.get(qid):
                    out.write(json.dumps({"qid": qid, "retrieved": lists[qid]}) + "\n")
    print(f"wrote {OUT}: {len(records):,} chunks of {len(chunk_ids):,} documents, {len(topics)} queries")


if __name__ == "__main__":
    main()
