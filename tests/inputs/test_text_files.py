"""Text files read a line at a time (inputs/access/text_files.py): blank lines skipped without parsing, a
line past MAX_LINE refused at once."""

from __future__ import annotations

import gzip
import io
import json
import time

import pytest

from ndcg_report.errors import InputError
from tests.helpers import MAX_LINE, QID, QRELS, SMALL, cli, installed, one_line, refused


class _NoRegex:
    """Stands for the `re` module of the TREC normaliser: any regex run over the text fails the test."""

    def sub(self, *args, **kwargs):
        raise AssertionError("blank text went through the regexes")


@pytest.mark.parametrize("suffix", [".txt.gz", ".jsonl.gz"])
def test_a_gzip_of_blank_lines_is_refused_as_empty_without_parsing_a_line(tmp_path, monkeypatch, suffix):
    from ndcg_report.inputs.formats import json_lines, trec_parsing
    from ndcg_report.inputs.reading import read_run

    path = tmp_path / f"run{suffix}"
    path.write_bytes(gzip.compress(b"\n" * (16 << 20) + b" \r\n\t\n" * 1000, 9))
    monkeypatch.setattr(trec_parsing, "re", _NoRegex())
    for reader in ("_fast", "_slow"):
        monkeypatch.setattr(json_lines, reader, lambda *args: pytest.fail("a blank piece was parsed"))
    with pytest.raises(InputError, match=r"empty run file"):
        read_run(path)


def test_line_pieces_skip_blank_pieces_and_keep_counting_lines():
    from ndcg_report.inputs.access.text_files import line_pieces

    text = b"\n" * 10 + b" \t\n" * 5 + b"x\n" + b"\n" * 10 + b"y\n"
    assert list(line_pieces(io.BytesIO(text), 4)) == [(b"x\n\n\n", 15), (b"y\n", 26)]  # x on line 16, y on 27


def test_a_256_kb_gzip_of_blank_json_lines_is_refused_in_seconds(tmp_path):
    import time

    path = tmp_path / "run.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=9) as handle:  # 256 MiB of text in 256 KB: 15 s before, 1 s now
        for _ in range(16):
            handle.write(b"\n" * (16 << 20))
    started = time.monotonic()
    refused(installed("eval", SMALL / "qrels.txt", path), "empty run file")
    assert time.monotonic() - started < 6


def test_a_json_lines_run_with_a_line_past_the_limit_is_one_line_at_once(tmp_path):
    run = tmp_path / "run.jsonl"
    with run.open("w") as handle:  # whole-number ids: the Python reading, 40 times the line in objects
        handle.write(json.dumps({"qid": QID, "retrieved": [1]}) + "\n")
        handle.write(f'{{"qid": "other", "retrieved": [{", ".join(map(str, range(10 ** 6, 10 ** 6 + (MAX_LINE // 9))))}]}}\n')
    started = time.monotonic()
    one_line(cli("eval", QRELS, run), 2, f"run.jsonl:2: a line longer than {MAX_LINE >> 20} MiB")
    assert time.monotonic() - started < 5
