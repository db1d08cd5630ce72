"""The embedded demos: real comparisons shipped inside the package (`package:` paths)."""

from __future__ import annotations

from dataclasses import dataclass

DL19 = "package:dl19-passage/"
RAG = "package:rag-cranfield/"


@dataclass(frozen=True)
class Demo:
    """The inputs of one demo report (paths are `package:` paths)."""

    title: str
    runs: tuple[tuple[str, str], ...]  # (display name, path)
    qrels: str
    topics: str
    baseline: str = ""  # a baseline run, or
    corpus: str = ""  # a corpus to build BM25 from
    baseline_name: str = "BM25"
    out: str = ""  # default output folder of `ndcg-report demo`
    preset: str = ""  # the measures reported (core/presets), '' for nDCG at the default cut-offs
    docs: str = ""  # document text for the drill-downs
    judgment_sets: tuple[tuple[str, str], ...] = ()  # (name, path) of several judgment sets, qrels first


DL19_RUNS = (  # the DL 2019 demos' systems under test
    ("monoT5", DL19 + "monot5.dl19.run.gz"),
    ("RRF BM25+monoT5", DL19 + "rrf.bm25-monot5.dl19.run.gz"),
    ("Interpolation BM25+monoT5", DL19 + "interp.bm25-monot5.dl19.run.gz"),
    ("monoT5 top 20 + BM25", DL19 + "monot5-top20-bm25.dl19.run.gz"),
)

DEMOS = {
    "dl19": Demo(
        title="TREC DL 2019 passage: monoT5, two fusions and a re-ranking depth ablation against BM25",
        runs=DL19_RUNS,
        baseline=DL19 + "run.msmarco-v1-passage.bm25-default.dl19.txt.gz",
        qrels=DL19 + "qrels.dl19-passage.txt",
        topics=DL19 + "topics.dl19-passage.txt",
        out="reports/demo",
        preset="trec-dl",
    ),
    "judges": Demo(
        title="TREC DL 2019 passage judged twice: the NIST assessors against a simulated lenient judge",
        runs=DL19_RUNS,
        baseline=DL19 + "run.msmarco-v1-passage.bm25-default.dl19.txt.gz",
        qrels=DL19 + "qrels.dl19-passage.txt",
        judgment_sets=(("NIST", DL19 + "qrels.dl19-passage.txt"),
                       ("simulated judge", DL19 + "qrels.dl19-simulated-judge.txt")),
        topics=DL19 + "topics.dl19-passage.txt",
        out="reports/demo-judges",
        preset="trec-dl",
    ),
    "cranfield": Demo(
        title="Cranfield: BM25 with RM3 expansion against BM25 built from the corpus",
        runs=(("BM25+RM3", "package:cranfield/bm25-rm3.run.gz"),),
        corpus="package:cranfield/corpus.jsonl",
        qrels="package:cranfield/qrels.txt",
        topics="package:cranfield/topics.tsv",
        out="reports/demo-cranfield",
    ),
    "rag": Demo(
        title="Retrieval for RAG on Cranfield chunks: a parent-document retriever and a fusion against BM25 over chunks",
        runs=(("parent document", RAG + "bm25-parent-doc.jsonl"), ("RRF chunks + documents", RAG + "rrf-chunks-docs.jsonl")),
        baseline=RAG + "bm25-chunks.jsonl",
        qrels=RAG + "qrels.jsonl",
        topics=RAG + "queries.jsonl",
        baseline_name="BM25 chunks",
        out="reports/demo-rag",
        preset="rag",
        docs=RAG + "chunks.jsonl.gz",
    ),
}
DEFAULT_DEMO = "dl19"
