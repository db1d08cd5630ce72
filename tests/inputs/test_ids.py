"""Ids and names that are bad input (inputs/ids.py): control characters in an id refused at reading whatever
the format, and names and paths that are not UTF-8 refused with one line before any work."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ndcg_report.errors import InputError, ParameterError
from tests.helpers import BASELINE, BUILD, QRELS, RUN, SMALL, cli, installed, one_line, refused

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
FORGED_QID = "zz\nndcg_cut_10 \tall\t0.9999"
FORGED_DOCID = "new\tdoc\nq1\tFORGED"


def _write(path: Path, form: str, qid: str, docid: str) -> Path:
    """A run (or qrels, by form) of two lines whose second holds qid and docid, in the given format."""
    rows = [("q1", "d1", 2.0), (qid, docid, 1.0)]
    if form == "trec run":
        path.write_text("".join(f"{q} Q0 {d} {i} {s} t\n" for i, (q, d, s) in enumerate(rows, 1)))
    elif form == "trec qrels":
        path.write_text("".join(f"{q} 0 {d} {int(s)}\n" for q, d, s in rows))
    elif form == "beir tsv":
        path.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{int(s)}\n" for q, d, s in rows))
    elif form == "json":
        data: dict = {}
        for q, d, s in rows:
            data.setdefault(q, {})[d] = s
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False))
    elif form.startswith("jsonl"):
        path.write_text("".join(json.dumps({"qid": q, "docid": d, "score": s}, ensure_ascii=False) + "\n"
                                for q, d, s in rows))
    elif form.startswith("parquet"):
        table = pa.table({"qid": [q for q, _, _ in rows], "docid": [d for _, d, _ in rows],
                          "score": [s for _, _, s in rows]})
        if form == "parquet dictionary":
            table = table.set_column(0, "qid", table["qid"].dictionary_encode())
        pq.write_table(table, path)
    return path


FORMS = {"trec run": "run.txt", "trec qrels": "qrels.txt", "beir tsv": "qrels.tsv", "json": "run.json",
         "jsonl": "run.jsonl", "jsonl.gz": "run.jsonl", "parquet": "run.parquet", "parquet dictionary": "run.parquet"}
CHARACTERS = {"ESC": "\x1b", "DEL": "\x7f", "NEL": "\x85", "CSI": "\x9b", "LINE SEPARATOR": "\u2028",
              "PARAGRAPH SEPARATOR": "\u2029", "NUL-free C0": "\x01"}


def test_a_control_character_in_a_run_path_is_refused_before_building(tmp_path):
    run = tmp_path / "r\nun.txt"
    run.write_text(RUN.read_text())
    one_line(cli("build", "--run", run, "--baseline", BASELINE, "--qrels", QRELS, "--out", tmp_path / "out"), 2,
             "holds a control character (U+000A)")


@pytest.mark.parametrize("side", ["run", "qrels"])
@pytest.mark.parametrize("form", ["json", "jsonl", "jsonl retrieved", "jsonl streamed"])
def test_a_forged_qid_in_json_makes_eval_q_exit_2_printing_nothing(tmp_path, form, side):
    if form == "json":
        data = {FORGED_QID: {"d1": 1}, "q1": {"d1": 1, "d2": 0}}
        text = json.dumps(data, indent=1)
        line = 2
    elif form == "jsonl retrieved" and side == "run":
        text = json.dumps({"qid": "q1", "retrieved": ["d1", "d2"]}) + "\n" + json.dumps({"qid": FORGED_QID, "retrieved": ["d1"]}) + "\n"
        line = 2
    else:
        value = "score" if side == "run" else "rel"
        rows = [{"qid": "q1", "docid": "d1", value: 1}, {"qid": "q1", "docid": "d2", value: 0},
                {"qid": FORGED_QID, "docid": "d1", value: 1}]
        text = "".join(json.dumps(row) + "\n" for row in rows)
        line = 3
    bad = tmp_path / f"{side}.{'json' if form == 'json' else 'jsonl'}"
    bad.write_text(text)
    good = tmp_path / "other.txt"
    good.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n" if side == "qrels" else "q1 0 d1 1\nq1 0 d2 0\n")
    qrels, run = (good, bad) if side == "run" else (bad, good)
    stream = ["--stream"] if form == "jsonl streamed" else []
    refused(installed("eval", "-q", "-m", "ndcg_cut_10", *stream, qrels, run),
            f"{bad}:{line}: query id 'zz\\nndcg_cut_10 \\tall\\t0.9999' holds a control character (U+000A)",
            "remove the tabs, line ends and other control characters from the ids")


def test_a_docid_forging_a_pool_row_is_refused_and_nothing_written(tmp_path):
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"q1": {"d1": 2.0, FORGED_DOCID: 1.0}}))
    out = tmp_path / "pool.tsv"
    refused(installed("pool", SMALL / "qrels.txt", run, "--out", out),
            f"{run}:1: document id 'new\\tdoc\\nq1\\tFORGED' holds a control character (U+0009)")
    assert not out.exists() and sorted(os.listdir(tmp_path)) == ["run.json"]


@pytest.mark.parametrize("layout", ["fast path", "normalised"])
def test_an_escape_sequence_id_from_trec_text_is_refused_before_the_terminal(tmp_path, layout):
    separator = " " if layout == "fast path" else "\t"  # tabs send the file to the normalising reader
    run = tmp_path / "run.txt"
    run.write_text("".join(separator.join(fields) + "\n" for fields in (
        ("q1", "Q0", "d1", "1", "2.0", "t"), ("q1", "Q0", "\x1b]0;owned\x07", "2", "1.0", "t"))))
    refused(installed("eval", "-q", SMALL / "qrels.txt", run),
            f"{run}:2: document id '\\x1b]0;owned\\x07' holds a control character (U+001B)")


@pytest.mark.parametrize("column", ["qid", "docid"])
@pytest.mark.parametrize("character", CHARACTERS, ids=list(CHARACTERS))
@pytest.mark.parametrize("form", FORMS)
def test_a_control_character_in_an_id_is_refused_in_every_format(tmp_path, form, character, column):
    from ndcg_report.inputs.reading import read_qrels, read_run

    bad = f"x{CHARACTERS[character]}y"
    path = _write(tmp_path / FORMS[form], form, bad if column == "qid" else "q2", bad if column == "docid" else "d2")
    if form == "jsonl.gz":
        gzipped = path.with_suffix(".jsonl.gz")
        gzipped.write_bytes(gzip.compress(path.read_bytes()))
        path.unlink()
        path = gzipped
    line = {"beir tsv": 3, "json": 5 if column == "qid" else 6}.get(form, 2)  # json: the id's own line
    where = f"{path}:{line}: " if not form.startswith("parquet") else f"{path}: row 2: "
    what = "query id" if column == "qid" else "document id"
    with pytest.raises(InputError) as caught:
        (read_qrels if form in ("trec qrels", "beir tsv") else read_run)(path)
    message = str(caught.value)
    assert message.startswith(f"{where}{what} {bad!r} holds a control character (U+{ord(CHARACTERS[character]):04X})")
    assert "\n" not in message and "\x1b" not in message


@pytest.mark.parametrize("form", ["trec run", "jsonl", "parquet"])
def test_a_streamed_run_names_the_line_of_a_bad_id_in_a_later_block(tmp_path, form):
    from ndcg_report.inputs.reading import run_pieces

    rows = 5000
    path = tmp_path / FORMS[form]
    qids, docids = [f"q{i // 100}" for i in range(rows)], [f"d{i}" for i in range(rows)]
    docids[4321] = "d\u2028x"
    if form == "parquet":
        pq.write_table(pa.table({"qid": qids, "docid": docids, "score": [float(-i) for i in range(rows)]}), path,
                       row_group_size=1000)
    elif form == "jsonl":
        path.write_text("".join(json.dumps({"qid": q, "docid": d, "score": -i}) + "\n"
                                for i, (q, d) in enumerate(zip(qids, docids))))
    else:
        path.write_text("# a comment\n" + "".join(f"{q} Q0 {d} {i} {-i} t\n" for i, (q, d) in enumerate(zip(qids, docids))))
    with pytest.raises(InputError) as caught:
        for _ in run_pieces(path, 4096):
            pass
    where = {"parquet": f"{path}: row 4322: ", "jsonl": f"{path}:4322: ", "trec run": f"{path}:4323: "}[form]
    assert str(caught.value).startswith(where + "document id 'd\\u2028x' holds a control character (U+2028)")


@pytest.mark.parametrize("shape", ["dict", "ranked dict", "table", "dataframe"])
def test_python_data_with_a_control_character_in_an_id_is_refused(shape):
    import pandas as pd

    from ndcg_report import evaluate

    qrels = {"q1": {"d1": 1}}
    run = {"dict": {"q1": {"d1": 1.0, "d\x1bx": 0.5}}, "ranked dict": {"q1": ["d1", "d\x1bx"]},
           "table": pa.table({"qid": ["q1", "q1"], "docid": ["d1", "d\x1bx"], "score": [1.0, 0.5]}),
           "dataframe": pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d\x1bx"], "score": [1.0, 0.5]})}[shape]
    with pytest.raises(ParameterError, match=r"row 1: document id 'd\\x1bx' holds a control character \(U\+001B\)"):
        evaluate(run, qrels)


@pytest.mark.parametrize("form", ["tsv", "beir", "trec"])
def test_a_topic_id_with_a_control_character_is_refused(tmp_path, form):
    from ndcg_report.inputs.reading import read_topics

    path = tmp_path / ("topics.jsonl" if form == "beir" else "topics.txt")
    path.write_text({"tsv": "1\tfirst\n2\x1b[2J\tsecond\n",
                     "beir": '{"_id": "1", "text": "first"}\n{"_id": "2\\u001b[2J", "text": "second"}\n',
                     "trec": "<top>\n<num> Number: 1\n<title> first\n</top>\n<top>\n<num> Number: 2\x1b[2J\n"
                             "<title> second\n</top>\n"}[form])
    with pytest.raises(InputError, match=r":[25]: topic id '2\\x1b\[2J' holds a control character \(U\+001B\)"):
        read_topics(path)


def test_a_corpus_id_with_a_control_character_is_refused(tmp_path):
    from ndcg_report.inputs.corpus import iter_corpus

    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "a", "text": "x"}\n{"_id": "b\\u001bc", "text": "y"}\n')  # ESC: no white space
    with pytest.raises(InputError, match=r"corpus.jsonl:2: `_id` 'b\\x1bc' holds a control character \(U\+001B\)"):
        list(iter_corpus(path))


def test_ids_that_look_like_spreadsheet_formulas_round_trip_as_written(tmp_path):
    """The decision (docs/inputs.md): =, +, -, @ at an id's start are data, written as they are."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("=1+1 0 @d 1\n=1+1 0 -d 0\n")
    run.write_text("=1+1 Q0 +d 1 3.0 t\n=1+1 Q0 @d 2 2.0 t\n=1+1 Q0 -d 3 1.0 t\n")
    result = installed("eval", "-q", "-m", "P_1", qrels, run)
    assert result.returncode == 0, result.stderr
    assert "P_1                   \t=1+1\t0.0000\n" in result.stdout.decode()
    out = tmp_path / "pool.tsv"
    assert installed("pool", qrels, run, "--out", out).returncode == 0
    assert out.read_text().splitlines()[1].split("\t")[:2] == ["=1+1", "+d"]


def test_an_input_file_named_in_bytes_that_are_not_utf8_is_one_line(tmp_path):
    run = os.fsencode(tmp_path) + b"/run\xff.txt"
    Path(os.fsdecode(run)).write_bytes((SMALL / "monot5.txt").read_bytes())
    refused(installed("eval", SMALL / "qrels.txt", run), "run\\xff.txt'", "the file name holds bytes that are not UTF-8",
            "rename the file, or give a link to it with a UTF-8 name")
    out = tmp_path / "pool.tsv"
    refused(installed("pool", SMALL / "qrels.txt", run, "--out", out), "the file name holds bytes that are not UTF-8")
    assert not out.exists()


@pytest.mark.parametrize("command", ["eval", "pool", "build"])
def test_a_run_name_that_is_not_utf8_is_refused_before_any_work(tmp_path, command):
    named = b"n\xff=" + os.fsencode(SMALL / "monot5.txt")
    args = {"eval": ["eval", SMALL / "qrels.txt", named, SMALL / "bm25.txt"],
            "pool": ["pool", SMALL / "qrels.txt", named, "--out", tmp_path / "p.tsv"],
            "build": ["build", "--run", named, "--baseline", SMALL / "bm25.txt", "--qrels", SMALL / "qrels.txt",
                      "--out", tmp_path / "out"]}[command]
    refused(installed(*args), "b'n\\xff", "not UTF-8")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("option", ["--out", "--name"])
def test_a_build_option_that_is_not_utf8_is_refused_before_any_work(tmp_path, option):
    value = os.fsencode(tmp_path / "o") + b"\xff" if option == "--out" else b"title \xff"
    out = [] if option == "--out" else ["--out", tmp_path / "out"]
    refused(installed(*BUILD, option, value, *out), "\\xff", "holds bytes that are not UTF-8")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("invisible", ["\u202e", "\u200b", "\ufeff", "\u2066", "\u2060"])
def test_an_invisible_or_reordering_character_in_an_id_is_refused_naming_it(tmp_path, invisible):
    lines = (SMALL / "monot5.txt").read_text().splitlines()
    fields = lines[3].split()
    fields[2] = f"doc{invisible}1"
    lines[3] = " ".join(fields)
    run = tmp_path / "run.txt"
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = cli("eval", SMALL / "qrels.txt", run)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert f"run.txt:4: document id 'doc\\u{ord(invisible):04x}1' holds a control character (U+{ord(invisible):04X})" \
        in result.stderr


def test_a_byte_order_mark_that_starts_a_file_is_still_dropped_and_the_joiners_kept(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(b"\xef\xbb\xbf" + (SMALL / "qrels.txt").read_bytes())
    assert cli("eval", "-q", qrels, SMALL / "monot5.txt").stdout == cli("eval", "-q", SMALL / "qrels.txt",
                                                                         SMALL / "monot5.txt").stdout
    from ndcg_report.inputs.ids import control_character

    assert control_character("\u0645\u200c\u0646 \u200f\u05d0") is None  # ZWNJ and RLM: scripts need them
