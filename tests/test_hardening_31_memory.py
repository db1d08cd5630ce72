"""Inputs that would take unbounded memory or disk are
refused early with one line or read within a bound, and a build whose kernel or step was killed says
so. Each test makes an input that hits its limit cheaply (a lowered limit, or a gzip of repeats)."""

from __future__ import annotations

import gzip
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ndcg_report.errors import InputError, ParameterError
from tests.inputs.test_reading_limits import gzip_of_repeats, peak_python_memory

SMALL = Path(__file__).parent / "data" / "small"
QRELS, MONOT5, BM25, TOPICS = (SMALL / name for name in ("qrels.txt", "monot5.txt", "bm25.txt", "topics.txt"))
QID = QRELS.read_text().split()[0]
MAX_LINE = 16 << 20  # inputs.access.text_files.MAX_LINE, as documented (written out: a test of the value)


def cli(*args, timeout: float = 60, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ndcg_report.cli", *map(str, args)], capture_output=True, text=True,
                          check=False, timeout=timeout, **kwargs)


def one_line(result: subprocess.CompletedProcess, code: int, message: str) -> None:
    assert result.returncode == code, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert message in result.stderr, result.stderr


# --- 9a: --docs read a bounded line at a time ---------------------------------------------------------------


def test_9a_a_document_line_past_the_limit_is_read_in_bounded_memory(tmp_path):
    from ndcg_report.inputs.documents import document_texts

    docs = tmp_path / "docs.tsv.gz"  # `zzz<TAB>` and 64 MiB of x on one line, then two documents
    docs.write_bytes(gzip.compress(b"zzz\t") + gzip_of_repeats(tmp_path / "x.gz", b"x" * (1 << 20), 64).read_bytes()
                     + gzip.compress(b"\nd1\tfirst document\nd2\tsecond\n"))
    started = time.monotonic()
    found: dict[str, str] = {}
    raised, peak = peak_python_memory(lambda: found.update(document_texts(docs, {"zzz", "d2"})))
    assert raised is None
    assert found == {"zzz": "x" * 400, "d2": "second"}  # the long one keeps its snippet, and the next lines are read
    assert peak < 2 * MAX_LINE + (8 << 20), peak  # readline of MAX_LINE (joined from pieces), not the 64 MiB line
    assert time.monotonic() - started < 10


def test_9a_a_json_document_line_past_the_limit_shows_no_text_and_the_rest_is_read(tmp_path):
    from ndcg_report.inputs.documents import document_texts

    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"_id": "big", "text": "y" * 3000}) + "\n" + json.dumps({"_id": "d1", "text": "one"}) + "\n")
    assert document_texts(docs, {"big", "d1"}, max_line=1000) == {"d1": "one"}
    assert document_texts(docs, {"big", "d1"}) == {"big": "y" * 400, "d1": "one"}


# --- 9b: a JSON document decoded a query at a time ---------------------------------------------------------


def json_run(path: Path, queries: int, documents: int) -> Path:
    run = {f"q{q}": {f"d{q}-{d}": float(documents - d) for d in range(documents)} for q in range(queries)}
    path.write_text(json.dumps(run))
    return path


def test_9b_a_json_document_is_decoded_a_query_at_a_time_with_the_same_table(tmp_path):
    from ndcg_report.inputs.formats.json_documents import read_json_document
    from ndcg_report.inputs.mappings import mapping_table

    path = json_run(tmp_path / "run.json", 300, 1000)  # 300,000 documents, 5.5 MB
    raised, peak = peak_python_memory(lambda: read_json_document(path, "run", batch_rows=1000))
    assert raised is None
    assert peak < 4 * path.stat().st_size, peak  # decoded whole, Python's objects took 15 times the text
    table, _, _ = read_json_document(path, "run", batch_rows=1000)
    whole = mapping_table(json.loads(path.read_text()), "run", None)
    assert table.equals(whole)
    assert table["qid"].chunk(0).dictionary.to_pylist() == [f"q{q}" for q in range(300)]


def test_9b_a_repeated_query_of_a_json_document_names_its_line(tmp_path):
    from ndcg_report.inputs.formats.json_documents import read_json_document

    path = tmp_path / "run.json"
    path.write_text('{\n"q1": {"d1": 1},\n"q2": {"d1": 1},\n"q1": {"d2": 1}\n}\n')
    with pytest.raises(InputError, match=r"run.json:4: key \"q1\" given twice in one object"):
        read_json_document(path, "run", batch_rows=1)


# --- 9c: no line longer than MAX_LINE ----------------------------------------------------------------------


def test_9c_a_json_lines_run_with_a_line_past_the_limit_is_one_line_at_once(tmp_path):
    run = tmp_path / "run.jsonl"
    with run.open("w") as handle:  # whole-number ids: the Python reading, 40 times the line in objects
        handle.write(json.dumps({"qid": QID, "retrieved": [1]}) + "\n")
        handle.write(f'{{"qid": "other", "retrieved": [{", ".join(map(str, range(10 ** 6, 10 ** 6 + (MAX_LINE // 9))))}]}}\n')
    started = time.monotonic()
    one_line(cli("eval", QRELS, run), 2, f"run.jsonl:2: a line longer than {MAX_LINE >> 20} MiB")
    assert time.monotonic() - started < 5


# --- 9d: Parquet sized by its rows --------------------------------------------------------------------------


def identical_rows(path: Path, rows: int, per_group: int = 1 << 20) -> Path:
    """A Parquet run of `rows` identical dictionary-encoded rows (a few KB per million)."""
    codes = pa.array(np.zeros(min(rows, per_group), dtype=np.int32))
    table = pa.table({"qid": pa.DictionaryArray.from_arrays(codes, pa.array([QID])),
                      "docid": pa.DictionaryArray.from_arrays(codes, pa.array(["d1"])),
                      "score": pa.array(np.ones(len(codes)))})
    with pq.ParquetWriter(path, table.schema) as writer:
        for start in range(0, rows, per_group):
            writer.write_table(table.slice(0, min(per_group, rows - start)))
    return path


def test_9d_a_parquet_file_past_the_row_limit_is_refused_from_its_metadata(tmp_path):
    from ndcg_report.inputs.formats.parquet import read_parquet

    run = identical_rows(tmp_path / "run.parquet", 1000)
    with pytest.raises(InputError, match=r"run.parquet: 1,000 rows \(its metadata says\), more than the 999 read whole; "
                                         r"evaluate it with `eval`, which streams"):
        read_parquet(run, "score", "run", max_rows=999)
    assert read_parquet(run, "score", "run", max_rows=1000)[0].num_rows == 1000


def test_9d_parquet_rows_count_as_text_when_eval_decides_to_stream(tmp_path):
    from ndcg_report.inputs.run_blocks import STREAM_ABOVE, streams_by_default

    run = identical_rows(tmp_path / "run.parquet", STREAM_ABOVE // 40 + 1)  # 3.4M rows in a few KB
    assert run.stat().st_size < 1 << 20
    assert streams_by_default(run)


def test_9d_a_streamed_query_past_the_line_limit_is_refused(tmp_path):
    from ndcg_report.core.streaming import evaluate_streaming

    run = tmp_path / "run.txt"
    run.write_text("".join(f"{QID} Q0 d{i} {i} {-i} t\n" for i in range(5000)))
    with pytest.raises(InputError, match=rf"run.txt:1: query '{QID}' has more than 1,000 lines from here on"):
        evaluate_streaming(run, QRELS, block_bytes=4096, max_query_lines=1000)
    assert evaluate_streaming(run, QRELS, block_bytes=4096, max_query_lines=5000).per_query is not None


def test_9d_eval_of_a_tiny_parquet_of_many_rows_is_one_line_in_bounded_time(tmp_path):
    run = identical_rows(tmp_path / "run.parquet", 12_000_000)  # 12M rows of one query in 100 KB
    started = time.monotonic()
    one_line(cli("eval", QRELS, run, timeout=60), 2, f"query '{QID}' has more than 10,000,000 lines from here on")
    one_line(cli("eval", "--in-memory", QRELS, identical_rows(tmp_path / "big.parquet", 50_000_001), timeout=60), 2,
             "big.parquet: 50,000,001 rows (its metadata says), more than the 50,000,000 read whole")
    assert time.monotonic() - started < 30


# --- 9e: the text shown per query is capped; no child outlives the build -----------------------------------


def test_9e_a_report_shows_at_most_max_query_text_characters_of_a_query(tmp_path):
    from ndcg_report.analysis.compare import MAX_QUERY_TEXT, compare_runs

    topics = pd.Series({qid: "word " * 100_000 for qid in pd.read_csv(TOPICS, sep="\t", header=None, dtype=str)[0]})
    experiment = compare_runs({"monot5": MONOT5}, QRELS, BM25, topics=topics)
    shown = experiment.topics
    assert shown.str.len().max() == MAX_QUERY_TEXT and shown.iloc[0].endswith("\u2026")
    assert shown.iloc[0][:-1] == topics.iloc[0][:MAX_QUERY_TEXT - 1]


def test_9e_a_child_of_the_build_dies_when_the_build_is_killed(tmp_path):
    starter = textwrap.dedent("""
        import sys, time
        from ndcg_report.build.steps.processes import ChildProcess
        child = ChildProcess([sys.executable, "-c", "import time; time.sleep(60)"], env={})
        print(child._process.pid, flush=True)
        time.sleep(60)
    """)
    process = subprocess.Popen([sys.executable, "-c", starter], stdout=subprocess.PIPE, text=True)
    child = int(process.stdout.readline())
    process.send_signal(signal.SIGKILL)  # as the kernel's OOM killer does
    process.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and Path(f"/proc/{child}").exists() and "Z" not in _state(child):
        time.sleep(0.05)
    alive = Path(f"/proc/{child}").exists() and "Z" not in _state(child)
    if alive:
        os.kill(child, signal.SIGKILL)
    assert not alive


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


# --- 9f: drill-downs bounded -----------------------------------------------------------------------------------


def test_9f_drilldowns_times_their_depth_past_the_limit_is_one_line_before_any_work(tmp_path):
    started = time.monotonic()
    result = cli("build", "--run", MONOT5, "--qrels", QRELS, "--baseline", BM25, "--drilldown", "100000",
                 "--drilldown-depth", "1000", "--out", tmp_path / "out")
    one_line(result, 2, "drilldown 100,000 x drilldown_depth 1,000 asks for 100,000,000 ranked documents per system")
    assert time.monotonic() - started < 10 and not (tmp_path / "out").exists()


def test_9f_the_limit_is_on_the_product():
    from ndcg_report.analysis.drilldown import MAX_DRILLDOWN_ROWS
    from ndcg_report.build.parameters import validate_parameters

    given = dict(runs=[str(MONOT5)], qrels=str(QRELS), baseline=str(BM25))
    assert validate_parameters(**given, drilldown=MAX_DRILLDOWN_ROWS // 10, drilldown_depth=10).drilldown == 5000
    with pytest.raises(ParameterError, match="more than 50,000"):
        validate_parameters(**given, drilldown=MAX_DRILLDOWN_ROWS // 10 + 1, drilldown_depth=10)


# --- 9g: BM25 batches by bytes; a document is at most a line ----------------------------------------------------


def test_9g_corpus_batches_end_at_their_bytes_whatever_their_count(tmp_path):
    from ndcg_report.inputs.corpus import iter_corpus

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": f"d{i}", "text": "w" * 1000}) + "\n" for i in range(10)))
    sizes = [len(ids) for ids, _ in iter_corpus(corpus, batch_size=10_000, batch_bytes=3000)]
    assert sizes == [3, 3, 3, 1]


def test_9g_bm25_of_a_corpus_with_a_document_past_the_line_limit_is_one_line(tmp_path):
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


# --- 9h: a stream checked while it is copied -------------------------------------------------------------------


def test_9h_a_stream_of_binary_bytes_is_refused_at_its_first_piece(tmp_path):
    from ndcg_report.inputs.access.sources import copy_checked

    class Zeros(io.RawIOBase):
        read_count = 0

        def read(self, size=-1):
            Zeros.read_count += 1
            return b"\0" * (size if size > 0 else 1 << 16)

    with open(tmp_path / "copy", "wb") as copy, pytest.raises(InputError, match=r"/dev/fd/63:1: NUL byte: not UTF-8 text"):
        copy_checked(Path("/dev/fd/63"), Zeros(), copy)
    assert Zeros.read_count == 1 and (tmp_path / "copy").stat().st_size == 0


def test_9h_a_stream_that_would_fill_the_temporary_folder_is_refused(tmp_path, monkeypatch):
    from ndcg_report.inputs.access import sources

    real = os.statvfs(tmp_path)

    class Room:  # 5 MiB free before the copy
        f_frsize = 1
        f_blocks = real.f_blocks * real.f_frsize

        @property
        def f_bavail(self):
            return (5 << 20) - (tmp_path / "copy").stat().st_size

    monkeypatch.setattr(sources.os, "statvfs", lambda folder: Room())
    text = io.BytesIO(b"q1 Q0 d1 1 1.0 t\n" * 200_000)  # 3.4 MB of text
    with open(tmp_path / "copy", "wb") as copy, pytest.raises(InputError, match=r"its copy would fill the temporary "
                                                                                 r"folder .* \(3 MiB would be left after 1 MiB\)"):
        sources.copy_checked(Path("/dev/fd/63"), text, copy, reserve=4 << 20)
    for gzip_or_parquet in (gzip.compress(b"q1 Q0 d1 1 1 t\n"), b"PAR1\0\0\0"):  # binary formats pass the text check
        with open(tmp_path / "copy", "wb") as copy:
            assert sources.copy_checked(Path("/dev/fd/63"), io.BytesIO(gzip_or_parquet), copy, reserve=0) > 0


def test_9h_eval_of_a_process_substitution_of_zeros_is_one_line_at_once(tmp_path):
    started = time.monotonic()
    result = subprocess.run(["bash", "-c", f'exec "{sys.executable}" -m ndcg_report.cli eval "{QRELS}" <(cat /dev/zero)'],
                            capture_output=True, text=True, timeout=30, env={**os.environ, "TMPDIR": str(tmp_path)})
    one_line(result, 2, "NUL byte: not UTF-8 text")
    assert time.monotonic() - started < 5
    assert not [path for path in tmp_path.rglob("*") if path.is_file()]


# --- a killed step or a dead kernel is said as such ------------------------------------------------------------


def test_a_killed_step_or_dead_kernel_is_not_reported_as_outputs_differ(tmp_path):
    from ndcg_report.build.pipeline import _check_nbval
    from ndcg_report.build.steps.processes import Finished
    from ndcg_report.build.steps.step_failures import KERNEL_DIED
    from ndcg_report.errors import BuildError

    for finished, message in (
            (Finished(-signal.SIGKILL, "...", ""), "step nbval failed: it was killed by SIGKILL (out of memory?)"),
            (Finished(1, f"F\nFAILED report.ipynb::Cell 7\n{KERNEL_DIED}\n", ""),
             "step nbval failed in Cell 7: the kernel died (killed: out of memory?)")):
        with pytest.raises(BuildError) as raised:
            _check_nbval(finished, tmp_path / "report.ipynb")
        assert str(raised.value) == message


def test_nbval_notices_a_dead_kernel_at_once_and_says_so(tmp_path):
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"name": "python3", "language": "python",
                                                                               "display_name": "Python 3"}},
                "cells": [{"cell_type": "code", "id": "a", "metadata": {}, "execution_count": 1, "outputs": [],
                           "source": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"},
                          {"cell_type": "code", "id": "b", "metadata": {}, "execution_count": 2, "outputs": [],
                           "source": "1"}]}
    path = tmp_path / "dies.ipynb"
    path.write_text(json.dumps(notebook))
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "ndcg_report.build.steps.nbval_plugin", "-p",
                             "nbval.plugin", "--nbval", str(path), "--nbval-cell-timeout", "120", "-p",
                             "no:cacheprovider", "-q", "-s", "--rootdir", str(tmp_path), "-c", os.devnull],
                            capture_output=True, text=True, cwd=tmp_path, timeout=110,
                            env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "NDCG_REPORT_NO_FORKS": "1"})
    from ndcg_report.build.steps.step_failures import KERNEL_DIED

    assert result.returncode != 0 and result.stdout.strip().splitlines()[-1] == KERNEL_DIED, result.stdout[-2000:]
    assert time.monotonic() - started < 60


def test_9b_a_json_document_past_its_limit_is_refused_before_it_is_held(tmp_path, monkeypatch):
    """A JSON document larger than MAX_DOCUMENT (176 MiB: a 7M-line MS MARCO dev dict is 145 MB and
    peaks at 0.8 GB) is refused while its size is counted, holding one piece at a time."""
    from ndcg_report.errors import InputError
    from ndcg_report.inputs.formats import json_documents

    assert json_documents.MAX_DOCUMENT == 176 << 20
    monkeypatch.setattr(json_documents, "MAX_DOCUMENT", 3 << 20)
    path = tmp_path / "run.json"
    entries = ", ".join(f'"D{i:07d}": {i % 97}.5' for i in range(700_000))  # about 12 MB
    path.write_text('{"q1": {' + entries + "}}")
    raised, peak = peak_python_memory(lambda: json_documents.read_json_document(path, "run"))
    assert isinstance(raised, InputError) and "larger than 3 MiB" in str(raised) and "JSON lines" in str(raised)
    assert path.stat().st_size > 11 << 20 and peak < 6 << 20  # pieces of 1 MiB: never the whole text
