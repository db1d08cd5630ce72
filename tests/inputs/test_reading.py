"""Reading runs, qrels and topics: accepted variants, and every bad-input class of design section 2."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndcg_report import InputError, evaluate, read_qrels, read_run, read_topics
from tests.helpers import SMALL, cli, one_line

GOOD_QRELS = "q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n"
GOOD_RUN = "q1 Q0 d1 1 3.5 tag\nq1 Q0 d2 2 2.5 tag\nq2 Q0 d3 1 1.0 tag\n"


def write(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def means(run_path: Path, qrels_path: Path) -> dict:
    evaluation = evaluate(read_run(run_path).table, read_qrels(qrels_path).table, cutoffs=[1, 10])
    return {str(k): mean for (_, k), mean in evaluation.summary["mean"].items()}


@pytest.mark.parametrize(
    "variant",
    [
        GOOD_RUN.replace(" ", "\t"),
        GOOD_RUN.replace(" ", "   "),
        GOOD_RUN.replace("\n", "\r\n"),
        "# a comment line\n\n" + GOOD_RUN + "\n\n",
        "\ufeff" + GOOD_RUN,
        "  " + GOOD_RUN.replace("\n", "  \n"),
        GOOD_RUN.rstrip("\n"),
        "# q9 Q0 d9 1 9.0 commented out\n" + GOOD_RUN,
    ],
    ids=["tabs", "spaces", "crlf", "comments-blank", "bom", "padding", "no-final-newline", "comment-6-fields"],
)
def test_run_layout_variants_read_the_same(tmp_path, variant):
    qrels = write(tmp_path / "qrels", GOOD_QRELS)
    expected = means(write(tmp_path / "plain", GOOD_RUN), qrels)
    assert means(write(tmp_path / "variant", variant), qrels) == expected


def test_gzip_by_content_and_qrels_iter_q0(tmp_path):
    run = tmp_path / "run.gz"
    run.write_bytes(gzip.compress(GOOD_RUN.encode()))
    qrels = write(tmp_path / "qrels.txt", GOOD_QRELS.replace(" 0 ", " Q0 "))
    assert means(run, qrels) == means(write(tmp_path / "r", GOOD_RUN), write(tmp_path / "q", GOOD_QRELS))


def test_ids_are_strings_and_tag_is_kept(tmp_path):
    run = read_run(write(tmp_path / "run", "007 Q0 0042 1 1.0 mytag\n7 Q0 42 1 1.0 mytag\n"))
    assert run.table["qid"].to_pylist() == ["007", "7"]
    assert run.table["docid"].to_pylist() == ["0042", "42"]
    assert run.tag == "mytag"


def test_scores_are_float64(tmp_path):
    run = read_run(write(tmp_path / "run", "q Q0 a 1 0.10000000000000001 t\nq Q0 b 2 0.1 t\n"))
    scores = run.table["score"].to_numpy()
    assert scores[0] == scores[1] == 0.1


def test_topics(tmp_path):
    topics = read_topics(write(tmp_path / "t", "1\twhat is <b>x</b>\n# c\n\n002\tsecond query \n"))
    assert topics.to_dict() == {"1": "what is <b>x</b>", "002": "second query"}


# --- bad input: one line, file and line number, exit code 2, nothing on stdout -------------

BAD_RUNS = {
    "too-few-columns": ("q1 Q0 d1 1 3.5 tag\nq1 Q0 d2 2.5 tag\n", 2, "expected 6 columns"),
    "too-many-columns": ("q1 Q0 d1 1 3.5 tag\nq1 Q0 d2 2 2.5 tag extra\n", 2, "expected 6 columns"),
    "unparsable-score": ("q1 Q0 d1 1 3.5 tag\nq1 Q0 d2 2 high tag\n", 2, "score 'high' is not a number"),
    "nan-score": ("q1 Q0 d1 1 3.5 tag\nq1 Q0 d2 2 nan tag\n", 2, "NaN or infinite"),
    "inf-score": ("q1 Q0 d1 1 3.5 tag\n\nq1 Q0 d2 2 -inf tag\n", 3, "NaN or infinite"),
    "duplicate": ("q1 Q0 d1 1 3.5 tag\n# note\nq2 Q0 d1 1 3.5 tag\nq1 Q0 d1 2 2.5 tag\n", 4,
                  "duplicate run entry for query 'q1', document 'd1' (first on line 1)"),
    "header-line": ("qid Q0 docid rank score tag\nq1 Q0 d1 1 3.5 tag\n", 1, "score 'score' is not a number"),
    "latin-1": (b"q1 Q0 d1 1 3.5 tag\nq1 Q0 caf\xe9 2 2.5 tag\n", 2, "not valid UTF-8"),
    "utf-16": (GOOD_RUN.encode("utf-16"), 1, "UTF-16"),
    "crlf-short-line": ("q1 Q0 d1 1 3.5 tag\r\nq1 Q0 d2 2.5 tag\r\n", 2, "expected 6 columns"),
}


@pytest.mark.parametrize("case", list(BAD_RUNS), ids=list(BAD_RUNS))
def test_bad_run(tmp_path, case):
    text, line, message = BAD_RUNS[case]
    run = write(tmp_path / "run.txt", text)
    result = cli("eval", write(tmp_path / "qrels.txt", GOOD_QRELS), run)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert f"{run}:{line}: " in result.stderr
    assert message in result.stderr


BAD_QRELS = {
    "too-few-columns": ("q1 0 d1 2\nq1 d2 0\n", 2, "expected 4 columns"),
    "unparsable-label": ("q1 0 d1 2\nq1 0 d2 relevant\n", 2, "relevance label 'relevant' is not a number"),
    "nan-label": ("q1 0 d1 2\nq1 0 d2 NaN\n", 2, "relevance label is nan"),
    "duplicate": ("q1 0 d1 2\nq1 0 d1 1\n", 2, "duplicate qrels entry for query 'q1', document 'd1'"),
}


@pytest.mark.parametrize("case", list(BAD_QRELS), ids=list(BAD_QRELS))
def test_bad_qrels(tmp_path, case):
    text, line, message = BAD_QRELS[case]
    qrels = write(tmp_path / "qrels.txt", text)
    result = cli("eval", qrels, write(tmp_path / "run.txt", GOOD_RUN))
    assert result.returncode == 2
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert f"{qrels}:{line}: {message}" in result.stderr


@pytest.mark.parametrize("content", ["", "# only a comment\n\n"], ids=["zero-bytes", "only-comments"])
def test_empty_file(tmp_path, content):
    run = write(tmp_path / "run.txt", content)
    result = cli("eval", write(tmp_path / "qrels.txt", GOOD_QRELS), run)
    assert result.returncode == 2 and result.stdout == ""
    assert f"{run}: empty" in result.stderr


def test_missing_file(tmp_path):
    result = cli("eval", write(tmp_path / "qrels.txt", GOOD_QRELS), tmp_path / "nope.txt")
    assert result.returncode == 2 and result.stdout == ""
    assert f"{tmp_path / 'nope.txt'}: no such file" in result.stderr


def test_with_both_files_bad_the_qrels_error_comes_first(tmp_path):
    # the two files are read at the same time; the report is as if the qrels were read first
    run = write(tmp_path / "run.txt", "q1 Q0 d1 1 oops tag\n")
    qrels = write(tmp_path / "qrels.txt", "q1 0 d1 1\nq1 0 d1 2\n")
    result = cli("eval", qrels, run)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"ndcg-report: error: {qrels}:2: duplicate qrels entry")
    result = cli("eval", write(tmp_path / "good.txt", GOOD_QRELS), run)
    assert result.returncode == 2 and f"{run}:1: score 'oops' is not a number" in result.stderr


def test_corrupt_gzip(tmp_path):
    run = write(tmp_path / "run.gz", gzip.compress(GOOD_RUN.encode())[:-12])
    result = cli("eval", write(tmp_path / "qrels.txt", GOOD_QRELS), run)
    assert result.returncode == 2 and "corrupt gzip" in result.stderr and "Traceback" not in result.stderr


def test_no_query_in_common(tmp_path):
    run = write(tmp_path / "run.txt", "x Q0 d1 1 3.5 tag\n")
    result = cli("eval", write(tmp_path / "qrels.txt", GOOD_QRELS), run)
    assert result.returncode == 2 and result.stdout == ""
    assert "no query in common" in result.stderr


def test_no_relevant_document_anywhere_warns(tmp_path):
    run = write(tmp_path / "run.txt", "q1 Q0 d1 1 3.5 tag\n")
    qrels = write(tmp_path / "qrels.txt", "q1 0 d1 0\nq2 0 d2 0\n")
    for options in (["--format", "csv", "--no-relevant", "skip"], ["--no-relevant", "skip"]):
        result = cli("eval", *options, qrels, run)
        assert result.returncode == 0 and result.stderr.count("\n") == 1
        assert "warning: no query was averaged, so the means are nan" in result.stderr
    assert "ndcg_cut_10           \tall\tnan" in result.stdout
    result = cli("eval", "--no-relevant", "zero", qrels, run)
    assert result.returncode == 0 and result.stderr == "" and "ndcg_cut_10           \tall\t0.0000" in result.stdout
    # every format averages as trec_eval -c does by default: the queries count 0, nothing to say
    for options in ([], ["--format", "csv"]):
        result = cli("eval", *options, qrels, run)
        assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.splitlines()[1].startswith("nDCG,1,2,0.0000")  # both queries averaged, as 0


def test_bad_usage_is_one_line(tmp_path):
    result = cli("eval", "--gain", "cubic", "a", "b")
    assert result.returncode == 2 and result.stderr.count("\n") == 1


def test_topics_errors(tmp_path):
    with pytest.raises(InputError, match=r":2: topic '1' already given on line 1"):
        read_topics(write(tmp_path / "t", "1\ta\n1\tb\n"))
    with pytest.raises(InputError, match=r":1: expected `qid<TAB>query text`"):
        read_topics(write(tmp_path / "t", "1 a b\n"))
    with pytest.raises(InputError, match=r":1: not valid UTF-8"):
        read_topics(write(tmp_path / "t", b"1\tcaf\xe9\n"))


@pytest.mark.parametrize("other", ["d123456789", "dé", "éééééééé", "x" * 2000, "d1\u00a0b"])
def test_judgements_match_whatever_the_other_docids_look_like(tmp_path, other):
    # fingerprints depend on each docid's own bytes only: a long or non-ASCII docid elsewhere in
    # the run (or none in the qrels) must not stop d1 from matching its judgement
    qrels = write(tmp_path / "qrels", "q1 0 d1 1\n")
    run = write(tmp_path / "run", f"q1 Q0 {other} 1 3 t\nq1 Q0 d1 2 2 t\n")
    assert means(run, qrels)["10"] == pytest.approx(1 / np.log2(3))


def test_non_ascii_duplicates_are_found(tmp_path):
    write(tmp_path / "qrels", "q1 0 d1 1\n")
    write(tmp_path / "run", "q1 Q0 dé 1 3 t\nq1 Q0 d1 2 2 t\nq1 Q0 dé 3 1 t\n")
    result = cli("eval", tmp_path / "qrels", tmp_path / "run")
    assert result.returncode == 2
    assert result.stderr.strip().endswith("run:3: duplicate run entry for query 'q1', document 'dé' "
                                          "(first on line 1); keep one line per (query, document)")


def test_line_numbers_with_carriage_return_line_ends(tmp_path):
    write(tmp_path / "qrels", "q1 0 d1 1\n")
    write(tmp_path / "run", "q1 Q0 d1 1 1 t\rq1 Q0 d2 2 nan t\r")
    result = cli("eval", tmp_path / "qrels", tmp_path / "run")
    assert result.returncode == 2 and "run:2: score is nan" in result.stderr and "Traceback" not in result.stderr


def test_topic_ids_with_white_space_are_rejected(tmp_path):
    path = write(tmp_path / "topics", "q1\tcats\nq 2\tdogs\n")
    with pytest.raises(InputError, match=r"topics:2: topic id 'q 2' contains white space"):
        read_topics(path)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.text("ab ", max_size=12), st.sampled_from(["\n", "\r\n", "\r"])), max_size=30),
       st.text("ab", max_size=5), st.integers(1, 40), st.booleans())
def test_text_is_cut_into_whole_lines_whatever_the_line_ends(tmp_path_factory, lines, tail, chunk_bytes, gzipped):
    from ndcg_report.inputs.formats import trec_text

    text = ("".join(line + end for line, end in lines) + tail).encode()
    path = tmp_path_factory.mktemp("chunks") / "text"
    path.write_bytes(gzip.compress(text) if gzipped else text)
    with trec_text.open_maybe_gzip(path) as handle:
        pieces = list(trec_text._whole_line_chunks(path, handle, chunk_bytes))
    assert b"".join(pieces) == text and all(pieces)
    longest = max([len(line) + 2 for line, _ in lines] + [len(tail)])
    assert all(len(piece) <= 3 * chunk_bytes + 2 * longest for piece in pieces)  # memory bounded by the chunk size
    ends = [len(b"".join(pieces[: i + 1])) for i in range(len(pieces) - 1)]
    for end in ends:  # every piece but the last ends a line, never between the \r and \n of a \r\n
        assert text[end - 1: end] in (b"\n", b"\r") and text[end - 1: end + 1] != b"\r\n"


def test_a_score_in_other_digits_names_its_line(tmp_path):
    (tmp_path / "run").write_text("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 \u0661 t\n")
    one_line(cli("eval", SMALL / "qrels.txt", tmp_path / "run"), 2, "run:2: score '\u0661' is not a number")
