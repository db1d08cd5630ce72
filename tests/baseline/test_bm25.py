"""BM25 baseline: corpus reader errors, ranking on a hand corpus, the run cache (no entry for a corpus changed
during its build), and Cranfield against an independent BM25 (rank_bm25 with Lucene's idf)."""

from __future__ import annotations

import gzip
import json
import math
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from ndcg_report.baseline.bm25 import TokenIdLists, build_bm25_run, build_index, retrieve, write_trec_run
from ndcg_report.baseline.cache import CACHE_ENV, cached_bm25_run, default_cache_dir
from ndcg_report.errors import InputError, ParameterError
from ndcg_report.core.evaluation_pass import evaluate
from ndcg_report.inputs.corpus import iter_corpus
from ndcg_report.inputs.reading import read_qrels, read_run, read_topics

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
TINY = CORPUS / "tiny.jsonl"
TINY_TOPICS = CORPUS / "tiny_topics.tsv"
CRANFIELD = Path(str(resources.files("ndcg_report") / "data" / "cranfield"))


# --- reading the corpus -----------------------------------------------------------------------


def test_reads_batches_ids_as_strings_and_title_plus_text() -> None:
    batches = list(iter_corpus(TINY, batch_size=3))
    assert [len(ids) for ids, _ in batches] == [3, 3, 1]
    ids = [doc_id for batch, _ in batches for doc_id in batch]
    texts = [text for _, batch in batches for text in batch]
    assert ids == ["a", "b", "c", "d10", "d9", "e", "7"]
    assert texts[0] == "Apple banana"  # title + " " + text
    assert texts[1] == "apple apples cherry"  # empty title: text alone
    assert texts[4] == "apple banana"  # null title


def test_reads_gzip_by_magic_bytes(tmp_path: Path) -> None:
    packed = tmp_path / "corpus.data"  # no .gz suffix: detected by content
    packed.write_bytes(gzip.compress(TINY.read_bytes()))
    assert list(iter_corpus(packed)) == list(iter_corpus(TINY))


def test_corrupt_gzip_is_reported(tmp_path: Path) -> None:
    packed = tmp_path / "corpus.jsonl.gz"
    packed.write_bytes(gzip.compress(TINY.read_bytes())[:-12])
    with pytest.raises(InputError, match="corrupt or truncated gzip"):
        list(iter_corpus(packed))


@pytest.mark.parametrize(
    ("name", "line", "words"),
    [
        ("not_json.jsonl", 3, "not valid JSON"),
        ("not_object.jsonl", 2, "not an object"),
        ("no_id.jsonl", 3, "no `_id` field"),
        ("repeated_id.jsonl", 5, "repeats the one on line 2"),
        ("bad_utf8.jsonl", 3, "not valid UTF-8"),
    ],
)
def test_bad_lines_are_named(name: str, line: int, words: str) -> None:
    path = CORPUS / name
    with pytest.raises(InputError) as caught:
        list(iter_corpus(path, batch_size=1))
    assert caught.value.line == line
    assert str(caught.value).startswith(f"{path}:{line}: ")
    assert words in str(caught.value)


@pytest.mark.parametrize("name", ["empty.jsonl", "blank_lines.jsonl"])
def test_empty_corpus(name: str) -> None:
    with pytest.raises(InputError, match="no documents") as caught:
        list(iter_corpus(CORPUS / name))
    assert caught.value.line is None


def test_missing_file_and_bad_fields(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        list(iter_corpus(tmp_path / "absent.jsonl"))
    cases = {
        '{"_id": "x y", "text": ""}': "white space",
        '{"_id": true, "text": ""}': "not a string or integer",
        '{"_id": "", "text": ""}': "empty",
        '{"_id": "x"}': "no `text` field",
        '{"_id": "x", "text": 3}': "not a string",
    }
    for line, words in cases.items():
        path = tmp_path / "bad.jsonl"
        path.write_text('{"_id": "ok", "text": ""}\n' + line + "\n")
        with pytest.raises(InputError, match=words) as caught:
            list(iter_corpus(path))
        assert caught.value.line == 2
    with pytest.raises(ParameterError):
        list(iter_corpus(TINY, batch_size=0))


# --- BM25 on a hand corpus ----------------------------------------------------------------------

# tiny.jsonl after lower-casing, stop words, stemming (document lengths 2, 3, 3, 2, 2, 0, 1):
TINY_TOKENS = {
    "a": ["appl", "banana"], "b": ["appl", "appl", "cherri"], "c": ["banana", "cherri", "durian"],
    "d10": ["appl", "banana"], "d9": ["appl", "banana"], "e": [], "7": ["elderberri"],
}


def lucene_bm25(query: list[str], k1: float = 0.9, b: float = 0.4) -> dict[str, float]:
    """Score > 0 per document of TINY_TOKENS: sum of idf * tf / (tf + k1 (1 - b + b dl / avgdl))."""
    n = len(TINY_TOKENS)
    avgdl = sum(map(len, TINY_TOKENS.values())) / n
    scores: dict[str, float] = {}
    for term in query:
        df = sum(term in tokens for tokens in TINY_TOKENS.values())
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for doc, tokens in TINY_TOKENS.items():
            tf = tokens.count(term)
            if tf:
                scores[doc] = scores.get(doc, 0.0) + idf * tf / (tf + k1 * (1 - b + b * len(tokens) / avgdl))
    return scores


@pytest.fixture(scope="module")
def tiny_run() -> pa.Table:
    return build_bm25_run(TINY, read_topics(TINY_TOPICS), batch_size=2)


def ranked(table: pa.Table, qid: str) -> list[str]:
    rows = table.to_pandas()
    return rows[rows["qid"] == qid].sort_values("rank")["docid"].tolist()


def test_ranking_and_ties_by_docid_descending(tiny_run: pa.Table) -> None:
    # a, d10 and d9 tie on every query; docid descending by bytes puts d9 before d10 before a
    assert ranked(tiny_run, "q1") == ["b", "d9", "d10", "a"]
    assert ranked(tiny_run, "q2") == ["c", "b", "d9", "d10", "a"]
    assert ranked(tiny_run, "q5") == ["c", "7"]
    assert tiny_run.column_names == ["qid", "docid", "score", "rank"]


def test_scores_follow_the_lucene_formula(tiny_run: pa.Table) -> None:
    queries = {"q1": ["appl"], "q2": ["banana", "cherri"], "q5": ["durian", "durian", "elderberri"]}
    rows = tiny_run.to_pandas()
    for qid, query in queries.items():
        expected = lucene_bm25(query)
        got = rows[rows["qid"] == qid].set_index("docid")["score"].to_dict()
        assert got.keys() == expected.keys()
        for doc, score in expected.items():
            assert got[doc] == pytest.approx(score, rel=1e-6)


def test_no_hit_and_stopword_queries_have_no_lines(tiny_run: pa.Table) -> None:
    assert set(tiny_run["qid"].to_pylist()) == {"q1", "q2", "q5"}
    assert tiny_run["score"].to_numpy().min() > 0
    ranks = tiny_run.to_pandas().groupby("qid")["rank"].apply(list)
    assert all(r == list(range(1, len(r) + 1)) for r in ranks)


def test_top_k_cuts_ties_by_docid() -> None:
    topics = read_topics(TINY_TOPICS)
    index = build_index(TINY)
    assert ranked(retrieve(index, topics, top_k=2), "q1") == ["b", "d9"]
    assert ranked(retrieve(index, topics, top_k=3), "q2") == ["c", "b", "d9"]
    assert len(retrieve(index, topics, top_k=1)) == 3  # one line per query with a hit
    assert ranked(retrieve(index, topics, top_k=100), "q1") == ["b", "d9", "d10", "a"]  # k > docs


def test_batches_share_one_vocabulary() -> None:
    topics = read_topics(TINY_TOPICS)
    one = build_bm25_run(TINY, topics, batch_size=100)
    many = build_bm25_run(TINY, topics, batch_size=1)
    assert one.equals(many)


def test_token_id_lists_behave_as_a_sequence() -> None:
    lists = TokenIdLists()
    lists.append_batch(np.array([3, 1, 4, 1]), np.array([2, 0, 2]))
    lists.append_batch(np.array([5]), np.array([1]))
    assert len(lists) == 4
    assert list(lists) == [[3, 1], [], [4, 1], [5]]
    assert [lists[i] for i in range(4)] == list(lists) and lists[-1] == [5] and lists[1:3] == [[], [4, 1]]
    with pytest.raises(IndexError):
        lists[4]


def test_progress_bars_go_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    build_bm25_run(TINY, read_topics(TINY_TOPICS), progress=True)
    out, err = capsys.readouterr()
    assert out == "" and "BM25" in err
    build_bm25_run(TINY, read_topics(TINY_TOPICS), progress=False)
    assert capsys.readouterr() == ("", "")


def test_same_scores_as_bm25s_on_the_whole_corpus() -> None:
    import bm25s
    import Stemmer

    ids, texts = next(iter_corpus(TINY, batch_size=100))
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    query = bm25s.tokenize(["banana cherry durian"], stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)[0]
    expected = retriever.get_scores(query)
    ours = build_bm25_run(TINY, pd.Series(["banana cherry durian"], index=["q"]), batch_size=2)
    got = dict(zip(ours["docid"].to_pylist(), ours["score"].to_pylist()))
    for doc, score in zip(ids, expected):
        assert got.get(doc, 0.0) == pytest.approx(float(score), rel=1e-6, abs=0)


def test_parameters_are_checked() -> None:
    topics = read_topics(TINY_TOPICS)
    for bad in ({"k1": -1}, {"b": 1.5}, {"top_k": 0}, {"k1": float("nan")}):
        with pytest.raises(ParameterError):
            build_bm25_run(TINY, topics, **bad)


def test_corpus_of_stopwords_only_gives_an_empty_run(tmp_path: Path) -> None:
    path = tmp_path / "stop.jsonl"
    path.write_text('{"_id": "1", "text": "the of"}\n{"_id": "2", "text": ""}\n')
    assert build_bm25_run(path, read_topics(TINY_TOPICS)).num_rows == 0


def test_written_run_reads_back_in_evaluator_order(tiny_run: pa.Table, tmp_path: Path) -> None:
    path = write_trec_run(tiny_run, tmp_path / "run.txt", tag="bm25")
    lines = path.read_text().splitlines()
    assert lines[0].split()[:4] == ["q1", "Q0", "b", "1"] and lines[0].endswith(" bm25")
    back = read_run(path).table.to_pandas()
    assert np.allclose(back["score"].to_numpy(), tiny_run["score"].to_numpy(), rtol=1e-8, atol=0)
    back["qid"] = back["qid"].astype(str)
    for qid, group in back.groupby("qid", sort=False):
        order = sorted(group.itertuples(), key=lambda r: (r.score, r.docid.encode()), reverse=True)
        assert [r.docid for r in order] == ranked(tiny_run, qid)
    assert not list(tmp_path.glob(".*tmp"))  # no temp file left behind
    with pytest.raises(ParameterError):
        write_trec_run(tiny_run, tmp_path / "x.txt", tag="two words")


def test_writes_a_dataframe(tmp_path: Path) -> None:
    frame = pd.DataFrame({"qid": [301, 301], "docid": ["x", "y"], "score": [2.5, 1.0], "rank": [1, 2]})
    lines = write_trec_run(frame, tmp_path / "run.txt", tag="t").read_text().splitlines()
    assert lines == ["301 Q0 x 1 2.5 t", "301 Q0 y 2 1 t"]


def test_float32_scores_round_trip_through_the_file(tmp_path: Path) -> None:
    scores = np.array([1.0000001, 1.0000002, 1.0000002, 3.14159274], dtype=np.float32)
    table = pa.table({
        "qid": ["q"] * 4, "docid": ["a", "b", "c", "d"], "score": scores.astype(np.float64), "rank": [4, 3, 2, 1],
    })
    path = write_trec_run(table, tmp_path / "run.txt")
    read = np.array([float(line.split()[4]) for line in path.read_text().splitlines()])
    assert np.array_equal(read.astype(np.float32), scores)
    assert read[1] == read[2] and read[0] < read[1]


# --- the cache ---------------------------------------------------------------------------------


def cache_call(corpus: Path, cache: Path, **overrides):
    messages: list[str] = []
    params = {"k1": 0.9, "b": 0.4, "top_k": 1000} | overrides
    path, hit = cached_bm25_run(corpus, TINY_TOPICS, cache_dir=cache, log=messages.append, **params)
    return path, hit, messages


def test_cache_hit_and_misses(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first, hit, messages = cache_call(TINY, cache)
    assert not hit and messages[-1].startswith(f"bm25: building run from {TINY}")
    again, hit, messages = cache_call(TINY, cache)
    assert hit and again == first and messages == [f"bm25: reusing cached run {first} (key {first.stem[:12]})"]
    meta = json.loads(first.with_suffix(".json").read_text())
    assert meta["k1"] == 0.9 and meta["top_k"] == 1000 and meta["bm25s"] and meta["ndcg_report"]
    assert read_run(first).table.num_rows == 11

    changed = tmp_path / "changed.jsonl"
    changed.write_bytes(TINY.read_bytes() + b'{"_id": "z", "text": "apple"}\n')
    for corpus, params in ((changed, {}), (TINY, {"k1": 1.2}), (TINY, {"b": 0.75}), (TINY, {"top_k": 2})):
        other, hit, _ = cache_call(corpus, cache, **params)
        assert not hit and other != first
    assert cache_call(TINY, cache, k1=1.2)[1]  # now cached too
    assert len(list(cache.glob("*.run"))) == 5 and not list(cache.glob(".*"))


def test_corrupt_entry_is_rebuilt(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path, _, _ = cache_call(TINY, cache)
    good = path.read_bytes()
    path.write_bytes(good.replace(b"q1", b"q9", 1))
    again, hit, messages = cache_call(TINY, cache)
    assert not hit and again == path and messages[0] == "bm25: cache entry corrupt, rebuilding"
    assert path.read_bytes() == good
    path.with_suffix(".json").unlink()
    assert not cache_call(TINY, cache)[1]
    path.unlink()
    assert not cache_call(TINY, cache)[1]
    path.with_suffix(".json").write_text("{not json")
    assert not cache_call(TINY, cache)[1]
    assert cache_call(TINY, cache)[1]


def test_cache_folder_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "env"))
    assert default_cache_dir() == tmp_path / "env" / "bm25"
    path, hit = cached_bm25_run(TINY, TINY_TOPICS, k1=0.9, b=0.4, top_k=10, log=lambda _: None)
    assert path.parent == tmp_path / "env" / "bm25" and not hit
    monkeypatch.delenv(CACHE_ENV)
    assert default_cache_dir().name == "bm25" and "ndcg-report" in str(default_cache_dir())


def test_cache_reports_missing_inputs(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        cached_bm25_run(tmp_path / "none.jsonl", TINY_TOPICS, k1=0.9, b=0.4, top_k=10, cache_dir=tmp_path)


# --- Cranfield against an independent BM25 ------------------------------------------------------


def cranfield_reference_run(path: Path, k1: float, b: float, top_k: int) -> None:
    """rank_bm25's BM25Okapi with Lucene's idf, log(1 + (N - df + 0.5) / (df + 0.5)), float64.

    Okapi multiplies every score by (k1 + 1), which does not change the ranking. Tokens come from
    bm25s.tokenize over the whole corpus at once (our run tokenises in batches).
    """
    import bm25s
    import Stemmer
    from rank_bm25 import BM25Okapi

    class LuceneIdfBM25(BM25Okapi):
        def _calc_idf(self, nd: dict) -> None:
            for word, df in nd.items():
                self.idf[word] = math.log(1 + (self.corpus_size - df + 0.5) / (df + 0.5))

    ids, texts = [], []
    with (CRANFIELD / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            doc = json.loads(line)
            ids.append(doc["_id"])
            texts.append(f"{doc['title']} {doc['text']}" if doc["title"] else doc["text"])
    stemmer = Stemmer.Stemmer("english")
    tokenize = lambda items: bm25s.tokenize(  # noqa: E731
        items, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
    )
    model = LuceneIdfBM25(tokenize(texts), k1=k1, b=b)
    topics = read_topics(CRANFIELD / "topics.tsv")
    docid_bytes = [doc_id.encode() for doc_id in ids]
    lines = []
    for qid, tokens in zip(topics.index, tokenize(topics.tolist())):
        scores = model.get_scores(tokens)
        hits = [i for i in np.flatnonzero(scores > 0)]
        hits.sort(key=lambda i: (scores[i], docid_bytes[i]), reverse=True)
        lines += [f"{qid} Q0 {ids[i]} {rank} {float(scores[i])!r} ref\n" for rank, i in enumerate(hits[:top_k], start=1)]
    path.write_text("".join(lines))


def top10(run_path: Path) -> dict[str, list[str]]:
    table = read_run(run_path).table.to_pandas()
    table["qid"] = table["qid"].astype(str)
    table["key"] = [doc.encode() for doc in table["docid"]]
    table = table.sort_values(["qid", "score", "key"], ascending=[True, False, False])
    return {qid: group["docid"].head(10).tolist() for qid, group in table.groupby("qid")}


def test_cranfield_matches_an_independent_bm25(tmp_path: Path) -> None:
    topics = read_topics(CRANFIELD / "topics.tsv")
    qrels = read_qrels(CRANFIELD / "qrels.txt")
    ours_path = write_trec_run(build_bm25_run(CRANFIELD / "corpus.jsonl", topics, batch_size=97), tmp_path / "ours.run")
    ref_path = tmp_path / "ref.run"
    cranfield_reference_run(ref_path, k1=0.9, b=0.4, top_k=1000)

    ours = evaluate(read_run(ours_path).table, qrels.table, cutoffs=[10], gain="linear").mean(10)
    ref = evaluate(read_run(ref_path).table, qrels.table, cutoffs=[10], gain="linear").mean(10)
    ours_top, ref_top = top10(ours_path), top10(ref_path)
    assert ours_top.keys() == ref_top.keys()
    overlap = np.mean([
        len(set(ours_top[q]) & set(ref_top[q])) / max(len(ours_top[q]), len(ref_top[q]), 1) for q in ours_top
    ])
    print(f"\nCranfield NDCG@10 (linear gain): ours {ours:.4f}, reference {ref:.4f}; top-10 overlap {overlap:.4f}")
    assert abs(ours - ref) <= 0.01
    assert overlap >= 0.90


def test_cranfield_run_is_the_same_in_every_process(tmp_path: Path) -> None:
    """The cache relies on it: bm25s numbers tokens in set order, which varies with the hash seed."""
    script = (
        "import sys; from ndcg_report.baseline.bm25 import build_bm25_run, write_trec_run;"
        "from ndcg_report.inputs.reading import read_topics;"
        f"d = {str(CRANFIELD)!r};"
        "write_trec_run(build_bm25_run(d + '/corpus.jsonl', read_topics(d + '/topics.tsv'), batch_size=300), sys.argv[1])"
    )
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / f"run{seed}.txt"
        subprocess.run([sys.executable, "-c", script, str(out)], check=True, env={**os.environ, "PYTHONHASHSEED": seed})
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def test_a_corpus_changed_during_its_bm25_build_stores_no_cache_entry(tmp_path, monkeypatch):
    from ndcg_report.baseline import bm25
    from ndcg_report.baseline.cache import cached_bm25_run

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes((CORPUS / "tiny.jsonl").read_bytes())
    build = bm25.build_bm25_run

    def build_bm25_run(*args, **kwargs):
        corpus.write_bytes((CORPUS / "tiny.jsonl").read_bytes() + b'{"_id": "new", "text": "added meanwhile"}\n')
        return build(*args, **kwargs)

    monkeypatch.setattr(bm25, "build_bm25_run", build_bm25_run)
    with pytest.raises(InputError, match=r"corpus\.jsonl: changed during the BM25 build"):
        cached_bm25_run(corpus, CORPUS / "tiny_topics.tsv", k1=0.9, b=0.4, top_k=10, cache_dir=tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []
