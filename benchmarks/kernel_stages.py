"""One round of build_stages.py --kernel: the report kernel's work, in this process and without papermill.

    python benchmarks/kernel_stages.py RESULT.json build --run ... --out DIR   # ndcg-report's arguments

The command is parsed by ndcg_report.cli.build_parser() and checked by commands.build_report as the CLI
does, up to the parameters it would build from (pipeline.build_report is replaced by a catch); the
inputs are then copied, read and saved for the kernel as the build does before any kernel, and the
notebook's work is done step by step as its cells do it: load_report, the statistics on first use, each
section, the figures cell, the report's files (into a temporary folder, not --out). Functions inside them
are wrapped in this process only (every module's reference to them): stats.paired.compare_systems per
call, the resampling tests in total, the Tukey HSD, the judgment sets' parts, the figures' rendering.
What a checkout lacks is listed as missing. Writes {"rows": [[path, seconds, calls]], "missing": [...]},
a path being the stage and those it ran inside, joined by " > ".
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from functools import partial, wraps
from pathlib import Path

LOAD, FIGURES, EACH_FIGURE = "load_report", "figures cell (content.report_figures)", "each figure again, on its own"
OUTSIDE = ("import the notebook's modules", "validate the command as the CLI does",
           "before the kernel: copy, read, check and save the inputs (the build's step)", EACH_FIGURE)
NOTEBOOK_MODULES = ("analysis.checks", "analysis.content", "analysis.html", "analysis.results", "build.notebook_io",
                    "analysis.drilldown", "analysis.gate.since_last", "analysis.judgments.glance",
                    "analysis.judgments.section", "analysis.tables.report_groups", "analysis.outputs",
                    "analysis.paper.report_files", "build.corpus_baseline", "analysis.options.pages",
                    "build.parameters", "analysis.compare", "analysis.experiment", "analysis.figure_style")
RENDER_BOTH = ("rendered", "figure_to_png_and_svg", "png_and_svg")  # figure_style's both at once, by its names


def module(name: str):
    """ndcg_report.NAME, or None where this checkout has no such module."""
    try:
        return importlib.import_module(f"ndcg_report.{name}")
    except ImportError:
        return None


def attribute(dotted: str):
    """ndcg_report's MODULE:NAME, or None."""
    name, _, member = dotted.partition(":")
    return getattr(module(name), member, None)


class Timer:
    """Nested stages: each path's total seconds and calls, in the order first entered; the missing ones."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.rows: dict[str, list] = {}
        self.missing: list[str] = []
        self.patched: list[tuple[object, str, object, object]] = []

    @contextmanager
    def stage(self, label: str):
        self.stack.append(label)
        row = self.rows.setdefault(" > ".join(self.stack), [0.0, 0])
        begin = time.perf_counter()
        try:
            yield
        finally:
            row[0] += time.perf_counter() - begin
            row[1] += 1
            self.stack.pop()

    def wrap(self, label, function):
        """function timed as a stage; label: a text, or a function of the call's arguments giving it."""
        @wraps(function)
        def timed(*args, **kwargs):
            with self.stage(label(*args, **kwargs) if callable(label) else label):
                return function(*args, **kwargs)
        return timed

    def section(self, label: str, body, *needed: str) -> None:
        """body(*the needed attributes) timed as label; missing if this checkout lacks one of them."""
        found = [attribute(name) for name in needed]
        if any(value is None for value in found):
            self.missing.append(f"{label}: no {', '.join(n for n, v in zip(needed, found) if v is None)}")
            return
        with self.stage(label):
            body(*found)

    def patch(self, dotted: str, label) -> object:
        """The function at dotted timed wherever ndcg_report's modules refer to it; returns the original."""
        original = attribute(dotted)
        if original is None:
            self.missing.append(dotted.replace(":", "."))
            return None
        timed = self.wrap(label, original)
        for loaded in list(sys.modules.values()):
            if getattr(loaded, "__name__", "").startswith("ndcg_report"):
                for key, value in list(vars(loaded).items()):
                    if value is original:
                        setattr(loaded, key, timed)
                        self.patched.append((loaded, key, original, timed))
        return original

    @contextmanager
    def unpatched(self):
        for owner, key, original, _ in self.patched:
            setattr(owner, key, original)
        try:
            yield
        finally:
            for owner, key, _, timed in self.patched:
                setattr(owner, key, timed)


def family(systems, baseline, baseline_name="baseline", *args, **kwargs) -> str:
    """compare_systems' label: its Holm family, with the judgment set it is of when called for one."""
    caller = sys._getframe(2).f_locals.get("set_name")  # verdict_tables' loop, if that is the caller
    return (f"stats.paired.compare_systems: {len(systems)} against {baseline_name}"
            + (f" (set {caller})" if caller else ""))


def rendering(figure=None, *args, **kwargs) -> str:
    return "figure_style.rendered" + (f"({', '.join(f'{k}={v}' for k, v in kwargs.items())})" if kwargs else "")


def validated(argv: list[str]):
    """The ReportParameters `ndcg-report ARGV` would build from, checked as the CLI checks them."""
    cli, command, pipeline = module("cli"), module("commands.build_report"), module("build.pipeline")
    args = cli.build_parser().parse_args(argv, argparse.Namespace(argv=argv, started=time.monotonic()))
    caught = {}

    class Caught(Exception):
        pass

    def catch(params, *rest, **options):
        caught["params"] = params
        raise Caught

    original, pipeline.build_report = pipeline.build_report, catch
    try:
        if hasattr(command, "_check_command_line"):
            command._check_command_line(argv)
        command._run_build(args, argv, args.started, "")
    except Caught:
        pass
    finally:
        pipeline.build_report = original
    return caught["params"]


def prepare_inputs(params, folder: Path) -> None:
    """What the build does before any kernel: copy (where this checkout copies), read, check and save each
    input for the kernel, and name the folder to this process as the build names it to its kernels."""
    loading, cache = module("build.loading"), module("build.input_cache")
    check_inputs = getattr(loading, "check_inputs", None)
    if check_inputs is None or not hasattr(cache, "save_parsed"):
        return
    keep = partial(cache.save_parsed, folder)
    snapshots, access = module("build.input_snapshots"), module("inputs.access.snapshots")
    if snapshots is not None and access is not None and hasattr(loading, "parsed_inputs"):
        inputs = loading.parsed_inputs(params)
        taken = snapshots.take_snapshots(inputs, folder)
        with access.registered(taken):
            check_inputs(params, keep=keep)
        access.write_manifest(folder, snapshots.with_formats(taken, inputs))
    else:
        check_inputs(params, keep=keep)
    os.environ[cache.INPUT_CACHE_ENV] = str(folder)


def wrap_statistics(timer: Timer) -> None:
    timer.patch("analysis.compare:compare_runs", "analysis.compare.compare_runs")
    timer.patch("stats.paired:compare_systems", family)
    timer.patch("stats.resampling:randomization_test", "stats.resampling.randomization_test")
    timer.patch("stats.resampling:bootstrap_mean_intervals", "stats.resampling.bootstrap_mean_intervals")
    timer.patch("stats.pairwise:pairwise_test", "stats.pairwise.pairwise_test")
    timer.patch("stats.tukey_hsd:tukey_hsd", "stats.tukey_hsd.tukey_hsd")
    timer.patch("analysis.judgments.comparison:compare_judgments", "judgments.comparison.compare_judgments")
    timer.patch("analysis.judgments.orders:verdict_tables", "judgments.orders.verdict_tables")
    timer.patch("analysis.judgments.orders:tau_interval", "judgments.orders.tau_interval")
    timer.patch("stats.agreement:label_agreement", "stats.agreement.label_agreement")
    timer.patch("analysis.figure_style:figure_to_png_bytes", "PNG (figure_style.figure_to_png_bytes)")
    timer.patch("analysis.figure_style:figure_to_svg", "SVG (figure_style.figure_to_svg)")
    both = next((name for name in RENDER_BOTH if attribute(f"analysis.figure_style:{name}")), None)
    if both is not None:
        timer.patch(f"analysis.figure_style:{both}", rendering)
    else:
        timer.missing.append(f"analysis.figure_style.{RENDER_BOTH[0]} (PNG and SVG at once)")


def sections_before_figures(timer: Timer, report) -> None:
    """Cells 2-10 of the notebook (title, verdicts, judges at a glance, files, checks, results)."""
    experiment = report.experiment
    html = module("analysis.html")

    def verdicts(verdicts, note):
        shown = html.list_html(verdicts(experiment), empty="")
        glance = attribute("analysis.judgments.glance:verdicts_html")
        if glance is not None:
            glance(report, shown)
        else:
            timer.missing.append("analysis.judgments.glance.verdicts_html")
        html.text_html(note(experiment), "p", "note")

    def parts(parts):
        list(parts(report))

    def files(files_table, parameters_table):
        html.table_html(files_table(report), index=False)
        html.table_html(parameters_table(report))

    def checks(pool_note, query_checks, depth_table, label_distribution, judged_table):
        html.list_html(report.warnings)
        pool_note(report)
        html.table_html(query_checks(report))
        html.table_html(depth_table(report))
        html.table_html(label_distribution(report), index=False)
        html.table_html(judged_table(report).round(4))

    def leaderboard(leaderboard, note, medians):
        leaderboard(report)
        html.text_html(note(report), "p", "note")
        html.table_html(medians(report))

    def comparisons(note, table):
        html.text_html(note(report), "p", "note")
        pairs = attribute("analysis.results:compared_pairs")
        for pair in (pairs(experiment) if pairs else [(name,) for name in experiment.names]):
            html.table_html(table(report, *pair))

    def pairwise(table, note):
        html.table_html(table(report))
        html.text_html(note(report), "p", "note")

    results = "analysis.results"
    timer.section("verdicts (results.verdicts, verdicts_note, glance.verdicts_html)", verdicts,
                  f"{results}:verdicts", f"{results}:verdicts_note")
    timer.section("judges at a glance (judgments.glance.parts)", parts, "analysis.judgments.glance:parts")
    timer.section("files and parameters (content.files_table, parameters_table)", files,
                  "analysis.content:files_table", "analysis.content:parameters_table")
    timer.section("data checks (analysis.checks)", checks, *(f"analysis.checks:{name}" for name in (
        "pool_note", "query_checks", "depth_table", "label_distribution", "judged_table")))
    timer.section("leaderboard + note, medians (results.leaderboard)", leaderboard,
                  f"{results}:leaderboard", f"{results}:leaderboard_note", f"{results}:medians_table")
    timer.section("comparison tables (results.comparison_table, each pair)", comparisons,
                  f"{results}:comparisons_note", f"{results}:comparison_table")
    if len(experiment.names) > 1:
        timer.section("pairwise table + note (results.pairwise_table)", pairwise,
                      f"{results}:pairwise_table", f"{results}:pairwise_note")
    timer.section("query groups (report_groups.parts)", parts, "analysis.tables.report_groups:parts")


def figures(timer: Timer, report) -> None:
    """The figures cell as the notebook runs it (each draw timed inside), then each figure drawn again and
    rendered each way on its own."""
    content = module("analysis.content")
    drawers = content.figure_drawers

    def timed_drawers(report):
        return [(caption, timer.wrap("draw (each figure's drawer)", draw)) for caption, draw in drawers(report)]

    content.figure_drawers = timed_drawers
    with timer.stage(FIGURES):
        content.report_figures(report)
    content.figure_drawers = drawers
    style = module("analysis.figure_style")
    both = next((name for name in RENDER_BOTH if hasattr(style, name)), None)
    with timer.unpatched(), timer.stage(EACH_FIGURE):
        for number, (caption, draw) in enumerate(drawers(report), start=1):
            name = f"figure {number} ({caption[:36]})"
            with timer.stage(f"{name}: draw"):
                figure = draw()
            with timer.stage(f"{name}: PNG"):
                style.figure_to_png_bytes(figure)
            with timer.stage(f"{name}: SVG"):
                style.figure_to_svg(figure)
            if both is not None:
                with timer.stage(f"{name}: PNG+SVG at once ({both})"):
                    getattr(style, both)(figure)


def sections_after_figures(timer: Timer, report, folder: Path) -> None:
    """Cells 14-17: the queries, the drill-downs, the judgment sets, summary.json, the paper tables, the files."""
    experiment, html, record = report.experiment, module("analysis.html"), {}

    def queries(section, wins_and_losses):
        if len(experiment.names) == 1:
            wins, losses = wins_and_losses(report, experiment.names[0], experiment.headline)
            html.table_html(wins, index=False)
            html.table_html(losses, index=False)
        section(report, experiment.headline)

    timer.section("query table (results.query_section_html)", queries,
                  "analysis.results:query_section_html", "analysis.results:wins_and_losses")
    timer.section("drill-downs (drilldown.section_html)", lambda section: section(report),
                  "analysis.drilldown:section_html")
    timer.section("judgment sets (judgments.section.parts)", lambda parts: list(parts(report)),
                  "analysis.judgments.section:parts")
    timer.section("reproduce (html.reproduce_html)", lambda reproduce: reproduce(report.command, ""),
                  "analysis.html:reproduce_html")
    timer.section("summary.json's record (outputs.summary_record)", lambda summary: record.update(summary(report)),
                  "analysis.outputs:summary_record")
    timer.section("paper tables (paper.report_files.paper_section_html)", lambda paper: paper(record),
                  "analysis.paper.report_files:paper_section_html")
    timer.section("write the report's files (notebook_io.save_outputs)",
                  lambda save: save(report, folder, record), "build.notebook_io:save_outputs")


def main(result: Path, argv: list[str]) -> None:
    timer = Timer()
    with timer.stage(OUTSIDE[0]):
        for name in NOTEBOOK_MODULES:
            module(name)
    with timer.stage(OUTSIDE[1]):
        params = validated(argv)
    with tempfile.TemporaryDirectory() as scratch:
        with timer.stage(OUTSIDE[2]):
            prepare_inputs(params, Path(scratch) / ".inputs")
        wrap_statistics(timer)
        with timer.stage(LOAD):
            report = module("build.notebook_io").load_report(params, keep_figures=True)
        for name, label in (("pairwise", "Tukey HSD (Experiment.pairwise, first use)"),
                            ("mean_intervals", "Experiment.mean_intervals (first use)")):
            if hasattr(type(report.experiment), name):
                with timer.stage(label):
                    getattr(report.experiment, name)
            else:
                timer.missing.append(f"Experiment.{name}")
        sections_before_figures(timer, report)
        figures(timer, report)
        (Path(scratch) / "out").mkdir()
        sections_after_figures(timer, report, Path(scratch) / "out")
    result.write_text(json.dumps({"rows": [[path, *row] for path, row in timer.rows.items()],
                                  "missing": timer.missing}))


if __name__ == "__main__":
    os.environ.setdefault("MPLBACKEND", "Agg")
    main(Path(sys.argv[1]), sys.argv[2:])
