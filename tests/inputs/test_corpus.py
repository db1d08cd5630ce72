"""A BEIR corpus read in batches (inputs/corpus.py): batches end at their bytes, and a document past the line
limit is one line."""

from __future__ import annotations

import json
import os

from tests.helpers import MAX_LINE, TOPICS, cli


def test_corpus_batches_end_at_their_bytes_whatever_their_count(tmp_path):
    from ndcg_report.inputs.corpus import iter_corpus

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": f"d{i}", "text": "w" * 1000}) + "\n" for i in range(10)))
    sizes = [len(ids) for ids, _ in iter_corpus(corpus, batch_size=10_000, batch_bytes=3000)]
    assert sizes == [3, 3, 3, 1]


def test_bm25_of_a_corpus_with_a_document_past_the_line_limit_is_one_line(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    with corpus.open("w") as handle:
        handle.write(json.dumps({"_id": "d1", "text": "wifi bluetooth"}) + "\n")
        handle.write(json.dumps({"_id": "d2", "text": "word " * (MAX_LINE // 5 + 1)}) + "\n")
    result = cli("bm25", "--corpus", corpus, "--topics", TOPICS, "--out", tmp_path / "bm25.run",
                 env={**os.environ, "NDCG_REPORT_CACHE": str(tmp_path / "cache")})
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    status, error = result.stderr.splitlines()  # `bm25: building run ...`, then the one line of the error
    assert status.startswith("bm25: building run") and f"corpus.jsonl:2: a line longer than {MAX_LINE >> 20} MiB" in error
    assert not (tmp_path / "bm25.run").exists()
