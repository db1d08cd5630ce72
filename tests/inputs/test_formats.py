"""Runs, qrels and topics in every accepted format (TREC text, BEIR TSV, JSON, JSON lines, Parquet;
Python dicts, ranked lists, ranx and ir_measures shapes): each read, each bad-input class of design
section 2 as one line naming file and line, and the same data giving byte-identical `eval -q` output
in every format."""

from __future__ import annotations

import gzip
import json
import math
from collections import namedtuple
from importlib import resources
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndcg_report import InputError, ParameterError, compare_runs, evaluate, read_qrels, read_run, read_topics
from ndcg_report.cli import main
from ndcg_report.core.output_formats import trec_chunks
from ndcg_report.core.streaming import evaluate_streaming

DL19 = Path(str(resources.files("ndcg_report") / "data" / "dl19-passage"))
QRELS, MONOT5 = DL19 / "qrels.dl19-passage.txt", DL19 / "monot5.dl19.run.gz"

# The seed's worked example: grades [3, 2, 3, 0, 1] in ranked order, IDCG from the same grades: NDCG@5 0.972.
GRADES = {"d1": 3, "d2": 2, "d3": 3, "d4": 0, "d5": 1}
RANKING = ["d1", "d2", "d3", "d4", "d5"]


def write(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def jsonl(*records: object) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def eval_output(capfdbinary, *args: str | Path) -> tuple[int, bytes, str]:
    """`ndcg-report eval ...` run in this process: (exit code, stdout bytes, stderr)."""
    code = main(["eval", *map(str, args)])
    captured = capfdbinary.readouterr()
    return code, captured.out, captured.err.decode()


# --- every format read: the seed's worked example ---------------------------------------------------

QRELS_FORMATS = {
    "trec.txt": "".join(f"q1 0 {d} {g}\n" for d, g in GRADES.items()),
    "beir.tsv": "query-id\tcorpus-id\tscore\n" + "".join(f"q1\t{d}\t{g}\n" for d, g in GRADES.items()),
    "dict.json": json.dumps({"q1": GRADES}, indent=2),
    "lines.jsonl": jsonl(*({"qid": "q1", "docid": d, "rel": g} for d, g in GRADES.items())),
    "aliases.jsonl": jsonl({"query_id": "q1", "doc_id": "d1", "relevance": 3},
                           {"query-id": "q1", "corpus-id": "d2", "score": 2},
                           *({"qid": "q1", "docid": d, "rel": g} for d, g in list(GRADES.items())[2:])),
    "grades.jsonl": jsonl({"qid": "q1", "grades": GRADES}),
    "grades.jsonl.gz": gzip.compress(jsonl({"qid": "q1", "grades": GRADES}).encode()),
    "no-extension": jsonl({"qid": "q1", "grades": GRADES}),
}
RUN_FORMATS = {
    "trec.run": "".join(f"q1 Q0 {d} {i} {10 - i} t\n" for i, d in enumerate(RANKING, start=1)),
    "dict.json": json.dumps({"q1": {d: 10.0 - i for i, d in enumerate(RANKING)}}),
    "ranked.json": json.dumps({"q1": RANKING}),
    "ranked.jsonl": jsonl({"qid": "q1", "retrieved": RANKING, "query": "ignored"}),
    "docs.jsonl": jsonl({"qid": "q1", "docs": [{"docid": d, "score": 5 - i} for i, d in enumerate(RANKING)]}),
    "flat.jsonl.gz": gzip.compress(jsonl(*({"qid": "q1", "docid": d, "score": -i} for i, d in enumerate(RANKING)))
                                   .encode()),
    "no-extension": jsonl({"qid": "q1", "retrieved": RANKING}),
}


@pytest.mark.parametrize("qrels_name", QRELS_FORMATS)
@pytest.mark.parametrize("run_name", RUN_FORMATS)
def test_the_seed_example_reads_the_same_in_every_format(tmp_path, run_name, qrels_name):
    run = write(tmp_path / f"run-{run_name}", RUN_FORMATS[run_name])
    qrels = write(tmp_path / f"qrels-{qrels_name}", QRELS_FORMATS[qrels_name])
    evaluation = evaluate(run, qrels, cutoffs=[5])
    assert evaluation.dcg[0, 0] == pytest.approx(6.149, abs=1e-3)
    assert evaluation.idcg[0, 0] == pytest.approx(6.324, abs=1e-3)
    assert round(evaluation.mean(5), 3) == 0.972


def test_parquet_runs_without_score_are_ranked_by_rank(tmp_path):
    pq.write_table(pa.table({"qid": ["q1"] * 5, "docid": RANKING[::-1], "rank": [5, 4, 3, 2, 1]}), tmp_path / "r.parquet")
    run = read_run(tmp_path / "r.parquet")
    assert dict(zip(run.table["docid"].to_pylist(), run.table["score"].to_pylist()))["d1"] == -1.0
    assert round(evaluate(run, {"q1": GRADES}, cutoffs=[5]).mean(5), 3) == 0.972


def test_python_shapes_of_pytrec_eval_ranx_and_ir_measures():
    ranked = {"q1": RANKING}
    scored = {"q1": {d: 1.0 / (i + 1) for i, d in enumerate(RANKING)}}
    ScoredDoc = namedtuple("ScoredDoc", "query_id doc_id score")
    Qrel = namedtuple("Qrel", "query_id doc_id relevance iteration")
    FakeRanxRun = type("Run", (), {"__module__": "ranx.data_structures.run", "name": "bm25-ranx",
                                   "to_dict": lambda self: scored})
    for run in (ranked, scored, [ScoredDoc("q1", d, 5 - i) for i, d in enumerate(RANKING)], FakeRanxRun()):
        for qrels in ({"q1": GRADES}, [Qrel("q1", d, g, "0") for d, g in GRADES.items()]):
            assert round(evaluate(run, qrels, cutoffs=[5]).mean(5), 3) == 0.972
    experiment = compare_runs(ranked, {"q1": GRADES, "q2": {"x": 1}}, baseline=FakeRanxRun(), cutoffs="5",
                              n_resamples=10)
    assert experiment.names == ("run 1",) and experiment.baseline_name == "bm25-ranx"
    named = compare_runs({"mine": ranked, "theirs": scored}, {"q1": GRADES}, baseline=scored, cutoffs="5",
                         n_resamples=10)
    assert named.names == ("mine", "theirs")


@pytest.mark.parametrize("run, message", [
    ({"q1": {"d1": None}}, r"^the run at query 'q1' document 'd1': score is null, not a number"),
    ({"q1": {"d1": "1.5"}}, r"query 'q1' document 'd1': score is a string \(\"1.5\"\), not a number"),
    ({"q1": {"d1": math.nan}}, r"query 'q1' document 'd1': score is nan \(NaN or infinite\)"),
    ({"q1": {"d1": True}}, r"query 'q1' document 'd1': score is a boolean"),
    ({"q1": ["d1", "d2", "d1"]}, r"query 'q1' document 'd1': listed twice in the ranked list \(at 1 and 3\)"),
    ({"q1": "d1 d2"}, r"query 'q1': a string where a mapping \{docid: score\} or a ranked list"),
    ({"q1": [None]}, r"query 'q1': item 1 of the ranked list: docid is null"),
    ({"": {"d1": 1}}, r"qid is empty"),
    ({"q1": {}}, r"no documents in any query"),
    ({"q1": {"d1": 10**400}}, r"query 'q1' document 'd1': score is an integer too large for a float"),
])
def test_python_data_errors_name_the_query_and_document(run, message):
    with pytest.raises(ParameterError, match=message):
        evaluate(run, {"q1": GRADES})


def test_qrels_given_as_a_list_of_grades_is_refused():
    with pytest.raises(ParameterError, match=r"query 'q1': a list where a mapping \{docid: grade\} belongs"):
        evaluate({"q1": RANKING}, {"q1": [3, 2, 3]})


# --- topics --------------------------------------------------------------------------------------------


def test_topics_as_beir_queries_and_trec_topic_files(tmp_path):
    beir = write(tmp_path / "queries.jsonl", jsonl({"_id": "q1", "text": "what is ndcg", "metadata": {}},
                                                   {"_id": 2, "text": " second "}))
    assert read_topics(beir).to_dict() == {"q1": "what is ndcg", "2": "second"}
    trec = write(tmp_path / "topics.301-302.txt", "<top>\n<num> Number: 301\n<title> International Organized Crime\n\n"
                 "<desc> Description:\nIdentify organizations\n</top>\n\n<top>\n<num> 302 <title> Topic: poliomyelitis "
                 "and post-polio\n<narr> Narrative:\nx\n</top>\n")
    assert read_topics(trec).to_dict() == {"301": "International Organized Crime", "302": "poliomyelitis and post-polio"}
    for text, message in [
        (jsonl({"_id": "q1"}), r"queries.jsonl:1: no `text`"),
        (jsonl({"_id": "q1", "text": "a"}, {"_id": "q1", "text": "b"}), r"queries.jsonl:2: topic 'q1' already given on line 1"),
        ('{"_id": "q1", "text": "a"}\n[1]\n', r"queries.jsonl:2: a JSON value that is not an object"),
        ('{"_id": null, "text": "a"}\n', r"queries.jsonl:1: _id is null, not a string"),
        ('{"_id": "q1", "text": ' + "[" * 100_000 + "]" * 100_000 + "}\n", r"queries.jsonl:1: not valid JSON \(nested too"),
    ]:
        with pytest.raises(InputError, match=message):
            read_topics(write(tmp_path / "queries.jsonl", text))


# --- bad input: one line naming the file and the line, for every class and format ----------------------

BAD = [
    # (file name, content, kind, message)
    ("q.jsonl", '{"qid": "q1", "docid": "d1", "rel": "2"}\n', "qrels", r"q.jsonl:1: relevance label is a string"),
    ("q.jsonl", '{"qid": "q1", "docid": "d1", "rel": 1}\n{"qid": "q1", "docid": null, "rel": 1}\n', "qrels",
     r"q.jsonl:2: docid is null, not a string"),
    ("q.jsonl", '{"qid": "q1", "docid": "d1", "rel": NaN}\n', "qrels", r"q.jsonl:1: relevance label is nan"),
    ("q.jsonl", '{"qid": "q1", "docid": "d1", "rel": 1}\n\n{"qid": "q1", "docid": "d1", "rel": 2}\n', "qrels",
     r"q.jsonl:3: duplicate qrels entry for query 'q1', document 'd1' \(first on line 1\)"),
    ("q.jsonl", "\n\n", "qrels", r"q.jsonl: empty qrels file"),
    ("q.jsonl", '{"qid": "q1", "rel": 1}\n', "qrels", r"q.jsonl:1: has no document id \(docid or doc_id"),
    ("q.jsonl", '{"qid": "q1", "grades": [["d1", 1]]}\n', "qrels", r"q.jsonl:1: 'grades' is a list, where an object"),
    ("q.jsonl", '{"qid": "q1", "grades": {"d1": 1, "d1": 2}}\n', "qrels", r"q.jsonl:1: key \"d1\" given twice"),
    ("q.jsonl", b'{"qid": "q\xff1", "docid": "d1", "rel": 1}\n', "qrels", r"q.jsonl:1: not valid UTF-8 text"),
    ("q.jsonl", '{"qid": "q1", "docid": "d1", "rel": 1} {"qid": "q2"}\n', "qrels",
     r"q.jsonl:1: not valid JSON \(more than one JSON value on the line"),
    ("q.jsonl", '[{"qid": "q1", "docid": "d1", "rel": 1}]\n', "qrels", r"q.jsonl:1: a JSON list where an object"),
    ("q.json", '{"q1": {"d1": 1}, "q2": [1, 2]}', "qrels", r"q.json:1: query 'q2': a list where a mapping"),
    ("q.json", '{\n "q1": {\n  "d1": 1,\n  "d2": null\n }\n}', "qrels",
     r"q.json:4: query 'q1', document 'd2': relevance label is null"),
    ("q.json", '{"q1": {"d1": 1}, "q1": {"d2": 1}}', "qrels", r"q.json:1: key \"q1\" given twice"),
    ("q.json", '[{"q1": {"d1": 1}}]', "qrels", r"q.json: a list where a mapping \{qid: \{docid: grade\}\} belongs"),
    ("q.json", '{"q1": {"d1": 1}}\n{"q2": {"d1": 1}}\n', "qrels", r"q.json:2: more than one JSON value \(JSON lines\?\)"),
    ("q.json", '{"q1": {"d1": 1e400}}', "qrels", r"q.json:1: query 'q1', document 'd1': relevance label is inf"),
    ("q.json", "{}", "qrels", r"q.json: no judgments in any query"),
    ("q.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\n", "qrels", r"q.tsv:3: expected 3 columns"),
    ("q.tsv", "query-id\tcorpus-id\tscore\nq1\td1\tone\n", "qrels", r"q.tsv:2: score 'one' is not a number"),
    ("q.tsv", "query-id\tcorpus-id\tscore\nq1\td1\tnan\n", "qrels", r"q.tsv:2: relevance label is nan"),
    ("q.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\n\nq1\td1\t2\n", "qrels",
     r"q.tsv:4: duplicate qrels entry for query 'q1', document 'd1' \(first on line 2\)"),
    ("q.tsv", "query-id\tcorpus-id\tscore\n", "qrels", r"q.tsv: no judgments after the BEIR header"),
    ("r.jsonl", '{"qid": "q1", "retrieved": ["d1", "d2"]}\n{"qid": "q1", "retrieved": ["d3"]}\n', "run",
     r"r.jsonl:2: query 'q1' was already given on line 1; give each query on one line"),
    ("r.jsonl", '{"qid": "q1", "retrieved": ["d1", "d2", "d1"]}\n', "run",
     r"r.jsonl:1: duplicate run entry for query 'q1', document 'd1'"),
    ("r.jsonl", '{"qid": "q1", "retrieved": {"d1": 1}}\n', "run", r"r.jsonl:1: 'retrieved' is an object, where a list"),
    ("r.jsonl", '{"qid": "q1", "retrieved": ["d1"]}\n{"qid": "q2", "docs": []}\n', "run",
     r"r.jsonl:2: a record of the 'docs' form, but line 1 is of the 'retrieved' form"),
    ("r.jsonl", '{"qid": "q1", "docs": [{"docid": "d1", "score": 1}, {"docid": "d2"}]}\n', "run",
     r"r.jsonl:1: document 2 of the list has no score"),
    ("r.jsonl", '{"qid": "q1", "docs": [{"docid": "d1", "score": Infinity}]}\n', "run",
     r"r.jsonl:1: document 1 of the list: score is inf"),
    ("r.jsonl", '{"qid": 1.5, "retrieved": ["d1"]}\n', "run", r"r.jsonl:1: qid is a number \(1.5\), not a string"),
    ("r.jsonl", '{"qid": "q1", "query_id": "q2", "retrieved": ["d1"]}\n', "run", r"r.jsonl:1: has both 'qid' and 'query_id'"),
    ("r.jsonl", '{"qid": "q1", "grades": {"d1": 1}}\n', "run", r"r.jsonl:1: has 'grades', which a run does not take"),
    ("r.json", '{"q1": {"d1": 1.0, "d2": "x"}}', "run", r"r.json:1: query 'q1', document 'd2': score is a string"),
    ("r.json", '{"q1": ["d1", "d1"]}', "run", r"r.json:1: query 'q1', document 'd1': listed twice in the ranked list"),
    ("r.json", "\xef\xbb\xbf".encode("latin-1") + '{"q1": {"d1": "1"}}'.encode(), "run", r"r.json:1: query 'q1'"),
    ("r.json", "\ufeff".encode("utf-16") + b"x", "run", r"r.json:1: file is UTF-16 encoded"),
    # nested past Python's recursion limit: bad JSON like any other, not an internal error (found this stop)
    ("q.json", "[" * 100_000 + "]" * 100_000, "qrels", r"q.json:1: not valid JSON \(nested too deeply"),
    ("r.jsonl", '{"qid": "q1", "retrieved": ' + "[" * 100_000 + "]" * 100_000 + "}\n", "run",
     r"r.jsonl:1: not valid JSON \(nested too deeply"),
    # integers past a float, or past the digits Python converts: bad input, not an internal error (this stop)
    ("q.json", '{"q1": {"d1": 1' + "0" * 400 + "}}", "qrels",
     r"q.json:1: query 'q1', document 'd1': relevance label is an integer too large for a float"),
    ("r.jsonl", '{"qid": "q1", "docid": "d1", "score": 1' + "0" * 400 + "}\n", "run",
     r"r.jsonl:1: score is an integer too large for a float"),
    ("r.jsonl", '{"qid": "q1", "docid": "d1", "score": 1' + "0" * 5000 + "}\n", "run",
     r"r.jsonl:1: not valid JSON \(a number of more than 4,300 digits"),
]


# --- a likely mistake is named with its fix ---------------------------------------------

HINTED = [
    # a JSON-lines key close to an accepted one: the close keys, then every accepted key
    ("r.jsonl", '{"qid": "q1", "docids": [{"docid": "d1", "score": 1}]}\n', "run",
     r"r.jsonl:1: has no document id .*; 'docids' is not an accepted key \(did you mean 'docid' or 'doc_id' or 'docs'\?\); "
     r"the accepted keys: qid or query_id or query-id; docid or doc_id or corpus-id or docno; score; retrieved or docs$"),
    ("r.jsonl", '{"qid": "q1", "docid": "d1", "scores": 1}\n', "run",
     r"r.jsonl:1: has no score .*'scores' is not an accepted key \(did you mean 'score'\?\)"),
    ("r.jsonl", '{"qid": "q1", "retrieve": ["d1"]}\n', "run",
     r"r.jsonl:1: .*'retrieve' is not an accepted key \(did you mean 'retrieved'\?\)"),
    ("r.jsonl", '{"qid": "q1", "docs": [{"docid": "d1", "scor": 1}]}\n', "run",
     r"r.jsonl:1: document 1 of the list has no score; 'scor' is not an accepted key \(did you mean 'score'\?\); "
     r"the accepted keys: docid or doc_id or corpus-id or docno; score$"),
    ("q.jsonl", '{"qid": "q1", "grade": {"d1": 1}}\n', "qrels",
     r"q.jsonl:1: .*'grade' is not an accepted key \(did you mean 'grades'\?\).*rel or relevance or score or label; grades$"),
    # a key far from every accepted one: no guess, as before
    ("r.jsonl", '{"qid": "q1", "zzz": 1}\n', "run", r"r.jsonl:1: has no document id .*; give every record its document id$"),
    # BEIR TSV without its header line
    ("q.tsv", "q1\td1\t1\nq1\td2\t0\n", "qrels",
     r"q.tsv:1: expected 4 columns \(qid iter docid rel\), found 3: this looks like BEIR TSV qrels without their header "
     r"line; add the header `query-id<TAB>corpus-id<TAB>score` as the first line"),
    # a run read as qrels and qrels read as a run (the API's fix: the order is the caller's)
    ("q.txt", "q1 Q0 d1 1 2.5 t\n", "qrels",
     r"q.txt:1: expected 4 columns \(qid iter docid rel\), found 6: this looks like a run \(qid Q0 docid rank score tag\), "
     r"not qrels; check that the run and the qrels are not given in each other's place"),
    ("r.txt", "# judged\nq1 0 d1 1\n", "run", r"r.txt:2: expected 6 columns .*, found 4: this looks like qrels"),
]


@pytest.mark.parametrize("name, content, kind, message", HINTED, ids=[f"{i}-{case[0]}" for i, case in enumerate(HINTED)])
def test_a_likely_mistake_is_named_with_its_fix_in_one_line(tmp_path, name, content, kind, message):
    path = write(tmp_path / name, content)
    with pytest.raises(InputError, match=message) as raised:
        (read_qrels if kind == "qrels" else read_run)(path)
    assert "\n" not in str(raised.value)


def test_a_later_bad_line_is_not_taken_for_a_swap(tmp_path):
    path = write(tmp_path / "q.txt", "q1 0 d1 1\nq1 Q0 d2 1 2.5 t\nq1\td3\t1\n")
    with pytest.raises(InputError, match=r"q.txt:2: expected 4 columns \(qid iter docid rel\), found 6; fix or remove"):
        read_qrels(path)


@pytest.mark.parametrize("reading", ["--in-memory", "--stream"])
def test_eval_with_the_qrels_and_the_run_swapped_says_the_order(tmp_path, capfdbinary, reading):
    qrels = write(tmp_path / "qrels.txt", QRELS_FORMATS["trec.txt"])
    run = write(tmp_path / "bm25.run", RUN_FORMATS["trec.run"])
    code, out, err = eval_output(capfdbinary, reading, run, qrels)
    assert code == 2 and out == b"" and err.count("\n") == 1
    assert "this looks like" in err and err.endswith("; the order is QRELS RUN: ndcg-report eval QRELS RUN\n"), err
    code, _, err = eval_output(capfdbinary, reading, qrels, qrels)  # qrels given as the run too
    assert code == 2 and f"{qrels}:1: expected 6 columns" in err and "this looks like qrels" in err
    assert "the order is QRELS RUN" in err


@pytest.mark.parametrize("name, content, kind, message", BAD, ids=[f"{i}-{case[0]}" for i, case in enumerate(BAD)])
def test_every_bad_input_class_is_one_line_naming_file_and_line(tmp_path, name, content, kind, message):
    path = write(tmp_path / name, content)
    with pytest.raises(InputError, match=message):
        (read_qrels if kind == "qrels" else read_run)(path)


@pytest.mark.parametrize("name, content, kind, message", [BAD[i] for i in (0, 12, 20, 23, 32)])
def test_bad_input_at_the_command_line_is_exit_2_and_one_line(tmp_path, capfdbinary, name, content, kind, message):
    path = write(tmp_path / name, content)
    good_qrels = write(tmp_path / "good.txt", QRELS_FORMATS["trec.txt"])
    good_run = write(tmp_path / "good.run", RUN_FORMATS["trec.run"])
    code, out, err = eval_output(capfdbinary, *((path, good_run) if kind == "qrels" else (good_qrels, path)))
    assert code == 2 and out == b""
    assert err.count("\n") == 1 and err.startswith(f"ndcg-report: error: {tmp_path}/")


@pytest.mark.parametrize("name, content, message", [
    ("run.jsonl", "q1 Q0 d1 1 1.0 t\n", r"named .jsonl, so JSON lines \(one \{...\} object per line\) was expected, "
                                        r"but it starts with 'q1 Q0"),
    ("run.json", "q1 Q0 d1 1 1.0 t\n", r"named .json, so a JSON object \(\{...\}\) was expected"),
    ("run.txt", '{"q1": {"d1": 1}}', r"named .txt, so text lines was expected, but JSON"),
    ("run.parquet", "q1 Q0 d1 1 1.0 t\n", r"cannot be read as Parquet \(named .parquet, but it starts with .q1 Q0"),
    ("run.csv", "qid,docid,score\n", r"unknown run format \(.csv\); give TREC text"),
    ("run.bz2", b"BZh91AY&SY\x00\x00", r"unknown run format \(.bz2\)"),
    ("run", b"BZh91AY&SY\x00\x00", r"run: is bzip2-compressed, which is not read; decompress it, or compress it with gzip"),
])
def test_a_format_its_name_or_bytes_contradict_is_refused_naming_what_was_expected(tmp_path, name, content, message):
    with pytest.raises(InputError, match=message):
        read_run(write(tmp_path / name, content))


# --- numbers do not depend on the format --------------------------------------------------------------


def write_every_format(folder: Path, qrels: list[tuple[str, str, float]], run: list[tuple[str, str, float]],
                       grades: list[str]) -> tuple[list[Path], list[Path]]:
    """The same judgments and ranking as TREC text, BEIR TSV, JSON, JSON lines (each form) and Parquet.
    `grades` holds each qrels grade as written in text (the same text in every format)."""
    folder.mkdir(parents=True, exist_ok=True)
    by_query: dict[str, dict[str, str]] = {}
    for (qid, docid, _), grade in zip(qrels, grades):
        by_query.setdefault(qid, {})[docid] = grade
    scored: dict[str, dict[str, float]] = {}
    for qid, docid, score in run:
        scored.setdefault(qid, {})[docid] = score
    qrels_paths = [
        write(folder / "qrels.txt", "".join(f"{q} 0 {d} {g}\n" for (q, d, _), g in zip(qrels, grades))),
        write(folder / "qrels.tsv", "query-id\tcorpus-id\tscore\n" + "".join(
            f"{q}\t{d}\t{g}\n" for (q, d, _), g in zip(qrels, grades))),
        write(folder / "qrels.json", "{" + ", ".join(
            f"{json.dumps(q)}: {{" + ", ".join(f"{json.dumps(d)}: {g}" for d, g in docs.items()) + "}"
            for q, docs in by_query.items()) + "}"),
        write(folder / "qrels.jsonl", "".join(f'{{"qid": {json.dumps(q)}, "docid": {json.dumps(d)}, "rel": {g}}}\n'
                                              for (q, d, _), g in zip(qrels, grades))),
        write(folder / "grades.jsonl", "".join(
            f'{{"qid": {json.dumps(q)}, "grades": {{' + ", ".join(f"{json.dumps(d)}: {g}" for d, g in docs.items())
            + "}}\n" for q, docs in by_query.items())),
    ]
    pq.write_table(pa.table({"qid": [q for q, _, _ in qrels], "docid": [d for _, d, _ in qrels],
                             "rel": [float(g) for g in grades]}), folder / "qrels.parquet")
    qrels_paths.append(folder / "qrels.parquet")
    trec_order = {q: sorted(docs, key=lambda d: (-docs[d], [-b for b in d.encode()])) for q, docs in scored.items()}
    run_paths = [
        write(folder / "run.txt", "".join(f"{q} Q0 {d} 0 {s!r} tag\n" for q, d, s in run)),
        write(folder / "run.json", json.dumps(scored, ensure_ascii=False)),
        write(folder / "ranked.json", json.dumps(trec_order)),
        write(folder / "flat.jsonl", jsonl(*({"qid": q, "docid": d, "score": s} for q, d, s in run))),
        write(folder / "docs.jsonl", jsonl(*({"qid": q, "docs": [{"docid": d, "score": s} for d, s in docs.items()]}
                                             for q, docs in scored.items()))),
        write(folder / "ranked.jsonl", jsonl(*({"qid": q, "retrieved": ids} for q, ids in trec_order.items()))),
    ]
    pq.write_table(pa.table({"qid": pa.array([q for q, _, _ in run], pa.large_string()),
                             "docid": pa.array([d for _, d, _ in run], pa.string_view()),
                             "score": [s for _, _, s in run]}), folder / "run.parquet")
    run_paths.append(folder / "run.parquet")
    return qrels_paths, run_paths


def per_query_output(run: Path, qrels: Path, cutoffs=(1, 3, 5, 10, "all")) -> bytes:
    return b"".join(bytes(chunk) for chunk in trec_chunks(evaluate(run, qrels, cutoffs=list(cutoffs)), True, 4))


def test_dl19_in_every_format_gives_byte_identical_eval_q_output(tmp_path, capfdbinary):
    qrels = read_qrels(QRELS).table
    run = read_run(MONOT5).table
    triples = lambda table, value: list(zip(table["qid"].to_pylist(), table["docid"].to_pylist(),  # noqa: E731
                                            table[value].to_pylist()))
    grades = [str(int(g)) for g in qrels["rel"].to_pylist()]
    qrels_paths, run_paths = write_every_format(tmp_path, triples(qrels, "rel"), triples(run, "score"), grades)
    code, expected, _ = eval_output(capfdbinary, "-q", QRELS, MONOT5)
    assert code == 0 and expected.count(b"\n") > 300
    for qrels_path in qrels_paths:
        for run_path in run_paths:
            code, output, err = eval_output(capfdbinary, "-q", qrels_path, run_path)
            assert (code, err) == (0, "") and output == expected, (qrels_path.name, run_path.name)


unicode_ids = st.text(st.characters(categories=("L", "N", "S", "M"), exclude_characters="#\ufeff"), min_size=1,
                      max_size=6)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pairs=st.lists(st.tuples(st.sampled_from(["q1", "q2", "ü3"]), unicode_ids), min_size=1, max_size=25, unique=True),
    scores=st.lists(st.sampled_from([0.5, 1.0, 2.25, -3.0, 1e-7]), min_size=25, max_size=25),
    grades=st.lists(st.sampled_from(["0", "1", "2.5", "-1", "0.75", "3"]), min_size=25, max_size=25),
    judged=st.lists(st.booleans(), min_size=25, max_size=25),
)
def test_random_data_with_float_grades_ties_and_unicode_ids_is_the_same_in_every_format(
        tmp_path_factory, pairs, scores, grades, judged):
    run = [(q, d, s) for (q, d), s in zip(pairs, scores)]
    chosen = [(pair, grade) for pair, judge, grade in zip(pairs, judged, grades) if judge]
    qrels = [(q, d, 0.0) for (q, d), _ in chosen] or [(pairs[0][0], "unretrieved", 0.0)]
    texts = [grade for _, grade in chosen] or ["2"]
    folder = tmp_path_factory.mktemp("same")
    qrels_paths, run_paths = write_every_format(folder, qrels, run, texts)
    expected = per_query_output(run_paths[0], qrels_paths[0])
    for qrels_path in qrels_paths:
        for run_path in run_paths:
            assert per_query_output(run_path, qrels_path) == expected, (qrels_path.name, run_path.name)


# --- streaming JSON lines ---------------------------------------------------------------------------------


def test_a_json_lines_run_streamed_in_small_pieces_equals_the_in_memory_evaluation(tmp_path, monkeypatch):
    from ndcg_report.inputs.formats import json_lines

    table = read_run(MONOT5).table
    by_query: dict[str, list] = {}
    for qid, docid, score in zip(table["qid"].to_pylist(), table["docid"].to_pylist(), table["score"].to_pylist()):
        by_query.setdefault(qid, []).append({"docid": docid, "score": score})
    path = write(tmp_path / "run.jsonl", jsonl(*({"qid": q, "docs": docs} for q, docs in by_query.items())))
    expected = evaluate(MONOT5, QRELS)
    monkeypatch.setattr(json_lines, "MAX_PIECE", 1 << 12)
    for block in (1 << 12, 1 << 16, 1 << 25):
        streamed = evaluate_streaming(path, QRELS, block_bytes=block)
        np.testing.assert_array_equal(streamed.values, expected.values)
        np.testing.assert_array_equal(streamed.qids, expected.qids)
