"""The floor `eval` is measured against: the whole process of reading a run's qid, docid and score.

`pyarrow.csv.read_csv` of the run's three columns with their types given (qid and docid strings,
score float64), multi-threaded as pyarrow reads by default; prints the row count.

    .venv/bin/python benchmarks/eval_floor.py RUN
"""

import sys

import pyarrow as pa
import pyarrow.csv as pacsv

table = pacsv.read_csv(
    sys.argv[1],
    read_options=pacsv.ReadOptions(column_names=["qid", "q0", "docid", "rank", "score", "tag"]),
    parse_options=pacsv.ParseOptions(delimiter=" "),
    convert_options=pacsv.ConvertOptions(include_columns=["qid", "docid", "score"],
                                         column_types={"qid": pa.string(), "docid": pa.string(), "score": pa.float64()}))
print(table.num_rows)
