"""Every numeric measure of trec_eval 10's `-m all_trec`: `eval --format trec -q -m all_trec`
prints the lines trec_eval -c -q -m all_trec printed (tests/data/trec_eval/, made by trec_eval 10 on
the DL 2019 runs at -l 1 and -l 2, with and without -M); their names in both spellings; -M in
memory, streamed and in parts; how each family's `all` row is made."""

from __future__ import annotations

import gzip
import math
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import ir_measures
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from ndcg_report import ParameterError, evaluate
from ndcg_report.commands.eval import run_eval
from ndcg_report.cli import build_parser
from ndcg_report.core.measures.names import Measure, resolve_measures
from ndcg_report.core.output_formats import format_trec
from ndcg_report.core.partitions import Options, evaluate_partitioned
from ndcg_report.core.streaming import evaluate_streaming
from ndcg_report.inputs.reading import read_qrels, read_run

EXPECTED = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
TEXT = ("runid", "relstring")  # trec_eval's text measures: not computed (see tests/data/trec_eval/README.md)
MISSING = "19335"  # the query bm25-without-19335 lacks


def trec_eval_lines(name: str) -> list[str]:
    """A file of tests/data/trec_eval, without its text measures (the rows trec_eval -c -q prints for a
    query the run lacks, its values 0, are kept: eval prints them too)."""
    with gzip.open(EXPECTED / name, "rt") as lines:
        return [line.rstrip("\n") for line in lines if not line.startswith(TEXT)]


@pytest.fixture(scope="module")
def inputs(dl19, tmp_path_factory) -> dict[str, Path]:
    """The runs and qrels trec_eval read, made as the README says: the pooled qrels (every fifth line's
    label -1) and the BM25 run without query 19335."""
    folder = tmp_path_factory.mktemp("trec-eval-inputs")
    lines = dl19["qrels"].read_text().splitlines()
    pooled = [" ".join(line.split()[:3] + ["-1"]) if number % 5 == 0 else line
              for number, line in enumerate(lines, start=1)]
    (folder / "qrels.pooled.txt").write_text("\n".join(pooled) + "\n")
    with gzip.open(dl19["bm25"], "rt") as run:
        (folder / "bm25-without-19335.txt").write_text("".join(line for line in run if not line.startswith(MISSING + " ")))
    return {"qrels": dl19["qrels"], "pooled": folder / "qrels.pooled.txt", "bm25": dl19["bm25"],
            "monot5": dl19["monot5"], "bm25-without-19335": folder / "bm25-without-19335.txt"}


def eval_text(*args: object) -> str:
    """What `ndcg-report eval ARGS` prints, run in this process (the command's own code path)."""
    parsed = build_parser().parse_args(["eval", *map(str, args)])
    return b"".join(run_eval(parsed)).decode("utf-8")


FILES = {  # file -> (qrels, run, options), as tests/data/trec_eval/README.md made them
    "bm25.l1.all_trec.gz": ("qrels", "bm25", ["-l", "1"]),
    "bm25.l1.M100.all_trec.gz": ("qrels", "bm25", ["-l", "1", "-M", "100"]),
    "bm25.l2.all_trec.gz": ("qrels", "bm25", ["-l", "2"]),
    "bm25.l2.M100.all_trec.gz": ("qrels", "bm25", ["-l", "2", "-M", "100"]),
    "monot5.l1.all_trec.gz": ("qrels", "monot5", ["-l", "1"]),
    "monot5.l1.M100.all_trec.gz": ("qrels", "monot5", ["-l", "1", "-M", "100"]),
    "monot5.l2.all_trec.gz": ("qrels", "monot5", ["-l", "2"]),
    "monot5.l2.M100.all_trec.gz": ("qrels", "monot5", ["-l", "2", "-M", "100"]),
    "bm25.pooled.l2.all_trec.gz": ("pooled", "bm25", ["-l", "2"]),
    "monot5.pooled.l1.M20.all_trec.gz": ("pooled", "monot5", ["-l", "1", "-M", "20"]),
    "bm25-without-19335.l1.all_trec.gz": ("qrels", "bm25-without-19335", ["-l", "1"]),
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_eval_prints_the_lines_trec_eval_printed(inputs, name):
    qrels, run, options = FILES[name]
    printed = eval_text("--format", "trec", "-q", "-m", "all_trec", *options, inputs[qrels], inputs[run])
    expected = trec_eval_lines(name)
    assert len(expected) > 43 * 90
    assert printed.splitlines() == expected


def test_the_command_line_prints_them_too(inputs):
    """The acceptance as a user types it: the same lines as `trec_eval -c -q -m all_trec -l 2 -M 100`."""
    result = subprocess.run([sys.executable, "-m", "ndcg_report.cli", "eval", "--format", "trec", "-q", "-m", "all_trec",
                             "-l", "2", "-M", "100", str(inputs["qrels"]), str(inputs["bm25"])],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == trec_eval_lines("bm25.l2.M100.all_trec.gz")


def test_streamed_and_in_parts_print_the_same(inputs, tmp_path):
    """-M and every new family through the streamed path (blocks of whole queries) and through the parts of
    a Parquet dataset (what eval --dask runs on each worker), equal to the whole run in memory."""
    options = dict(measures="all_trec", rel_level=2, missing="zero", no_relevant="zero", max_retrieved=100)
    whole = evaluate(inputs["monot5"], inputs["pooled"], **options)
    streamed = evaluate_streaming(inputs["monot5"], inputs["pooled"], block_bytes=1 << 16, **options)
    table = read_run(inputs["monot5"]).table
    table = pa.table({"qid": table["qid"].cast(pa.string()), "docid": table["docid"], "score": table["score"]})
    folder = tmp_path / "parts"
    folder.mkdir()
    qids = sorted(set(table["qid"].to_pylist()))
    for part in range(3):
        pq.write_table(table.filter(pc.is_in(table["qid"], value_set=pa.array(qids[part::3]))), folder / f"{part}.parquet")
    with ThreadPoolExecutor(2) as pool:
        parts = evaluate_partitioned(folder, read_qrels(inputs["pooled"]), pool, Options.of(**options))
    for other in (streamed, parts):
        assert np.array_equal(other.values, whole.values) and np.array_equal(other.averaged, whole.averaged)
        assert format_trec(other, True) == format_trec(whole, True)


# --- -M ---------------------------------------------------------------------------------------------


def test_max_retrieved_is_the_run_cut_to_its_first_n_lines_in_trec_eval_order(dl19):
    """-M N equals evaluating the run cut to each query's first N lines by score, then docid, descending."""
    run = read_run(dl19["monot5"]).table.to_pandas()
    run["qid"] = run["qid"].astype(str)
    cut = (run.sort_values(["qid", "score", "docid"], ascending=[True, False, False])
           .groupby("qid", sort=False).head(30))
    measures = "all_trec nDCG_judged@10"
    whole = evaluate(dl19["monot5"], dl19["qrels"], measures=measures, max_retrieved=30)
    lines = evaluate(dl19["monot5"], dl19["qrels"], measures="num_ret").num_ret
    assert np.array_equal(whole.num_ret, np.minimum(lines, 30)) and (lines > 30).sum() == 42
    truncated = evaluate(cut, dl19["qrels"], measures=measures)
    assert np.array_equal(whole.values, truncated.values) and np.array_equal(whole.judged, truncated.judged)
    deeper = evaluate(dl19["monot5"], dl19["qrels"], measures=measures, max_retrieved=10**6)
    assert np.array_equal(deeper.values, evaluate(dl19["monot5"], dl19["qrels"], measures=measures).values)


def test_json_names_the_max_retrieved_it_was_computed_with(dl19):
    import json

    assert json.loads(eval_text("--format", "json", "-M", "5", "-m", "SetP", dl19["qrels"], dl19["bm25"]))[
        "parameters"]["max_retrieved"] == 5
    assert "max_retrieved" not in json.loads(eval_text("--format", "json", "-m", "SetP", dl19["qrels"], dl19["bm25"]))[
        "parameters"]


@pytest.mark.parametrize("bad", [0, -3, 2.5, "10", True])
def test_max_retrieved_must_be_a_whole_number_from_1(dl19, bad):
    with pytest.raises(ParameterError, match="max_retrieved"):
        evaluate(dl19["bm25"], dl19["qrels"], measures="map", max_retrieved=bad)


@pytest.mark.parametrize(("value", "message"), [("0", "max_retrieved (-M) must be a whole number >= 1"),
                                                ("x", "argument -M/--max-retrieved: invalid int value: 'x'")])
def test_a_bad_M_is_one_line_and_exit_2(dl19, value, message):
    result = subprocess.run([sys.executable, "-m", "ndcg_report.cli", "eval", "-M", value, str(dl19["qrels"]),
                             str(dl19["bm25"])], capture_output=True, text=True, check=False)
    assert result.returncode == 2 and result.stdout == "" and result.stderr.count("\n") == 1
    assert message in result.stderr


# --- names ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("trec", "ir"), [
    ("bpref", "Bpref"), ("bpref", "BPref"), ("infAP", "infAP"), ("iprec_at_recall.0.1", "IPrec@0.1"),
    ("iprec_at_recall_0.10", "IPrec@0.1"), ("iprec_at_recall.0,1", "IPrec@0 IPrec@1.0"), ("num_q", "NumQ"),
    ("set_P", "SetP"), ("set_relative_P", "SetRelP"), ("set_relative_P", "SetP(relative=True)"),
    ("set_recall", "SetR"), ("set_map", "SetAP"), ("set_F", "SetF"), ("Rprec_mult_0.20", "Rprec_mult@0.2"),
    ("relative_P.5,10", "relative_P@5 relative_P@10"), ("unj_5", "unj@5"), ("11pt_avg", "11pt_avg"),
    ("num_nonrel_judged_ret", "num_nonrel_judged_ret"), ("Bpref(rel=2)", "bpref(rel=2)"),
])
def test_trec_eval_and_ir_measures_spellings_name_the_same_measures(trec, ir):
    assert resolve_measures(trec).measures == resolve_measures(ir).measures


def test_the_bare_families_take_trec_evals_parameters():
    assert [m.trec_name() for m in resolve_measures("iprec_at_recall").measures] == [
        f"iprec_at_recall_{x / 10:.2f}" for x in range(11)]
    assert [m.label for m in resolve_measures("IPrec", cutoffs="5,10").measures][:3] == ["IPrec@0", "IPrec@0.1",
                                                                                     "IPrec@0.2"]  # -k is ranks
    assert [m.trec_name() for m in resolve_measures("Rprec_mult").measures] == [
        f"Rprec_mult_{x / 10:.2f}" for x in range(2, 21, 2)]
    assert [m.k for m in resolve_measures("unj").measures] == [5, 10, 20]
    assert [m.k for m in resolve_measures("relative_P").measures] == [5, 10, 15, 20, 30, 100, 200, 500, 1000]
    assert [m.k for m in resolve_measures("unj", cutoffs="3").measures] == [3]
    assert Measure("IPrec", 0.1).depth is None and Measure("unj", 5).depth == 5


def test_ir_measures_objects_are_taken_and_agree(dl19):
    """ir_measures' objects (their str) name the same measures, and its pytrec_eval values agree where it wraps
    trec_eval's code (IPrec: trec_eval 9 places the recall level otherwise, see test_trec_measures_reference)."""
    qrels = list(ir_measures.read_trec_qrels(str(dl19["qrels"])))
    run = list(ir_measures.read_trec_run(str(dl19["bm25"])))
    wanted = [ir_measures.parse_measure(name) for name in
              "Bpref infAP SetP SetP(relative=True) SetR SetAP SetF NumQ Bpref(rel=2)".split()]
    expected = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(wanted[:-1], qrels, run)}
    evaluation = evaluate(dl19["bm25"], dl19["qrels"], measures=[str(m) for m in wanted[:-1]])
    assert [m.label for m in evaluation.measures] == ["Bpref", "infAP", "SetP", "SetRelP", "SetR", "SetAP", "SetF",
                                                      "NumQ"]
    for j, measure in enumerate(evaluation.measures):
        for i, qid in enumerate(evaluation.qids):
            assert evaluation.values[i, j] == pytest.approx(expected[qid, str(wanted[j])], abs=1e-12), measure.label
    assert resolve_measures([str(wanted[-1])]).rel_level == 2


@pytest.mark.parametrize(("bad", "message"), [
    ("runid", "runid is trec_eval's run tag, text rather than a number"), ("relstring.20", "relstring is trec_eval's"),
    ("IPrec@x", "'x' is not a number"), ("IPrec@-0.1", "must be a finite number >= 0"), ("IPrec", "needs a cut-off"),
    ("bpref@10", "Bpref takes no cut-off"), ("AP(relative=True)", "relative is taken for SetP only"),
    ("unj@0", "must be a whole number >= 1"),
])
def test_bad_names_are_refused_with_one_line(bad, message):
    with pytest.raises(ParameterError, match=message.replace("(", r"\(").replace(")", r"\)")):
        resolve_measures(bad) if bad != "IPrec" else resolve_measures([Measure("IPrec")])


# --- the `all` rows ---------------------------------------------------------------------------------


def test_each_all_row_is_made_as_trec_eval_makes_it(dl19, tmp_path):
    evaluation = evaluate(dl19["bm25"], dl19["qrels"], measures="all_trec", rel_level=2, no_relevant="zero")
    ap = evaluation.values[:, evaluation.column("map")]
    assert evaluation.mean("gm_map") == pytest.approx(math.exp(np.mean(np.log(np.maximum(ap, 0.00001)))), rel=1e-15)
    assert evaluation.overall("gm_map") == evaluation.mean("gm_map") != evaluation.mean("AP")
    assert evaluation.summary.loc[("gm_map", None), "mean"] == evaluation.mean("gm_map")
    assert evaluation.overall("NumQ") == 43 and evaluation.overall("num_ret") == 43000
    assert evaluation.overall("num_nonrel_judged_ret") == evaluation.values[:, evaluation.column("num_nonrel_judged_ret")].sum()
    # num_rel with -c: every judgement with a label > 0, not the sum of the rows at level 2 (2501)
    assert evaluation.overall("num_rel") == 4102 and evaluation.num_rel.sum() == 2501
    assert evaluation.mean("num_rel") == pytest.approx(2501 / 43)  # a count's mean stays its mean
    skipped = evaluate(tmp_path_run(dl19, tmp_path), dl19["qrels"], measures="num_q num_rel gm_map", rel_level=2,
                       missing="skip")
    assert skipped.overall("NumQ") == 42 and skipped.overall("num_rel") == skipped.num_rel[skipped.in_run].sum()
    zero = evaluate(tmp_path_run(dl19, tmp_path), dl19["qrels"], measures="num_q gm_map", rel_level=2)
    assert zero.overall("NumQ") == 43 and zero.overall("gm_map") < skipped.overall("gm_map")


def tmp_path_run(dl19, tmp_path: Path) -> Path:
    path = tmp_path / "run.txt"
    if not path.exists():
        with gzip.open(dl19["bm25"], "rt") as run:
            path.write_text("".join(line for line in run if not line.startswith(MISSING + " ")))
    return path


def test_families_printed_overall_only_have_no_rows_per_query(dl19):
    text = eval_text("-q", "-m", "gm_map gm_bpref num_q map", dl19["qrels"], dl19["bm25"])
    names = [line.split("\t")[0].strip() for line in text.splitlines()]
    assert names.count("map") == 44 and names.count("gm_map") == names.count("gm_bpref") == names.count("num_q") == 1
    assert text.splitlines()[-4] == "num_q                 \tall\t43"


def test_a_comparison_takes_them_with_recall_levels_beside_ranks():
    """compare_runs (what a report shows): IPrec's levels and unj's cut-offs side by side (the k columns
    then Float64), gm_map's leaderboard mean geometric, the figures against k drawn for both families."""
    from ndcg_report import compare_runs
    from ndcg_report.analysis.html import leaderboard_html

    small = Path(__file__).resolve().parents[1] / "data" / "small"
    experiment = compare_runs({"monoT5": small / "monot5.txt"}, small / "qrels.txt", small / "bm25.txt",
                              measures="nDCG@10 IPrec@0.1 IPrec@1 unj.5,10 gm_map", n_resamples=200)
    board = experiment.leaderboard
    assert board.at["monoT5", "gm_map"] == experiment.evaluations["monoT5"].mean("gm_map")
    assert board.at["monoT5", "IPrec@0.1"] == experiment.evaluations["monoT5"].mean("IPrec@0.1")
    assert str(experiment.evaluations["monoT5"].per_query["k"].dtype) == "Float64"
    html = leaderboard_html(board, experiment.significance, "bm25", experiment.headline, measures=experiment.measures)
    assert "@0.1<" in html and "@1<" in html and "@10<" in html
    for family in ("IPrec", "unj"):
        experiment.plot_by_cutoff(family)
