"""Tables given to the API (inputs.tables): a column of a type it may not hold is refused in one line naming
the column and the types it takes, as a Parquet file's is (columns.types_wanted)."""

from __future__ import annotations

import datetime
import re

import pandas as pd
import pyarrow as pa
import pytest

from ndcg_report import ParameterError
from ndcg_report.inputs.tables import load_qrels, load_run


def _run(**columns) -> dict:
    return {"qid": ["q1", "q1"], "docid": ["d1", "d2"], "score": [2.0, 1.0], **columns}


@pytest.mark.parametrize("column, values, shown", [
    ("qid", [["q1"], ["q1"]], "list<item: string>"),
    ("qid", [{"id": 1}, {"id": 1}], "struct<id: int64>"),
    ("docid", [{"id": 1}, {"id": 2}], "struct<id: int64>"),
    ("qid", [1.5, 1.5], "double"),
])
def test_an_arrow_id_column_not_of_strings_or_whole_numbers_is_refused(column, values, shown):
    table = pa.table(_run(**{column: values}))
    message = f"the run table's {column} column has type {shown}; give {column} as strings or whole numbers"
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        load_run(table)
    qrels = table.rename_columns(["qid", "docid", "rel"])
    with pytest.raises(ParameterError, match=f"^the qrels table's {column} column has type"):
        load_qrels(qrels)


@pytest.mark.parametrize("values, shown", [
    ([True, False], "bool"),
    ([datetime.datetime(2024, 1, 2), datetime.datetime(2024, 1, 1)], "timestamp[us]"),
])
def test_an_arrow_score_of_booleans_or_dates_is_refused(values, shown):
    message = f"the run table's score column has type {shown}; give score as numbers"
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        load_run(pa.table(_run(score=values)))


@pytest.mark.parametrize("values, shown", [
    ([True, False], "bool"),
    ([pd.Timestamp(2024, 1, 2), pd.Timestamp(2024, 1, 1)], "datetime64"),
    ([pd.Timedelta(2), pd.Timedelta(1)], "timedelta64"),
])
def test_a_dataframe_score_or_label_of_booleans_dates_or_durations_is_refused(values, shown):
    with pytest.raises(ParameterError, match=rf"^the run table's score column has type {shown}\S*; give score as numbers$"):
        load_run(pd.DataFrame(_run(score=values)))
    with pytest.raises(ParameterError, match=rf"^the qrels table's rel column has type {shown}"):
        load_qrels(pd.DataFrame({"qid": ["q1", "q1"], "docid": ["d1", "d2"], "rel": values}))


def test_ids_of_strings_whole_numbers_or_dictionaries_and_scores_of_numbers_are_taken():
    table = pa.table({"qid": pa.array(["q1", "q1"]).dictionary_encode(), "docid": pa.array([7, 8], pa.int32()),
                      "score": pa.array([2, 1], pa.int64())})
    run = load_run(table)
    assert run.table.to_pydict() == {"qid": ["q1", "q1"], "docid": ["7", "8"], "score": [2.0, 1.0]}
    assert load_run(table.rename_columns(["qid", "docid", "rank"])).table["score"].to_pylist() == [-2.0, -1.0]
