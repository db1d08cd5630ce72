"""The report options' table: every option is taken by `build`, the batch config, validate_parameters
(build_report and the notebook) alike, round-trips through the rebuild command, and a bad value is
refused with one line everywhere."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ndcg_report.analysis.options.pages import notebook_options, notebook_parameters_cell
from ndcg_report.analysis.options.table import ALIASES, BY_NAME, OPTIONS, PATH_KINDS, names, on
from dataclasses import replace

from ndcg_report.analysis.report_model import build_command, option_values
from ndcg_report.batch.config import parse_config
from ndcg_report.build.from_objects import ANALYSIS_OPTIONS, REPORT_ONLY
from ndcg_report.build.parameters import validate_parameters
from ndcg_report.cli import build_parser
from ndcg_report.commands.report_flags import given_values
from ndcg_report.errors import ParameterError

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "tests" / "data" / "small"
INPUTS = {"runs": [str(SMALL / "monot5.txt")], "qrels": str(SMALL / "qrels.txt"), "baseline": str(SMALL / "bm25.txt")}
SCALARS = [option for option in OPTIONS if option.kind not in PATH_KINDS]

# a value other than the default, valid alone with INPUTS (and the BM25 options with a corpus)
GOOD = {"fill_unjudged_from": None, "drilldown": 3, "drilldown_depth": 4, "max_retrieved": 1000, "k1": 1.2, "b": 0.7, "top_k": 50,
        "measures": "nDCG@10 RR", "cutoffs": "5,10", "rel_level": "2", "preset": "trec-dl", "judged_only": True,
        "headline": "nDCG@5", "gain": "exponential", "missing": "skip", "no_relevant": "skip", "identical_ids": "drop",
        "title": "A title", "run_name": "R", "baseline_name": "B", "seed": 7, "timeout": 30,
        "gate_measures": "nDCG@10", "gate_margin": 0.01, "gate_alpha": 0.1}
# a value each option's type refuses
BAD = {"fill_unjudged_from": ["a"], "drilldown": -1, "drilldown_depth": 0, "max_retrieved": -1, "k1": -1.0, "b": 1.5, "top_k": 0,
       "measures": "nDCG@x", "cutoffs": "0", "rel_level": "-1", "preset": "no-such-preset", "judged_only": "yes",
       "headline": "nDCG@x", "gain": "cubic", "missing": "drop", "no_relevant": "keep", "identical_ids": "skip",
       "title": "a\x1bb", "run_name": "a=b", "baseline_name": "b\x1bc", "seed": -1, "timeout": 0,
       "gate_measures": "nDCG@x", "gate_margin": -0.1, "gate_alpha": 1.0}


def test_every_option_has_a_good_and_a_bad_value_here():
    assert set(GOOD) == set(BAD) == {option.name for option in SCALARS}


def test_the_docs_page_and_the_notebook_cell_are_written_from_the_table():
    check = subprocess.run([sys.executable, str(ROOT / "scripts" / "options_pages.py"), "--check"],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    page = (ROOT / "docs" / "report-options.md").read_text()
    assert all(f"| `{option.name}`" in page for option in OPTIONS)


@pytest.mark.parametrize("option", [o for o in SCALARS if "cli" in o.surfaces], ids=lambda o: o.name)
def test_build_takes_each_option_as_its_flag(option):
    value = GOOD[option.name] if GOOD[option.name] is not None else "NAME"
    words = [option.cli_flag] if value is True else [option.cli_flag, str(value)]
    args = build_parser().parse_args(["build", "--run", "r", "--qrels", "q", "--baseline", "b", "--out", "o", *words])
    assert given_values(args, [option.name])[option.name] == value


@pytest.mark.parametrize("option", [o for o in SCALARS if "yaml" in o.surfaces], ids=lambda o: o.name)
def test_the_batch_config_takes_each_option_as_its_key_and_refuses_a_bad_value(option, tmp_path):
    report = {"name": "r", "run": "a.txt", "qrels": "q.txt"}
    report.update({"corpus": "c.jsonl", "topics": "t.tsv"} if option.group == "bm25" else {"baseline": "b.txt"})
    good = GOOD[option.name]
    if good is not None:
        config = parse_config({"output": "out", "reports": [{**report, option.name: good}]}, tmp_path / "c.yml", "c.yml")
        value = config.reports[0].options[option.name]
        assert value == (float(good) if option.kind == "number" else good)
    with pytest.raises(ParameterError) as refused:
        parse_config({"output": "out", "reports": [{**report, option.name: BAD[option.name]}]}, tmp_path / "c.yml", "c.yml")
    assert "\n" not in str(refused.value) and f"key '{option.name}'" in str(refused.value)


@pytest.mark.parametrize("option", [o for o in SCALARS if "notebook" in o.surfaces], ids=lambda o: o.name)
def test_validate_parameters_refuses_a_bad_value_in_one_line_naming_the_option(option):
    with pytest.raises(ParameterError) as refused:
        validate_parameters(**INPUTS, **{option.name: BAD[option.name]})
    assert "\n" not in str(refused.value) and str(refused.value).startswith(option.name)


@pytest.mark.parametrize("option", [o for o in SCALARS if "cli" in o.surfaces and "notebook" in o.surfaces
                                    and GOOD[o.name] is not None and o.name != "run_name"], ids=lambda o: o.name)
def test_each_option_round_trips_through_the_rebuild_command(option):
    extra = {"measures": "nDCG@5 nDCG@10"} if option.name == "headline" else {}
    params = validate_parameters(**INPUTS, **extra, **{option.name: GOOD[option.name]})
    words = shlex.split(build_command(params))
    args = build_parser().parse_args(words[1:])
    again = validate_parameters(runs=[item.path for item in params.runs], qrels=args.qrels[0], baseline=args.baseline,
                                **given_values(args, names("notebook")))
    # the same report: every option's value, the measures computed among them (nDCG's default cut-offs
    # are written out as -k, so `cutoffs` is given where it was not)
    assert replace(again, cutoffs=params.cutoffs) == params
    assert option_values(again) | {"cutoffs": ""} == option_values(params) | {"cutoffs": ""}


def test_run_name_names_the_one_run():
    params = validate_parameters(run=INPUTS["runs"][0], qrels=INPUTS["qrels"], baseline=INPUTS["baseline"], run_name="R")
    assert params.runs[0].name == "R" and "--run=R=" in build_command(params)


def test_older_spellings_are_the_same_option_and_giving_both_is_refused():
    assert ALIASES == {"rank_depth": "drilldown_depth", "ks": "cutoffs", "k": "cutoffs"}
    old = validate_parameters(**INPUTS, ks="5,10", rank_depth=4)
    assert (old.cutoffs, old.drilldown_depth) == ((5, 10), 4)
    assert old == validate_parameters(**INPUTS, cutoffs="5,10", drilldown_depth=4)
    with pytest.raises(ParameterError, match="give it once"):
        validate_parameters(**INPUTS, ks="5", cutoffs="10")
    with pytest.raises(ParameterError, match="not a report option"):
        validate_parameters(**INPUTS, depth=3)


def test_the_batch_reads_k_as_cutoffs(tmp_path):
    report = {"name": "r", "run": "a.txt", "qrels": "q.txt", "baseline": "b.txt", "k": [10, "all"]}
    config = parse_config({"output": "out", "reports": [report]}, tmp_path / "c.yml", "c.yml")
    assert config.reports[0].options["cutoffs"] == "10,all"


def test_build_report_takes_every_python_option_and_compare_runs_the_analysis_ones():
    import inspect

    from ndcg_report import compare_runs

    assert set(ANALYSIS_OPTIONS) | set(REPORT_ONLY) == set(names("python"))
    keywords = set(inspect.signature(compare_runs).parameters)
    assert set(ANALYSIS_OPTIONS) <= keywords and "rank_depth" in keywords


def test_the_notebook_declares_every_notebook_option_and_passes_them_on():
    import nbformat
    import papermill

    notebook = ROOT / "src" / "ndcg_report" / "build" / "notebooks" / "ndcg_report.ipynb"
    declared = papermill.inspect_notebook(str(notebook))
    assert set(names("notebook")) | {o.name for o in on("notebook") if o.kind in PATH_KINDS} <= set(declared)
    assert {name: declared[name]["default"] for name in names("notebook")} == {
        name: json.dumps(BY_NAME[name].default) if not isinstance(BY_NAME[name].default, bool)
        else str(BY_NAME[name].default) for name in names("notebook")}
    cell = next(c for c in nbformat.read(notebook, as_version=4).cells if "parameters" in c.metadata.get("tags", []))
    assert cell.source == notebook_parameters_cell()
    namespace = {name: BY_NAME[name].default for name in names("notebook")} | {"ks": "5", "seed": 3, "other": 1}
    assert notebook_options(namespace) == {**{n: BY_NAME[n].default for n in names("notebook") if n != "cutoffs"},
                                           "ks": "5", "seed": 3}


def test_a_bad_flag_value_is_exit_2_with_one_line_and_nothing_written(tmp_path):
    out = tmp_path / "report"
    done = subprocess.run([sys.executable, "-m", "ndcg_report.cli", "build", "--run", INPUTS["runs"][0], "--qrels",
                           INPUTS["qrels"], "--baseline", INPUTS["baseline"], "--drilldown-depth", "0", "--out", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--drilldown-depth: 0" in done.stderr
    assert not out.exists()
