"""Relevance labels outside a 32-bit integer's range are refused however qrels are given (inputs.labels):
text, JSON lines, Parquet, a DataFrame, a dict; the edges themselves are read as they are."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ndcg_report import InputError, ParameterError, evaluate, read_qrels
from ndcg_report.inputs.labels import HIGHEST, LOWEST
from ndcg_report.inputs.tables import load_qrels
from tests.helpers import cli, one_line

JUST_OUTSIDE = [HIGHEST + 1, LOWEST - 1, LOWEST - 0.5]
EDGES = [HIGHEST, LOWEST, HIGHEST - 0.5]
FIX = "give relevance labels between -2147483648 and 2147483647"


def test_the_range_is_a_32_bit_integers():
    assert (LOWEST, HIGHEST) == (-2147483648, 2147483647)


def _trec(path, label):
    path.write_text(f"q1 0 d1 1\nq1 0 d2 {label!r}\n")
    return path


def _jsonl(path, label):
    path.write_text(f'{{"qid": "q1", "docid": "d1", "rel": 1}}\n{{"qid": "q1", "docid": "d2", "rel": {label!r}}}\n')
    return path


def _parquet(path, label):
    pq.write_table(pa.table({"qid": ["q1", "q1"], "docid": ["d1", "d2"], "rel": [1.0, float(label)]}), path)
    return path


WRITERS = {"qrels.txt": (_trec, ":2: "), "qrels.jsonl": (_jsonl, ":2: "), "qrels.parquet": (_parquet, "row 2")}


@pytest.mark.parametrize("name", WRITERS)
@pytest.mark.parametrize("label", EDGES)
def test_a_label_at_the_edge_of_the_range_is_read_as_it_is(tmp_path, name, label):
    qrels = read_qrels(WRITERS[name][0](tmp_path / name, label))
    assert qrels.table["rel"].to_pylist() == [1.0, float(label)]


@pytest.mark.parametrize("name", WRITERS)
@pytest.mark.parametrize("label", JUST_OUTSIDE)
def test_a_label_just_outside_the_range_is_refused_at_its_line(tmp_path, name, label):
    write, where = WRITERS[name]
    with pytest.raises(InputError) as raised:
        read_qrels(write(tmp_path / name, label))
    shown = f"{label:.0f}" if float(label).is_integer() else repr(float(label))
    assert f"relevance label {shown} is out of range; {FIX}" in str(raised.value)
    assert where in str(raised.value)


@pytest.mark.parametrize("label", EDGES)
def test_a_dataframe_or_dict_label_at_the_edge_is_read_as_it_is(label):
    frame = pd.DataFrame({"qid": ["q1", "q1"], "docid": ["d1", "d2"], "rel": [1, label]})
    assert load_qrels(frame).table["rel"].to_pylist() == [1.0, float(label)]
    assert load_qrels({"q1": {"d1": 1, "d2": label}}).table["rel"].to_pylist() == [1.0, float(label)]


@pytest.mark.parametrize("label", JUST_OUTSIDE)
def test_a_dataframe_or_dict_label_just_outside_the_range_is_refused_naming_its_row(label):
    frame = pd.DataFrame({"qid": ["q1", "q1"], "docid": ["d1", "d2"], "rel": [1, label]})
    for given in (frame, pa.Table.from_pandas(frame), {"q1": {"d1": 1, "d2": label}}):
        with pytest.raises(ParameterError, match=r"^the qrels table's row 1 \(query 'q1', document 'd2'\): "
                                                 r"relevance label \S+ is out of range; give relevance labels"):
            load_qrels(given)


def test_exponential_gain_takes_the_largest_labels_in_range(tmp_path):
    """2**HIGHEST overflows, yet the per-query scale keeps nDCG exact: 2 ** (label - max) for the other label."""
    (tmp_path / "qrels").write_text(f"q1 0 a {HIGHEST}\nq1 0 b {HIGHEST - 1}\n")
    (tmp_path / "run").write_text("q1 Q0 b 1 2 t\nq1 Q0 a 2 1 t\n")
    ndcg = evaluate(tmp_path / "run", tmp_path / "qrels", cutoffs="2", gain="exponential").table(2)["nDCG@2"]
    assert ndcg["q1"] == pytest.approx((0.5 + 1 / 1.5849625007211562) / (1 + 0.5 / 1.5849625007211562), rel=1e-12)


def test_judges_refuses_a_label_of_1e300_in_one_line(tmp_path):
    (tmp_path / "a.txt").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "b.txt").write_text("q1 0 d1 1\nq1 0 d2 1e300\n")
    one_line(cli("judges", tmp_path / "a.txt", tmp_path / "b.txt"), 2,
             f"b.txt:2: relevance label 1e+300 is out of range; {FIX}")


def test_eval_refuses_a_label_of_1e308_in_one_line_and_prints_nothing(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1e308\nq1 0 d2 1e308\n")
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n")
    result = cli("eval", tmp_path / "qrels.txt", tmp_path / "run.txt")
    one_line(result, 2, f"qrels.txt:1: relevance label 1e+308 is out of range; {FIX}")
    assert result.stdout == ""
