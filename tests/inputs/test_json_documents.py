"""JSON documents (inputs/formats/json_documents.py): decoded a query at a time, a repeated key named with
its line, a document past MAX_DOCUMENT refused before it is held."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ndcg_report.errors import InputError
from tests.inputs.test_reading_limits import peak_python_memory


def json_run(path: Path, queries: int, documents: int) -> Path:
    run = {f"q{q}": {f"d{q}-{d}": float(documents - d) for d in range(documents)} for q in range(queries)}
    path.write_text(json.dumps(run))
    return path


@pytest.mark.parametrize(("text", "line", "key"), [
    ('{\n "q1": {"d1": 1, "d2": 0},\n "q2": {"d1": 1,\n   "d1": 2},\n "q3": {"d1": 0}\n}\n', 4, "d1"),
    ('{\n "q1": {"d1": 1},\n "q2": {"d1": 1},\n "q1": {"d3": 2}\n}\n', 4, "q1"),
    ('{"q1": {"d1": 1},\n "q2": {"d\\u00e9": 1,\n "d\u00e9": 0}}', 3, "d\u00e9"),
])
def test_a_repeated_key_in_a_json_document_is_named_with_its_line(tmp_path, text, line, key):
    from ndcg_report.inputs.reading import read_qrels

    path = tmp_path / "qrels.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_qrels(path)
    assert str(caught.value) == f"{path}:{line}: key {json.dumps(key, ensure_ascii=False)} given twice in one object; give each key once"


def test_a_json_document_is_decoded_a_query_at_a_time_with_the_same_table(tmp_path):
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


def test_a_repeated_query_of_a_json_document_names_its_line(tmp_path):
    from ndcg_report.inputs.formats.json_documents import read_json_document

    path = tmp_path / "run.json"
    path.write_text('{\n"q1": {"d1": 1},\n"q2": {"d1": 1},\n"q1": {"d2": 1}\n}\n')
    with pytest.raises(InputError, match=r"run.json:4: key \"q1\" given twice in one object"):
        read_json_document(path, "run", batch_rows=1)


def test_a_json_document_past_its_limit_is_refused_before_it_is_held(tmp_path, monkeypatch):
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
