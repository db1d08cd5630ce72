"""Why a query moved (design section 12): judged-only nDCG against ir_measures, the top k with labels,
the unjudged pool against plain-Python pooling, rank-biased overlap, and the report's drill-down
blocks checked against a hand computation, hostile document text shown as text."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import ir_measures
import numpy as np
import pyarrow.compute as pc
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndcg_report.build import notebook_io
from ndcg_report import compare_runs, evaluate
from ndcg_report.core import toplists
from ndcg_report.core.toplists import pool_tsv, rank_biased_overlap, rankings, unjudged_pool
from ndcg_report.inputs import fingerprints

SMALL = Path(__file__).resolve().parents[1] / "data" / "small"


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ndcg_report.cli", *map(str, args)], capture_output=True, text=True,
                          check=False)


# --- judged-only nDCG ---------------------------------------------------------------------------------


@pytest.mark.parametrize("system", ["bm25", "monot5"])
def test_judged_only_ndcg_equals_ir_measures_on_dl19(dl19, system):
    qrels = list(ir_measures.read_trec_qrels(str(dl19["qrels"])))
    run = list(ir_measures.read_trec_run(str(dl19[system])))
    wanted = [ir_measures.parse_measure(f"nDCG(judged_only=True)@{k}") for k in (1, 5, 10, 100)]
    wanted.append(ir_measures.parse_measure("nDCG(judged_only=True)"))
    expected = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(wanted, qrels, run)}
    evaluation = evaluate(dl19[system], dl19["qrels"], measures=[str(m) for m in wanted])
    assert [m.label for m in evaluation.measures] == ["nDCG_judged@1", "nDCG_judged@5", "nDCG_judged@10",
                                                      "nDCG_judged@100", "nDCG_judged"]
    for j, name in enumerate(map(str, wanted)):
        for i, qid in enumerate(evaluation.qids):
            assert evaluation.values[i, j] == pytest.approx(expected[qid, name], abs=1e-12), (qid, name)


@st.composite
def graded_runs(draw) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs with many unjudged documents, ties, labels 0-3, queries with nothing relevant."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    runs, qrels = [], []
    for q in range(draw(st.integers(1, 5))):
        pool = list(dict.fromkeys(f"d{rng.integers(0, 60)}" for _ in range(70)))
        n_ret = int(rng.integers(1, len(pool)))
        runs.append(pd.DataFrame({"qid": str(q), "docid": pool[:n_ret],
                                  "score": rng.integers(0, 6, size=n_ret).astype(float)}))
        judged = [d for d in pool if rng.random() < 0.3] or pool[:1]
        qrels.append(pd.DataFrame({"qid": str(q), "docid": judged,
                                   "rel": rng.choice([0.0, 0.0, 1.0, 2.0, 3.0], size=len(judged))}))
    return pd.concat(runs, ignore_index=True), pd.concat(qrels, ignore_index=True)


@settings(max_examples=40, deadline=None)
@given(graded_runs())
def test_judged_only_ndcg_equals_ir_measures_on_generated_runs(data):
    run, qrels = data
    measures = [ir_measures.parse_measure(name) for name in ("nDCG(judged_only=True)@3", "nDCG(judged_only=True)")]
    expected = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(
        measures, [ir_measures.Qrel(r.qid, r.docid, int(r.rel)) for r in qrels.itertuples()],
        [ir_measures.ScoredDoc(r.qid, r.docid, r.score) for r in run.itertuples()])}
    evaluation = evaluate(run, qrels, measures=[str(m) for m in measures])
    for j, name in enumerate(map(str, measures)):
        for i, qid in enumerate(evaluation.qids):
            if (qid, name) in expected:  # ir_measures leaves out queries without relevant documents
                assert evaluation.values[i, j] == pytest.approx(expected[qid, name], abs=1e-12), (qid, name)


def test_a_negative_label_is_judged_and_stays_in_the_condensed_list():
    # design section 2: a negative label means judged, not relevant (trec_eval -J would drop it as unjudged)
    run = pd.DataFrame({"qid": "q", "docid": ["x", "n", "c", "b", "a"], "score": [5.0, 4.0, 3.0, 2.0, 1.0]})
    qrels = pd.DataFrame({"qid": "q", "docid": ["a", "b", "c", "n"], "rel": [2.0, 1.0, 0.0, -1.0]})
    evaluation = evaluate(run, qrels, measures="nDCG_judged@2 nDCG@2")
    assert evaluation.values[0, 0] == 0.0  # condensed: n (-1), c (0) -- x, unjudged, dropped
    assert evaluation.values[0, 1] == 0.0


# --- the top k and the pool ------------------------------------------------------------------------------


def test_rankings_hand_example():
    run = pd.DataFrame({"qid": ["q"] * 5 + ["z"], "docid": ["a", "b", "c", "d", "e", "a"],
                        "score": [1.0, 5.0, 3.0, 3.0, 0.5, 1.0]})
    qrels = pd.DataFrame({"qid": ["q", "q", "q", "q"], "docid": ["b", "d", "e", "f"], "rel": [0.0, 2.0, 1.0, 3.0]})
    ranked = rankings(run, qrels, depth=3, rel_level=1)
    top = ranked.top.to_pylist()  # order: b (5), d (3), c (3: ties by docid descending), a, e; z is not judged
    assert [(r["qid"], r["rank"], r["docid"], r["label"], r["relevant"]) for r in top] == [
        ("q", 1, "b", 0.0, False), ("q", 2, "d", 2.0, True), ("q", 3, "c", None, False)]
    assert [(r["docid"], r["label"], r["rank"]) for r in ranked.relevant.to_pylist()] == [
        ("f", 3.0, None), ("d", 2.0, 2), ("e", 1.0, 5)]


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@settings(max_examples=60, deadline=None)
@given(graded_runs(), graded_runs(), graded_runs(), st.integers(1, 12), st.booleans(), st.sampled_from([1, 2, 1 << 15]),
       st.booleans())
def test_the_pool_equals_plain_python_pooling(monkeypatch_module, first, second, third, depth, colliding, block,
                                              every_query):
    # every_query: the runs' queries without any judgement pooled too (Rankings.pool_top)
    # colliding: every docid gets the same fingerprint, so the pool takes its exact (sorting) path;
    # block: queries pooled at a time (the large runs' path, here with 1 or 2 queries a block)
    monkeypatch_module.setattr(toplists, "string_fingerprints",
                               (lambda docids: np.zeros(len(docids), dtype=np.uint64)) if colliding
                               else fingerprints.string_fingerprints)
    monkeypatch_module.setattr(toplists, "_QUERIES_PER_BLOCK", block)
    qrels = first[1]
    runs = {"A": first[0], "B": second[0], "C": third[0]}
    expected: dict[tuple[str, str], list] = {}
    first_at_best: dict[tuple[str, str], int] = {}  # the first run (in order) giving the best rank
    judged = set(zip(qrels["qid"], qrels["docid"]))
    for position, (name, run) in enumerate(runs.items()):
        for qid, lines in run.groupby("qid"):
            if qid not in set(qrels["qid"]) and not every_query:
                continue
            ordered = sorted(lines.itertuples(), key=lambda r: r.docid, reverse=True)
            ordered = sorted(ordered, key=lambda r: -r.score)
            for rank, row in enumerate(ordered[:depth], start=1):
                if (qid, row.docid) not in judged:
                    entry = expected.setdefault((qid, row.docid), [math.inf, []])
                    if rank < entry[0]:
                        first_at_best[qid, row.docid] = position
                    entry[0] = min(entry[0], rank)
                    entry[1].append(name)
    pool = unjudged_pool({name: (rankings(run, qrels, depth).pool_top() if every_query else rankings(run, qrels, depth).top)
                          for name, run in runs.items()})
    got = {(q, d): [r, json.loads(s)] for q, d, r, s in zip(*(pool[c].to_pylist() for c in
                                                            ("qid", "docid", "best_rank", "systems")))}
    assert got == expected
    assert pool["n_systems"].to_pylist() == [len(json.loads(s)) for s in pool["systems"].to_pylist()]
    keys = [(qid.encode(), -n, best, first_at_best[qid, docid]) for qid, docid, best, n in zip(
        *(pool[c].to_pylist() for c in ("qid", "docid", "best_rank", "n_systems")))]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)  # a total order: one document per run and rank


def test_pool_command_writes_the_pool_and_refuses_bad_input(tmp_path):
    out = tmp_path / "pool.tsv"
    result = cli("pool", SMALL / "qrels.txt", f"mono={SMALL / 'monot5.txt'}", SMALL / "bm25.txt", "-k", "10",
                 "--out", out)
    assert result.returncode == 0, result.stderr
    qrels = pd.read_csv(SMALL / "qrels.txt", sep=" ", header=None, names=["qid", "i", "docid", "rel"], dtype=str)
    runs = {name: pd.read_csv(path, sep=" ", header=None, names=["qid", "q0", "docid", "r", "score", "t"],
                              dtype={"qid": str, "docid": str})
            for name, path in (("mono", SMALL / "monot5.txt"), ("bm25", SMALL / "bm25.txt"))}
    expected = pool_tsv(unjudged_pool({name: rankings(run[["qid", "docid", "score"]],
                                                      qrels.assign(rel=qrels["rel"].astype(float)), 10).top
                                       for name, run in runs.items()}))
    assert out.read_text() == expected and expected.startswith("qid\tdocid\tbest_rank\tn_systems\tsystems\n")
    assert result.stdout.endswith("1 query, 0 of them with no judgement at all in the qrels\n"), result.stdout
    # a query the runs retrieve for and the qrels do not judge at all: pooled, its top 10 of both runs, and counted
    unjudged = "1037798"
    (tmp_path / "fewer.txt").write_text("".join(line + "\n" for line in (SMALL / "qrels.txt").read_text().splitlines()
                                                if not line.startswith(unjudged + " ")))
    result = cli("pool", tmp_path / "fewer.txt", f"mono={SMALL / 'monot5.txt'}", SMALL / "bm25.txt", "-k", "10",
                 "--out", out)
    assert result.returncode == 0, result.stderr
    tops = {name: run[run["qid"] == unjudged].sort_values(["score", "docid"], ascending=False)["docid"].head(10)
            for name, run in runs.items()}
    rows = [line.split("\t") for line in out.read_text().splitlines()[1:] if line.startswith(unjudged + "\t")]
    assert {row[1] for row in rows} == set(tops["mono"]) | set(tops["bm25"]) and len(rows) > 10
    assert result.stdout.endswith("2 queries, 1 of them with no judgement at all in the qrels\n"), result.stdout
    for args, message in ((["-k", "0"], "--depth must be a whole number"), (["--out", SMALL / "bm25.txt"], "is the input")):
        bad = cli("pool", SMALL / "qrels.txt", SMALL / "bm25.txt", *(args if "--out" in args else [*args, "--out", out]))
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and message in bad.stderr, bad.stderr
    bad_run = tmp_path / "bad.txt"
    bad_run.write_text("q Q0 d 1 x t\n")
    bad = cli("pool", SMALL / "qrels.txt", bad_run, "--out", tmp_path / "p2.tsv")
    assert bad.returncode == 2 and f"{bad_run}:1:" in bad.stderr and not (tmp_path / "p2.tsv").exists()


def test_rank_biased_overlap():
    base = rankings(pd.DataFrame({"qid": "q", "docid": list("abcd"), "score": [4.0, 3.0, 2.0, 1.0]}),
                    pd.DataFrame({"qid": ["q"], "docid": ["a"], "rel": [1.0]}), depth=4).top
    same = rank_biased_overlap(base, base, ["q"], 4)
    swapped = rankings(pd.DataFrame({"qid": "q", "docid": list("bacd"), "score": [4.0, 3.0, 2.0, 1.0]}),
                       pd.DataFrame({"qid": ["q"], "docid": ["a"], "rel": [1.0]}), depth=4).top
    other = rankings(pd.DataFrame({"qid": "q", "docid": list("wxyz"), "score": [4.0, 3.0, 2.0, 1.0]}),
                     pd.DataFrame({"qid": ["q"], "docid": ["a"], "rel": [1.0]}), depth=4).top
    assert same[0] == pytest.approx(1.0, abs=1e-12)
    assert rank_biased_overlap(base, other, ["q"], 4)[0] == 0.0
    p = 0.9  # the first two swapped: agreement 0, 1, 1, 1 at depths 1-4 (Webber et al.'s RBO_ext)
    agreement = [0, 1, 1, 1]
    expected = agreement[-1] * p ** 4 + (1 - p) / p * sum(a * p ** d for d, a in enumerate(agreement, start=1))
    assert rank_biased_overlap(base, swapped, ["q"], 4)[0] == pytest.approx(expected, abs=1e-12)
    assert math.isnan(rank_biased_overlap(base, swapped, ["missing"], 4)[0])


# --- the report ---------------------------------------------------------------------------------------


def test_a_drilldown_block_against_a_hand_computation(tmp_path):
    from ndcg_report.analysis import results
    from ndcg_report.analysis.drilldown import section_html
    from ndcg_report.build.parameters import validate_parameters

    (tmp_path / "qrels.txt").write_text("q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq1 0 f 3\nq2 0 a 1\n")
    (tmp_path / "base.txt").write_text("".join(f"q1 Q0 {d} {i} {10 - i} base\n" for i, d in enumerate("abcde"))
                                       + "q2 Q0 a 1 1 base\n")
    (tmp_path / "sys.txt").write_text("".join(f"q1 Q0 {d} {i} {10 - i} sys\n" for i, d in enumerate("ecxab"))
                                      + "q2 Q0 a 1 1 sys\n")
    hostile = "<script>alert(1)</script></details>\u202e evil"
    (tmp_path / "docs.jsonl").write_text("\n".join(json.dumps(doc) for doc in (
        {"_id": "a", "title": "Alpha", "text": "first document"}, {"_id": "e", "title": "", "text": hostile},
        {"_id": "zz", "title": "not shown", "text": "never read into the report"})) + "\n")
    params = validate_parameters(runs=[f"S={tmp_path / 'sys.txt'}"], baseline=str(tmp_path / "base.txt"),
                                 baseline_name="B", qrels=str(tmp_path / "qrels.txt"), ks="3",
                                 docs=str(tmp_path / "docs.jsonl"), drilldown_depth=3)
    report = notebook_io.load_report(params)
    page = section_html(report)
    block = page[page.index('id="q-q1"'):page.index("</details>", page.index('id="q-q1"'))]
    rows = block.split("<tr>")[2:]  # the header, then ranks 1-3
    # B: a b c; S: e c x. e: unjudged, new; c: judged 1, up 1 (B's rank 3); x: unjudged, new
    assert '<td class="d r"><b class="l">2</b> <code>a</code></td>' in rows[0]
    assert '<td class="d u"><b class="l u">?</b> <code>e</code> <i class="mv new">new</i></td>' in rows[0]
    assert '<td class="d r"><b class="l">1</b> <code>c</code> <i class="mv up">↑1</i></td>' in rows[1]  # level 1
    assert '<td class="d j"><b class="l">0</b> <code>b</code></td>' in rows[1]  # judged 0: a label, not "?"
    assert '<td class="d u"><b class="l u">?</b> <code>x</code> <i class="mv new">new</i></td>' in rows[2]
    assert "<tr><td><code>a</code></td><td>Alpha: first document</td></tr>" in block  # the text, once per block
    assert block.count("<td><code>a</code></td>") == 1
    # relevant documents left out of the top 3: B misses f (3, not retrieved); S misses f and a (2, rank 4)
    assert "<b>S</b> left 2 relevant documents out of its top 3: <code>f</code> (3, not retrieved), " \
           "<code>a</code> (2, rank 4)" in block
    assert "<b>B</b> left 1 relevant document out of its top 3: <code>f</code> (3, not retrieved)" in block
    # the hostile text is text: escaped, the block still closes where it should
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;&lt;/details&gt;" in page
    assert page.count("<details") == page.count("</details>") == 2
    assert "never read" not in page
    # the per-query table links to the blocks
    table = results.query_table_html(report)
    assert '<a class="qlink" href="#q-q1">q1</a>' in table and "RBO: S" in table


def test_with_many_systems_a_block_sets_side_by_side_those_that_moved_most_on_its_query(tmp_path):
    """8 systems: system k puts the relevant document at rank k+1 on q1 (nDCG@3 falls with k), and every one
    ties the baseline on q2; q1's block shows the baseline and the 6 furthest from it, q2's the first 6 given."""
    from ndcg_report.analysis.drilldown import MAX_DRILL_SYSTEMS, drilldown_html

    assert MAX_DRILL_SYSTEMS == 6
    (tmp_path / "qrels.txt").write_text("q1 0 r 1\nq2 0 r 1\n")
    (tmp_path / "base.txt").write_text("".join(f"q1 Q0 d{i} {i} {10 - i} b\n" for i in range(5))
                                       + "q2 Q0 r 1 1 b\n")
    runs = {}
    for k in range(8):  # s0 has r first (nDCG@3 1), s1 second, s2 third, s3..s7 not in the top 3 (nDCG@3 0)
        docs = [f"d{i}" for i in range(4)]
        docs.insert(k, "r")
        (tmp_path / f"s{k}.txt").write_text("".join(f"q1 Q0 {d} {i} {10 - i} s\n" for i, d in enumerate(docs))
                                            + "q2 Q0 r 1 1 s\n")
        runs[f"s{k}"] = tmp_path / f"s{k}.txt"
    experiment = compare_runs(runs, tmp_path / "qrels.txt", tmp_path / "base.txt", baseline_name="B", cutoffs="3",
                              n_resamples=50, drilldown_depth=3)
    values = experiment.scores().loc["q1"]
    assert [round(float(values[f"s{k}"]), 4) for k in range(4)] == [1.0, 0.6309, 0.5, 0.0]
    page = drilldown_html(experiment, ["q1", "q2"])
    for qid, shown in (("q1", ["s0", "s1", "s2", "s3", "s4", "s5"]), ("q2", ["s0", "s1", "s2", "s3", "s4", "s5"])):
        block = page[page.index(f'id="q-{qid}"'):page.index("</details>", page.index(f'id="q-{qid}"'))]
        header = block[block.index("<thead>"):block.index("</thead>")]
        assert [name for name in runs if f'<th class="text">{name}</th>' in header] == shown, qid
        assert "the 6 of the 8 systems whose nDCG@3 on this query is furthest from B's" in block
        head = block.split("</summary>")[0]
        assert all(f" · {name} " in head for name in runs)  # every system's value, above
        assert "Rank-biased overlap with B's top 3: s0" in block and ", s7 " in block  # every system's RBO


def test_anchors_are_stable_tokens():
    from ndcg_report.analysis.drilldown import anchor

    assert anchor("1037798") == "q-1037798"
    assert anchor('a b"<c>') == "q-a%20b%22%3Cc%3E"


def test_above_the_bound_the_largest_wins_losses_and_spreads_get_blocks(dl19):
    from ndcg_report.analysis.drilldown import drilldown_queries

    experiment = compare_runs({"monoT5": dl19["monot5"]}, dl19["qrels"], dl19["bm25"], baseline_name="BM25",
                              cutoffs="10", n_resamples=100)
    chosen, note = drilldown_queries(experiment, 6)
    deltas = experiment.deltas()["monoT5"].sort_values(kind="stable")
    spread = (experiment.scores().max(axis=1) - experiment.scores().min(axis=1)).sort_values(ascending=False,
                                                                                            kind="stable")
    expected: list[str] = []  # in turn: the largest loss, the largest win, the largest spread, then the next ones
    for position in range(43):
        for candidates in (deltas.index, deltas.index[::-1], spread.index):
            if len(expected) < 6 and candidates[position] not in expected:
                expected.append(candidates[position])
    assert set(chosen) == set(expected) and len(chosen) == 6
    order = list(experiment.deltas()["monoT5"].sort_values(ascending=False, kind="stable").index)
    assert chosen == [qid for qid in order if qid in chosen]  # in the per-query table's order
    assert note.startswith("6 of the 43 queries have their rankings below")
    everything, note = drilldown_queries(experiment, 200)
    assert len(everything) == 43 and note.startswith("Every one of the 43 queries")
    assert drilldown_queries(experiment, 0)[0] == []


def reference_rbo(first: list[str], second: list[str], depth: int, p: float = 0.9) -> float:
    """RBO_ext at depth (Webber, Moffat and Zobel 2010, eq. 32), set by set."""
    agreement = [len(set(first[:d]) & set(second[:d])) / d for d in range(1, depth + 1)]
    return agreement[-1] * p ** depth + (1 - p) / p * sum(a * p ** d for d, a in enumerate(agreement, start=1))


@settings(max_examples=60, deadline=None)
@given(graded_runs(), graded_runs(), st.integers(1, 12), st.booleans())
def test_rank_overlap_equals_a_set_by_set_reference(monkeypatch_module, first, second, depth, colliding):
    # colliding: every docid gets the same fingerprint, so the overlap falls back to exact codes
    monkeypatch_module.setattr(toplists, "string_fingerprints",
                               (lambda docids: np.zeros(len(docids), dtype=np.uint64)) if colliding
                               else fingerprints.string_fingerprints)
    qrels = first[1]
    base, other = (rankings(run, qrels, depth).top for run in (first[0], second[0]))
    qids = sorted(set(qrels["qid"])) + ["absent"]
    got = rank_biased_overlap(base, other, qids, depth)
    for qid, value in zip(qids, got):
        lists = [[r["docid"] for r in top.filter(pc.equal(top["qid"], qid)).to_pylist()] for top in (base, other)]
        if not all(lists):
            assert math.isnan(value)
        else:
            assert value == pytest.approx(reference_rbo(*lists, depth), abs=1e-12)


def test_a_docs_file_that_reads_as_no_document_is_refused_before_any_kernel(tmp_path):
    # found this stop: a TREC qrels file given as --docs built a report whose blocks had no text
    from ndcg_report.inputs.documents import document_texts

    blank = tmp_path / "blank.tsv"
    blank.write_text("\n\n")
    cases = [(SMALL / "qrels.txt", f"{SMALL / 'qrels.txt'}:1: neither a JSON object nor docid<TAB>text"),
             (tmp_path, f"{tmp_path}: a folder, not a file"), (blank, f"{blank}: no document in its first MiB")]
    for docs, message in cases:
        result = cli("build", "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels",
                     SMALL / "qrels.txt", "--docs", docs, "--out", tmp_path / "out")
        assert result.returncode == 2 and result.stderr == f"ndcg-report: error: {message}; " + (
            "check the docs path\n" if docs == tmp_path else
            'give a BEIR corpus.jsonl ({"_id", "title", "text"} per line) or docid<TAB>text lines\n'), result.stderr
        assert not (tmp_path / "out").exists()
    repeated = tmp_path / "repeated.tsv"
    repeated.write_text("d1\tfirst\nd2\tother\nd1\tsecond\n")
    assert document_texts(repeated, {"d1"}) == {"d1": "first"}
    assert document_texts(repeated, {"d1", "d2", "d3"}) == {"d1": "first", "d2": "other"}


def test_the_reports_pool_holds_the_queries_without_any_judgement_and_says_how_many(tmp_path):
    from types import SimpleNamespace

    from ndcg_report import compare_runs
    from ndcg_report.analysis.checks import pool_note

    unjudged = "1037798"
    fewer = tmp_path / "fewer.txt"
    fewer.write_text("".join(line + "\n" for line in (SMALL / "qrels.txt").read_text().splitlines()
                             if not line.startswith(unjudged + " ")))
    experiment = compare_runs({"mono": SMALL / "monot5.txt"}, fewer, SMALL / "bm25.txt", cutoffs="10", n_resamples=50)
    pool = experiment.unjudged_pool()
    assert unjudged in pool["qid"].to_pylist()  # its top 10 from both runs, every document unjudged
    assert pool.filter(pc.equal(pool["qid"], unjudged)).num_rows >= 10
    assert pool["qid"].to_pylist() == sorted(pool["qid"].to_pylist(), key=str.encode)  # by qid, byte order
    note = pool_note(SimpleNamespace(experiment=experiment))
    assert "over 2 queries (1 of them with no judgement at all: they are not evaluated)" in note
    assert pool_tsv(pool) == pool_tsv(unjudged_pool({name: experiment.rankings[name].pool_top()
                                                     for name in experiment.systems}))


def test_a_block_names_the_first_twenty_relevant_documents_left_out_and_counts_the_rest():
    from ndcg_report.analysis.drilldown import MISSED_SHOWN, _missed

    relevant = [{"docid": f"d{i}", "label": 1.0, "rank": 10 + i} for i in range(25)]
    top = [{"docid": "d0", "label": 1.0, "rank": 1}]
    line = _missed("S", top, relevant, 3)
    assert line.startswith("<p class=\"missed\"><b>S</b> left 24 relevant documents out of its top 3: ")
    assert line.count("<code>") == MISSED_SHOWN == 20
    assert "<code>d1</code> (1, rank 11)" in line and "<code>d20</code>" in line and "<code>d21</code>" not in line
    assert line.endswith(" and 4 more.</p>")
