"""`ndcg-report build`: papermill -> nbval -> offline HTML in staging; failures leave the old report."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from ndcg_report.build.pipeline import BUILD_TIME_END, BUILD_TIME_START, package_file
from tests.helpers import one_line

SHARE_KERNEL_FORKS = True  # its builds fork their kernels from the session's server (conftest.py)

SMALL = Path(__file__).resolve().parents[1] / "data" / "small"
DL19 = Path(str(resources.files("ndcg_report") / "data" / "dl19-passage"))
DEMO_RUNS = {
    "monoT5": "monot5.dl19.run.gz", "RRF BM25+monoT5": "rrf.bm25-monot5.dl19.run.gz",
    "Interpolation BM25+monoT5": "interp.bm25-monot5.dl19.run.gz", "monoT5 top 20 + BM25": "monot5-top20-bm25.dl19.run.gz",
}


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ndcg_report.cli", *map(str, args)],
                          capture_output=True, text=True, check=False)


def small_build_args(out: Path, topics: Path) -> list:
    return ["build", "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels",
            SMALL / "qrels.txt", "--topics", topics, "-k", "1,5,10,100,all", "--out", out]


def without_build_time(page: str) -> str:
    return re.sub(re.escape(BUILD_TIME_START) + ".*?" + re.escape(BUILD_TIME_END), "", page, flags=re.S)


@pytest.fixture(scope="module")
def demo_builds(tmp_path_factory) -> tuple[Path, Path]:
    """The embedded demo built twice with the same command: (copy of the first build, the second)."""
    root = tmp_path_factory.mktemp("demo")
    result = cli("demo", "--out", root / "out")
    assert result.returncode == 0, result.stderr
    shutil.copytree(root / "out", root / "first")
    result = cli("demo", "--out", root / "out")
    assert result.returncode == 0, result.stderr
    return root / "first", root / "out"


def test_demo_outputs_and_headline_numbers(demo_builds):
    out = demo_builds[0]
    assert sorted(p.name for p in out.iterdir()) == ["figures", "leaderboard.md", "leaderboard.tex", "per_query.csv",
                                                     "queries.json", "report.html", "report.ipynb", "summary.json",
                                                     "unjudged.tsv"]
    assert json.loads((out / "queries.json").read_text(encoding="utf-8"))["1037798"] == "who is robert gray"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["schema_version"] == 4
    assert [s["name"] for s in summary["systems"]] == [*DEMO_RUNS, "BM25"]
    parameters = summary["parameters"]
    assert summary["baseline"] == "BM25" and parameters["headline"] == "nDCG@10" and parameters["preset"] == "trec-dl"
    assert parameters["measures"] == DEMO_MEASURES and parameters["rel_level"] == 2
    at10 = summary["comparisons"]["monoT5"]["nDCG@10"]
    assert round(at10["run_mean"], 4) == 0.7215 and round(at10["baseline_mean"], 4) == 0.5058
    assert at10["n"] == 43 and at10["wins"] + at10["ties"] + at10["losses"] == 43
    assert at10["ci_low"] < at10["delta"] < at10["ci_high"]
    family = summary["comparison_family"]
    assert family["size"] == 4 and family["systems"] == list(DEMO_RUNS) and family["adjustment"] == "holm"
    assert family["over"] == "systems" and family["measures"] == DEMO_MEASURES
    assert at10["family_size"] == 4 and at10["family_confidence"] == 1 - 0.05 / 4
    assert at10["family_ci_low"] < at10["ci_low"] < at10["delta"] < at10["ci_high"] < at10["family_ci_high"]
    pairwise = summary["pairwise"]
    assert pairwise["method"] == "randomized Tukey HSD" and sorted(pairwise["systems"]) == sorted([*DEMO_RUNS, "BM25"])
    assert pairwise["pvalues"]["monoT5"]["BM25"] == pairwise["pvalues"]["BM25"]["monoT5"] < 0.05
    assert len(summary["verdicts"]) == 4 and summary["verdicts"][0].startswith("monoT5: nDCG@10 0.7215 against BM25's 0.5058")


DEMO_MEASURES = ["nDCG@10", "nDCG@100", "RR", "AP", "R@100", "R@1000"]  # the trec-dl preset


def leaderboard_cells(page: str) -> dict[str, list[str]]:
    """The leaderboard table of a report page: system name -> cell texts."""
    table = re.search(r'<table class="ndcg-table leaderboard">(.*?)</table>', page, re.S)[1]
    rows = {}
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table.split("<tbody>")[1], re.S):
        cells = [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
        rows[cells[0].replace(" (baseline)", "")] = cells[1:]
    return rows


def test_every_leaderboard_number_equals_the_eval_command(demo_builds):
    out = demo_builds[0]
    summary = json.loads((out / "summary.json").read_text())
    shown = leaderboard_cells((out / "report.html").read_text())
    files = {**DEMO_RUNS, "BM25": "run.msmarco-v1-passage.bm25-default.dl19.txt.gz"}
    for system in summary["systems"]:
        result = cli("eval", "--format", "json", "--preset", "trec-dl", DL19 / "qrels.dl19-passage.txt",
                     DL19 / files[system["name"]])
        evaluated = json.loads(result.stdout)["summary"]
        assert {k: v["mean"] for k, v in system["summary"].items()} == {k: v["mean"] for k, v in evaluated.items()}
        cells = [cell.split()[0] for cell in shown[system["name"]][:6]]
        assert cells == [f"{evaluated[label]['mean']:.4f}" for label in DEMO_MEASURES]


def test_demo_statistics_equal_scipy_and_statsmodels_on_the_per_query_values(demo_builds):
    out = demo_builds[0]
    summary = json.loads((out / "summary.json").read_text())
    per_query = pd.read_csv(out / "per_query.csv", dtype={"qid": str, "k": str, "system": str}, keep_default_na=False)
    assert list(per_query.columns[:6]) == ["system", "role", "qid", "measure", "k", "value"]
    assert len(per_query) == 5 * 43 * 6  # one row per system, qrels query and measure
    per_query["label"] = per_query["measure"] + np.where(per_query["k"] == "", "", "@" + per_query["k"])
    per_query["value"] = per_query["value"].astype(float)
    keys, t_raw = [], []
    for label in DEMO_MEASURES:  # a family per measure: its 4 systems
        for name in DEMO_RUNS:
            rows = per_query[(per_query["label"] == label) & per_query["averaged"]]
            table = rows.pivot(index="qid", columns="system", values="value")
            run, base = table[name].to_numpy(), table["BM25"].to_numpy()
            record = summary["comparisons"][name][label]
            assert record["delta"] == pytest.approx(np.mean(run - base), abs=1e-12)
            assert record["t_pvalue"] == pytest.approx(stats.ttest_rel(run, base).pvalue, rel=1e-9)
            assert record["wilcoxon_pvalue"] == pytest.approx(stats.wilcoxon(run, base).pvalue, rel=1e-9)
            assert record["wins"] == int((run > base).sum()) and record["losses"] == int((run < base).sum())
            assert record["effect_size"] == pytest.approx(np.mean(run - base) / np.std(run - base, ddof=1), rel=1e-9)
            keys.append((name, label))
            t_raw.append(stats.ttest_rel(run, base).pvalue)
        holm = multipletests(t_raw[-4:], method="holm")[1]  # over the 4 systems compared on this measure
        for (name, _), expected in zip(keys[-4:], holm):
            assert summary["comparisons"][name][label]["holm_t_pvalue"] == pytest.approx(expected, rel=1e-9)


def test_demo_html_is_offline_and_deterministic(demo_builds):
    first, second = ((folder / "report.html").read_text() for folder in demo_builds)
    assert BUILD_TIME_START in first
    assert without_build_time(first) == without_build_time(second)
    assert first != without_build_time(first)
    assert not re.search(r"https?://", first)
    assert "<script" not in first
    # mean against k of nDCG and R, then the 7 of the headline (the multi-system ones too)
    assert len(re.findall(r'<img[^>]*src="data:image/png;base64,', first)) == 9
    for section in ("1. What was evaluated", "2. Data checks", "3. Results", "4. Figures", "5. Per query",
                    "6. How to reproduce"):
        assert section in first
    assert first.index("monoT5: nDCG@10 0.7215") < first.index("1. What was evaluated")  # verdicts on top
    assert (demo_builds[0] / "summary.json").read_bytes() == (demo_builds[1] / "summary.json").read_bytes()
    assert (demo_builds[0] / "per_query.csv").read_bytes() == (demo_builds[1] / "per_query.csv").read_bytes()


def assert_reproduce_block_keeps_paths_whole(out: Path) -> None:
    """The reproduce command: one option a line, the summary's command once the lines are joined."""
    import html
    import shlex

    page = (out / "report.html").read_text()
    shown = html.unescape(re.search(r'<pre class="command">(.*?)</pre>', page, re.S).group(1))
    lines = shown.split(" \\\n    ")
    assert len(lines) > 3 and all(line.startswith("-") for line in lines[1:])
    summary = json.loads((out / "summary.json").read_text())
    assert shlex.split(shown.replace(" \\\n    ", " ")) == shlex.split(summary["command"])
    # JupyterLab's `.jp-OutputArea-output pre` breaks words anywhere: the report's rule must be more specific
    assert re.search(r"\.jp-OutputArea-output pre\.command[^{]*\{[^}]*white-space: pre;[^}]*word-break: normal", page)


def test_small_build_escapes_text_from_inputs(tmp_path):
    """Also inputs in other formats: the topics through `<(zcat t.tsv.gz)`, a second
    run as JSON lines of ranked lists, another as pandas 3 writes Parquet (large_string ids, which broke
    build when mixed with text), the qrels as BEIR TSV; the report names the format of each."""
    import gzip

    import pyarrow as pa
    import pyarrow.parquet as pq

    from ndcg_report import read_qrels, read_run

    lines = (SMALL / "topics.txt").read_text().splitlines()
    qid = lines[0].split("\t")[0]
    lines = [f"{line.split(chr(9))[0]}\t<script>alert('x')</script> & <b>bold</b>" for line in lines]
    (tmp_path / "t.tsv.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    run = read_run(SMALL / "monot5.txt").table
    ranked: dict[str, list] = {}
    for q, docid, _ in sorted(zip(run["qid"].to_pylist(), run["docid"].to_pylist(), run["score"].to_pylist()),
                              key=lambda row: (row[0], -row[2])):
        ranked.setdefault(q, []).append(docid)
    (tmp_path / "ranked.jsonl").write_text("".join(json.dumps({"qid": q, "retrieved": ids}) + "\n"
                                                   for q, ids in ranked.items()))
    pq.write_table(pa.table({"qid": pa.array(run["qid"].cast(pa.string()).to_pylist(), pa.large_string()),
                             "docid": pa.array(run["docid"].to_pylist(), pa.large_string()),
                             "score": run["score"]}), tmp_path / "pandas3.parquet")
    qrels = read_qrels(SMALL / "qrels.txt").table
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t{int(r)}\n" for q, d, r in zip(qrels["qid"].to_pylist(), qrels["docid"].to_pylist(),
                                                   qrels["rel"].to_pylist())))
    command = (f'cd {tmp_path} && "{sys.executable}" -m ndcg_report.cli build --run {SMALL / "monot5.txt"} '
               "--run ranked=ranked.jsonl --run pandas=pandas3.parquet --qrels qrels.tsv "
               f"--baseline {SMALL / 'bm25.txt'} --topics <(zcat t.tsv.gz) -k 1,5,10,100,all --out out")
    result = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "out" / "report.html").read_text()
    assert "<script" not in page and "<b>bold</b>" not in page
    shown = re.findall(r"&lt;script&gt;alert\((?:'|&#x27;|&#39;)x(?:'|&#x27;|&#39;)\)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;", page)
    assert len(shown) >= 2
    executed = nbformat.read(tmp_path / "out" / "report.ipynb", as_version=4)
    assert any("injected-parameters" in cell.metadata.get("tags", []) for cell in executed.cells)
    assert qid in page
    assert_reproduce_block_keeps_paths_whole(tmp_path / "out")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert {record["role"]: record["format"] for record in summary["files"]} == {
        "run: monot5": "TREC text", "run: ranked": "JSON lines", "run: pandas": "Parquet",
        "baseline: bm25": "TREC text", "qrels": "BEIR TSV", "topics": "TSV"}
    assert "BEIR TSV" in page and "JSON lines" in page


def test_broken_notebook_exits_1_naming_the_cell_and_keeps_the_previous_report(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").write_text("previous report")
    (out / "summary.json").write_text('{"schema_version": 2, "ndcg_report_version": "0.1.0"}')  # the tool's mark
    notebook = nbformat.read(package_file("notebooks", "ndcg_report.ipynb"), as_version=4)
    target = next(i for i, cell in enumerate(notebook.cells) if "comparison_table" in cell.source)
    notebook.cells[target].source = "raise RuntimeError('broken on purpose')\n" + notebook.cells[target].source
    broken = tmp_path / "broken.ipynb"
    nbformat.write(notebook, broken)
    result = cli(*small_build_args(out, SMALL / "topics.txt"), "--notebook", broken)
    assert result.returncode == 1
    assert "step papermill failed" in result.stderr
    assert f"cell {target} (`raise RuntimeError('broken on purpose')`)" in result.stderr
    assert "RuntimeError: broken on purpose" in result.stderr
    assert result.stderr.count("\n") == 1
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "summary.json"]
    assert (out / "report.html").read_text() == "previous report"
    assert [p.name for p in tmp_path.iterdir() if ".staging" in p.name] == []


def test_non_deterministic_notebook_fails_nbval(tmp_path):
    notebook = nbformat.read(package_file("notebooks", "ndcg_report.ipynb"), as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell("import uuid\nprint(uuid.uuid4())"))
    drifting = tmp_path / "drifting.ipynb"
    nbformat.write(notebook, drifting)
    result = cli(*small_build_args(tmp_path / "out", SMALL / "topics.txt"), "--notebook", drifting)
    assert result.returncode == 1
    assert "step nbval failed" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"--run": "missing.txt"}, "missing.txt: no such file"),
        ({"-k": "0,10"}, "cut-off '0' must be a whole number >= 1"),
        ({"--gain": "cubic"}, "argument --gain: invalid choice: 'cubic'"),
        ({"--baseline": "OTHER"}, "the baseline has no query in common with the qrels"),
    ],
)
def test_bad_parameters_fail_before_any_kernel(tmp_path, change, message):
    other = tmp_path / "other.txt"
    other.write_text("999 Q0 d1 1 1.0 x\n")
    args = small_build_args(tmp_path / "reports" / "out", SMALL / "topics.txt")
    for flag, value in change.items():
        if flag not in args:
            args += [flag, ""]
        args[args.index(flag) + 1] = other if value == "OTHER" else value
    result = cli(*args)
    assert result.returncode == 2
    assert message in result.stderr and result.stderr.count("\n") == 1
    # no staging folder, and not the folder --out would have been made in
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.txt"]


@pytest.mark.parametrize(
    ("runs", "extra", "message"),
    [
        (["A", "A"], [], "is given twice (as run 1 and as run 2)"),
        (["x=A", "x=B"], [], "two runs are named 'x'"),
        (["X=A", "x=B"], [], "two runs are named 'x'"),
        (["A", "B"], ["--run-name", "n"], "--run-name names a single --run"),
        (["x=A"], ["--baseline-name", "x"], "like the baseline"),
        (["=A"], [], "the system name is empty"),
        (["A"], ["--run-name", "x\x1b"], "--run-name: the system name 'x\\x1b' holds a control character (U+001B)"),
        (["A"], ["--baseline-name", "   "], "--baseline-name: the system name is empty"),
    ],
)
def test_repeated_runs_or_names_are_refused_with_one_line(tmp_path, runs, extra, message):
    files = {"A": SMALL / "monot5.txt", "B": tmp_path / "b.txt"}
    files["B"].write_text((SMALL / "monot5.txt").read_text())
    args = ["build"]
    for spec in runs:
        name, _, key = spec.rpartition("=")
        args += ["--run", f"{name}={files[key]}" if "=" in spec else files[key]]
    args += ["--baseline", SMALL / "bm25.txt", "--qrels", SMALL / "qrels.txt", *extra, "--out", tmp_path / "out"]
    result = cli(*args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_a_bad_judgment_set_name_is_said_to_be_the_qrels_option_s(tmp_path):
    given = f"={SMALL / 'qrels.txt'}"
    result = cli("build", "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels", given,
                 "--qrels", f"other={SMALL / 'qrels.txt'}", "--out", tmp_path / "out")
    one_line(result, 2, f"--qrels {given!r}: the system name is empty")
    assert "--run" not in result.stderr and not (tmp_path / "out").exists()


def test_a_run_sharing_no_averaged_query_with_the_baseline_fails_before_any_kernel(tmp_path, disjoint_run_and_baseline):
    args = ["build", "--run", tmp_path / "a.txt", "--run", SMALL / "monot5.txt", "--baseline", tmp_path / "b.txt",
            "--qrels", SMALL / "qrels.txt", "--missing", "skip", "--out", tmp_path / "out"]
    started = time.monotonic()
    result = cli(*args)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert f"{tmp_path / 'a.txt'}: no query is averaged in both this run and the baseline" in result.stderr
    assert time.monotonic() - started < 8  # no kernel was started
    assert not (tmp_path / "out").exists()


def test_a_link_keeps_its_own_name_in_the_report_parameters(tmp_path):
    from ndcg_report.build.parameters import resolve_path

    link = tmp_path / "my-run.txt"
    link.symlink_to(SMALL / "monot5.txt")
    assert resolve_path(str(link), "run").name == "my-run.txt"


def test_the_report_page_is_nbconvert_s_html_exporter_s(demo_builds):
    """The offline exporter skips HTMLExporter's BeautifulSoup pass: on the demo the page is still its page."""
    from bs4 import BeautifulSoup
    from nbconvert.exporters import HTMLExporter

    from ndcg_report.build.steps.offline_html import OfflineHTMLExporter, strip_style_comments

    notebook = nbformat.read(demo_builds[1] / "report.ipynb", as_version=4)
    resources = {"metadata": {"name": "report"}}
    ours, _ = OfflineHTMLExporter().from_notebook_node(notebook, resources=dict(resources))
    theirs, _ = HTMLExporter.from_notebook_node(OfflineHTMLExporter(), notebook, resources=dict(resources))
    assert str(BeautifulSoup(ours, features="html.parser")) == strip_style_comments(theirs)


def test_the_documented_nbconvert_command_gives_the_build_s_offline_html(demo_builds, tmp_path):
    """README: `jupyter nbconvert --to ndcg_offline report.ipynb` (the exporter build uses, found by
    nbconvert through its entry point) gives report.html as build wrote it, build-time line aside."""
    _, built = demo_builds
    shutil.copy(built / "report.ipynb", tmp_path / "report.ipynb")
    jupyter = Path(sys.executable).with_name("jupyter")
    result = subprocess.run([str(jupyter), "nbconvert", "--to", "ndcg_offline", "report.ipynb"], cwd=tmp_path,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert page == without_build_time((built / "report.html").read_text(encoding="utf-8")).replace("<main>\n", "<main>", 1)
    assert not re.search(r"<(script|link|img|iframe)\b[^>]*(src|href)\s*=\s*[\"']?(https?:)?//", page, flags=re.I)
    assert "validate_parameters(" not in page and "with_bm25_baseline(" not in page  # the code is hidden


def degraded_run(run: Path, target: Path) -> Path:
    """run with every query's ranking turned upside down (each score negated)."""
    lines = [line.split() for line in run.read_text().splitlines() if line.strip()]
    target.write_text("".join(f"{q} {z} {d} {r} {-float(s)!r} {t}\n" for q, z, d, r, s, t in lines))
    return target


def test_a_build_against_an_earlier_build_says_the_gate_verdict_and_exits_4_on_a_regression(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    assert cli(*small_build_args(first, SMALL / "topics.txt")).returncode == 0
    worse = degraded_run(SMALL / "monot5.txt", tmp_path / "monot5.txt")  # the same file name: the same system
    args = [str(worse) if arg == SMALL / "monot5.txt" else arg for arg in small_build_args(second, SMALL / "topics.txt")]
    result = cli(*args, "--against", first, "--junit", tmp_path / "gate.xml", "--markdown", tmp_path / "gate.md")
    assert result.returncode == 4, result.stderr
    assert result.stdout.startswith(f"built {second / 'report.html'}")
    verdict = json.loads((second / "gate.json").read_text())
    by_system = {item["system"]: item for item in verdict["results"]}
    assert verdict["status"] == "regression" and verdict["before"] == str(first)
    assert by_system["bm25"]["status"] == "unchanged" and by_system["monot5"]["status"] == "regression"
    before, after = (pd.read_csv(folder / "per_query.csv", dtype=str) for folder in (first, second))
    pick = lambda table: table[(table.system == "monot5") & (table.measure == "nDCG") & (table.k == "10")  # noqa: E731
                               & (table.averaged == "True")].set_index("qid")["value"].astype(float)
    deltas = pick(after) - pick(before)
    moved = int((deltas != 0).sum())
    assert by_system["monot5"]["delta"] == pytest.approx(deltas.mean(), abs=1e-12)
    assert by_system["monot5"]["p"] == pytest.approx(1 / 2 ** moved)  # every query fell: 1 sign pattern of 2**n
    again = cli("gate", first, second, "--json", tmp_path / "again.json")  # the published folders, as the gate reads them
    assert again.returncode == 4
    assert json.loads((tmp_path / "again.json").read_text())["results"] == verdict["results"]
    page = (second / "report.html").read_text()
    assert '<h2 id="since-last-build">Since the last build</h2>' in page and "▼ regression" in page
    assert "regression: monot5 nDCG@10" in result.stderr
    assert (tmp_path / "gate.md").read_text().startswith("## ndcg-report gate: regression")
    assert '<failure message="regression: monot5 nDCG@10' in (tmp_path / "gate.xml").read_text()


def test_a_rebuild_against_its_own_folder_is_gated_against_the_report_it_replaces(tmp_path):
    out = tmp_path / "out"
    assert cli(*small_build_args(out, SMALL / "topics.txt")).returncode == 0
    result = cli(*small_build_args(out, SMALL / "topics.txt"), "--against", out)
    assert result.returncode == 0, result.stderr
    assert json.loads((out / "gate.json").read_text())["status"] == "unchanged"
    assert not (out / "gate.json.previous").exists()


@pytest.mark.parametrize("extra, message", [
    (["--against", "{tmp}/nothing"], "--against {tmp}/nothing is not a folder; give the folder a report was built into"),
    (["--junit", "{tmp}/g.xml"], "--junit writes the gate's verdict: give --against BEFORE_DIR"),
    (["--against", "{report}", "--gate-measure", "RR"], "--gate-measure RR: not a measure of both this report and "
                                                        "--against {report}"),
    (["--against", "{report}", "--gate-margin", "-1"], "--gate-margin: -1"),
])
def test_a_bad_gate_of_a_build_is_one_line_and_builds_nothing(tmp_path, small_report, extra, message):
    fill = {"tmp": tmp_path, "report": small_report}
    result = cli(*small_build_args(tmp_path / "out", SMALL / "topics.txt"), *[word.format(**fill) for word in extra])
    one_line(result, 2, message.format(**fill))
    assert not (tmp_path / "out").exists() and not (tmp_path / "g.xml").exists()


@pytest.fixture(scope="module")
def small_report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("small") / "report"
    assert cli(*small_build_args(out, SMALL / "topics.txt")).returncode == 0
    return out
