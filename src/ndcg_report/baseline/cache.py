"""Cache BM25 runs by content: the same corpus bytes, topics bytes, parameters and versions reuse a run.

An entry is `<key>.run` (TREC run) plus `<key>.json` (metadata with the run's sha256). Files are
written to temp files and renamed into place, so concurrent builds of one key are safe.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ndcg_report.baseline.settings import METHOD, STEMMER_LANGUAGE, STOPWORDS, check_parameters
from ndcg_report.files import file_sha256, folder_problem, write_text_atomic
from ndcg_report.inputs.access.sources import source_path
from ndcg_report.inputs.access.stamps import InputWatch

CACHE_ENV = "NDCG_REPORT_CACHE"
_FORMAT = 1  # bump when the run a key stands for changes meaning


def cached_bm25_run(
    corpus_path: str | Path,
    topics_path: str | Path,
    *,
    k1: float,
    b: float,
    top_k: int,
    cache_dir: str | Path | None = None,
    progress: bool = False,
    log: Callable[[str], object] | None = None,
) -> tuple[Path, bool]:
    """(path of the cached BM25 run file, whether it was a cache hit); builds and stores on a miss.

    A hit re-checks the run file's sha256 against its metadata; a corrupt or half-written entry is
    rebuilt. The cache folder is cache_dir, else $NDCG_REPORT_CACHE/bm25, else the user cache.
    """
    check_parameters(k1=k1, b=b, top_k=top_k)
    say = log if log is not None else _stderr
    corpus_path, topics_path = source_path(corpus_path), source_path(topics_path)  # <(...) read once
    inputs = InputWatch.of([corpus_path, topics_path])  # an entry is of one version of each: checked before it is stored
    from ndcg_report.inputs.corpus import iter_corpus
    from ndcg_report.inputs.reading import read_topics

    read_topics(topics_path)  # bad topics fail here, and so does a corpus bad from its start (bounded
    iter_corpus(corpus_path)  # first checks), before the whole files are hashed
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    _check_cache_folder(folder)
    corpus_sha = _input_sha256(corpus_path)
    topics_sha = _input_sha256(topics_path)
    key = cache_key(corpus_sha=corpus_sha, topics_sha=topics_sha, k1=k1, b=b, top_k=top_k)
    inputs.check("BM25 build")  # hashed while unchanged: the key is of one version of each
    run_path, meta_path = folder / f"{key}.run", folder / f"{key}.json"

    state = _entry_state(run_path, meta_path)
    if state == "ok":
        say(f"bm25: reusing cached run {run_path} (key {key[:12]})")
        return run_path, True
    if state == "corrupt":
        say("bm25: cache entry corrupt, rebuilding")
    say(f"bm25: building run from {corpus_path} (k1={k1}, b={b}, top_k={top_k}); cache key {key[:12]}")
    _build(corpus_path, topics_path, run_path, meta_path, progress=progress, inputs=inputs, metadata_fields={
        "key": key, "format": _FORMAT, "corpus": str(corpus_path.resolve()), "corpus_sha256": corpus_sha,
        "topics": str(topics_path.resolve()), "topics_sha256": topics_sha, "k1": float(k1), "b": float(b),
        "top_k": int(top_k), **_versions(),
    })
    return run_path, False


def default_cache_dir() -> Path:
    """$NDCG_REPORT_CACHE/bm25 if set, else the platform's user cache folder for ndcg-report + /bm25."""
    root = os.environ.get(CACHE_ENV)
    if root:
        return Path(root).expanduser() / "bm25"
    import platformdirs

    return Path(platformdirs.user_cache_dir("ndcg-report")) / "bm25"


def cache_key(*, corpus_sha: str, topics_sha: str, k1: float, b: float, top_k: int) -> str:
    """sha256 over the input hashes, the parameters and the software versions that shape the run."""
    fields = {
        "format": _FORMAT, "corpus_sha256": corpus_sha, "topics_sha256": topics_sha,
        "k1": repr(float(k1)), "b": repr(float(b)), "top_k": int(top_k), **_versions(),
    }
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode("utf-8")).hexdigest()


def _versions() -> dict[str, str]:
    from ndcg_report.version import __version__

    return {
        "ndcg_report": __version__, "bm25s": _version_of("bm25s"), "PyStemmer": _version_of("PyStemmer"),
        "method": METHOD, "stopwords": STOPWORDS, "stemmer": STEMMER_LANGUAGE,
    }


def _version_of(distribution: str) -> str:
    from importlib import metadata  # here, not at the top: `ndcg-report eval` needs no package metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def _input_sha256(path: Path) -> str:
    """Hex sha256 of an input file's bytes; InputError if it cannot be read."""
    from ndcg_report.errors import InputError

    try:
        return file_sha256(path)
    except FileNotFoundError:
        raise InputError(path, None, "no such file", "check the path") from None
    except IsADirectoryError:
        raise InputError(path, None, "not a regular file", "give the path of a file") from None
    except PermissionError:
        raise InputError(path, None, "permission denied", "make the file readable") from None


def _entry_state(run_path: Path, meta_path: Path) -> str:
    """'ok' if both files exist and the run matches its recorded sha256, 'missing' if neither, else 'corrupt'."""
    if not run_path.exists() and not meta_path.exists():
        return "missing"
    try:
        recorded = json.loads(meta_path.read_text(encoding="utf-8"))["run_sha256"]
        return "ok" if file_sha256(run_path) == recorded else "corrupt"
    except (OSError, ValueError, LookupError, TypeError):
        return "corrupt"


def _build(
    corpus_path: Path, topics_path: Path, run_path: Path, meta_path: Path, *, progress: bool,
    inputs: InputWatch, metadata_fields: dict[str, object],
) -> None:
    """Build the run, write it to run_path, then write its metadata (both atomically); nothing is
    written if corpus or topics changed since they were hashed (InputError)."""
    from ndcg_report.baseline.bm25 import build_bm25_run, write_trec_run
    from ndcg_report.inputs.reading import read_topics

    started = time.perf_counter()
    topics = read_topics(topics_path)
    table = build_bm25_run(
        corpus_path, topics, k1=float(metadata_fields["k1"]), b=float(metadata_fields["b"]),
        top_k=int(metadata_fields["top_k"]), progress=progress,
    )
    if table.num_rows == 0:
        from ndcg_report.errors import InputError

        raise InputError(
            corpus_path, None, f"BM25 retrieved no document for any topic of {topics_path}",
            "check that corpus and topics belong together (stop words and one-letter words are not indexed)",
        )
    inputs.check("BM25 build")  # never an entry of one corpus under another's key
    write_trec_run(table, run_path, tag="bm25")
    meta = {
        **metadata_fields, "run_sha256": file_sha256(run_path), "lines": table.num_rows,
        "queries": len(topics), "build_seconds": round(time.perf_counter() - started, 3),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    write_text_atomic(meta_path, json.dumps(meta, indent=2, sort_keys=True) + "\n")


def _check_cache_folder(folder: Path) -> None:
    """Create the cache folder; ParameterError if it cannot be a writable folder."""
    from ndcg_report.errors import ParameterError

    problem = folder_problem(folder)
    if problem:
        raise ParameterError(f"BM25 cache folder {folder} {problem}; "
                             "set --cache-dir or NDCG_REPORT_CACHE to a writable folder")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)
