"""Ids and names that are bad input, in every format and at the command line.

Control characters in an id are refused at reading whatever the format (one rule, inputs.ids); names and
paths that are not UTF-8, an --out through a looping link or too long for the file system, and a deleted
working folder are exit 2 with one line before any work; a file of blank lines is refused at once; a
repeated key in a JSON document is named with its line.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ndcg_report.errors import InputError, ParameterError

SHARE_KERNEL_FORKS = True  # its builds fork their kernels from the session's server (conftest.py)

SMALL = Path(__file__).parent / "data" / "small"
CORPUS = Path(__file__).parent / "data" / "corpus"
CONSOLE = Path(sys.executable).parent / "ndcg-report"
FORGED_QID = "zz\nndcg_cut_10 \tall\t0.9999"
FORGED_DOCID = "new\tdoc\nq1\tFORGED"
BUILD = ["build", "--run", str(SMALL / "monot5.txt"), "--baseline", str(SMALL / "bm25.txt"), "--qrels",
         str(SMALL / "qrels.txt")]


def cli(*args: str | bytes | Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The installed command (bytes arguments passed as they are: names that are not UTF-8)."""
    return subprocess.run([str(CONSOLE), *[arg if isinstance(arg, bytes) else str(arg) for arg in args]],
                          capture_output=True, cwd=cwd, check=False)


def refused(result: subprocess.CompletedProcess, *parts: str) -> str:
    """The one stderr line of an exit-2 refusal that printed nothing on stdout; each part in it."""
    err = result.stderr.decode("utf-8", "backslashreplace")
    assert result.returncode == 2, err
    assert result.stdout == b"", result.stdout
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for part in parts:
        assert part in err, err
    return err


# --- control characters in ids, every format ----------------------------------------------------------


@pytest.mark.parametrize("side", ["run", "qrels"])
@pytest.mark.parametrize("form", ["json", "jsonl", "jsonl retrieved", "jsonl streamed"])
def test_06_a_forged_qid_in_json_makes_eval_q_exit_2_printing_nothing(tmp_path, form, side):
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
    refused(cli("eval", "-q", "-m", "ndcg_cut_10", *stream, qrels, run),
            f"{bad}:{line}: query id 'zz\\nndcg_cut_10 \\tall\\t0.9999' holds a control character (U+000A)",
            "remove the tabs, line ends and other control characters from the ids")


def test_06_a_docid_forging_a_pool_row_is_refused_and_nothing_written(tmp_path):
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"q1": {"d1": 2.0, FORGED_DOCID: 1.0}}))
    out = tmp_path / "pool.tsv"
    refused(cli("pool", SMALL / "qrels.txt", run, "--out", out),
            f"{run}:1: document id 'new\\tdoc\\nq1\\tFORGED' holds a control character (U+0009)")
    assert not out.exists() and sorted(os.listdir(tmp_path)) == ["run.json"]


@pytest.mark.parametrize("layout", ["fast path", "normalised"])
def test_06_an_escape_sequence_id_from_trec_text_is_refused_before_the_terminal(tmp_path, layout):
    separator = " " if layout == "fast path" else "\t"  # tabs send the file to the normalising reader
    run = tmp_path / "run.txt"
    run.write_text("".join(separator.join(fields) + "\n" for fields in (
        ("q1", "Q0", "d1", "1", "2.0", "t"), ("q1", "Q0", "\x1b]0;owned\x07", "2", "1.0", "t"))))
    refused(cli("eval", "-q", SMALL / "qrels.txt", run),
            f"{run}:2: document id '\\x1b]0;owned\\x07' holds a control character (U+001B)")


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


@pytest.mark.parametrize("column", ["qid", "docid"])
@pytest.mark.parametrize("character", CHARACTERS, ids=list(CHARACTERS))
@pytest.mark.parametrize("form", FORMS)
def test_06_a_control_character_in_an_id_is_refused_in_every_format(tmp_path, form, character, column):
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
def test_06_a_streamed_run_names_the_line_of_a_bad_id_in_a_later_block(tmp_path, form):
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
def test_06_python_data_with_a_control_character_in_an_id_is_refused(shape):
    import pandas as pd

    from ndcg_report import evaluate

    qrels = {"q1": {"d1": 1}}
    run = {"dict": {"q1": {"d1": 1.0, "d\x1bx": 0.5}}, "ranked dict": {"q1": ["d1", "d\x1bx"]},
           "table": pa.table({"qid": ["q1", "q1"], "docid": ["d1", "d\x1bx"], "score": [1.0, 0.5]}),
           "dataframe": pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d\x1bx"], "score": [1.0, 0.5]})}[shape]
    with pytest.raises(ParameterError, match=r"row 1: document id 'd\\x1bx' holds a control character \(U\+001B\)"):
        evaluate(run, qrels)


@pytest.mark.parametrize("form", ["tsv", "beir", "trec"])
def test_06_a_topic_id_with_a_control_character_is_refused(tmp_path, form):
    from ndcg_report.inputs.reading import read_topics

    path = tmp_path / ("topics.jsonl" if form == "beir" else "topics.txt")
    path.write_text({"tsv": "1\tfirst\n2\x1b[2J\tsecond\n",
                     "beir": '{"_id": "1", "text": "first"}\n{"_id": "2\\u001b[2J", "text": "second"}\n',
                     "trec": "<top>\n<num> Number: 1\n<title> first\n</top>\n<top>\n<num> Number: 2\x1b[2J\n"
                             "<title> second\n</top>\n"}[form])
    with pytest.raises(InputError, match=r":[25]: topic id '2\\x1b\[2J' holds a control character \(U\+001B\)"):
        read_topics(path)


def test_06_a_corpus_id_with_a_control_character_is_refused(tmp_path):
    from ndcg_report.inputs.corpus import iter_corpus

    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "a", "text": "x"}\n{"_id": "b\\u001bc", "text": "y"}\n')  # ESC: no white space
    with pytest.raises(InputError, match=r"corpus.jsonl:2: `_id` 'b\\x1bc' holds a control character \(U\+001B\)"):
        list(iter_corpus(path))


def test_06_ids_that_look_like_spreadsheet_formulas_round_trip_as_written(tmp_path):
    """The decision (docs/inputs.md): =, +, -, @ at an id's start are data, written as they are."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("=1+1 0 @d 1\n=1+1 0 -d 0\n")
    run.write_text("=1+1 Q0 +d 1 3.0 t\n=1+1 Q0 @d 2 2.0 t\n=1+1 Q0 -d 3 1.0 t\n")
    result = cli("eval", "-q", "-m", "P_1", qrels, run)
    assert result.returncode == 0, result.stderr
    assert "P_1                   \t=1+1\t0.0000\n" in result.stdout.decode()
    out = tmp_path / "pool.tsv"
    assert cli("pool", qrels, run, "--out", out).returncode == 0
    assert out.read_text().splitlines()[1].split("\t")[:2] == ["=1+1", "+d"]


# --- names that are not UTF-8, --out that cannot be, a deleted working folder ----------------------------


def test_10_an_input_file_named_in_bytes_that_are_not_utf8_is_one_line(tmp_path):
    run = os.fsencode(tmp_path) + b"/run\xff.txt"
    Path(os.fsdecode(run)).write_bytes((SMALL / "monot5.txt").read_bytes())
    refused(cli("eval", SMALL / "qrels.txt", run), "run\\xff.txt'", "the file name holds bytes that are not UTF-8",
            "rename the file, or give a link to it with a UTF-8 name")
    out = tmp_path / "pool.tsv"
    refused(cli("pool", SMALL / "qrels.txt", run, "--out", out), "the file name holds bytes that are not UTF-8")
    assert not out.exists()


@pytest.mark.parametrize("command", ["eval", "pool", "build"])
def test_10_a_run_name_that_is_not_utf8_is_refused_before_any_work(tmp_path, command):
    named = b"n\xff=" + os.fsencode(SMALL / "monot5.txt")
    args = {"eval": ["eval", SMALL / "qrels.txt", named, SMALL / "bm25.txt"],
            "pool": ["pool", SMALL / "qrels.txt", named, "--out", tmp_path / "p.tsv"],
            "build": ["build", "--run", named, "--baseline", SMALL / "bm25.txt", "--qrels", SMALL / "qrels.txt",
                      "--out", tmp_path / "out"]}[command]
    refused(cli(*args), "b'n\\xff", "not UTF-8")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("option", ["--out", "--name"])
def test_10_a_build_option_that_is_not_utf8_is_refused_before_any_work(tmp_path, option):
    value = os.fsencode(tmp_path / "o") + b"\xff" if option == "--out" else b"title \xff"
    out = [] if option == "--out" else ["--out", tmp_path / "out"]
    refused(cli(*BUILD, option, value, *out), "\\xff", "holds bytes that are not UTF-8")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("where", ["link", "inside the link"])
def test_10_a_build_out_through_a_looping_link_is_one_line(tmp_path, where):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    out = tmp_path / "a" if where == "link" else tmp_path / "a" / "report"
    refused(cli(*BUILD, "--out", out), f"--out {out} leads through a link that loops")
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]
    assert os.readlink(tmp_path / "a") == str(tmp_path / "b")


@pytest.mark.parametrize("command", ["eval", "build", "batch"])
def test_10_a_deleted_working_folder_is_one_line_before_any_work(tmp_path, command):
    gone = tmp_path / "gone"
    gone.mkdir()
    config = tmp_path / "c.yml"
    config.write_text(f"output: {tmp_path / 'site'}\nreports:\n  - {{name: a, run: {SMALL / 'monot5.txt'}, "
                      f"baseline: {SMALL / 'bm25.txt'}, qrels: {SMALL / 'qrels.txt'}}}\n")
    args = {"eval": ["eval", SMALL / "qrels.txt", SMALL / "monot5.txt"], "build": [*BUILD, "--out", tmp_path / "out"],
            "batch": ["batch", config]}[command]
    script = "import os, subprocess, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); os.execv(sys.argv[2], sys.argv[2:])"
    result = subprocess.run([sys.executable, "-c", script, str(gone), str(CONSOLE), *map(str, args)],
                            capture_output=True, check=False)
    refused(result, "the working folder was deleted: cd to an existing folder")
    assert sorted(os.listdir(tmp_path)) == ["c.yml"]


@pytest.mark.parametrize("length", ["name", "path"])
def test_10_a_build_out_too_long_for_the_file_system_is_one_line_before_any_work(tmp_path, length):
    if length == "name":
        out = tmp_path / ("r" * 250)
        expected = "the file system takes 255 at most"
    else:
        out = tmp_path.joinpath(*["p" * 150] * 28)
        expected = "the file system takes paths of 4,096 bytes at most"
    refused(cli(*BUILD, "--out", out), f"--out {str(out)[:80]}", expected)
    assert os.listdir(tmp_path) == []


# --- one title check, looping --out links, blank files, repeated JSON keys --------------------------------


@pytest.mark.parametrize("character", ["\x1b", "\x85"])
def test_11_build_name_and_a_batch_title_share_one_check(tmp_path, character):
    from ndcg_report.batch.config import load_config

    title = f"a{character}b"
    err = refused(cli(*BUILD, "--name", title, "--out", tmp_path / "out"),
                  f"the title {title!r} holds a control character (U+{ord(character):04X})")
    assert not (tmp_path / "out").exists()
    (tmp_path / "c.yml").write_text(json.dumps({"output": "site", "reports": [
        {"name": "a", "run": "r.txt", "baseline": "b.txt", "qrels": "q.txt", "title": title}]}))
    with pytest.raises(ParameterError) as caught:
        load_config(tmp_path / "c.yml")
    batch = str(caught.value)
    assert batch[batch.rindex("the title "):] in err


@pytest.mark.parametrize("command", ["pool", "bm25"])
def test_11_pool_and_bm25_out_onto_a_looping_link_leave_the_link(tmp_path, command):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    args = (["pool", SMALL / "qrels.txt", SMALL / "monot5.txt"] if command == "pool" else
            ["bm25", "--corpus", CORPUS / "tiny.jsonl", "--topics", CORPUS / "tiny_topics.tsv",
             "--cache-dir", tmp_path / "cache"])
    refused(cli(*args, "--out", tmp_path / "a"), f"--out {tmp_path / 'a'} leads through a link that loops")
    assert os.readlink(tmp_path / "a") == str(tmp_path / "b") and os.readlink(tmp_path / "b") == str(tmp_path / "a")
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]


class _NoRegex:
    """Stands for the `re` module of the TREC normaliser: any regex run over the text fails the test."""

    def sub(self, *args, **kwargs):
        raise AssertionError("blank text went through the regexes")


@pytest.mark.parametrize("suffix", [".txt.gz", ".jsonl.gz"])
def test_11_a_gzip_of_blank_lines_is_refused_as_empty_without_parsing_a_line(tmp_path, monkeypatch, suffix):
    from ndcg_report.inputs.formats import json_lines, trec_parsing
    from ndcg_report.inputs.reading import read_run

    path = tmp_path / f"run{suffix}"
    path.write_bytes(gzip.compress(b"\n" * (16 << 20) + b" \r\n\t\n" * 1000, 9))
    monkeypatch.setattr(trec_parsing, "re", _NoRegex())
    for reader in ("_fast", "_slow"):
        monkeypatch.setattr(json_lines, reader, lambda *args: pytest.fail("a blank piece was parsed"))
    with pytest.raises(InputError, match=r"empty run file"):
        read_run(path)


def test_11_line_pieces_skip_blank_pieces_and_keep_counting_lines():
    from ndcg_report.inputs.access.text_files import line_pieces

    text = b"\n" * 10 + b" \t\n" * 5 + b"x\n" + b"\n" * 10 + b"y\n"
    assert list(line_pieces(io.BytesIO(text), 4)) == [(b"x\n\n\n", 15), (b"y\n", 26)]  # x on line 16, y on 27


def test_11_a_256_kb_gzip_of_blank_json_lines_is_refused_in_seconds(tmp_path):
    import time

    path = tmp_path / "run.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=9) as handle:  # 256 MiB of text in 256 KB: 15 s before, 1 s now
        for _ in range(16):
            handle.write(b"\n" * (16 << 20))
    started = time.monotonic()
    refused(cli("eval", SMALL / "qrels.txt", path), "empty run file")
    assert time.monotonic() - started < 6


@pytest.mark.parametrize(("text", "line", "key"), [
    ('{\n "q1": {"d1": 1, "d2": 0},\n "q2": {"d1": 1,\n   "d1": 2},\n "q3": {"d1": 0}\n}\n', 4, "d1"),
    ('{\n "q1": {"d1": 1},\n "q2": {"d1": 1},\n "q1": {"d3": 2}\n}\n', 4, "q1"),
    ('{"q1": {"d1": 1},\n "q2": {"d\\u00e9": 1,\n "d\u00e9": 0}}', 3, "d\u00e9"),
])
def test_11_a_repeated_key_in_a_json_document_is_named_with_its_line(tmp_path, text, line, key):
    from ndcg_report.inputs.reading import read_qrels

    path = tmp_path / "qrels.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_qrels(path)
    assert str(caught.value) == f"{path}:{line}: key {json.dumps(key, ensure_ascii=False)} given twice in one object; give each key once"
