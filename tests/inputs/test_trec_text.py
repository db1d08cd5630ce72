"""TREC text read in chunks (inputs/formats/trec_text.py): a bad line deep in a file and a line past the
limit are named with their line."""

from __future__ import annotations

import pytest

from ndcg_report import InputError
from ndcg_report.inputs.formats import trec_text
from ndcg_report.inputs.reading import read_run


def test_a_bad_line_deep_in_a_file_is_found_reading_it_in_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(trec_text, "_CHUNK_BYTES", 1000)  # many chunks, lines cut across them
    lines = [f"q{i // 10}\tQ0\td{i}\t{i}\t{-i}\tt" for i in range(5000)]  # tabs: not the fast path
    lines[4321] = "q1 Q0 dx 1 oops t"
    path = tmp_path / "run.txt"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    with pytest.raises(InputError, match=r"run.txt:4322: score 'oops' is not a number"):
        read_run(path)
    lines[4321] = "q1 Q0 dx 1 1.0 t"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    run = read_run(path)
    assert run.table.num_rows == 5000 and run.table["docid"][4999].as_py() == "d4999"


def test_a_line_past_the_limit_names_its_line(tmp_path, monkeypatch):
    monkeypatch.setattr(trec_text, "_MAX_BLOCK", 1 << 16)
    monkeypatch.setattr(trec_text, "_CHUNK_BYTES", 1 << 12)
    path = tmp_path / "run"
    path.write_text("\tq1 Q0 d1 1 3.0 t\nq1 Q0 " + "D" * (1 << 17) + " 2 2.0 t\n")
    with pytest.raises(InputError, match=r"run:2: a line longer than"):
        read_run(path)
