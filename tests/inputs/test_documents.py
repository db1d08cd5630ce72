"""Documents shown beside a drill-down (inputs/documents.py): a line past the limit is read in bounded
memory, its text not shown, and the lines after it read."""

from __future__ import annotations

import gzip
import json
import time

from tests.helpers import MAX_LINE
from tests.inputs.test_reading_limits import gzip_of_repeats, peak_python_memory


def test_a_document_line_past_the_limit_is_read_in_bounded_memory(tmp_path):
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


def test_a_json_document_line_past_the_limit_shows_no_text_and_the_rest_is_read(tmp_path):
    from ndcg_report.inputs.documents import document_texts

    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"_id": "big", "text": "y" * 3000}) + "\n" + json.dumps({"_id": "d1", "text": "one"}) + "\n")
    assert document_texts(docs, {"big", "d1"}, max_line=1000) == {"d1": "one"}
    assert document_texts(docs, {"big", "d1"}) == {"big": "y" * 400, "d1": "one"}


def test_a_documents_file_in_another_encoding_is_refused_before_the_build_naming_its_line(tmp_path):
    from tests.helpers import SMALL, cli, one_line

    docs = tmp_path / "docs.tsv"
    docs.write_bytes("d1\tcaf\u00e9 au lait\n".encode("utf-8") + "d2\tcaf\u00e9 cr\u00e8me\n".encode("latin-1"))
    out = tmp_path / "out"
    result = cli("build", "--run", SMALL / "monot5.txt", "--qrels", SMALL / "qrels.txt", "--baseline",
                 SMALL / "bm25.txt", "--docs", docs, "--out", out)
    one_line(result, 2, f"{docs}:2: not valid UTF-8 text")
    assert not out.exists()
