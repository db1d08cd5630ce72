"""Runs streamed in blocks of queries (inputs/run_blocks.py): Parquet rows count as text when eval decides
to stream, and a query past the line limit is refused with one line."""

from __future__ import annotations

import time

import pytest

from ndcg_report.errors import InputError
from tests.helpers import QID, QRELS, cli, identical_rows, one_line


def test_parquet_rows_count_as_text_when_eval_decides_to_stream(tmp_path):
    from ndcg_report.inputs.run_blocks import STREAM_ABOVE, streams_by_default

    run = identical_rows(tmp_path / "run.parquet", STREAM_ABOVE // 40 + 1)  # 3.4M rows in a few KB
    assert run.stat().st_size < 1 << 20
    assert streams_by_default(run)


def test_a_streamed_query_past_the_line_limit_is_refused(tmp_path):
    from ndcg_report.core.streaming import evaluate_streaming

    run = tmp_path / "run.txt"
    run.write_text("".join(f"{QID} Q0 d{i} {i} {-i} t\n" for i in range(5000)))
    with pytest.raises(InputError, match=rf"run.txt:1: query '{QID}' has more than 1,000 lines from here on"):
        evaluate_streaming(run, QRELS, block_bytes=4096, max_query_lines=1000)
    assert evaluate_streaming(run, QRELS, block_bytes=4096, max_query_lines=5000).per_query is not None


def test_eval_of_a_tiny_parquet_of_many_rows_is_one_line_in_bounded_time(tmp_path, monkeypatch, capsys):
    from ndcg_report.cli import main
    from ndcg_report.inputs.access import read_bounds

    run = identical_rows(tmp_path / "run.parquet", 12_000_000)  # 12M rows of one query in 100 KB
    started = time.monotonic()
    one_line(cli("eval", QRELS, run, timeout=60), 2, f"run.parquet: row 2: duplicate run entry for query '{QID}', "
                                                     "document 'd1' (the same as the entry before it)")
    monkeypatch.setattr(read_bounds, "available_memory", lambda: 1 << 30)  # rows of 160 bytes: 3,355,443 fit in half
    assert main(["eval", "--in-memory", str(QRELS), str(identical_rows(tmp_path / "big.parquet", 3_355_444))]) == 2
    assert capsys.readouterr().err == (
        f"ndcg-report: error: {tmp_path / 'big.parquet'}: 3,355,444 rows (its metadata says), more than the 3,355,443 "
        "read whole in half the available memory (512 MiB); evaluate it with `eval`, which streams a run this large "
        "in blocks, or give fewer rows\n")
    assert time.monotonic() - started < 30
