"""`ndcg-report table`: a built report's leaderboard as LaTeX, Markdown or CSV, from its summary.json alone.

Nothing is recomputed: the numbers, marks and letters are summary.json's (analysis.paper.leaderboard),
so last month's report gives its table. Printed, or written atomically to --out.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ndcg_report.commands.output import Note
from ndcg_report.errors import ParameterError

SUMMARY = "summary.json"
MAX_SUMMARY_BYTES = 256 << 20  # past this, a file is not a summary.json the tool wrote
SHOWN_ENTRIES = 5


def run_table(args: argparse.Namespace) -> str | Note:
    """The table of the report at args.report (its folder or its summary.json) in args.format."""
    from ndcg_report.analysis.paper.grid import MAX_DIGITS
    from ndcg_report.analysis.paper.leaderboard import leaderboard_csv, leaderboard_latex, leaderboard_markdown

    if not 0 <= args.digits <= MAX_DIGITS:
        raise ParameterError(f"--digits must be a whole number from 0 to {MAX_DIGITS}; got {args.digits}")
    if args.letters and args.format == "csv":
        raise ParameterError("--letters is for --format latex or markdown; the CSV has one row per system and measure")
    path = summary_path(Path(args.report))
    summary = read_summary(path)
    measures = [name for value in args.measures for name in value.split()] if args.measures else None
    options = {"measures": measures, "systems": args.systems, "digits": args.digits}
    if args.format != "csv":
        options["letters"] = args.letters
    writer = {"latex": leaderboard_latex, "markdown": leaderboard_markdown, "csv": leaderboard_csv}[args.format]
    try:
        text = writer(summary, **options)
    except ParameterError as exc:
        raise ParameterError(f"{path}: {exc}") from None
    if not args.out:
        return text
    out = Path(args.out)
    _check_out(out, path)
    from ndcg_report.files import write_text_atomic

    write_text_atomic(out, text)
    return Note(f"wrote {out}: the {args.format} table of {path}\n")


def summary_path(given: Path) -> Path:
    """The summary.json of a report folder, or the file given; ParameterError naming what is there."""
    if not given.exists():
        raise ParameterError(f"{given} does not exist; give a report folder (the --out of ndcg-report build) or its "
                             f"{SUMMARY}")
    if given.is_dir():
        path = given / SUMMARY
        if not path.is_file():
            entries = sorted(entry.name for entry in given.iterdir())
            shown = ", ".join(entries[:SHOWN_ENTRIES]) + (f" and {len(entries) - SHOWN_ENTRIES} more"
                                                          if len(entries) > SHOWN_ENTRIES else "")
            raise ParameterError(f"{given} is not a report folder: it has no {SUMMARY} (it holds "
                                 f"{shown or 'nothing'}); give the --out folder of ndcg-report build")
        return path
    return given


def read_summary(path: Path) -> dict:
    """summary.json as written by the tool (a JSON object with its schema_version and ndcg_report_version);
    ParameterError for anything else."""
    fix = "give the summary.json of a report built by ndcg-report"
    try:
        if path.stat().st_size > MAX_SUMMARY_BYTES:
            raise ParameterError(f"{path}: too large for a summary.json ndcg-report writes; {fix}")
        record = json.loads(path.read_bytes())
    except (ValueError, RecursionError) as exc:
        raise ParameterError(f"{path}: not JSON ({str(exc).splitlines()[0][:120]}); {fix}") from None
    except OSError as exc:
        raise ParameterError(f"{path}: cannot be read ({exc.strerror or exc}); {fix}") from None
    if not (isinstance(record, dict) and isinstance(record.get("schema_version"), int)
            and isinstance(record.get("ndcg_report_version"), str)):
        raise ParameterError(f"{path}: not written by ndcg-report (no schema_version and ndcg_report_version); {fix}")
    return record


def _check_out(out: Path, summary: Path) -> None:
    from ndcg_report.files import OUTPUT_ROOM, folder_problem, overwritten_input, shown_path, unusable_path

    problem = unusable_path(out, OUTPUT_ROOM)
    if problem:
        raise ParameterError(f"--out {shown_path(out)} {problem}")
    if out.is_dir():
        raise ParameterError(f"--out {out} is a folder; give the path of the file to write")
    if overwritten_input(out, [summary]) is not None:
        raise ParameterError(f"--out {out} is the report's {SUMMARY}, which would be replaced; write the table "
                             "to another file")
    problem = folder_problem(out.parent)
    if problem:
        raise ParameterError(f"--out {out}: its folder {problem}")
