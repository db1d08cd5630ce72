"""Streaming evaluation: blocks of whole queries give exactly what the in-memory evaluation gives;
a run whose queries are not contiguous, a repeated pair across blocks and a bad line deep in the
file are one line naming the line."""

from __future__ import annotations

import gzip
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndcg_report.core.evaluation import Evaluation
from ndcg_report.core.evaluation_pass import evaluate
from ndcg_report.core.streaming import evaluate_streaming, first_return
from ndcg_report.inputs.run_blocks import fits_in_memory
from ndcg_report.errors import InputError
from ndcg_report.inputs.formats import trec_text

DL19 = Path(str(resources.files("ndcg_report") / "data" / "dl19-passage"))
QRELS = DL19 / "qrels.dl19-passage.txt"
ARRAYS = ("num_ret", "num_rel", "num_rel_graded", "in_run", "values", "averaged", "dcg", "idcg", "judged")


def assert_same(streamed: Evaluation, whole: Evaluation) -> None:
    assert list(streamed.qids) == list(whole.qids)
    for name in ARRAYS:
        assert np.array_equal(getattr(streamed, name), getattr(whole, name), equal_nan=True), name
    assert streamed.counts == whole.counts and streamed.tied_lines == whole.tied_lines
    assert (streamed.measures, streamed.depths, streamed.rel_level) == (whole.measures, whole.depths, whole.rel_level)


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ndcg_report.cli", *map(str, args)], capture_output=True,
                          text=True, check=False)


@pytest.mark.parametrize("run", ["monot5.dl19.run.gz", "run.msmarco-v1-passage.bm25-default.dl19.txt.gz",
                                 "rrf.bm25-monot5.dl19.run.gz"])
@pytest.mark.parametrize("block", [1 << 12, 1 << 17, 1 << 28])
def test_dl19_streamed_in_any_block_size_equals_the_in_memory_evaluation(run, block):
    options = dict(measures="ndcg_cut.1,3,5,10,20,100,1000 ndcg map recip_rank RR@10 P.10 recall.1000 Rprec success.1 "
                            "num_rel_ret", rel_level=2, missing="zero", no_relevant="zero")
    assert_same(evaluate_streaming(DL19 / run, QRELS, block_bytes=block, **options), evaluate(DL19 / run, QRELS, **options))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 7), st.lists(st.tuples(st.integers(0, 30), st.integers(0, 6)), min_size=1,
                                                     max_size=25)), min_size=1, max_size=8, unique_by=lambda q: q[0]),
    st.lists(st.tuples(st.integers(0, 9), st.integers(0, 30), st.integers(-1, 3)), min_size=1, max_size=60),
    st.sampled_from([64, 200, 1000, 1 << 20]), st.sampled_from(["zero", "skip"]), st.sampled_from(["skip", "zero"]),
    st.booleans(),
)
def test_random_runs_streamed_equal_the_in_memory_evaluation(tmp_path_factory, queries, judgements, block, missing,
                                                            no_relevant, tabs_and_comments):
    folder = tmp_path_factory.mktemp("random")
    lines = ["# a comment"] if tabs_and_comments else []
    for qid, docs in queries:  # each query's lines together, queries in the drawn order, ties in scores
        for docid, score in dict(docs).items():
            sep = "\t" if tabs_and_comments else " "
            lines.append(sep.join([f"q{qid}", "Q0", f"d{docid}", "1", str(score / 2), "t"]))
    (folder / "run.txt").write_text("\n".join(lines) + "\n")
    qrels = {(q, d): r for q, d, r in judgements}
    (folder / "qrels.txt").write_text("".join(f"q{q} 0 d{d} {r}\n" for (q, d), r in qrels.items()))
    options = dict(measures="nDCG@1 nDCG@2 nDCG@5 nDCG AP RR@2 P@2 R@5 Rprec NumRelRet", rel_level=2,
                   missing=missing, no_relevant=no_relevant)
    whole = evaluate(folder / "run.txt", folder / "qrels.txt", **options)
    assert_same(evaluate_streaming(folder / "run.txt", folder / "qrels.txt", block_bytes=block, **options), whole)


def test_a_query_in_two_places_cannot_stream(tmp_path):
    (tmp_path / "run.txt").write_text("1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n2 Q0 a 1 3 t\n# c\n1 Q0 c 3 1 t\n")
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n2 0 a 1\n")
    with pytest.raises(InputError) as error:
        evaluate_streaming(tmp_path / "run.txt", tmp_path / "qrels.txt", block_bytes=16)
    assert error.value.line == 5 and "query '1' appears again after other queries" in str(error.value)
    result = cli("eval", "--stream", tmp_path / "qrels.txt", tmp_path / "run.txt")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "run.txt:5:" in result.stderr
    assert "sort -s -k1,1" in result.stderr and "--in-memory" in result.stderr
    assert cli("eval", "--in-memory", tmp_path / "qrels.txt", tmp_path / "run.txt").returncode == 0


def test_a_repeated_pair_and_a_bad_line_name_their_lines_when_streamed(tmp_path):
    lines = [f"{q} Q0 d{i} {i} {100 - i} t" for q in range(1, 4) for i in range(50)]
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n")
    duplicate = [*lines[:120], "3 Q0 d5 0 0.5 t", *lines[120:]]  # line 121 repeats line 106's pair
    (tmp_path / "dup.txt").write_text("\n".join(duplicate) + "\n")
    with pytest.raises(InputError) as error:
        evaluate_streaming(tmp_path / "dup.txt", tmp_path / "qrels.txt", block_bytes=256)
    assert "duplicate run entry for query '3', document 'd5'" in str(error.value)
    assert {error.value.line, int(str(error.value).split("first on line ")[1].split(")")[0])} == {106, 121}
    bad = [*lines[:140], "3 Q0 d99 1 high t", *lines[140:]]
    (tmp_path / "bad.txt").write_text("\n".join(bad) + "\n")
    with pytest.raises(InputError) as error:
        evaluate_streaming(tmp_path / "bad.txt", tmp_path / "qrels.txt", block_bytes=256)
    assert error.value.line == 141 and "score 'high' is not a number" in str(error.value)
    gz = tmp_path / "nan.txt.gz"
    gz.write_bytes(gzip.compress(("\n".join([*lines[:77], "2 Q0 x 1 nan t", *lines[77:]]) + "\n").encode()))
    with pytest.raises(InputError) as error:
        evaluate_streaming(gz, tmp_path / "qrels.txt", block_bytes=300)
    assert error.value.line == 78 and "NaN or infinite" in str(error.value)


def test_eval_picks_streaming_by_size_and_prints_the_same(tmp_path):
    run = DL19 / "rrf.bm25-monot5.dl19.run.gz"
    assert fits_in_memory(run) and not fits_in_memory(run, available=4 * run.stat().st_size)
    outputs = [cli("eval", "-q", "--format", "csv", *flag, QRELS, run) for flag in ([], ["--stream"], ["--in-memory"])]
    assert all(result.returncode == 0 for result in outputs)
    assert outputs[0].stdout == outputs[1].stdout == outputs[2].stdout


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_a_bad_line_past_the_checked_prefix_names_its_line_when_streamed(tmp_path, monkeypatch, ending):
    """Lines before a chunk are counted only when an error needs them: CR, CRLF and LF ends, comment
    lines and a CRLF split across two reads all count as pyarrow reads them."""
    monkeypatch.setattr(trec_text, "_PREFIX_BYTES", 64)  # past the prefix check: the chunk reader finds the line
    lines = [f"{q} Q0 d{i} {i} {100 - i} t" if i % 17 else "# a comment" for q in range(1, 4) for i in range(50)]
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n")
    for bad, problem in (("3 Q0 d99 1 high t", "score 'high' is not a number"), ("3 Q0 d\x0099 1 2 t", "NUL byte")):
        path = tmp_path / "bad.txt"
        path.write_bytes(ending.join([*lines[:140], bad, *lines[140:]]).encode() + ending.encode())
        for block in (97, 256, 1 << 20):
            with pytest.raises(InputError) as error:
                evaluate_streaming(path, tmp_path / "qrels.txt", block_bytes=block)
            assert error.value.line == 141 and problem in str(error.value), (block, str(error.value))


@settings(max_examples=200, deadline=None)
@given(codes=st.lists(st.integers(0, 5), max_size=30), seen=st.lists(st.booleans(), min_size=6, max_size=6))
def test_first_return_finds_the_first_query_met_again(codes, seen):
    expected, met, previous = None, set(), None
    for row, code in enumerate(codes):  # the plain loop: a query starting where another one ended
        if code != previous and (code in met or seen[code]):
            expected = row
            break
        met.add(code)
        previous = code
    assert first_return(np.array(codes, dtype=np.int32), np.array(seen)) == expected


def test_a_query_met_again_inside_one_block_cannot_stream_either(tmp_path):
    (tmp_path / "run.txt").write_text("1 Q0 a 1 3 t\n2 Q0 a 1 3 t\n1 Q0 c 3 1 t\n3 Q0 a 1 3 t\n")
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n2 0 a 1\n")
    with pytest.raises(InputError) as error:
        evaluate_streaming(tmp_path / "run.txt", tmp_path / "qrels.txt")
    assert error.value.line == 3 and "query '1' appears again" in str(error.value)


def test_eval_streams_large_runs_by_default_and_falls_back_to_memory_for_a_scattered_query(tmp_path, monkeypatch, capsys):
    from ndcg_report import cli as cli_module
    from ndcg_report.inputs import run_blocks

    (tmp_path / "run.txt").write_text("1 Q0 a 1 3 t\n2 Q0 a 1 3 t\n1 Q0 c 3 1 t\n")
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n1 0 c 2\n2 0 a 1\n")
    assert not run_blocks.streams_by_default(tmp_path / "run.txt")
    monkeypatch.setattr(run_blocks, "STREAM_ABOVE", 0)  # every run counts as large
    assert run_blocks.streams_by_default(tmp_path / "run.txt")
    args = ["eval", "-q", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")]
    assert cli_module.main(["eval", "--in-memory", *args[1:]]) == 0
    in_memory = capsys.readouterr().out
    assert cli_module.main(args) == 0  # streamed, found the scattered query, evaluated in memory instead
    captured = capsys.readouterr()
    assert captured.out == in_memory and "evaluating it in memory" in captured.err
    assert cli_module.main(["eval", "--stream", *args[1:]]) == 2  # asked to stream: the one-line error
    assert "run.txt:3: query '1' appears again" in capsys.readouterr().err
