"""Query groups inside one report: groups files (TSV, DL-HARD's folds.json) and their errors, and the
per-group table: the Experiment's numbers on each group's queries, the group's own Holm family, the
queries in no group, a group of one query."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from ndcg_report import InputError, ParameterError, compare_runs, group_table, read_groups
from ndcg_report.analysis.tables.groups import NO_GROUP
from ndcg_report.inputs.formats.groups import check_groups_known
from ndcg_report.stats.paired import compare_arrays, paired_values, stream_label
from ndcg_report.stats.streams import stream

RESAMPLES = 500


@pytest.fixture(scope="module")
def experiment(dl19):
    folder = dl19["qrels"].parent
    runs = {"monoT5": dl19["monot5"], "RRF": folder / "rrf.bm25-monot5.dl19.run.gz",
            "Interpolation": folder / "interp.bm25-monot5.dl19.run.gz"}
    return compare_runs(runs, dl19["qrels"], dl19["bm25"], baseline_name="BM25", measures="nDCG@10 AP RR@10",
                        rel_level=2, n_resamples=RESAMPLES)


@pytest.fixture(scope="module")
def qids(experiment) -> list[str]:
    return [str(qid) for qid in experiment.baseline.qids]


# --- groups files ------------------------------------------------------------------------------


def test_a_tsv_groups_file_with_header_comments_and_blank_lines(tmp_path):
    path = tmp_path / "groups.tsv"
    path.write_text("qid\tgroup\n# by query type\n19335\tlong query\n\n47923\tshort\r\n87181\tlong query\n")
    groups = read_groups(path)
    assert groups.to_dict() == {"19335": "long query", "47923": "short", "87181": "long query"}
    assert groups.index.name == "qid" and groups.name == "group"


def test_a_folds_json_takes_qids_as_numbers_or_strings_and_matches_them_as_text(tmp_path, experiment, qids):
    path = tmp_path / "folds.json"
    folds = {"1": [int(qid) for qid in qids[:10]], "2": qids[10:20], "3": [int(qids[20]), qids[21]]}
    path.write_text(json.dumps(folds, indent=2))
    groups = read_groups(path)
    assert list(groups.index) == qids[:22] and list(groups) == ["1"] * 10 + ["2"] * 10 + ["3"] * 2
    from_file = group_table(experiment, path)
    from_dict = group_table(experiment, json.loads(path.read_text()))
    pd.testing.assert_frame_equal(from_file, from_dict)
    assert list(pd.unique(from_file["group"])) == ["1", "2", "3", NO_GROUP]
    n = from_file[from_file["measure"] == "nDCG@10"].groupby("group", sort=False)["n"].first()
    assert n.to_dict() == {"1": 10, "2": 10, "3": 2, NO_GROUP: len(qids) - 22}


BAD_FILES = [
    ("groups.tsv", "q1\tA\nq2\n", 2, "expected `qid<TAB>group`, found no tab"),
    ("groups.tsv", "q1\tA\tB\n", 1, "expected `qid<TAB>group`, found 3 tab-separated fields"),
    ("groups.tsv", "q1\t \n", 1, "the group is empty"),
    ("groups.tsv", "q 1\tA\n", 1, "query id 'q 1' contains white space"),
    ("groups.tsv", "q1\tA\nq2\tB\nq1\tB\n", 3, "query 'q1' is already in group 'A' on line 1"),
    ("groups.tsv", "# only a comment\n", None, "no query in any group"),
    ("groups.tsv", "", None, "empty file"),
    ("groups.tsv", b"q1\tA\nq2\t\xff\n", 2, "not valid UTF-8 text"),
    ("folds.json", '{"1": [1, 2],\n "2": [3, 1.5]}', 2, "in group '2': qid is a number (1.5), not a string (1.5)"),
    ("folds.json", '{"1": [1, 2],\n "2": [3, 2]}', 2, "query '2' is already in group '1'"),
    ("folds.json", '{"1": [1, 2],\n "2": []}', 2, "group '2' lists no query"),
    ("folds.json", '{"1": 5}', 1, "group '1' holds a number, not a list of qids"),
    ("folds.json", '{"1": [1, 2],\n\n "2": [3, null]}', 3, "in group '2': qid is null"),
    ("folds.json", '{"1": [1, 2],\n "1": [3]}', None, "key \"1\" given twice in one object"),
    ("folds.json", '{"1": [1, 2],\n "2": [3,]}', 2, "not valid JSON"),
    ("folds.json", '[1, 2]', 1, "the JSON value is a list, not an object"),
]


@pytest.mark.parametrize(("name", "text", "line", "problem"), BAD_FILES, ids=[problem for _, _, _, problem in BAD_FILES])
def test_a_bad_groups_file_is_one_line_naming_the_file_the_line_and_the_fix(tmp_path, name, text, line, problem):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(InputError) as caught:
        read_groups(path)
    error = caught.value
    assert error.path == str(path) and error.line == line, str(error)
    assert problem in error.problem, str(error)
    assert error.fix and "\n" not in str(error)


def test_a_groups_file_naming_no_known_query_is_refused_with_the_file(tmp_path, experiment, qids):
    path = tmp_path / "groups.tsv"
    path.write_text("dl20-1\tA\ndl20-2\tB\n")
    with pytest.raises(InputError) as caught:
        check_groups_known(read_groups(path), qids, path)
    assert str(caught.value) == (f"{path}: names no query of the qrels (2 queries, e.g. 'dl20-1', 'dl20-2'); give the "
                                 "groups of this collection's queries, with qids written as in the qrels")
    with pytest.raises(InputError, match="names no query of the qrels"):
        group_table(experiment, path)
    with pytest.raises(ParameterError, match="the groups names no query of the qrels"):
        group_table(experiment, {"A": ["dl20-1"]})
    check_groups_known(read_groups(path), ["dl20-2"], path)  # one known query is enough


def test_groups_in_memory_are_checked(experiment, qids):
    with pytest.raises(ParameterError, match=f"query '{qids[0]}' is in group 'A' and in 'B'"):
        group_table(experiment, {"A": qids[:2], "B": qids[:1]})
    with pytest.raises(ParameterError, match="a group is named '\\(no group\\)'"):
        group_table(experiment, {NO_GROUP: qids[:2]})
    with pytest.raises(ParameterError, match="name every group with text"):
        group_table(experiment, {qids[0]: None})
    with pytest.raises(ParameterError, match="must be a mapping"):
        group_table(experiment, 5)


# --- the per-group table -----------------------------------------------------------------------


def by_hand(experiment, group: str, members: list[str]) -> pd.DataFrame:
    """What a group's rows must hold, recomputed from the per-query values: the paired randomization
    test and bootstrap on the group's queries, from the group's streams, Holm over the systems."""
    rows = []
    family_confidence = 1 - 0.05 / len(experiment.names)
    for measure in experiment.measures:
        found = {}
        for name in experiment.names:
            qids, x, y = paired_values(experiment.evaluations[name], experiment.baseline, measure)
            keep = np.isin(qids.astype(str), members)
            labels = (name, "BM25", stream_label(measure), "group", group)
            found[name] = compare_arrays(x[keep], y[keep], stream(42, "randomization", *labels),
                                         stream(42, "bootstrap", *labels), RESAMPLES, 0.95,
                                         family_confidence=family_confidence)
        raw = np.array([found[name]["randomization_pvalue"] for name in experiment.names])
        adjusted = multipletests(raw, method="holm")[1]
        scores = experiment.scores(measure)
        inside = scores[scores.index.isin(members)]
        for name, p in zip(experiment.names, adjusted):
            rows.append({"system": name, "measure": measure.label, "n": found[name]["n"],
                         "mean": inside[name].mean(), "delta": found[name]["delta"],
                         "ci_low": found[name]["family_ci_low"], "ci_high": found[name]["family_ci_high"],
                         "p_holm": p, "significant": p < 0.05})
        rows.append({"system": "BM25", "measure": measure.label, "n": len(inside), "mean": inside["BM25"].mean()})
    return pd.DataFrame(rows)


def test_each_group_has_the_experiments_numbers_on_its_queries_and_its_own_holm_family(experiment, qids):
    groups = {"odd": qids[1::2], "even": qids[0::2]}
    table = group_table(experiment, groups)
    assert list(table.columns) == ["group", "system", "role", "measure", "n", "mean", "delta", "ci_low", "ci_high",
                                   "ci_level", "p_holm", "significant"]
    assert len(table) == 2 * 4 * 3 and NO_GROUP not in set(table["group"])  # every query is in a group
    for group, members in groups.items():
        ours = table[table["group"] == group].sort_values(["measure", "system"]).reset_index(drop=True)
        expected = by_hand(experiment, group, members).sort_values(["measure", "system"]).reset_index(drop=True)
        for column in ("n", "mean", "delta", "ci_low", "ci_high", "p_holm"):
            np.testing.assert_allclose(ours[column].astype(float), expected[column].astype(float), rtol=1e-12,
                                       err_msg=column)
        runs = ours["role"] == "run"
        assert list(ours.loc[runs, "significant"]) == list(expected.loc[runs, "significant"])
        assert ours.loc[~runs, "significant"].isna().all() and ours.loc[~runs, "delta"].isna().all()
    assert (table.loc[table["role"] == "run", "ci_level"] == 1 - 0.05 / 3).all()
    # the means of a group are the leaderboard's over its queries: with both groups, n adds up to all queries
    n = table[(table["measure"] == "AP") & (table["system"] == "BM25")]["n"]
    assert int(n.sum()) == len(experiment.scores("AP")) == len(qids)


def test_a_groups_numbers_do_not_depend_on_the_other_groups(experiment, qids):
    alone = group_table(experiment, {"top": qids[:15]})
    with_others = group_table(experiment, {"top": qids[:15], "rest": qids[15:30]})
    pd.testing.assert_frame_equal(alone[alone["group"] == "top"].reset_index(drop=True),
                                  with_others[with_others["group"] == "top"].reset_index(drop=True))


def test_queries_in_no_group_are_counted_as_their_own_group(experiment, qids):
    table = group_table(experiment, pd.Series({qids[0]: "A", qids[1]: "A", qids[2]: "B", "not-a-query": "B"}))
    ndcg = table[(table["measure"] == "nDCG@10") & (table["system"] == "monoT5")].set_index("group")
    assert list(ndcg.index) == ["A", "B", NO_GROUP]
    assert ndcg["n"].to_dict() == {"A": 2, "B": 1, NO_GROUP: len(qids) - 3}  # the unknown query is left out
    rest = experiment.deltas("nDCG@10")["monoT5"].drop(qids[:3])
    assert ndcg.at[NO_GROUP, "delta"] == pytest.approx(rest.mean(), abs=1e-15)
    renamed = group_table(experiment, {"A": qids[:2]}, no_group="other")
    assert list(pd.unique(renamed["group"])) == ["A", "other"]


def test_a_group_of_one_query_has_its_value_and_no_interval_or_test(experiment, qids):
    table = group_table(experiment, {"one": [qids[5]], "rest": qids[6:]})
    one = table[(table["group"] == "one")]
    scores = experiment.scores("nDCG@10").loc[qids[5]]
    row = one[(one["system"] == "RRF") & (one["measure"] == "nDCG@10")].iloc[0]
    assert row["n"] == 1 and row["mean"] == scores["RRF"] and row["delta"] == scores["RRF"] - scores["BM25"]
    runs = one[one["role"] == "run"]
    assert runs[["ci_low", "ci_high", "p_holm"]].isna().all().all()
    assert not runs["significant"].any() and runs["significant"].notna().all()
    # the other groups are untouched by it: their family is their own
    assert table[(table["group"] == "rest") & (table["role"] == "run")]["p_holm"].notna().all()


def test_the_figure_of_the_delta_per_group(experiment, qids):
    from ndcg_report.analysis.tables.figures import block_deltas

    table = group_table(experiment, {"one": [qids[0]], "rest": qids[1:30]})
    ax = block_deltas(table, "group", "nDCG@10").axes[0]
    assert [tick.get_text() for tick in ax.get_xticklabels()] == ["one", "rest", NO_GROUP]
    markers = [line for line in ax.get_lines() if line.get_marker() not in (None, "None", "")]
    assert sum(len(line.get_xdata()) for line in markers) == 3 * 3
    assert len(ax.collections) == 3  # the intervals, one set per system: none drawn for the group of one query
    assert sum(len(segments) for segments in (c.get_segments() for c in ax.collections)) == 3 * 2
    assert "BM25" in ax.get_ylabel()


def test_the_marked_table_of_the_groups(experiment, qids):
    from ndcg_report.analysis.tables.display import marked_table

    table = group_table(experiment, {"one": [qids[0]], "rest": qids[1:]})
    cells = marked_table(table, "group", "nDCG@10")
    assert list(cells.columns) == ["one", "rest"] and list(cells.index) == ["monoT5", "RRF", "Interpolation", "BM25"]
    rest = table[(table["group"] == "rest") & (table["measure"] == "nDCG@10")].set_index("system")
    for name in ("monoT5", "RRF", "Interpolation"):
        mark = " ▲" if rest.at[name, "significant"] and rest.at[name, "delta"] > 0 else ""
        assert cells.at[name, "rest"] == f"{rest.at[name, 'mean']:.4f}{mark}"
        assert "▲" not in cells.at[name, "one"]  # one query: never marked
    assert "▲" in "".join(cells["rest"])
