"""benchmarks/make_eval_data.py makes the run eval's benchmark times it on: its shape, checked on a small one."""

from __future__ import annotations

import importlib.util
import re
from collections import Counter
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "make_eval_data.py"


@pytest.fixture(scope="module")
def generated() -> tuple[list[list[str]], list[list[str]]]:
    spec = importlib.util.spec_from_file_location("make_eval_data", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    run, qrels = module.make_run_and_qrels(queries=1000, depth=200, seed=3)
    return [line.split(" ") for line in run.decode().splitlines()], [line.split(" ") for line in qrels.decode().splitlines()]


def test_the_run_has_the_issues_shape(generated):
    run, _ = generated
    assert all(len(fields) == 6 and fields[1] == "Q0" and re.fullmatch(r"D\d{7}", fields[2]) for fields in run)
    assert all(re.fullmatch(r"\d+\.\d{4}", fields[4]) for fields in run)  # 4 decimals
    order = list(dict.fromkeys(fields[0] for fields in run))
    lengths = Counter(fields[0] for fields in run)
    assert len(order) == 1000 and order != sorted(order, key=int)  # whole queries, in random qid order
    assert 0.01 < sum(n < 200 for n in lengths.values()) / 1000 < 0.06  # about 3% shorter
    by_query: dict[str, list[list[str]]] = {}
    for fields in run:
        by_query.setdefault(fields[0], []).append(fields)
    ties = lines = 0
    for rows in by_query.values():
        assert [int(row[3]) for row in rows] == list(range(1, len(rows) + 1))
        scores = [float(row[4]) for row in rows]
        assert scores == sorted(scores, reverse=True)
        ties += sum(a == b for a, b in zip(scores, scores[1:]))
        lines += len(rows) - 1
        assert len({row[2] for row in rows}) == len(rows)  # no repeated pair
    assert 0.04 < ties / lines < 0.06  # about 5% of lines tied with the line above


def test_the_qrels_have_the_issues_shape(generated):
    run, qrels = generated
    judged = Counter(fields[0] for fields in qrels)
    assert 140 < sum(judged.values()) / len(judged) < 160  # about 150 judged documents a query
    labels = Counter(fields[3] for fields in qrels)
    assert set(labels) == {"0", "1", "2", "3"} and labels["0"] > sum(labels.values()) / 2  # mostly 0
    relevant = {fields[0] for fields in qrels if fields[3] != "0"}
    assert 0 < len(set(judged) - relevant) <= 30  # about 1% with nothing relevant
    run_qids = {fields[0] for fields in run}
    assert set(judged) - run_qids and run_qids - set(judged)  # some queries only in one of them
    retrieved = {(fields[0], fields[2]) for fields in run}
    assert 0.3 < sum((fields[0], fields[2]) in retrieved for fields in qrels) / len(qrels) < 0.6  # half retrieved
