"""Parquet runs and qrels (a file or a folder of files): the same numbers as the text files, byte for
byte, and every bad-input class as one line naming the file and the row."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ndcg_report.build import notebook_io
from ndcg_report import compare_runs, evaluate
from ndcg_report.files import path_sha256
from ndcg_report.inputs.reading import read_qrels, read_run
from ndcg_report.build.parameters import validate_parameters
from ndcg_report.errors import InputError
from tests.helpers import identical_rows

DL19 = Path(str(resources.files("ndcg_report") / "data" / "dl19-passage"))
QRELS, MONOT5, BM25 = (DL19 / "qrels.dl19-passage.txt", DL19 / "monot5.dl19.run.gz",
                       DL19 / "run.msmarco-v1-passage.bm25-default.dl19.txt.gz")


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ndcg_report.cli", *map(str, args)], capture_output=True,
                          text=True, check=False)


def as_parquet(table: pa.Table, value: str, path: Path, parts: int = 1) -> Path:
    """The table (qid, docid, value) as one Parquet file, or with parts > 1 as a folder of that many."""
    plain = pa.table({"qid": table["qid"].cast(pa.string()), "docid": table["docid"], value: table[value]})
    if parts == 1:
        pq.write_table(plain, path)
        return path
    path.mkdir()
    step = -(-plain.num_rows // parts)
    for part in range(parts):
        pq.write_table(plain.slice(part * step, step), path / f"part-{part:03d}.parquet")
    (path / "_SUCCESS").touch()  # as Spark writes: skipped
    return path


@pytest.fixture(scope="module")
def parquet_dl19(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("parquet")
    return {
        "qrels": as_parquet(read_qrels(QRELS).table, "rel", root / "qrels.parquet"),
        "monot5": as_parquet(read_run(MONOT5).table, "score", root / "monot5.parquet"),
        "monot5 folder": as_parquet(read_run(MONOT5).table, "score", root / "monot5", parts=3),
        "bm25": as_parquet(read_run(BM25).table, "score", root / "bm25.parquet"),
    }


@pytest.mark.parametrize("run_form", ["monot5", "monot5 folder"])
@pytest.mark.parametrize("fmt", ["trec", "csv", "json"])
def test_eval_output_is_byte_identical_to_the_text_files(parquet_dl19, run_form, fmt):
    args = ["eval", "-q", "--format", fmt, "-k", "1,3,5,10,20,100,1000,all"]
    text = cli(*args, QRELS, MONOT5)
    columnar = cli(*args, parquet_dl19["qrels"], parquet_dl19[run_form])
    assert text.returncode == columnar.returncode == 0, columnar.stderr
    assert columnar.stdout == text.stdout and re.search(r"ndcg_cut_10 *\tall\t0\.7215", cli("eval", QRELS, MONOT5).stdout)


def test_the_api_takes_parquet_paths(parquet_dl19):
    assert evaluate(parquet_dl19["monot5 folder"], parquet_dl19["qrels"]).mean(10) == evaluate(MONOT5, QRELS).mean(10)
    columnar = compare_runs({"monoT5": parquet_dl19["monot5"]}, parquet_dl19["qrels"], parquet_dl19["bm25"], cutoffs="10",
                            baseline_name="BM25")
    text = compare_runs({"monoT5": MONOT5}, QRELS, BM25, cutoffs="10", baseline_name="BM25")
    assert columnar.comparisons.equals(text.comparisons)  # same names, same streams: identical statistics
    assert compare_runs([parquet_dl19["monot5"]], parquet_dl19["qrels"], parquet_dl19["bm25"], cutoffs="10").names == ("monot5",)


def test_a_report_lists_parquet_inputs_with_their_rows(parquet_dl19):
    params = validate_parameters(runs=[str(parquet_dl19["monot5 folder"])], baseline=str(parquet_dl19["bm25"]),
                                 qrels=str(parquet_dl19["qrels"]), ks="10")
    report = notebook_io.load_report(params)
    files = report.files.set_index("file")
    assert files.at["monot5", "lines"] == 41042 and files.at["qrels.parquet", "lines"] == 9260
    assert report.experiment.names == ("monot5",)  # no run tag in Parquet: named by the file
    assert round(report.experiment.leaderboard.at["monot5", "nDCG@10"], 4) == 0.7215


def test_a_folder_s_fingerprint_follows_its_files(tmp_path):
    folder = as_parquet(pa.table({"qid": ["1", "2"], "docid": ["a", "b"], "score": [1.0, 2.0]}), "score",
                        tmp_path / "run", parts=2)
    before = path_sha256(folder)
    (folder / "_SUCCESS").write_text("changed")  # skipped by the reader, so by the fingerprint too
    assert path_sha256(folder) == before
    pq.write_table(pa.table({"qid": ["2"], "docid": ["b"], "score": [3.0]}), folder / "part-001.parquet")
    assert path_sha256(folder) != before


BAD = {
    "missing column": ({"qid": ["1"], "doc": ["a"], "score": [1.0]}, ": lacks a 'docid' column (has 'qid', 'doc', 'score')"),
    "both names": ({"qid": ["1"], "docid": ["a"], "docno": ["a"], "score": [1.0]}, ": has both 'docid' and 'docno' columns"),
    "wrong value type": ({"qid": ["1"], "docid": ["a"], "score": ["high"]}, ": column 'score' has type string"),
    "wrong id type": ({"qid": [1.5], "docid": ["a"], "score": [1.0]}, ": column 'qid' has type double"),
    "null id": ({"qid": ["1", None], "docid": ["a", "b"], "score": [1.0, 2.0]}, ": row 2: qid is null"),
    "null docid": ({"qid": ["1", "1"], "docid": ["a", None], "score": [1.0, 2.0]}, ": row 2: docid is null"),
    "NaN score": ({"qid": ["1", "1"], "docid": ["a", "b"], "score": [1.0, float("nan")]}, ": row 2: score is nan"),
    "null score": ({"qid": ["1", "1"], "docid": ["a", "b"], "score": [1.0, None]}, ": row 2: score is null"),
    "infinite score": ({"qid": ["1"], "docid": ["a"], "score": [float("inf")]}, ": row 1: score is inf"),
    "repeated pair": ({"qid": ["1", "2", "1"], "docid": ["a", "b", "a"], "score": [1.0, 2.0, 3.0]},
                      ": row 3: duplicate run entry for query '1', document 'a' (first on row 1 of"),
    "no rows": ({"qid": pa.array([], pa.string()), "docid": pa.array([], pa.string()), "score": pa.array([], pa.float64())},
                ": no rows in 1 Parquet file"),
}


@pytest.mark.parametrize("case", BAD)
def test_every_bad_run_is_one_line_naming_the_file_and_row(tmp_path, case):
    columns, message = BAD[case]
    pq.write_table(pa.table(columns), tmp_path / "run.parquet")
    result = cli("eval", QRELS, tmp_path / "run.parquet")
    assert result.returncode == 2 and result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
    assert f"error: {tmp_path / 'run.parquet'}{message}" in result.stderr


@pytest.mark.parametrize("columns, message", [
    ({"qid": ["1"], "docid": ["a"], "label": ["x"]}, ": column 'label' has type string"),
    ({"qid": ["1", "1"], "docid": ["a", "a"], "rel": [1, 2]}, ": row 2: duplicate qrels entry for query '1'"),
    ({"qid": ["1"], "docid": ["a"], "score": [1]}, ": lacks a 'rel' column"),
])
def test_bad_qrels_too(tmp_path, columns, message):
    pq.write_table(pa.table(columns), tmp_path / "qrels.parquet")
    result = cli("eval", tmp_path / "qrels.parquet", MONOT5)
    assert result.returncode == 2 and f"{tmp_path / 'qrels.parquet'}{message}" in result.stderr


def test_folders_name_the_file_of_the_row(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    pq.write_table(pa.table({"qid": ["1", "2"], "docid": ["a", "b"], "score": [1.0, 2.0]}), folder / "a.parquet")
    pq.write_table(pa.table({"qid": ["3", "1"], "docid": ["c", "a"], "score": [1.0, 2.0]}), folder / "b.parquet")
    result = cli("eval", QRELS, folder)
    assert result.returncode == 2
    assert f"{folder / 'b.parquet'}: row 2: duplicate run entry for query '1', document 'a' (first on row 1 of " \
           f"{folder / 'a.parquet'})" in result.stderr
    (tmp_path / "empty").mkdir()
    assert "a folder without any Parquet file" in cli("eval", QRELS, tmp_path / "empty").stderr
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    result = cli("eval", QRELS, tmp_path / "bad.parquet")
    assert result.returncode == 2 and "bad.parquet: cannot be read as Parquet" in result.stderr


def test_whole_number_ids_read_as_their_decimal_text(tmp_path):
    pq.write_table(pa.table({"qid": [1037798, 1037798], "docid": [7, 8], "score": [2, 1]}), tmp_path / "run.parquet")
    pq.write_table(pa.table({"qid": ["1037798", "1037798"], "docid": ["7", "8"], "score": [2.0, 1.0]}),
                   tmp_path / "text-ids.parquet")
    (tmp_path / "qrels.txt").write_text("1037798 0 8 1\n")
    numbers, text = (cli("eval", "-q", tmp_path / "qrels.txt", tmp_path / name) for name in ("run.parquet", "text-ids.parquet"))
    assert numbers.returncode == 0 and numbers.stdout == text.stdout and re.search(r"ndcg_cut_1 *\t1037798\t0\.0000", numbers.stdout)


@pytest.mark.parametrize("run_form", ["monot5", "monot5 folder"])
@pytest.mark.parametrize("block", [1 << 14, 1 << 20])
def test_a_parquet_run_streamed_in_any_block_size_equals_the_in_memory_evaluation(parquet_dl19, monkeypatch,
                                                                                 run_form, block):
    from ndcg_report.core import streaming
    from ndcg_report.inputs import run_blocks

    monkeypatch.setattr(run_blocks, "READ_BYTES", 1 << 13)  # about 200 rows read at a time: many chunks and blocks
    options = dict(measures="nDCG@1 nDCG@10 nDCG@100 nDCG AP RR@10 R@100", rel_level=2, missing="zero",
                   no_relevant="zero")
    streamed = streaming.evaluate_streaming(parquet_dl19[run_form], QRELS, block_bytes=block, **options)
    whole = evaluate(MONOT5, QRELS, **options)
    assert list(streamed.qids) == list(whole.qids) and streamed.counts == whole.counts
    for name in ("num_ret", "num_rel", "num_rel_graded", "in_run", "values", "averaged", "dcg", "idcg", "judged"):
        assert np.array_equal(getattr(streamed, name), getattr(whole, name), equal_nan=True), name


def test_streamed_parquet_errors_name_the_file_and_row(tmp_path, monkeypatch):
    from ndcg_report.core import streaming
    from ndcg_report.inputs import run_blocks
    from ndcg_report.errors import InputError

    monkeypatch.setattr(run_blocks, "READ_BYTES", 1 << 10)  # 25 rows at a time
    rows = [(str(q), f"d{d}", float(100 - d)) for q in range(1, 5) for d in range(30)]
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n")

    def folder(name: str, rows: list) -> Path:
        path = tmp_path / name
        path.mkdir()
        half = len(rows) // 2
        for part, piece in enumerate((rows[:half], rows[half:])):
            pq.write_table(pa.table({"qid": [r[0] for r in piece], "docid": [r[1] for r in piece],
                                     "score": [r[2] for r in piece]}), path / f"part-{part}.parquet")
        return path

    scattered = folder("scattered", rows[:70] + [("1", "extra", 1.0)] + rows[70:])  # row 71: query 1 again
    with pytest.raises(streaming.QueryNotContiguous) as error:
        streaming.evaluate_streaming(scattered, tmp_path / "qrels.txt", block_bytes=1 << 11)
    assert str(error.value).startswith(f"{scattered / 'part-1.parquet'}: row 11: query '1' appears again")
    assert "write the rows sorted by qid" in str(error.value)
    repeated = folder("repeated", rows[:100] + [("4", "d3", 1.0)] + rows[100:])  # row 101 repeats row 94's pair
    with pytest.raises(InputError) as error:
        streaming.evaluate_streaming(repeated, tmp_path / "qrels.txt", block_bytes=1 << 11)
    assert str(error.value).startswith(f"{repeated / 'part-1.parquet'}: row 41: duplicate run entry for query '4', "
                                       f"document 'd3' (first on row 34 of {repeated / 'part-1.parquet'})")
    nan = folder("nan", rows[:90] + [("3", "x", float("nan"))] + rows[90:])
    with pytest.raises(InputError) as error:
        streaming.evaluate_streaming(nan, tmp_path / "qrels.txt", block_bytes=1 << 11)
    assert str(error.value).startswith(f"{nan / 'part-1.parquet'}: row 31: score is nan")
    result = cli("eval", "--stream", tmp_path / "qrels.txt", scattered)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "row 11: query '1'" in result.stderr
    result = cli("eval", tmp_path / "qrels.txt", scattered)  # small: read in memory, where the order does not matter
    assert result.returncode == 0


def test_a_parquet_file_past_the_row_limit_is_refused_from_its_metadata(tmp_path):
    from ndcg_report.inputs.formats.parquet import read_parquet

    run = identical_rows(tmp_path / "run.parquet", 1000)
    with pytest.raises(InputError, match=r"run.parquet: 1,000 rows \(its metadata says\), more than the 999 read whole; "
                                         r"evaluate it with `eval`, which streams"):
        read_parquet(run, "score", "run", max_rows=999)
    assert read_parquet(run, "score", "run", max_rows=1000)[0].num_rows == 1000


def test_a_parquet_run_of_more_rows_than_fit_in_half_the_memory_is_refused_before_a_row_is_decoded(tmp_path, monkeypatch):
    from ndcg_report.inputs.access import read_bounds

    run = tmp_path / "run.parquet"
    pq.write_table(pa.table({"qid": ["q1"] * 70_000, "docid": [f"d{row}" for row in range(70_000)],
                             "score": np.zeros(70_000)}), run)
    monkeypatch.setattr(read_bounds, "available_memory", lambda: 20 << 20)  # half: 10 MiB, 65,535 rows of 160 bytes
    monkeypatch.setattr(pq.ParquetFile, "read", lambda *args, **kwargs: pytest.fail("a row was decoded"))
    with pytest.raises(InputError) as error:
        read_run(run)
    assert str(error.value) == (f"{run}: 70,000 rows (its metadata says), more than the 65,535 read whole in half the "
                                "available memory (10 MiB); evaluate it with `eval`, which streams a run this large "
                                "in blocks, or give fewer rows")
    monkeypatch.undo()  # with the memory there is, the same file is read
    assert read_run(run).table.num_rows == 70_000
