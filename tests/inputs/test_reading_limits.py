"""Reading, each a regression test: ids of every Arrow string layout mixed with text inputs, formats
told by structure, not 4 bytes, process substitutions read once (a build with `--topics <(zcat t.tsv.gz)`:
test_build.test_small_build_escapes_text_from_inputs), bounded first checks for topics and for overlong
first lines, a file wrong from its start refused on a bounded prefix (a gzip bomb too), a 10 MB id read,
mistyped folders not walked, and named pipes refused instead of blocking."""

from __future__ import annotations

import gzip
import math
import os
import subprocess
import sys
import time
import tracemalloc
from importlib import resources
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ndcg_report.build import notebook_io
from ndcg_report import InputError, compare_runs, evaluate, read_qrels, read_run, read_topics
from ndcg_report.cli import main
from ndcg_report.build.parameters import validate_parameters
from ndcg_report.analysis.systems import split_run_option
from ndcg_report.inputs.formats import trec_parsing, trec_text

DL19 = Path(str(resources.files("ndcg_report") / "data" / "dl19-passage"))
QRELS, MONOT5 = DL19 / "qrels.dl19-passage.txt", DL19 / "monot5.dl19.run.gz"
BM25 = DL19 / "run.msmarco-v1-passage.bm25-default.dl19.txt.gz"
SMALL = Path(__file__).resolve().parents[1] / "data" / "small"
LAYOUTS = {
    "string": pa.string(), "large_string": pa.large_string(), "string_view": pa.string_view(),
    "dictionary": pa.dictionary(pa.int32(), pa.large_string()),
}


def cli(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ndcg_report.cli", *map(str, args)], capture_output=True, text=True,
                          check=False, timeout=timeout)


def bash(command: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """A bash command line (for <(...)), with this interpreter's ndcg-report as `ndcg-report`."""
    line = f'ndcg-report() {{ "{sys.executable}" -m ndcg_report.cli "$@"; }}; {command}'
    return subprocess.run(["bash", "-c", line], capture_output=True, text=True, check=False, timeout=timeout)


def gzip_of_repeats(path: Path, block: bytes, times: int) -> Path:
    """A gzip file whose text is `block` repeated: members concatenated, so 1 GiB of text costs a few KB."""
    member = gzip.compress(block, compresslevel=9)
    path.write_bytes(member * times)
    return path


def peak_python_memory(call) -> tuple[BaseException | None, int]:
    """(what the call raised, the peak of Python's allocations during it, in bytes)."""
    tracemalloc.start()
    try:
        call()
        raised = None
    except BaseException as exc:  # noqa: BLE001 - returned to the test
        raised = exc
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return raised, peak


# --- 5: ids of every string layout, mixed with text inputs -----------------------------------------


@pytest.fixture(scope="module")
def layouts(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """DL 2019's monoT5 run and qrels as Parquet, ids in each layout, as pandas >= 2 and 3 write them."""
    root = tmp_path_factory.mktemp("layouts")
    run, qrels = read_run(MONOT5).table, read_qrels(QRELS).table
    written = {}
    for name, kind in LAYOUTS.items():
        paths = []
        for table, value, stem in ((run, "score", "run"), (qrels, "rel", "qrels")):
            ids = {column: pa.array(table[column].cast(pa.string()).to_pylist(), pa.large_string()).cast(kind)
                   for column in ("qid", "docid")}
            path = root / f"{stem}-{name}.parquet"
            pq.write_table(pa.table({**ids, value: table[value]}), path)
            paths.append(path)
        written[name] = (paths[0], paths[1])
    return written


def test_every_string_layout_evaluates_like_text_in_eval(layouts, capfdbinary):
    assert main(["eval", "-q", str(QRELS), str(MONOT5)]) == 0
    expected = capfdbinary.readouterr().out
    for name, (run, qrels) in layouts.items():
        written = pq.read_schema(run).field("docid").type
        assert written == LAYOUTS[name] or pa.types.is_dictionary(written) and name == "dictionary"
        for arguments in ((qrels, run), (QRELS, run), (qrels, MONOT5)):
            assert main(["eval", "-q", *map(str, arguments)]) == 0
            assert capfdbinary.readouterr().out == expected, (name, arguments)


def test_every_string_layout_mixes_with_text_in_compare_runs_and_the_report(layouts):
    runs = {name: run for name, (run, _) in layouts.items()}
    experiment = compare_runs(runs, QRELS, BM25, cutoffs="10", n_resamples=50)
    expected = evaluate(MONOT5, QRELS, cutoffs=[10]).mean(10)
    assert experiment.leaderboard["nDCG@10"].loc[list(LAYOUTS)].tolist() == [expected] * 4
    assert experiment.tie_ranges  # the join of run and qrels lines that broke build and batch
    # what build and batch run in the notebook: runs of each layout, qrels of one, a text baseline
    params = validate_parameters(runs=[str(run) for run, _ in layouts.values()], qrels=str(layouts["large_string"][1]),
                                 baseline=str(BM25), ks="10")
    report = notebook_io.load_report(params)
    assert report.experiment.leaderboard["nDCG@10"].iloc[:4].tolist() == [expected] * 4
    assert report.files["format"].tolist() == ["Parquet"] * 4 + ["TREC text (gzip)", "Parquet"]


# --- 8: formats by structure, not 4 bytes; an existing path is a path ----------------------------------


def test_text_starting_with_par1_is_text_and_a_hive_folder_is_a_path(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("PAR1 0 a 1\nPAR1 0 b 0\n")
    assert read_qrels(qrels).table["qid"].to_pylist() == ["PAR1", "PAR1"]
    run = tmp_path / "run"
    run.write_text("PAR1 Q0 a 1 2.0 t\n")
    assert evaluate(run, qrels, cutoffs=[1]).mean(1) == 1.0
    hive = tmp_path / "date=2024"
    hive.mkdir()
    pq.write_table(pa.table({"qid": ["PAR1"], "docid": ["a"], "score": [1.0]}), hive / "part-0.parquet")
    os.chdir(tmp_path)
    assert split_run_option("date=2024") == ("", "date=2024")
    assert split_run_option("name=missing/run.txt") == ("name", "missing/run.txt")


# --- 9 and 13: process substitutions read once; named pipes refused --------------------------------------


def test_process_substitutions_are_read_once_and_named_pipes_refused(tmp_path):
    result = bash(f"ndcg-report eval -k 10 <(cat {QRELS}) <(zcat {MONOT5})")
    assert result.returncode == 0, result.stderr
    assert result.stdout == cli("eval", "-k", "10", QRELS, MONOT5).stdout
    corpus = Path(__file__).resolve().parents[1] / "data" / "corpus"
    built = bash(f"ndcg-report bm25 --corpus <(cat {corpus / 'tiny.jsonl'}) --topics <(zcat -f {corpus / 'tiny_topics.tsv'}) "
                 f"--out {tmp_path / 'bm25.run'} --cache-dir {tmp_path / 'cache'}")
    assert built.returncode == 0, built.stderr
    assert read_run(tmp_path / "bm25.run").table.num_rows > 0
    bad = bash(f"ndcg-report eval {QRELS} <(printf 'q1 Q0 d1 1 x t\\n')")
    assert bad.returncode == 2 and bad.stderr.startswith("ndcg-report: error: /dev/fd/")
    assert ":1: score 'x' is not a number" in bad.stderr
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for arguments in (("eval", QRELS, fifo), ("eval", fifo, MONOT5),
                      ("build", "--run", fifo, "--qrels", QRELS, "--baseline", BM25, "--out", tmp_path / "out"),
                      ("bm25", "--corpus", fifo, "--topics", SMALL / "topics.txt", "--out", tmp_path / "x.run")):
        result = cli(*arguments, timeout=60)  # on a blocking open, the timeout fails the test
        assert result.returncode == 2 and result.stderr.count("\n") == 1, arguments
        assert f"{fifo}: is a named pipe (FIFO), not a regular file" in result.stderr
    assert not (tmp_path / "out").exists()


# --- 10 and 11: bounded first checks ---------------------------------------------------------------------


def test_a_gzip_bomb_of_lines_as_topics_fails_at_once_in_bounded_memory(tmp_path):
    bomb = gzip_of_repeats(tmp_path / "topics.tsv.gz", b"x\n" * (1 << 19), 512)  # 512 MiB of `x` lines
    started = time.monotonic()
    raised, peak = peak_python_memory(lambda: read_topics(bomb))
    assert isinstance(raised, InputError) and str(raised).endswith(":1: expected `qid<TAB>query text`; "
                                                                   "separate the id and the text with a tab")
    assert peak < 32 << 20 and time.monotonic() - started < 10


def test_a_first_line_past_the_limit_is_refused_after_reading_the_limit(tmp_path):
    line = gzip_of_repeats(tmp_path / "run.gz", b"x" * (1 << 20), 300)  # one line of 300 MiB
    raised, peak = peak_python_memory(lambda: read_run(line))
    assert isinstance(raised, InputError)
    assert str(raised) == f"{line}:1: a line longer than 16 MiB (read that far without a line end); " \
                          "give a run file of lines: no line of one is that long"
    assert peak < 32 << 20
    zeros = gzip_of_repeats(tmp_path / "zeros.gz", b"\0" * (1 << 20), 1024)  # 1 GiB of zeros, no line end
    for reader in (read_run, read_qrels, read_topics):
        started = time.monotonic()
        with pytest.raises(InputError, match=r"zeros.gz:1: NUL byte: not UTF-8 text"):
            reader(zeros)
        assert time.monotonic() - started < 5


# --- 12: a mistyped folder is not walked whole ----------------------------------------------------------


def test_a_folder_of_other_files_is_not_walked_as_a_parquet_dataset(tmp_path, monkeypatch):
    folder = tmp_path / "home"
    (folder / "a-notes.txt").parent.mkdir()
    (folder / "a-notes.txt").write_text("notes\n")
    for part in range(20):
        (folder / f"b{part:02d}").mkdir()
        for number in range(50):
            (folder / f"b{part:02d}" / f"{number}.txt").write_text("x")
    listed = []
    real_scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path=".": listed.append(path) or real_scandir(path))
    with pytest.raises(InputError, match=r"home: a folder, but not a Parquet dataset: its file a-notes.txt is not Parquet"):
        read_qrels(folder)
    assert len(listed) <= 2
    result = cli("eval", QRELS, folder)
    assert result.returncode == 2 and "its file a-notes.txt is not Parquet; give a run file" in result.stderr


def test_a_file_wrong_from_its_start_fails_on_a_bounded_prefix(tmp_path, monkeypatch):
    garbage = tmp_path / "ab.txt"
    garbage.write_bytes(b"ab\n" * 5_000_000)  # 15 MB
    bomb = tmp_path / "bomb.gz"
    import gzip

    with gzip.open(bomb, "wb") as handle:
        for _ in range(64):
            handle.write(b"x\n" * (1 << 20))  # 128 MiB of text from a small file

    def no_full_read(*args, **kwargs):
        raise AssertionError("the whole file was parsed")

    parse = trec_parsing.parse_text

    def prefix_only(source, layout):  # the prefix check parses at most _PREFIX_BYTES of text
        if not isinstance(source, bytes) or len(source) > trec_text._PREFIX_BYTES:
            no_full_read()
        return parse(source, layout)

    monkeypatch.setattr(trec_parsing, "parse_text", prefix_only)
    monkeypatch.setattr(trec_text, "_parse_in_chunks", no_full_read)
    for path in (garbage, bomb):
        with pytest.raises(InputError, match=r":1: expected 6 columns"):
            read_run(path)


def test_a_line_with_a_10_mb_docid_is_read(tmp_path):
    docid = "D" * (10 << 20)
    (tmp_path / "run").write_text(f"q1 Q0 d1 1 3.0 t\nq1 Q0 {docid} 2 2.0 t\nq1 Q0 d2 3 1.0 t\n")
    (tmp_path / "qrels").write_text(f"q1 0 d1 1\nq1 0 {docid} 2\n")
    expected = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert evaluate(tmp_path / "run", tmp_path / "qrels", cutoffs="3").mean(3) == pytest.approx(expected, abs=1e-15)


# --- decompression bombs: bounded as they are decompressed, on every path ------------------------------


def test_a_gzip_of_identical_run_lines_is_refused_as_it_is_read_in_eval_and_build(tmp_path):
    bomb = gzip_of_repeats(tmp_path / "run.gz", b"q1 Q0 d1 1 1.0 t\n" * (1 << 16), 1130)  # 74M lines in 3 MB
    assert bomb.stat().st_size < 8 << 20
    raised, peak = peak_python_memory(lambda: read_run(bomb))
    assert str(raised) == (f"{bomb}:2: duplicate run entry for query 'q1', document 'd1' (the same as the entry "
                           "before it); keep one line per (query, document)")
    assert peak < 160 << 20  # one chunk of text
    out = tmp_path / "report"
    for arguments in (("eval", "--in-memory", QRELS, bomb), ("eval", QRELS, bomb), ("eval", "--stream", QRELS, bomb),
                      ("build", "--run", bomb, "--qrels", QRELS, "--baseline", BM25, "--out", out)):
        started = time.monotonic()
        result = cli(*arguments, timeout=60)
        assert result.returncode == 2 and result.stderr.count("\n") == 1, (arguments, result.stderr)
        assert f"run.gz:2: duplicate run entry for query 'q1', document 'd1'" in result.stderr, arguments
        assert time.monotonic() - started < 20, arguments
    assert not out.exists()


def test_a_gzip_run_whose_text_would_not_fit_in_half_the_memory_is_refused_as_it_is_read(tmp_path, monkeypatch):
    from ndcg_report.inputs.access import read_bounds

    lines = b"".join(b"q1 Q0 d%d 1 1.0 t\n" % (number % 2) for number in range(1 << 16))  # no line repeats the one before
    bomb = gzip_of_repeats(tmp_path / "run.gz", lines, 256)  # 256 MiB of text
    monkeypatch.setattr(read_bounds, "available_memory", lambda: 256 << 20)  # half: 128 MiB, for 32 MiB of text
    raised, peak = peak_python_memory(lambda: read_run(bomb))
    assert str(raised) == (f"{bomb}:986897: its text passes 32 MiB here (decompressed), more than fits in half the available "
                           "memory (128 MiB) once read; give a smaller run file, or evaluate it with `eval --stream`")
    assert peak < 160 << 20
    monkeypatch.setattr(read_bounds, "available_memory", lambda: 1 << 40)
    assert read_run(MONOT5).table.num_rows == 41042  # a gzip run that fits is read as before


def test_a_gzip_of_identical_json_lines_is_refused_as_it_is_read(tmp_path):
    line = b'{"qid": "q1", "docid": "d1", "score": 1.0}\n'
    bomb = gzip_of_repeats(tmp_path / "run.jsonl.gz", line * (1 << 15), 512)  # 16M lines, 688 MiB of text
    assert bomb.stat().st_size < 8 << 20
    raised, peak = peak_python_memory(lambda: read_run(bomb))
    assert str(raised) == (f"{bomb}:2: duplicate run entry for query 'q1', document 'd1' (the same as the entry "
                           "before it); keep one line per (query, document)")
    assert peak < 32 << 20  # a piece of text, and a small piece read again to find the line


def test_a_gzip_of_json_lines_whose_text_would_not_fit_in_half_the_memory_is_refused_as_it_is_read(tmp_path,
                                                                                                   monkeypatch):
    from ndcg_report.inputs.access import read_bounds

    lines = b"".join(b'{"qid": "q1", "docid": "d%d", "score": 1.0}\n' % (number % 2) for number in range(1 << 15))
    bomb = gzip_of_repeats(tmp_path / "run.jsonl.gz", lines, 256)  # 344 MiB of text, no line repeating the one before
    monkeypatch.setattr(read_bounds, "available_memory", lambda: 256 << 20)  # half: 128 MiB, for 32 MiB of text
    raised, peak = peak_python_memory(lambda: read_run(bomb))
    assert isinstance(raised, InputError) and "(decompressed), more than fits in half the available memory (128 MiB)" \
        in str(raised) and str(raised).endswith("give a smaller run file, or evaluate it with `eval --stream`")
    assert peak < 200 << 20
