"""`ndcg-report table`: a built report's leaderboard as LaTeX, Markdown or CSV, from its summary.json alone.

Nothing is recomputed: the numbers, marks and letters are summary.json's (analysis.paper.leaderboard),
so last month's report gives its table. Printed, or written atomically to --out.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ndcg_report.commands.output import Note, write_output
from ndcg_report.errors import ParameterError

SUMMARY = "summary.json"
SUITE_KIND = "suite"  # a suite's summary.json says so (analysis.tables.suite_report)
SUITE_CELLS = "table.csv"  # beside a suite's summary.json: one row per (collection, system, measure)
SHOWN_ENTRIES = 5
NAME = "table"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """table's arguments: the report, the layout, the columns and rows, and where to write it."""
    table = subparsers.add_parser(
        NAME, help="a built report's leaderboard (or a suite's systems x collections table) as a LaTeX, Markdown "
                   "or CSV table (from its summary.json, nothing recomputed)")
    table.add_argument("report", metavar="REPORT_DIR|summary.json",
                       help="a report's folder (the --out of build, demo or suite) or its summary.json")
    table.add_argument("--format", default="latex", choices=("latex", "markdown", "csv"),
                       help="latex: a booktabs table (needs \\usepackage{booktabs}); markdown: a GitHub table and a "
                            "legend line; csv: one row per system and measure")
    table.add_argument("-m", "--measure", action="extend", nargs="+", dest="measures", metavar="MEASURE",
                       help="the columns, in order: measures of the report by label (nDCG@10 AP) or any of their "
                            "names (default: every measure of the report)")
    table.add_argument("--systems", action="extend", nargs="+", metavar="NAME",
                       help="the rows, in order: systems of the report by name (default: every system, best on the "
                            "headline first); the baseline is always the last row")
    table.add_argument("--letters", action="store_true",
                       help="superscript letters (ranx's style): the systems each one is significantly better than "
                            "on the headline measure, from the report's pairwise test (that measure only)")
    table.add_argument("--digits", type=int, default=4, help="decimals shown")
    table.add_argument("--caption", default=None, metavar="TEXT",
                       help="the caption's first sentence (latex, markdown; default: the report's title), escaped; "
                            "the notes on the marks follow it")
    table.add_argument("--label", default=None, metavar="KEY",
                       help="the LaTeX \\label (default: tab:leaderboard, a suite's tab:suite; '' for none): give "
                            "each table of a paper its own")
    table.add_argument("--out", default="", metavar="FILE", help="write the table to FILE (default: print it)")


def run(args: argparse.Namespace) -> int:
    return write_output(run_table(args))


def run_table(args: argparse.Namespace) -> str | Note:
    """The table of the report at args.report (its folder or its summary.json) in args.format."""
    from ndcg_report.analysis.paper.grid import MAX_DIGITS
    from ndcg_report.analysis.paper.leaderboard import leaderboard_csv, leaderboard_latex, leaderboard_markdown

    if not 0 <= args.digits <= MAX_DIGITS:
        raise ParameterError(f"--digits must be a whole number from 0 to {MAX_DIGITS}; got {args.digits}")
    if args.letters and args.format == "csv":
        raise ParameterError("--letters is for --format latex or markdown; the CSV has one row per system and measure")
    if args.caption is not None and args.format == "csv":
        raise ParameterError("--caption is for --format latex or markdown; the CSV has no caption")
    if args.label is not None and args.format != "latex":
        raise ParameterError(f"--label is for --format latex (a LaTeX \\label); {args.format} has none")
    layout = {key: value for key, value in (("caption", args.caption), ("label", args.label)) if value is not None}
    path = summary_path(Path(args.report))
    summary = read_summary(path)
    measures = [name for value in args.measures for name in value.split()] if args.measures else None
    if summary.get("kind") == SUITE_KIND:
        text = suite_table(path, summary, args.format, measures, args.systems, args.digits, args.letters, layout)
        return _written(text, args, path)
    options = {"measures": measures, "systems": args.systems, "digits": args.digits, **layout}
    if args.format != "csv":
        options["letters"] = args.letters
    writer = {"latex": leaderboard_latex, "markdown": leaderboard_markdown, "csv": leaderboard_csv}[args.format]
    try:
        text = writer(summary, **options)
    except ParameterError as exc:
        raise ParameterError(f"{path}: {exc}") from None
    return _written(text, args, path)


def _written(text: str, args: argparse.Namespace, path: Path) -> str | Note:
    """text to print, or written to --out (a Note saying so)."""
    if not args.out:
        return text
    out = Path(args.out)
    _check_out(out, path)
    from ndcg_report.files import write_text_atomic

    write_text_atomic(out, text)
    return Note(f"wrote {out}: the {args.format} table of {path}\n")


def suite_table(path: Path, summary: dict, form: str, measures: list[str] | None, systems: list[str] | None,
                digits: int, letters: bool, layout: dict | None = None) -> str:
    """A suite's systems x collections table of each measure asked for (default: its first), from the
    table.csv beside its summary.json (each cell's mean and its collection's own verdict): LaTeX and
    Markdown, one table per measure (`layout`: its caption and label); CSV, table.csv's rows of those
    measures and systems."""
    import pandas as pd

    from ndcg_report.analysis.paper.suite import suite_latex, suite_markdown
    from ndcg_report.files import MAX_SUMMARY_BYTES

    if letters:
        raise ParameterError(f"{path}: --letters is for a report's table; a suite's cells are marked by each "
                             "collection's own test")
    cells_file = path.parent / SUITE_CELLS
    not_ours = f"{path}: {SUITE_CELLS} beside it is not the one ndcg-report suite writes; give the suite's folder as built"
    try:
        if cells_file.stat().st_size > MAX_SUMMARY_BYTES or not cells_file.is_file():  # a FIFO would never end
            raise ParameterError(not_ours)
        cells = pd.read_csv(cells_file, dtype={"collection": str, "system": str, "role": str, "measure": str},
                            keep_default_na=False, na_values=[""], encoding="utf-8")
        if not {"collection", "system", "role", "measure", "mean", "delta", "significant"} <= set(cells.columns):
            raise ParameterError(not_ours)
        cells["mean"], cells["delta"] = pd.to_numeric(cells["mean"]), pd.to_numeric(cells["delta"])
    except OSError as exc:
        raise ParameterError(f"{path}: a suite's table needs the {SUITE_CELLS} beside its summary.json, which cannot be "
                             f"read ({exc.strerror or exc}); give the suite's folder as built") from None
    except ValueError:  # not CSV, not UTF-8, not numbers
        raise ParameterError(not_ours) from None
    known = list(pd.unique(cells["measure"]))
    chosen = measures or known[:1]
    unknown = [name for name in chosen if name not in known]
    if unknown:
        raise ParameterError(f"{path}: the suite has no measure {', '.join(map(repr, unknown))}; it has "
                             f"{', '.join(known)}")
    if systems:
        names = list(pd.unique(cells["system"]))
        missing = [name for name in systems if name not in names]
        if missing:
            raise ParameterError(f"{path}: the suite has no system {', '.join(map(repr, missing))}; it has "
                                 f"{', '.join(names)}")
        cells = cells[cells["system"].isin(systems) | (cells["role"] == "baseline")]
    if form == "csv":
        return _rows_as_written(cells_file, set(chosen), None if not systems else set(cells["system"]))
    cells = cells.assign(significant=cells["significant"].map({True: True, False: False, "true": True,
                                                               "false": False}))
    if (layout or {}).get("label") and len(chosen) > 1:
        raise ParameterError(f"{path}: --label names one table, and {len(chosen)} measures make {len(chosen)}; give "
                             "one measure (-m) per table")
    writer = suite_latex if form == "latex" else suite_markdown
    tests = summary.get("tests") if isinstance(summary.get("tests"), dict) else {}
    return "\n".join(writer(cells, measure=name, digits=digits, alpha=(tests.get(name) or {}).get("alpha"),
                            **(layout or {})) for name in chosen)


def _rows_as_written(cells_file: Path, measures: set[str], systems: set[str] | None) -> str:
    """table.csv's header and its rows of these measures (and systems), each as the suite wrote it."""
    import csv
    import io

    with cells_file.open(newline="", encoding="utf-8") as source:
        rows = list(csv.reader(source))
    header = rows[0]
    measure, system = header.index("measure"), header.index("system")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(row for row in rows[1:] if row[measure] in measures and (systems is None or row[system] in systems))
    return out.getvalue()


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
    from ndcg_report.files import MAX_SUMMARY_BYTES

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
