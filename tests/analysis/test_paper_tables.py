"""Tables for a paper: LaTeX, Markdown and CSV of a report's leaderboard, from its summary.json
(`ndcg-report table`) or from an Experiment, and the tables of a suite and of judgment sets compared."""

from __future__ import annotations

import html
import json
import math
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import pandas as pd
import pytest

from ndcg_report import ParameterError, compare_runs, compare_suite
from ndcg_report.analysis.paper.judgments import judgments_latex, judgments_markdown
from ndcg_report.analysis.paper.latex import latex_escape
from ndcg_report.analysis.paper.leaderboard import (
    leaderboard_csv, leaderboard_latex, leaderboard_markdown, read_leaderboard,
)
from ndcg_report.analysis.paper.record import experiment_record
from ndcg_report.analysis.paper.report_files import leaderboard_files, paper_section_html
from ndcg_report.analysis.paper.suite import suite_latex, suite_markdown
from ndcg_report.cli import main

SHARE_KERNEL_FORKS = True  # its builds fork their kernels from the session's server (conftest.py)

DATA = Path(__file__).resolve().parents[1] / "data"
EXPECTED = DATA / "paper"
SMALL = DATA / "small"
DL19 = Path(str(resources.files("ndcg_report") / "data" / "dl19-passage"))
DEMO_RUNS = {
    "monoT5": "monot5.dl19.run.gz", "RRF BM25+monoT5": "rrf.bm25-monot5.dl19.run.gz",
    "Interpolation BM25+monoT5": "interp.bm25-monot5.dl19.run.gz", "monoT5 top 20 + BM25": "monot5-top20-bm25.dl19.run.gz",
}
HOSTILE = "a_b&c%d#e$f{g}~h^i\\j"  # in a title or a summary.json; a system name cannot hold \\ (nor = /)
NAME = HOSTILE.replace("\\", "")
MARKUP = "<b>x<b> | *y* `z` [l](u) ~~s~~ &amp; $m$"
PDFLATEX = shutil.which("pdflatex")


def run_cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """The embedded DL 2019 demo, built once by the command line."""
    out = tmp_path_factory.mktemp("paper") / "demo"
    result = subprocess.run([sys.executable, "-m", "ndcg_report.cli", "demo", "--out", str(out)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def summary(demo) -> dict:
    return json.loads((demo / "summary.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def experiment():
    """The demo's comparison made in Python, with the arguments the report notebook passes."""
    return compare_runs({name: DL19 / path for name, path in DEMO_RUNS.items()}, DL19 / "qrels.dl19-passage.txt",
                        baseline=DL19 / "run.msmarco-v1-passage.bm25-default.dl19.txt.gz", baseline_name="BM25",
                        preset="trec-dl")


@pytest.fixture(scope="module")
def hostile():
    """The small set with a run and a baseline named with every LaTeX special and Markdown markup."""
    return compare_runs({NAME: SMALL / "monot5.txt", "rrf": DATA / "judges" / "rrf.txt"}, SMALL / "qrels.txt",
                        baseline=SMALL / "bm25.txt", baseline_name=MARKUP, measures="nDCG@10 AP", n_resamples=1000)


@pytest.fixture(scope="module")
def shallow(tmp_path_factory) -> Path:
    """A report of the small set where one system ('top5', the monoT5 run cut to its top 5 per query)
    retrieved fewer documents than k = 10, built by the command line."""
    folder = tmp_path_factory.mktemp("shallow")
    seen: dict[str, int] = {}
    with (folder / "top5.txt").open("w", encoding="utf-8") as cut:
        for line in (SMALL / "monot5.txt").read_text(encoding="utf-8").splitlines():
            seen[line.split()[0]] = seen.get(line.split()[0], 0) + 1
            if seen[line.split()[0]] <= 5:
                cut.write(line + "\n")
    out = folder / "report"
    assert main(["build", "--run", f"full={SMALL / 'monot5.txt'}", "--run", f"top5={folder / 'top5.txt'}", "--baseline",
                 str(SMALL / "bm25.txt"), "--qrels", str(SMALL / "qrels.txt"), "-k", "10", "--out", str(out)]) == 0
    return out


def assert_balanced(text: str) -> None:
    """A LaTeX table whose braces balance (escaped ones aside) and whose environments nest."""
    unescaped = re.sub(r"\\[{}&%$#_]", "", text)
    assert unescaped.count("{") == unescaped.count("}")
    assert re.findall(r"\\(begin|end)\{(\w+)\}", text) == [
        ("begin", "table"), ("begin", "tabular"), ("end", "tabular"), ("end", "table")]


def significance(summary: dict) -> dict[tuple[str, str], int]:
    """(system, label) -> +1/-1/0 from summary.json alone: the sign of the delta where the Holm-adjusted
    randomization p-value is below alpha (the report's ▲/▼)."""
    alpha = summary["parameters"]["alpha"]
    return {(name, label): int(math.copysign(1, r["delta"])) if r["holm_randomization_pvalue"] < alpha else 0
            for name, records in summary["comparisons"].items() for label, r in records.items()}


def markdown_rows(text: str) -> dict[str, dict[str, str]]:
    """{system: {column label: cell}} of the first Markdown table in text (names unescaped)."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    split = [[cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines]
    head = split[0]
    name = head.index("System")
    return {html.unescape(re.sub(r"\\(.)", r"\1", row[name])).removesuffix(" (baseline)"): dict(zip(head, row))
            for row in split[2:]}


def latex_rows(text: str) -> list[list[str]]:
    """The body rows of the tabular (after the header's \\midrule), cells split on unescaped &."""
    body = text.split(r"\midrule", 1)[1].split(r"\bottomrule")[0]
    return [[cell.strip() for cell in re.split(r"(?<!\\)&", line.strip().removesuffix(r"\\"))]
            for line in body.splitlines() if line.strip().endswith(r"\\")]


class Tables(HTMLParser):
    """The tables of an HTML page: rows of (tag, text, inner tags) per cell."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[tuple[str, str, set[str]]]]] = []
        self.cell: list | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = [tag, "", set()]
        elif self.cell is not None:
            self.cell[2].add(tag)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append((self.cell[0], self.cell[1].strip(), self.cell[2]))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[1] += data


def rendered_tables(markdown_text: str, renderer: str) -> list:
    if renderer == "mistune":
        import mistune

        page = mistune.create_markdown(escape=False, plugins=["table", "strikethrough"])(markdown_text)  # HTML kept, as GitHub keeps <sup>
    else:
        markdown = pytest.importorskip("markdown")
        page = markdown.markdown(markdown_text, extensions=["tables"])
    parser = Tables()
    parser.feed(page)
    return parser.tables


# --- the demo against the checked-in files ------------------------------------------------------------


@pytest.mark.parametrize(("form", "suffix", "letters"), [("latex", "tex", True), ("markdown", "md", True),
                                                         ("csv", "csv", False)])
def test_table_of_the_demo_report_is_the_checked_in_file(demo, capsys, form, suffix, letters):
    code, out, err = run_cli(capsys, "table", demo, "--format", form, *(["--letters"] if letters else []))
    assert (code, err) == (0, "")
    assert out == (EXPECTED / f"dl19.{suffix}").read_text(encoding="utf-8")


def test_experiment_methods_give_the_same_tables(experiment, summary, tmp_path):
    title = summary["title"]
    assert experiment.to_latex(letters=True, caption=title) == (EXPECTED / "dl19.tex").read_text(encoding="utf-8")
    assert experiment.to_markdown(letters=True, caption=title) == (EXPECTED / "dl19.md").read_text(encoding="utf-8")
    assert experiment.to_csv() == (EXPECTED / "dl19.csv").read_text(encoding="utf-8")
    assert experiment.to_csv(tmp_path / "table.csv") is None
    assert (tmp_path / "table.csv").read_text(encoding="utf-8") == experiment.to_csv()
    assert experiment.to_latex().startswith("% needs \\usepackage{booktabs}")  # no title: "Leaderboard."
    assert "\\caption[Leaderboard.]" in experiment.to_latex()


def test_experiment_record_holds_summary_json_s_numbers(experiment, summary):
    """Every value experiment_record makes is the value summary.json holds at the same place."""
    def compare(made, written, where):
        if isinstance(made, dict):
            assert isinstance(written, dict), where
            for key, value in made.items():
                assert key in written, f"{where}.{key}"
                compare(value, written[key], f"{where}.{key}")
        elif isinstance(made, list) and made and isinstance(made[0], dict):
            assert len(made) == len(written), where
            for i, (a, b) in enumerate(zip(made, written)):
                compare(a, b, f"{where}[{i}]")
        else:
            assert made == written, where

    record = experiment_record(experiment)
    compare({key: value for key, value in record.items() if key != "title"}, summary, "summary")
    assert record["systems"][0]["summary"]["nDCG@10"]["mean"] == summary["systems"][0]["summary"]["nDCG@10"]["mean"]


def test_marks_equal_summary_json_s_significance(summary, experiment):
    expected = significance(summary)
    assert {v for v in expected.values()} == {0, 1}  # the demo has both
    for (name, label), value in expected.items():
        assert int(experiment.significance.at[name, label]) == value
    rows = markdown_rows(leaderboard_markdown(summary))
    tex = {row[0]: row[1:] for row in latex_rows(leaderboard_latex(summary))}
    labels = summary["parameters"]["measures"]
    for (name, label), value in expected.items():
        cell = rows[name][label]
        assert ("▲" in cell, "▼" in cell) == (value == 1, value == -1), (name, label, cell)
        cell = tex[latex_escape(name)][labels.index(label)]
        assert ("\\uparrow" in cell, "\\downarrow" in cell) == (value == 1, value == -1), (name, label, cell)
    assert "▲" not in rows["BM25"]["nDCG@10"]


def test_a_system_significantly_below_the_baseline_is_marked_down(summary):
    changed = json.loads(json.dumps(summary))
    record = changed["comparisons"]["monoT5"]["R@1000"]
    record.update(delta=-0.05, holm_randomization_pvalue=0.001)
    assert read_leaderboard(changed).mark("monoT5", "R@1000") == -1
    assert "0.6943 ▼" in markdown_rows(leaderboard_markdown(changed))["monoT5"]["R@1000"]
    assert "0.6943$^{\\downarrow}$" in leaderboard_latex(changed)


def test_letters_are_the_systems_the_pairwise_test_finds_a_system_better_than(summary):
    pairwise = summary["pairwise"]
    rows = markdown_rows(leaderboard_markdown(summary, letters=True))
    letter = {name: row["\\#"] for name, row in rows.items()}
    assert list(letter.values()) == ["a", "b", "c", "d", "e"]
    for name, row in rows.items():
        better = {other for other in pairwise["systems"] if other != name
                  and pairwise["pvalues"][name][other] < pairwise["alpha"]
                  and pairwise["means"][name] > pairwise["means"][other]}
        shown = re.findall(r"<sup>(\w+)</sup>", row["nDCG@10"])
        assert set("".join(shown)) == {letter[other] for other in better}, name
        assert not any("<sup>" in cell for label, cell in row.items() if label != "nDCG@10")
    assert letter["monoT5"] == "a" and "<sup>de</sup>" in rows["monoT5"]["nDCG@10"]  # Interpolation and BM25
    assert "<sup>" not in rows["BM25"]["nDCG@10"]


def test_measures_systems_and_digits_choose_the_table(summary):
    text = leaderboard_markdown(summary, measures=["AP", "ndcg_cut.10"], systems=["RRF BM25+monoT5", "BM25"], digits=2)
    rows = markdown_rows(text)
    assert list(rows) == ["RRF BM25+monoT5", "BM25"]  # the baseline's row whether named or not
    assert list(rows["BM25"])[1:] == ["AP", "nDCG@10"]
    assert rows["RRF BM25+monoT5"]["nDCG@10"] == "**0.67** ▲"
    rows = markdown_rows(leaderboard_markdown(summary, digits=1))  # ties at the digits shown are all bold
    assert [name for name, row in rows.items() if row["nDCG@10"].startswith("**")] == [
        "monoT5", "monoT5 top 20 + BM25", "RRF BM25+monoT5"]


# --- escaping and rendering ---------------------------------------------------------------------------


def renamed(summary: dict, old: str, new: str) -> dict:
    """summary.json with one system renamed everywhere (its name is a JSON string: replaced as one)."""
    return json.loads(json.dumps(summary).replace(json.dumps(old), json.dumps(new)))


def test_latex_escapes_hostile_names(hostile, summary):
    escaped = r"a\_b\&c\%d\#e\$f\{g\}\textasciitilde{}h\textasciicircum{}i\textbackslash{}j"
    assert latex_escape(HOSTILE) == escaped
    text = leaderboard_latex(renamed(summary, "monoT5", HOSTILE), caption=HOSTILE)
    assert latex_rows(text)[0][0] == escaped and f"\\caption[{escaped}.]" in text
    text = hostile.to_latex()
    assert [row[0] for row in latex_rows(text)] == [latex_escape(NAME), "rrf", latex_escape(MARKUP) + " (baseline)"]
    assert latex_escape(NAME) == escaped.replace(r"\textbackslash{}", "")
    assert NAME not in text and "<b>" not in text and "|" not in text and "`" not in text


@pytest.mark.parametrize("renderer", ["mistune", "python-markdown"])
def test_markdown_renders_to_an_html_table_with_names_as_given(hostile, summary, renderer):
    rows = rendered_tables(hostile.to_markdown(), renderer)[0]
    assert [cell[1] for cell in rows[0]] == ["System", "nDCG@10", "AP"]
    assert [row[0][1] for row in rows[1:]] == [NAME, "rrf", MARKUP + " (baseline)"]
    assert all(not tags for row in rows[1:] for tags in [row[0][2]])  # no markup made of a name
    demo = rendered_tables((EXPECTED / "dl19.md").read_text(encoding="utf-8"), renderer)[0]
    assert len(demo) == 6 and all(len(row) == 8 for row in demo)
    assert [cell[1] for cell in demo[0]][:3] == ["#", "System", "nDCG@10"]
    monot5 = demo[1]
    assert monot5[2][1].startswith("0.7215") and {"strong", "sup"} <= monot5[2][2]


def test_to_markdown_needs_no_tabulate(hostile, monkeypatch):
    monkeypatch.setitem(sys.modules, "tabulate", None)  # `import tabulate` raises
    assert hostile.to_markdown().startswith("| System |")


def test_latex_structure(summary):
    text = (EXPECTED / "dl19.tex").read_text(encoding="utf-8")
    assert_balanced(text)
    assert text.index(r"\toprule") < text.index(r"\midrule") < text.index(r"\bottomrule")
    spec = re.search(r"\\begin\{tabular\}\{(\w+)\}", text).group(1)
    rows = latex_rows(text)
    assert len(rows) == len(summary["systems"]) and all(len(row) == len(spec) for row in rows)
    assert rows[-1][:2] == ["e", "BM25 (baseline)"]


@pytest.mark.skipif(PDFLATEX is None, reason="no LaTeX engine (apt-get install texlive-latex-recommended)")
def test_latex_compiles(tmp_path, hostile, summary):
    suite = compare_suite({"one": hostile, "two": hostile})
    tables = [(EXPECTED / "dl19.tex").read_text(encoding="utf-8"), hostile.to_latex(caption=HOSTILE, letters=True),
              leaderboard_latex(renamed(summary, "monoT5", HOSTILE + " α–β λΩ"), caption=HOSTILE),
              leaderboard_latex(summary, digits=2), suite_latex(suite.cells, measure="AP")]
    document = "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n" + "\n".join(tables) + "\\end{document}\n"
    (tmp_path / "tables.tex").write_text(document, encoding="utf-8")
    result = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "tables.tex"], cwd=tmp_path,
                            capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == 0, result.stdout[-2000:]
    log = (tmp_path / "tables.log").read_text(encoding="utf-8", errors="replace")
    assert "! " not in log and "Missing character" not in log
    assert (tmp_path / "tables.pdf").stat().st_size > 0


# --- the command: an earlier report's summary.json, bad input -----------------------------------------


def test_table_of_a_report_built_by_the_previous_version(capsys, tmp_path):
    """summary-schema3.json: the demo's summary.json as the package wrote it before schema 4."""
    old = EXPECTED / "summary-schema3.json"
    assert json.loads(old.read_text())["schema_version"] == 3
    for form, suffix in (("latex", "tex"), ("markdown", "md")):
        code, out, err = run_cli(capsys, "table", old, "--format", form, "--letters")
        assert (code, err) == (0, "")
        assert out == (EXPECTED / f"dl19.{suffix}").read_text(encoding="utf-8")


def test_an_older_summary_is_refused_naming_what_it_lacks(capsys, tmp_path):
    record = json.loads((EXPECTED / "summary-schema3.json").read_text())
    record["schema_version"] = 2  # schema 2: nDCG only, `headline_k` and no measure labels
    del record["parameters"]["measures"], record["parameters"]["headline"], record["pairwise"]["measure"]
    record["parameters"]["headline_k"] = 10
    (tmp_path / "summary.json").write_text(json.dumps(record))
    code, out, err = run_cli(capsys, "table", tmp_path, "--out", tmp_path / "t.tex")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "schema_version 2" in err and "parameters.measures, parameters.headline, pairwise.measure" in err
    assert not (tmp_path / "t.tex").exists()


@pytest.mark.parametrize(("args", "says"), [
    (["-m", "P@10"], "P@10 was not computed; have nDCG@10, nDCG@100, RR, AP, R@100, R@1000"),
    (["--systems", "monoT5", "BM25 + RM3"], "no system is named 'BM25 + RM3' in this report; its systems are 'monoT5'"),
    (["-m", "AP", "--letters"], "the letters are those of the pairwise test on nDCG@10"),
    (["--digits", "16"], "--digits must be a whole number from 0 to 15"),
])
def test_bad_measure_system_or_option_is_one_line_and_exit_2(demo, capsys, tmp_path, args, says):
    code, out, err = run_cli(capsys, "table", demo, *args, "--out", tmp_path / "t.tex")
    assert (code, out) == (2, "") and err.count("\n") == 1 and says in err, err
    assert not (tmp_path / "t.tex").exists()


def test_a_folder_or_file_that_is_not_a_report_is_one_line_and_exit_2(capsys, tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "bm25.txt").write_text("1 Q0 d 1 1.0 x\n")
    code, out, err = run_cli(capsys, "table", tmp_path / "runs")
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert "runs is not a report folder: it has no summary.json (it holds bm25.txt)" in err
    (tmp_path / "summary.json").write_text('{"systems": []}')
    code, _, err = run_cli(capsys, "table", tmp_path / "summary.json")
    assert code == 2 and "not written by ndcg-report" in err
    (tmp_path / "summary.json").write_bytes(b"\xff\xfe")
    code, _, err = run_cli(capsys, "table", tmp_path)
    assert code == 2 and "not JSON" in err and err.count("\n") == 1
    code, _, err = run_cli(capsys, "table", tmp_path / "nothing")
    assert code == 2 and "does not exist" in err


def test_out_writes_the_file_and_never_the_summary(demo, capsys, tmp_path):
    code, out, err = run_cli(capsys, "table", demo / "summary.json", "--format", "markdown", "--out", tmp_path / "t.md")
    assert (code, err) == (0, "") and out.startswith("wrote ")
    assert (tmp_path / "t.md").read_text(encoding="utf-8") == leaderboard_markdown(
        json.loads((demo / "summary.json").read_text()))
    before = (demo / "summary.json").read_bytes()
    code, _, err = run_cli(capsys, "table", demo, "--out", demo / "summary.json")
    assert code == 2 and "would be replaced" in err
    assert (demo / "summary.json").read_bytes() == before


# --- the report's files and section, a suite, judgment sets ------------------------------------------


def test_report_files_and_section(summary):
    files = leaderboard_files(summary)
    assert files == {"leaderboard.tex": (EXPECTED / "dl19.tex").read_text(encoding="utf-8"),
                     "leaderboard.md": (EXPECTED / "dl19.md").read_text(encoding="utf-8")}
    hostile = json.loads(json.dumps(summary).replace("monoT5 top 20", "<script>alert(1)</script>"))
    section = paper_section_html(hostile)
    assert section.startswith("<details><summary>Tables for a paper</summary>")
    assert "<script>" not in section
    texts = [html.unescape(text) for text in re.findall(r'<pre class="paper-table">(.*?)</pre>', section, re.S)]
    assert texts == list(leaderboard_files(hostile).values())
    assert r"\textless{}script\textgreater{}alert(1)\textless{}/script\textgreater{} + BM25" in texts[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt; + BM25" in texts[1]


def test_suite_table_is_the_suite_s_numbers_and_marks(hostile):
    partial = compare_runs({NAME: SMALL / "monot5.txt"}, SMALL / "qrels.txt", baseline=SMALL / "bm25.txt",
                           baseline_name=MARKUP, measures="nDCG@10 AP", n_resamples=1000)
    suite = compare_suite({"full": hostile, "partial": partial})
    rows = markdown_rows(suite_markdown(suite.cells.to_dict("records"), measure="AP", alpha=0.05))
    table, marks = suite.table.loc["AP"], suite.significance.loc["AP"]
    for system in suite.systems:
        for collection in ("full", "partial"):
            cell, mean = rows[system][collection], table.at[system, collection]
            assert cell == "–" if math.isnan(mean) else cell.lstrip("*").startswith(f"{mean:.4f}")
            mark = marks.at[system, collection]
            assert ("▲" in cell) == (not pd.isna(mark) and int(mark) == 1), (system, collection, cell)
        assert rows[system]["Mean"].lstrip("*").startswith(f"{table.at[system, 'mean']:.4f}")
    assert rows["rrf"]["partial"] == "–" and "▲" in rows["rrf"]["full"]
    assert "rrf over 1 of 2" in suite_markdown(suite.cells, measure="AP")
    assert suite.to_markdown(measure="AP") == suite_markdown(suite.cells, measure="AP", alpha=suite.alpha)
    assert suite.to_latex(measure="AP", digits=3) == suite_latex(suite.cells, measure="AP", alpha=suite.alpha, digits=3)
    with pytest.raises(ParameterError, match="no measure 'P@10'"):
        suite_markdown(suite.cells, measure="P@10")


def test_judgment_tables_are_the_comparison_s_numbers(capsys):
    code, out, _ = run_cli(capsys, "judges", SMALL / "qrels.txt", DATA / "judges" / "llm.txt",
                           f"bm25={SMALL / 'bm25.txt'}", f"monot5={SMALL / 'monot5.txt'}",
                           f"rrf={DATA / 'judges' / 'rrf.txt'}", "--baseline", "bm25", "--format", "json")
    assert code == 0
    record = json.loads(out)
    text = judgments_markdown(record)
    means, agreement = rendered_tables(text, "mistune")
    assert [cell[1] for cell in means[0]] == ["System", "nDCG@10 (qrels)", "nDCG@10 (llm)"]
    assert [row[0][1] for row in means[1:]] == ["monot5", "rrf", "bm25 (baseline)"]
    for row in means[1:]:
        system = row[0][1].removesuffix(" (baseline)")
        assert [cell[1] for cell in row[1:]] == [f"{record['means']['nDCG@10'][system][s]:.4f}" for s in ("qrels", "llm")]
    statistics = {row[0][1]: row[1][1] for row in agreement[1:]}
    llm = record["comparisons"]["llm"]
    assert statistics["Cohen's kappa"] == f"{llm['cohen_kappa']:.4f}"
    assert statistics["pairs both judge"] == str(llm["pairs"]["shared"])
    assert statistics["same best system on nDCG@10"] == "yes"
    latex = judgments_latex(record)
    assert latex.count(r"\begin{table}") == 2 and r"binary kappa, label $\geq$ 2" in latex


def test_a_judgment_comparison_s_own_tables_are_its_record_s():
    experiment = compare_runs({"monot5": SMALL / "monot5.txt"}, {"qrels": SMALL / "qrels.txt",
                              "llm": DATA / "judges" / "llm.txt"}, baseline=SMALL / "bm25.txt", n_resamples=200)
    comparison = experiment.judgments
    assert comparison.to_markdown() == judgments_markdown(comparison.to_dict())
    assert comparison.to_latex(digits=2) == judgments_latex(comparison.to_dict(), digits=2)
    assert "nDCG@10 (llm)" in comparison.to_markdown()


def test_a_closing_bracket_in_the_caption_stays_inside_its_short_form():
    from ndcg_report.analysis.paper.grid import Grid
    from ndcg_report.analysis.paper.latex import latex_grid

    text = latex_grid(Grid("System", (), (), "Runs [v2] against BM25] here.", ()))
    short = re.search(r"\\caption\[(.*)\]\{", text).group(1)
    assert short == "{Runs [v2] against BM25] here.}"  # braced: LaTeX reads the ] inside as text
    assert short.count("{") == short.count("}") == 1


def test_a_number_no_measure_reaches_is_written_short_not_with_309_digits():
    from ndcg_report.analysis.paper.grid import number_text

    assert number_text(0.61234) == "0.6123" and number_text(123456.0, 2) == "123456.00"
    assert number_text(1e308) == "1.0000e+308" and number_text(-3e20, 2) == "-3.00e+20"
    assert number_text(float("nan")) == "" and number_text(None) == ""


# --- depth marks, label and caption, alignment, the two meanings of letters -------------------------------


def test_a_measure_past_a_system_s_depth_is_marked_with_a_dagger_in_latex_and_markdown(shallow, capsys):
    tex, md = ((shallow / name).read_text(encoding="utf-8") for name in ("leaderboard.tex", "leaderboard.md"))
    assert_balanced(tex)
    rows = {row[1]: row for row in latex_rows(tex)}
    assert rows["top5"] == ["b", "top5", r"0.4317$^{\dagger}$"]
    assert rows["full"] == ["a", "full", r"\textbf{0.6003}$^{\uparrow\,\mathrm{c}}$"]
    assert rows["bm25 (baseline)"] == ["c", "bm25 (baseline)", "0.3715"]
    note = ("measured past the depth the system retrieved (top5: 5 lines per judged query, median): a cut-off "
            "deeper than that or, when another system retrieves deeper, a measure of the whole ranking")
    assert r"$^{\dagger}$: " + note in tex
    cells = markdown_rows(md)
    assert cells["top5"]["nDCG@10"] == "0.4317 †" and cells["full"]["nDCG@10"] == "**0.6003** ▲ <sup>c</sup>"
    assert "†: " + note in md
    # the HTML leaderboard marks the same cell, and `table` gives the report's files
    assert '<th class="text">top5</th><td class="num headline">0.4317 <span class="shallow">†</span>' in (
        shallow / "report.html").read_text(encoding="utf-8")
    assert run_cli(capsys, "table", shallow, "--letters")[1] == tex
    assert run_cli(capsys, "table", shallow, "--letters", "--format", "markdown")[1] == md


def test_a_report_without_a_shallow_system_has_no_dagger(summary):
    assert "dagger" not in leaderboard_latex(summary, letters=True) and "†" not in leaderboard_markdown(summary)


def test_a_summary_without_depths_marks_no_dagger(shallow):
    record = json.loads((shallow / "summary.json").read_text(encoding="utf-8"))
    for system in record["systems"]:
        del system["depth"]
    assert "dagger" not in leaderboard_latex(record)


def test_an_experiment_s_table_marks_the_depth_as_the_report_s(shallow):
    experiment = compare_runs({"full": SMALL / "monot5.txt", "top5": shallow.parent / "top5.txt"}, SMALL / "qrels.txt",
                              baseline=SMALL / "bm25.txt", measures="nDCG@10 nDCG@5 AP", n_resamples=1000)
    rows = {row[1]: row[2:] for row in latex_rows(experiment.to_latex(letters=True))}
    assert [cell.endswith(r"$^{\dagger}$") for cell in rows["top5"]] == [True, False, True]  # @5 is within its depth
    assert not any("dagger" in cell for cell in rows["full"] + rows["bm25 (baseline)"])


def test_label_and_caption_name_the_table(demo, capsys, experiment):
    caption = "Runs [v2] at 50% & more_x"
    code, tex, err = run_cli(capsys, "table", demo, "--label", "tab:second", "--caption", caption)
    assert (code, err) == (0, "")
    assert_balanced(tex)
    assert "\\label{tab:second}" in tex and "tab:leaderboard" not in tex
    assert (r"\caption[{Runs [v2] at 50\% \& more\_x.}]{Runs [v2] at 50\% \& more\_x. Means over 43 queries"
            in tex)
    assert "\\label" not in run_cli(capsys, "table", demo, "--label", "")[1]
    code, md, err = run_cli(capsys, "table", demo, "--format", "markdown", "--caption", caption)
    assert md.split("\n\n")[1].startswith(r"Runs \[v2\] at 50% &amp; more\_x. Means over 43 queries")
    latex = experiment.to_latex(label="tab:python", caption="From Python")
    assert "\\label{tab:python}" in latex and "\\caption[From Python.]{From Python. Means" in latex


@pytest.mark.parametrize(("args", "says"), [
    (["--format", "markdown", "--label", "tab:x"], "--label is for --format latex"),
    (["--format", "csv", "--caption", "x"], "--caption is for --format latex or markdown"),
])
def test_label_or_caption_where_the_format_has_none_is_one_line_and_exit_2(demo, capsys, args, says):
    code, out, err = run_cli(capsys, "table", demo, *args)
    assert (code, out) == (2, "") and err.count("\n") == 1 and says in err, err


def test_numbers_are_right_aligned_and_names_left_aligned(summary):
    tex, md = leaderboard_latex(summary, letters=True), leaderboard_markdown(summary)
    assert re.search(r"\\begin\{tabular\}\{(\w+)\}", tex).group(1) == "ll" + "r" * 6
    assert md.splitlines()[1] == "| :-- |" + " --: |" * 6


def test_the_paper_s_letters_and_the_report_s_groups_each_say_which_they_are(shallow):
    paper = "A letter here names one system (the # column), unlike the groups of the HTML report's leaderboard (a, ab)"
    assert paper in (shallow / "leaderboard.md").read_text(encoding="utf-8")
    assert paper.replace("#", "\\#") in (shallow / "leaderboard.tex").read_text(encoding="utf-8")
    assert ("a compact letter display, unlike the superscript letters of the paper tables (leaderboard.tex, "
            "leaderboard.md), where a letter names one system.") in (shallow / "report.html").read_text(encoding="utf-8")


def test_a_p_value_at_the_randomization_floor_is_written_at_most_in_the_report(demo):
    record = json.loads((demo / "summary.json").read_text(encoding="utf-8"))
    at_floor = [name for name, rows in record["comparisons"].items()
                if rows["nDCG@10"]["holm_randomization_pvalue"] == pytest.approx(4 * 2 / 10_001)]
    assert len(at_floor) == 4  # every system, Holm over 4 at 10,000 sign flips
    assert all("Holm-adjusted randomization p ≤ 0.0008;" in line for line in record["verdicts"])
    assert record["comparisons"]["monoT5"]["nDCG@10"]["holm_randomization_pvalue"] == 0.0007999200079992001  # a number
    page = (demo / "report.html").read_text(encoding="utf-8")
    both = sum(row["randomization_pvalue"] == pytest.approx(2 / 10_001) for rows in record["comparisons"].values()
               for row in rows.values())
    assert both == 15 and page.count('<td class="num">≤0.0002 (≤0.0008)</td>') == both
    assert '<td class="num">0.0658 (0.1264)</td>' in page  # above the floor: a value
