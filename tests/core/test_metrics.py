"""The metric semantics of design section 3: worked examples, policies and real trec_eval figures."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ndcg_report import ParameterError, evaluate, parse_cutoffs, read_qrels, read_run


def ranked(labels: list[float], qid: str = "q1") -> tuple[pd.DataFrame, pd.DataFrame]:
    """A run ranking docs d0, d1, ... in order, and qrels giving them `labels`."""
    docs = [f"d{i}" for i in range(len(labels))]
    run = pd.DataFrame({"qid": qid, "docid": docs, "score": -np.arange(len(labels), dtype=float)})
    qrels = pd.DataFrame({"qid": qid, "docid": docs, "rel": labels})
    return run, qrels


def at(evaluation, column: str, k: str, qid: str = "q1") -> float:
    """A per-query column of nDCG@k ('ndcg' is its value) for one query."""
    rows = evaluation.per_query
    rows = rows[(rows["qid"] == qid) & (rows["measure"] == "nDCG")]
    rows = rows[rows["k"].isna()] if k == "all" else rows[rows["k"] == int(k)]
    return float(rows["value" if column == "ndcg" else column].iloc[0])


def mean_at(evaluation, k, column: str = "mean") -> float:
    """A column of the summary row of nDCG@k."""
    return evaluation.summary.loc[("nDCG", None if k == "all" else int(k)), column]


def test_worked_example_linear_gain():
    # design section 3: DCG@5 6.149, IDCG@5 6.324, NDCG@5 0.972 (figures rounded by hand)
    evaluation = evaluate(*ranked([3, 2, 3, 0, 1]), cutoffs=[5])
    assert at(evaluation, "dcg", "5") == pytest.approx(6.149, abs=1e-3)
    assert at(evaluation, "idcg", "5") == pytest.approx(6.324, abs=1e-3)
    assert at(evaluation, "ndcg", "5") == pytest.approx(0.972, abs=1e-3)
    assert at(evaluation, "idcg", "5") == pytest.approx(3 + 3 / math.log2(3) + 2 / 2 + 1 / math.log2(5), abs=1e-12)


def test_second_worked_example_uses_the_sorted_ideal():
    # The seed documents give IDCG 5.149 / NDCG 0.975 for [3,1,2,0,1]: that is the DCG of the
    # mis-sorted list [3,2,1,0,1]. Sorted descending, as section 3 requires, the ideal is
    # [3,2,1,1,0]: IDCG 5.1925, NDCG 0.9664. DCG 5.018 holds.
    evaluation = evaluate(*ranked([3, 1, 2, 0, 1]), cutoffs=[5])
    assert at(evaluation, "dcg", "5") == pytest.approx(5.018, abs=1e-3)
    ideal = 3 + 2 / math.log2(3) + 1 / 2 + 1 / math.log2(5)
    assert at(evaluation, "idcg", "5") == pytest.approx(ideal, abs=1e-12)
    assert at(evaluation, "ndcg", "5") == pytest.approx(5.0177 / 5.1925, abs=1e-3)
    mis_sorted = 3 + 2 / math.log2(3) + 1 / 2 + 1 / math.log2(6)
    assert mis_sorted == pytest.approx(5.149, abs=1e-3)


def test_worked_example_exponential_gain():
    evaluation = evaluate(*ranked([3, 2, 3, 0, 1, 2, 0, 1, 0, 2]), cutoffs=[1, 2], gain="exponential")
    assert at(evaluation, "dcg", "1") == pytest.approx(7.0, abs=1e-12)
    assert at(evaluation, "dcg", "2") == pytest.approx(7.0 + 3.0 / math.log2(3), abs=1e-12)
    assert 3.0 / math.log2(3) == pytest.approx(3 / 1.585, abs=1e-3)


def test_ideal_comes_from_qrels_not_from_the_run():
    run = pd.DataFrame({"qid": "q", "docid": ["a", "b"], "score": [2.0, 1.0]})
    qrels = pd.DataFrame({"qid": "q", "docid": ["a", "b", "c"], "rel": [1, 0, 3]})
    evaluation = evaluate(run, qrels, cutoffs=[3])
    assert at(evaluation, "idcg", "3", "q") == pytest.approx(3 + 1 / math.log2(3))
    assert at(evaluation, "ndcg", "3", "q") == pytest.approx(1 / (3 + 1 / math.log2(3)))


def test_ties_broken_by_docid_descending_and_rank_column_ignored():
    run = pd.DataFrame({"qid": "q", "docid": ["a", "c", "b"], "score": [1.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"qid": "q", "docid": ["a"], "rel": [1]})
    evaluation = evaluate(run, qrels, cutoffs=[1, 3])
    assert at(evaluation, "ndcg", "1", "q") == 0.0  # order is c, b, a
    assert at(evaluation, "dcg", "3", "q") == pytest.approx(1 / math.log2(4))
    assert evaluation.tied_lines == 3


def test_negative_and_zero_labels_give_no_gain_but_count_as_judged():
    run = pd.DataFrame({"qid": "q", "docid": ["a", "b", "c", "x"], "score": [4.0, 3.0, 2.0, 1.0]})
    qrels = pd.DataFrame({"qid": "q", "docid": ["a", "b", "c"], "rel": [-1, 0, 2]})
    evaluation = evaluate(run, qrels, cutoffs=[2, 4], gain="exponential")
    assert at(evaluation, "dcg", "2", "q") == 0.0
    assert at(evaluation, "dcg", "4", "q") == pytest.approx(3 / 2)
    assert at(evaluation, "judged", "2", "q") == 1.0
    assert at(evaluation, "judged", "4", "q") == 0.75
    assert at(evaluation, "num_rel", "4", "q") == 1


def test_cutoff_all_and_fewer_docs_than_k():
    evaluation = evaluate(*ranked([0, 0, 1]), cutoffs=[2, 1000, "all"])
    assert at(evaluation, "ndcg", "2") == 0.0
    assert at(evaluation, "ndcg", "1000") == pytest.approx(0.5)
    assert at(evaluation, "ndcg", "all") == pytest.approx(0.5)
    assert at(evaluation, "num_ret", "all") == 3


def test_float_labels_are_used_as_they_are():
    evaluation = evaluate(*ranked([0.5, 2.5]), cutoffs=[2])
    dcg = 0.5 + 2.5 / math.log2(3)
    assert at(evaluation, "dcg", "2") == pytest.approx(dcg)
    assert at(evaluation, "idcg", "2") == pytest.approx(2.5 + 0.5 / math.log2(3))


def three_queries() -> tuple[pd.DataFrame, pd.DataFrame]:
    """q1 retrieved with a relevant doc, q2 relevant but absent from the run, q3 nothing relevant,
    q4 only in the run."""
    run = pd.DataFrame({"qid": ["q1", "q3", "q4"], "docid": ["a", "b", "c"], "score": [1.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"qid": ["q1", "q2", "q3"], "docid": ["a", "z", "b"], "rel": [1, 1, 0]})
    return run, qrels


@pytest.mark.parametrize(
    ("missing", "no_relevant", "averaged", "mean"),
    [
        ("zero", "skip", {"q1", "q2"}, 0.5),
        ("zero", "zero", {"q1", "q2", "q3"}, 1 / 3),
        ("skip", "skip", {"q1"}, 1.0),
        ("skip", "zero", {"q1", "q3"}, 0.5),
    ],
)
def test_query_policies(missing, no_relevant, averaged, mean):
    evaluation = evaluate(*three_queries(), cutoffs=[10], missing=missing, no_relevant=no_relevant)
    rows = evaluation.per_query
    assert set(rows.loc[rows["averaged"], "qid"]) == averaged
    assert mean_at(evaluation, "10", "mean") == pytest.approx(mean)
    assert mean_at(evaluation, "10", "n") == len(averaged)
    counts = evaluation.counts
    assert (counts.in_run, counts.in_qrels, counts.in_both, counts.missing, counts.no_relevant, counts.run_only) == (
        3, 3, 2, 1, 1, 1,
    )
    assert counts.averaged == len(averaged)
    assert "q4" not in set(rows["qid"])


def test_summary_median_and_sample_std():
    run = pd.DataFrame({"qid": ["a", "b", "c"], "docid": ["x", "y", "z"], "score": [1.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"qid": ["a", "a", "b", "c"], "docid": ["x", "w", "q", "z"], "rel": [1, 1, 1, 1]})
    evaluation = evaluate(run, qrels, cutoffs=[1])
    values = np.array([1.0, 0.0, 1.0])
    assert mean_at(evaluation, "1", "mean") == pytest.approx(values.mean())
    assert mean_at(evaluation, "1", "median") == 1.0
    assert mean_at(evaluation, "1", "std") == pytest.approx(values.std(ddof=1))


def test_ids_stay_strings():
    run = pd.DataFrame({"qid": ["007", "7"], "docid": ["01", "1"], "score": [1.0, 1.0]})
    qrels = pd.DataFrame({"qid": ["007", "7"], "docid": ["01", "01"], "rel": [1, 1]})
    evaluation = evaluate(run, qrels, cutoffs=[1])
    table = evaluation.table(1)
    assert table.loc["007", "nDCG@1"] == 1.0
    assert table.loc["7", "nDCG@1"] == 0.0


def test_tables_of_other_types_give_the_same_numbers():
    import pyarrow as pa

    run, qrels = ranked([3, 0, 2, 1])
    expected = evaluate(run, qrels, cutoffs=[1, 3, "all"]).values
    shuffled = run.iloc[[2, 0, 3, 1]]  # not in rank order: the ranking sorts
    typed = pa.table({
        "qid": pa.array(shuffled["qid"]).dictionary_encode(),
        "docid": pa.chunked_array([shuffled["docid"][:2], shuffled["docid"][2:]], pa.large_string()),
        "score": pa.array(shuffled["score"], pa.float32()),
    })
    np.testing.assert_array_equal(evaluate(typed, pa.Table.from_pandas(qrels), cutoffs=[1, 3, "all"]).values, expected)
    numeric = pd.DataFrame({"qid": [1, 1], "docid": [10, 11], "score": [2, 1]})
    numeric_qrels = pd.DataFrame({"qid": ["1"], "docid": ["11"], "rel": [1]})
    assert evaluate(numeric, numeric_qrels, cutoffs=[1]).values[0, 0] == 0.0  # ids compared as strings


def test_unused_dictionary_entries_are_not_queries():
    import pyarrow as pa

    run = pa.table({"qid": pa.array(["q1", "q1", "q2"]).dictionary_encode(), "docid": ["a", "b", "c"],
                    "score": [2.0, 1.0, 3.0]}).slice(0, 2)  # q2 stays in the dictionary only
    qrels = pa.table({"qid": ["q1"], "docid": ["b"], "rel": [1.0]})
    evaluation = evaluate(run, qrels, cutoffs=[1])
    assert evaluation.counts.in_run == 1 and evaluation.counts.run_only == 0


def test_tables_with_repeated_pairs_are_refused():
    run, qrels = ranked([1, 0])
    with pytest.raises(ParameterError, match=r"the run table repeats query 'q1', document 'd1' \(rows 1 and 2\)"):
        evaluate(pd.concat([run, run.iloc[[1]]], ignore_index=True), qrels)
    with pytest.raises(ParameterError, match="the qrels table repeats"):
        evaluate(run, pd.concat([qrels, qrels], ignore_index=True))


def test_empty_docids_next_to_short_ones_in_a_table():
    # an empty string sitting 8 bytes before the end of the Arrow buffer is read in place
    run = pd.DataFrame({"qid": "q", "docid": ["", "abcdefg"], "score": [2.0, 1.0]})
    qrels = pd.DataFrame({"qid": "q", "docid": ["abcdefg"], "rel": [1.0]})
    assert evaluate(run, qrels, cutoffs=[10]).values[0, 0] == pytest.approx(1 / math.log2(3))


def test_docids_as_large_strings_give_the_same_numbers(dl19, monkeypatch):
    # docid columns over 2 GiB are read as large_string; force that on the real DL19 files
    import ndcg_report.inputs.formats.trec_parsing as read_inputs_module

    expected = evaluate(read_run(dl19["monot5"]), read_qrels(dl19["qrels"])).values
    monkeypatch.setattr(read_inputs_module, "_LARGE_STRINGS", 0)
    run, qrels = read_run(dl19["monot5"]), read_qrels(dl19["qrels"])
    assert str(run.table["docid"].type) == "large_string" and str(qrels.table["docid"].type) == "large_string"
    np.testing.assert_array_equal(evaluate(run, qrels).values, expected)
    monkeypatch.setattr(read_inputs_module, "_LARGE_STRINGS", 1 << 31)  # against string qrels
    np.testing.assert_array_equal(evaluate(run, read_qrels(dl19["qrels"])).values, expected)


@pytest.mark.parametrize("bad", ["0", "-1", "x", "1.5", ""])
def test_bad_cutoffs_rejected(bad):
    with pytest.raises(ParameterError):
        parse_cutoffs(bad)


def test_cutoffs_sorted_unique_all_last():
    assert parse_cutoffs("all,10,1,10") == (1, 10, "all")


@pytest.mark.parametrize(("option", "value"), [("gain", "log"), ("missing", "drop"), ("no_relevant", "one")])
def test_bad_policy_rejected(option, value):
    with pytest.raises(ParameterError):
        evaluate(*ranked([1]), **{option: value})


def test_dl19_bm25_reproduces_published_trec_eval_vector(dl19):
    published = {5: 0.5278, 10: 0.5058, 15: 0.4980, 20: 0.4914, 30: 0.4884, 100: 0.5018, 200: 0.5332,
                 500: 0.5813, 1000: 0.6067, "all": 0.6067}
    evaluation = evaluate(read_run(dl19["bm25"]).table, read_qrels(dl19["qrels"]).table,
                          cutoffs=list(published), missing="zero", no_relevant="zero")
    for k, value in published.items():
        assert round(mean_at(evaluation, k), 4) == value, k
    assert evaluation.counts.averaged == 43


def test_dl19_bm25_per_query_equals_trec_eval_file(dl19):
    expected = {}
    for line in dl19["bm25_eval"].read_text().splitlines():
        measure, qid, value = (part.strip() for part in line.split("\t"))
        if measure.startswith("ndcg_cut_") and qid != "all":
            expected[(measure.removeprefix("ndcg_cut_"), qid)] = float(value)
    evaluation = evaluate(read_run(dl19["bm25"]).table, read_qrels(dl19["qrels"]).table, cutoffs=[10, 100])
    rows = evaluation.per_query
    got = {(str(r.k), r.qid): round(r.value, 4) for r in rows.itertuples()}
    assert len(expected) == 86
    assert got == expected


def test_dl19_monot5_out_of_rank_order(dl19):
    evaluation = evaluate(read_run(dl19["monot5"]).table, read_qrels(dl19["qrels"]).table,
                          cutoffs=[10, 100, "all"], missing="zero", no_relevant="zero")
    means = evaluation.summary["mean"].round(4).tolist()
    assert means == [0.7215, 0.6314, 0.6619]


def test_docids_with_equal_keys_keep_their_own_labels(monkeypatch):
    # Force every (query, docid) pair to the same 64-bit key: the join must fall back to comparing
    # the queries and docids themselves, so collisions never change a label.
    import ndcg_report.inputs.duplicates as read_inputs_module

    monkeypatch.setattr(read_inputs_module, "pair_keys", lambda qids, docids: np.zeros(len(docids), np.uint64))
    run = pd.DataFrame({"qid": ["q1", "q1", "q1", "q2"], "docid": ["aa", "b", "a", "a"], "score": [3.0, 2.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"qid": ["q1", "q1", "q1", "q2"], "docid": ["a", "aa", "b", "b"], "rel": [1.0, 3.0, 0.0, 2.0]})
    evaluation = evaluate(run, qrels, cutoffs=[3], no_relevant="zero")
    dcg = 3 + 0 / math.log2(3) + 1 / math.log2(4)
    idcg = 3 + 1 / math.log2(3)
    assert at(evaluation, "ndcg", "3") == pytest.approx(dcg / idcg)
    assert evaluation.values[list(evaluation.qids).index("q2"), 0] == 0.0  # q2's `a` is unjudged


def test_duplicate_check_is_exact_under_key_collisions():
    import pyarrow as pa

    from ndcg_report.inputs.pair_index import build_pair_index
    from ndcg_report.inputs.duplicates import first_duplicate_pair

    docids = pa.array(["a", "a\x00", "b", "a"])
    colliding = build_pair_index(np.zeros(len(docids), np.uint64))
    codes = np.array([0, 0, 0, 1], dtype=np.int32)
    assert first_duplicate_pair(codes, docids, colliding) is None
    codes = np.array([0, 0, 0, 0], dtype=np.int32)
    assert first_duplicate_pair(codes, docids, colliding) == (0, 3)


def test_fingerprints_depend_on_the_string_alone():
    import pyarrow as pa

    from ndcg_report.inputs.fingerprints import pair_keys, string_fingerprints

    short = string_fingerprints(pa.array(["d1", "a"]))
    mixed = string_fingerprints(pa.array(["x" * 300, "d1", "é", "a", "a\x00", ""]))
    assert short[0] == mixed[1] and short[1] == mixed[3] and len(set(mixed.tolist())) == 6
    one = pair_keys(pa.array(["q1", "q2"]), pa.array(["d1", "d1"]))
    other = pair_keys(pa.array(["q9", "q2", "q1"]), pa.array(["x", "d1", "d1"]))
    assert one[0] == other[2] and one[1] == other[1] and one[0] != one[1]


def test_fingerprints_agree_wherever_the_string_sits_in_its_buffer():
    # strings near a buffer's end are read from a padded copy, the others in place
    import pyarrow as pa

    from ndcg_report.inputs.fingerprints import string_fingerprints

    for text in ["", "a", "é", "1234567", "12345678", "123456789", "x" * 17, "ü" * 9]:
        alone = string_fingerprints(pa.array([text]))[0]
        first = string_fingerprints(pa.array([text, "y" * 40]))[0]
        unaligned = string_fingerprints(pa.array(["z" * 13, text, "y" * 40]))[1]
        sliced = string_fingerprints(pa.array(["w" * 5, text, "v" * 30]).slice(1, 1))[0]
        assert alone == first == unaligned == sliced, text


def test_equal_gain_vectors_give_bit_identical_ndcg_whatever_the_file_order():
    # DCG is summed in rank order, so a tie between two systems is exactly 0, not -1e-16
    # (which would count as a loss in win/tie/loss and change the Wilcoxon test).
    labels = [0.0, 3.0, 1.0, 2.0, 0.0, 1.0, 3.0, 2.0, 1.0, 2.0]
    run, qrels = ranked(labels)
    rng = np.random.default_rng(7)
    for _ in range(5):
        shuffled = run.iloc[rng.permutation(len(run))]
        renamed = run.assign(docid=[f"x{i}" for i in range(len(run))]).iloc[rng.permutation(len(run))]
        renamed_qrels = qrels.assign(docid=[f"x{i}" for i in range(len(run))])
        first = evaluate(run, qrels, cutoffs=[3, 10]).values
        assert np.array_equal(first, evaluate(shuffled, qrels, cutoffs=[3, 10]).values)
        assert np.array_equal(first, evaluate(renamed, renamed_qrels, cutoffs=[3, 10]).values)


@pytest.mark.parametrize("missing", ["zero", "skip"])
@pytest.mark.parametrize("no_relevant", ["zero", "skip"])
@pytest.mark.parametrize("measure", ["nDCG@10", "AP", "R@100", "num_ret"])
def test_averaged_queries_is_evaluate_s_averaged_without_ranking(tmp_path, measure, missing, no_relevant):
    from pathlib import Path

    from ndcg_report.core.evaluation_pass import averaged_queries

    small = Path(__file__).resolve().parents[1] / "data" / "small"
    lines = (small / "monot5.txt").read_text().splitlines()
    qids = sorted({line.split()[0] for line in lines})
    part = tmp_path / "part.txt"  # half the queries, and one the qrels lack
    part.write_text("\n".join(line for line in lines if line.split()[0] in qids[::2]) + "\nnot-judged Q0 d 1 1.0 t\n")
    for run in (small / "monot5.txt", part):
        for level in (1, 2, 3):
            expected = evaluate(run, small / "qrels.txt", measures=[measure], missing=missing, no_relevant=no_relevant,
                                rel_level=level).averaged[:, 0]
            got = averaged_queries(run, small / "qrels.txt", measure, missing, no_relevant, level)
            assert got.dtype == bool and got.tolist() == expected.tolist()
    assert not averaged_queries(part, small / "qrels.txt", "AP", "skip", "skip", 1).all()  # the case is not trivial
