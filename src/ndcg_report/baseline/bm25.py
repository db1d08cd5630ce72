"""BM25 (Lucene variant, as in Anserini) from a JSON-lines corpus with bm25s; TREC run output.

Tokenisation is bm25s's: lower-case, `\\w\\w+` words, English stop words removed, Snowball English
stems (PyStemmer). The corpus is read and tokenised batch by batch into one shared vocabulary, so
only token ids of the whole corpus are held, never its raw text.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp

from ndcg_report.baseline.settings import BM25_DEFAULTS, METHOD, STEMMER_LANGUAGE, STOPWORDS, check_parameters
from ndcg_report.errors import ParameterError
from ndcg_report.files import write_lines_atomic
from ndcg_report.inputs.corpus import DEFAULT_BATCH_SIZE, iter_corpus

if TYPE_CHECKING:
    import pandas as pd

RUN_COLUMNS = ("qid", "docid", "score", "rank")
_POSTINGS_PER_BATCH = 1 << 23  # bounds the (document, query) score pairs held per query batch
_MAX_QUERIES_PER_BATCH = 1024


@dataclass(frozen=True, eq=False)
class BM25Index:
    """BM25 term weights of a corpus: `weights[d, t]` is the score term t adds to document d."""

    docids: pa.Array  # string, in corpus order
    docid_order: np.ndarray  # position of each document when docids are sorted by bytes
    vocab: dict[str, int]  # stemmed token -> column of weights
    weights: sp.csc_matrix  # float32, n_docs x n_tokens
    k1: float
    b: float

    @property
    def n_docs(self) -> int:
        return len(self.docids)


def build_bm25_run(
    corpus_path: str | Path,
    topics: "pd.Series",
    *,
    k1: float = BM25_DEFAULTS["k1"],
    b: float = BM25_DEFAULTS["b"],
    top_k: int = BM25_DEFAULTS["top_k"],
    progress: bool = False,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> pa.Table:
    """BM25 run of `topics` (query text indexed by qid) over the corpus: qid, docid, score, rank.

    Only documents matching a query term are returned (score > 0), at most top_k per query, in
    the evaluator's order (score descending, then docid descending by bytes), rank 1..n.
    """
    check_parameters(k1=k1, b=b, top_k=top_k)
    index = build_index(corpus_path, k1=k1, b=b, progress=progress, batch_size=batch_size)
    return retrieve(index, topics, top_k=top_k, progress=progress)


def build_index(
    corpus_path: str | Path,
    *,
    k1: float = BM25_DEFAULTS["k1"],
    b: float = BM25_DEFAULTS["b"],
    progress: bool = False,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> BM25Index:
    """Tokenise the corpus batch by batch into one vocabulary and index it with bm25s."""
    import bm25s
    from bm25s.tokenization import Tokenized

    check_parameters(k1=k1, b=b, top_k=1)
    stemmer = _stemmer()
    vocab: dict[str, int] = {}
    doc_tokens = TokenIdLists()
    id_chunks: list[pa.Array] = []
    bar = _bar(progress, desc="BM25 tokenise", unit="doc")
    for ids, texts in iter_corpus(corpus_path, batch_size=batch_size):
        tokenized = bm25s.tokenize(
            texts, lower=True, stopwords=STOPWORDS, stemmer=stemmer, return_ids=True, show_progress=False
        )
        doc_tokens.append_batch(*_to_shared_vocab(tokenized.ids, tokenized.vocab, vocab))
        id_chunks.append(pa.array(ids, pa.string()))
        del texts, tokenized
        if bar is not None:
            bar.update(len(ids))
    if bar is not None:
        bar.close()
    docids = pa.chunked_array(id_chunks, pa.string()).combine_chunks()
    del id_chunks
    n_docs = len(docids)
    if vocab:
        retriever = bm25s.BM25(k1=k1, b=b, method=METHOD, backend="numpy", csc_backend="scipy")
        retriever.index(Tokenized(ids=doc_tokens, vocab=vocab), create_empty_token=False, show_progress=progress)
        del doc_tokens
        scores = retriever.scores
        weights = sp.csc_matrix(
            (scores["data"], scores["indices"], scores["indptr"]), shape=(n_docs, len(vocab)), dtype=np.float32
        )
        del retriever, scores
    else:  # every document is empty or stop words only
        weights = sp.csc_matrix((n_docs, 0), dtype=np.float32)
    return BM25Index(
        docids=docids, docid_order=_byte_order_positions(docids), vocab=vocab, weights=weights, k1=k1, b=b
    )


def retrieve(index: BM25Index, topics: "pd.Series", *, top_k: int = BM25_DEFAULTS["top_k"], progress: bool = False) -> pa.Table:
    """Top-k documents with score > 0 per query, ranked by score then docid descending (bytes)."""
    import bm25s

    check_parameters(k1=index.k1, b=index.b, top_k=top_k)
    qids = [str(qid) for qid in topics.index]
    texts = ["" if text is None else str(text) for text in topics.tolist()]
    tokens = bm25s.tokenize(
        texts, lower=True, stopwords=STOPWORDS, stemmer=_stemmer(), return_ids=False, show_progress=False
    ) if texts else []
    queries = [[index.vocab[token] for token in query if token in index.vocab] for query in tokens]
    k = min(top_k, index.n_docs)
    postings = np.diff(index.weights.indptr)
    parts: list[tuple[int, np.ndarray, np.ndarray]] = []
    bar = _bar(progress, total=len(queries), desc="BM25 retrieve", unit="query")
    for batch in _query_batches(queries, postings):
        term_counts = _term_counts([queries[q] for q in batch], len(index.vocab))
        scores = index.weights @ term_counts  # n_docs x batch; summed in term-id order
        for column, query in enumerate(batch):
            start, end = scores.indptr[column], scores.indptr[column + 1]
            docs, values = _top_k(scores.indices[start:end], scores.data[start:end], index.docid_order, k)
            if len(docs):
                parts.append((query, docs, values))
        if bar is not None:
            bar.update(len(batch))
    if bar is not None:
        bar.update(len(queries) - bar.n)
        bar.close()
    return _run_table(qids, index.docids, parts)


def write_trec_run(table: "pa.Table | pd.DataFrame", path: str | Path, tag: str = "bm25") -> Path:
    """Write `qid Q0 docid rank score tag` lines, in table order, atomically (temp file + rename).

    Scores are written with 9 significant digits, which round-trips float32 scores exactly (so
    tied scores stay tied and distinct ones stay distinct); other float64 scores use repr.
    """
    if not tag or any(char.isspace() for char in tag):
        raise ParameterError(f"run tag must be a non-empty word without spaces; got {tag!r}")
    columns = _columns(table)
    scores = columns["score"]
    exact32 = bool(np.all(scores.astype(np.float32).astype(np.float64) == scores))
    score_text = (("%.9g" % value) for value in scores.tolist()) if exact32 else map(repr, scores.tolist())
    lines = (
        f"{qid} Q0 {docid} {rank} {score} {tag}\n"
        for qid, docid, rank, score in zip(columns["qid"], columns["docid"], columns["rank"].tolist(), score_text)
    )
    return write_lines_atomic(Path(path), lines)


# --- helpers ---------------------------------------------------------------------------------


def _stemmer():
    import Stemmer

    return Stemmer.Stemmer(STEMMER_LANGUAGE)


def _to_shared_vocab(
    batch_ids: list[list[int]], batch_vocab: dict[str, int], vocab: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """One batch's token ids re-numbered into the shared vocab: (flat int32 ids, tokens per document).

    New tokens are numbered by first use, not by bm25s's set order, so that the index, and so the
    float32 score sums, are the same in every process whatever the hash seed.
    """
    lengths = np.fromiter(map(len, batch_ids), dtype=np.int64, count=len(batch_ids))
    flat = np.fromiter(chain.from_iterable(batch_ids), dtype=np.int64, count=int(lengths.sum()))
    if not flat.size:
        return flat.astype(np.int32), lengths
    local_tokens = [""] * len(batch_vocab)
    for token, local_id in batch_vocab.items():
        local_tokens[local_id] = token
    used, first = np.unique(flat, return_index=True)
    remap = np.zeros(len(batch_vocab), dtype=np.int32)
    for local_id in used[np.argsort(first, kind="stable")].tolist():
        remap[local_id] = vocab.setdefault(local_tokens[local_id], len(vocab))
    return remap[flat], lengths


class TokenIdLists(Sequence):
    """The corpus's token ids, stored flat as int32 per batch; item i is document i's ids as a list.

    bm25s only iterates its corpus (three passes) and takes its length, so lists are built on the
    fly, one batch at a time: 4 bytes per token held, instead of a Python list per document.
    """

    def __init__(self) -> None:
        self._flat: list[np.ndarray] = []
        self._bounds: list[np.ndarray] = []  # per batch: document start offsets, then the end
        self._first_doc: list[int] = [0]

    def append_batch(self, flat: np.ndarray, lengths: np.ndarray) -> None:
        self._flat.append(np.ascontiguousarray(flat, dtype=np.int32))
        self._bounds.append(np.concatenate(([0], np.cumsum(lengths))).astype(np.int64))
        self._first_doc.append(self._first_doc[-1] + len(lengths))

    def __len__(self) -> int:
        return self._first_doc[-1]

    def __iter__(self) -> Iterator[list[int]]:
        for flat, bounds in zip(self._flat, self._bounds):
            ids = flat.tolist()
            edges = bounds.tolist()
            for start, end in zip(edges[:-1], edges[1:]):
                yield ids[start:end]

    def __getitem__(self, item):  # type: ignore[override]
        if isinstance(item, slice):
            return [self[i] for i in range(*item.indices(len(self)))]
        position = item + len(self) if item < 0 else item
        if not 0 <= position < len(self):
            raise IndexError(item)
        batch = bisect_right(self._first_doc, position) - 1
        row = position - self._first_doc[batch]
        start, end = self._bounds[batch][row], self._bounds[batch][row + 1]
        return self._flat[batch][start:end].tolist()


def _byte_order_positions(docids: pa.Array) -> np.ndarray:
    """For each document, its position when all docids are sorted by their UTF-8 bytes."""
    order = pc.sort_indices(docids.cast(pa.binary())).to_numpy()
    positions = np.empty(len(order), dtype=np.int64)
    positions[order] = np.arange(len(order), dtype=np.int64)
    return positions


def _query_batches(queries: list[list[int]], postings: np.ndarray) -> Iterator[list[int]]:
    """Indices of non-empty queries, grouped so a batch touches a bounded number of postings."""
    batch: list[int] = []
    load = 0
    for number, query in enumerate(queries):
        if not query:
            continue
        cost = int(postings[np.unique(query)].sum())
        if batch and (load + cost > _POSTINGS_PER_BATCH or len(batch) >= _MAX_QUERIES_PER_BATCH):
            yield batch
            batch, load = [], 0
        batch.append(number)
        load += cost
    if batch:
        yield batch


def _term_counts(queries: list[list[int]], n_tokens: int) -> sp.csc_matrix:
    """n_tokens x len(queries) matrix of how often each token occurs in each query (sorted, summed).

    A repeated query term counts twice, as Anserini boosts a term by its count in the query.
    """
    counts = sp.csc_matrix(
        (
            np.ones(sum(map(len, queries)), dtype=np.float32),
            (
                np.fromiter(chain.from_iterable(queries), dtype=np.int64),
                np.repeat(np.arange(len(queries)), [len(query) for query in queries]),
            ),
        ),
        shape=(n_tokens, len(queries)),
    )
    counts.sum_duplicates()
    return counts


def _top_k(docs: np.ndarray, scores: np.ndarray, docid_order: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best (doc, score) with score > 0: score descending, ties by docid descending (bytes)."""
    positive = scores > 0
    if not positive.all():
        docs, scores = docs[positive], scores[positive]
    if len(scores) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= kth  # every document tied with the k-th competes on docid
        docs, scores = docs[keep], scores[keep]
    order = np.lexsort((docid_order[docs], scores))[::-1][:k]
    return docs[order], scores[order]


def _run_table(qids: list[str], docids: pa.Array, parts: list[tuple[int, np.ndarray, np.ndarray]]) -> pa.Table:
    if not parts:
        return pa.table({
            "qid": pa.array([], pa.string()), "docid": pa.array([], pa.string()),
            "score": pa.array([], pa.float64()), "rank": pa.array([], pa.int32()),
        })
    sizes = np.array([len(docs) for _, docs, _ in parts])
    query_numbers = np.repeat(np.array([query for query, _, _ in parts]), sizes)
    rows = np.concatenate([docs for _, docs, _ in parts])
    scores = np.concatenate([values for _, _, values in parts]).astype(np.float64)
    ranks = np.concatenate([np.arange(1, size + 1, dtype=np.int32) for size in sizes])
    return pa.table({
        "qid": pa.array(qids, pa.string()).take(pa.array(query_numbers)),
        "docid": docids.take(pa.array(rows)),
        "score": pa.array(scores, pa.float64()),
        "rank": pa.array(ranks, pa.int32()),
    })


def _columns(table: "pa.Table | pd.DataFrame") -> dict[str, np.ndarray | list]:
    """qid and docid as lists of str, score as float64, rank as int64, from a Table or DataFrame."""
    names = list(table.column_names) if isinstance(table, pa.Table) else list(table.columns)
    missing = [name for name in RUN_COLUMNS if name not in names]
    if missing:
        raise ParameterError(f"run table lacks columns {missing}")
    if not isinstance(table, pa.Table):
        table = pa.Table.from_pandas(table[list(RUN_COLUMNS)], preserve_index=False)
    return {
        "qid": [str(value) for value in table["qid"].to_pylist()],
        "docid": [str(value) for value in table["docid"].to_pylist()],
        "score": table["score"].to_numpy().astype(np.float64),
        "rank": table["rank"].to_numpy().astype(np.int64),
    }


def _bar(enabled: bool, **kwargs):
    """A tqdm progress bar on stderr, or None when progress is off."""
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(**kwargs)

