"""`ndcg-report gate BEFORE AFTER`: two builds of a report compared, one verdict; exit 4 on a regression.

Every output path is checked before any work, and every file is written atomically once the verdict
is made: a bad input writes nothing.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ndcg_report.analysis.gate.options import checked_gate_options, gate_options
from ndcg_report.commands.output import one_line, write_output
from ndcg_report.commands.report_flags import add_option_flags
from ndcg_report.errors import ParameterError
from ndcg_report.exit_codes import EXIT_OK, EXIT_REGRESSION

if TYPE_CHECKING:
    from ndcg_report.analysis.gate.verdict import GateVerdict

NAME = "gate"
OUTPUTS = {"json": "the verdict as JSON: a top status and one result per system and measure",
           "junit": "the verdict as JUnit XML: one testcase per system and measure, a regression a failure",
           "markdown": "the verdict as a short Markdown table (also appended to $GITHUB_STEP_SUMMARY when it names "
                       "a file)"}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """gate's arguments: the two report folders, the gate's options (from its table), the output files."""
    parser = subparsers.add_parser(
        NAME, help="compare two builds of a report system by system (paired, one-sided): exit 4 on a regression",
        description="Compare AFTER with BEFORE, two folders a report was built into: each system (matched by name) "
                    "on each gated measure, paired by query, with a one-sided randomization test (is AFTER worse?), "
                    "Holm over the systems x measures. Exit 0 when nothing regressed, 4 when something did.")
    parser.add_argument("before", metavar="BEFORE_DIR", help="the report gated against (last night's build)")
    parser.add_argument("after", metavar="AFTER_DIR", help="the report gated (tonight's build)")
    add_option_flags(parser, gate_options("cli"))
    for name, meaning in OUTPUTS.items():
        parser.add_argument(f"--{name}", metavar="FILE", default="", help=meaning)


def run(args: argparse.Namespace) -> int:
    """The verdict printed (one line per system and measure), the files written; exit 4 on a regression."""
    from ndcg_report.analysis.gate.built import read_report
    from ndcg_report.analysis.gate.verdict import gate, gated_measures

    given = {option.name: getattr(args, option.name) for option in gate_options("cli")
             if getattr(args, option.name) is not None}
    options = checked_gate_options(given, "cli", lambda key: next(o.cli_flag for o in gate_options("cli") if o.name == key))
    before, after = read_report(args.before, "BEFORE"), read_report(args.after, "AFTER")
    outputs = output_files(args, (before.folder, after.folder))
    measures = gated_measures(before, after, str(options["measures"]))
    verdict = gate(before, after, measures, float(options["margin"]), float(options["alpha"]))
    text = "".join(one_line(line) + "\n" for line in announce(after.title, verdict, outputs))
    code = write_output(text)
    return code if code != EXIT_OK else EXIT_REGRESSION if verdict.failed else EXIT_OK


def output_files(args: argparse.Namespace, folders: tuple[Path, ...]) -> dict[str, Path]:
    """The output files asked for (--json, --junit, --markdown: those the command has), checked before any
    work (ParameterError): writable, none of them a file of the reports in folders, no two the same."""
    from ndcg_report.analysis.gate.outputs import check_outputs

    outputs = {name: Path(getattr(args, name)) for name in OUTPUTS if getattr(args, name, "")}
    check_outputs(outputs, [path for folder in folders for path in folder.iterdir() if path.is_file()],
                  "a file of a report gated")
    return outputs


def announce(name: str, verdict: "GateVerdict", outputs: dict[str, Path]) -> list[str]:
    """Write the verdict's files (output_files'), append its Markdown to $GITHUB_STEP_SUMMARY when that names
    a file; return its text lines (formats.text_lines) for the caller to print."""
    from ndcg_report.analysis.gate.formats import junit_xml, markdown_summary, text_lines, verdict_json
    from ndcg_report.analysis.gate.outputs import append_step_summary, write_outputs

    writers = {"json": lambda: verdict_json(verdict), "junit": lambda: junit_xml([(name, verdict)]),
               "markdown": lambda: markdown_summary([(name, verdict)])}
    write_outputs(outputs, writers)
    append_step_summary(markdown_summary([(name, verdict)]))
    return text_lines(name, verdict)
