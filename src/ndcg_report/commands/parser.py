"""The command line's parser: every subcommand and option, with defaults and exit codes in --help."""

from __future__ import annotations

import argparse
import re
import sys

from ndcg_report.analysis.options.table import names as table_names
from ndcg_report.commands.eval import ListMeasures
from ndcg_report.commands.output import EXIT_BAD_INPUT, EXIT_FAILED, error_line, one_line, silence_stdout
from ndcg_report.commands.report_flags import add_build_flags, add_flags, bm25_names

EXIT_CODES = """exit codes:
  0    done
  1    a step failed (a notebook cell, nbval, a timeout, writing an output); the previous report stays
  2    bad input or usage: one line naming the file, the line and the fix; nothing written
  3    batch only: another batch holds the output root
  130  interrupted (Ctrl-C; 143 SIGTERM, 129 SIGHUP): one line, staging removed"""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Each option's help ends with its default, unless it has none (empty, off) or says it already."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = _with_formats(action.help or "")
        shown = action.default not in (None, "", False, argparse.SUPPRESS) and "default" not in text
        if shown and (action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE)):
            text += " (default: %(default)s)"
        return text


def _with_formats(text: str) -> str:
    """A help text with `{KIND formats}` as the formats KIND takes (inputs.formats.registry, imported for --help only)."""
    if "formats}" not in text:
        return text
    from ndcg_report.inputs.formats.registry import FORMATS

    return re.sub(r"\{(\w+) formats\}", lambda match: FORMATS.help(match.group(1)), text)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr and exit code 2; help shows the defaults
    and the exit codes."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        kwargs.setdefault("epilog", EXIT_CODES)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_BAD_INPUT, one_line(f"{self.prog}: error: {message} (see {self.prog} --help)") + "\n")

    def _print_message(self, message: str, file: object = None) -> None:
        """Write and flush (argparse swallows a failed write: --help to a full disk would exit 0)."""
        if not message:
            return
        stream = file or sys.stderr
        try:
            stream.write(message)  # type: ignore[union-attr]
            stream.flush()  # type: ignore[union-attr]
        except (OSError, ValueError, AttributeError) as exc:
            if stream is not sys.stdout:
                return
            silence_stdout()
            error_line(f"cannot write the output ({getattr(exc, 'strerror', None) or exc})")
            sys.exit(EXIT_FAILED)


def _add_metric_options(parser: argparse.ArgumentParser, report: bool = False) -> None:
    names = [name for name in table_names("cli", "measure") if report or name != "headline"]
    add_flags(parser, names)


def _add_bm25_options(parser: argparse.ArgumentParser) -> None:
    add_flags(parser, bm25_names())


def build_parser() -> argparse.ArgumentParser:
    from ndcg_report.version import __version__

    parser = _Parser(prog="ndcg-report", description="Exact, fast NDCG@k, R@k, P@k, RR, AP (trec_eval's measures) of TREC runs, and reports on them.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    evaluate = commands.add_parser("eval", help="print nDCG@k and the other measures of a run (trec_eval's argument order and layout)")
    evaluate.add_argument("qrels", help="qrels: {qrels formats}")
    evaluate.add_argument("runs", nargs="+", metavar="RUN",
                          help="run: {run formats}; several (each RUN or NAME=RUN) print one table: trec_eval's lines run after "
                               "run, a leading run column in csv, a runs list in json")
    _add_metric_options(evaluate)
    evaluate.add_argument("-M", "--max-retrieved", type=int, default=None, dest="max_retrieved", metavar="N",
                          help="trec_eval's -M: only the first N lines of each query count (in trec_eval's order: "
                               "score descending, then docid descending); default: every line")
    evaluate.add_argument("-q", "--per-query", action="store_true", help="one row per query as well as the mean")
    evaluate.add_argument("--list", action=ListMeasures, help="print every measure (its names, definition and mean) and exit")
    evaluate.add_argument("--format", default="trec", choices=("trec", "csv", "json"), help="output layout: trec_eval's lines, CSV or JSON")
    evaluate.add_argument("--digits", type=int, default=None,
                          help="decimals printed (default 4 for trec and csv, full precision for json)")
    reading = evaluate.add_mutually_exclusive_group()
    reading.add_argument("--stream", dest="reading", action="store_const", const="stream",
                         help="read the run in blocks of whole queries (bounded memory; a query's lines must be "
                              "contiguous); default: for a run past 128 MiB of text (or of Parquet data), or unlikely "
                              "to fit in half the available memory, falling back to --in-memory for a query found "
                              "in two places")
    reading.add_argument("--in-memory", dest="reading", action="store_const", const="memory",
                         help="read the whole run at once (any line order)")
    evaluate.add_argument("--dask", default="", metavar="ADDRESS",
                          help="evaluate a Parquet run partitioned by query on the Dask cluster at ADDRESS "
                               "(tcp://HOST:8786), one task per file; paths must be readable by the workers. "
                               "Parquet runs only (other formats: evaluate without --dask)")
    build = commands.add_parser("build", help="build the HTML report of one or more runs against a baseline")
    add_build_flags(build)
    build.add_argument("--out", required=True, help="output folder: absent, empty or an earlier report's; its report "
                                                     "files are replaced when the build succeeds, anything else kept")

    suite = commands.add_parser(
        "suite", help="build one report across collections: systems x collections of each measure, with each "
                      "collection's own verdicts and the tests over collections",
        description="Build a suite report from a YAML config (see docs/command-line.md#suite): each collection's\n"
                    "runs against its own baseline, as its report computes them, in one systems x collections\n"
                    "table per measure, and the tests over collections (Wilcoxon, Friedman with Nemenyi).")
    suite.add_argument("config", help="YAML config: title, preset or measures, and collections: a list of "
                                      "{name, qrels, baseline, runs: {SYSTEM: PATH}, topics}")
    suite.add_argument("--out", required=True, help="output folder: absent, empty or an earlier suite's or report's; "
                                                     "its files are replaced when the build succeeds, anything else kept")
    suite.add_argument("--with-reports", action="store_true", dest="with_reports",
                       help="build each collection's full report too, into OUT/collections/NAME/, linked from the suite")
    add_flags(suite, ["timeout"])

    bm25 = commands.add_parser("bm25", help="build a BM25 run from a corpus and topics (the baseline alone)")
    bm25.add_argument("--corpus", required=True, help="JSON-lines corpus, one {_id, title, text} per line")
    bm25.add_argument("--topics", required=True, help="{topics formats}")
    bm25.add_argument("--out", required=True, help="the TREC run to write (tag bm25)")
    _add_bm25_options(bm25)

    judges = commands.add_parser(
        "judges", help="compare judgment sets (human and LLM labels): label agreement, and the runs' orders and "
                       "verdicts under each set",
        description="Compare judgment sets: label agreement on the pairs both judge, and each run evaluated under\n"
                    "every set as eval evaluates it. Without -m, -k or --preset the measure is nDCG@10 only.")
    judges.add_argument("inputs", nargs="+", metavar="SET_OR_RUN",
                        help="judgment sets (REFERENCE OTHER [OTHER...]: qrels in any format eval takes, named by "
                             "their file names; the first is the reference) and runs as NAME=RUN (optional: without "
                             "runs only the labels are compared)")
    _add_metric_options(judges)
    judges.add_argument("--baseline", default="", metavar="RUN",
                        help="the system the verdicts compare with under each set: the NAME of one of the runs, or "
                             "one more [NAME=]RUN (default: no verdicts)")
    judges.add_argument("--fill-unjudged-from", default="", dest="fill_from", metavar="SET",
                        help="add one more set: the reference with the pairs it lacks (in its own queries) labelled "
                             "by the named set")
    judges.add_argument("--queries", type=int, default=10, dest="most_queries", metavar="N",
                        help="the queries where the sets disagree most, per measure")
    judges.add_argument("--seed", type=int, default=42, help="seed of the randomization tests of the verdicts")
    judges.add_argument("--format", default="text", choices=("text", "json", "csv"),
                        help="text for reading; json: the object summary.json holds as `judgments`; csv: one row "
                             "per number (docs/command-line.md lists the columns)")

    pool = commands.add_parser("pool", help="write the unjudged documents of the runs' top k, for a judging round")
    pool.add_argument("qrels", help="the qrels (what is judged already)")
    pool.add_argument("runs", nargs="+", metavar="[NAME=]RUN", help="the runs to pool (a plain RUN is named by its file)")
    pool.add_argument("-k", "--depth", type=int, default=10, help="pool depth: each run's top k")
    pool.add_argument("--out", required=True, help="the TSV to write: qid, docid, best_rank, n_systems, systems")

    table = commands.add_parser(
        "table", help="a built report's leaderboard (or a suite's systems x collections table) as a LaTeX, Markdown "
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
    table.add_argument("--out", default="", metavar="FILE", help="write the table to FILE (default: print it)")

    demo = commands.add_parser("demo", help="build an embedded demo report (default: TREC DL 2019 passage)")
    demo.add_argument("dataset", nargs="?", default="dl19", choices=("dl19", "judges", "cranfield", "rag"),
                      help="dl19: monoT5, two fusions and a re-ranking depth ablation against Anserini BM25; judges: "
                           "the same runs judged by NIST and by a simulated lenient judge (judgment sets compared); "
                           "cranfield: BM25+RM3 against BM25 built from the corpus; rag: chunk retrievers for RAG "
                           "(JSON-lines grades and ranked lists, the rag preset)")
    demo.add_argument("--out", default="", help="output folder (default: reports/demo, reports/demo-judges, "
                                                "reports/demo-cranfield, reports/demo-rag)")
    add_flags(demo, ["cache_dir", "timeout"])

    batch = commands.add_parser(
        "batch", help="build every report of a YAML config, with index.html and history (exit 3: root busy)")
    batch.add_argument("config", help="YAML config listing the reports (see docs/scheduled-builds.md)")
    batch.add_argument("-j", "--jobs", type=int, default=None,
                       help="reports built at once, each in its own process (default 1, at most the CPU count); "
                            "with --dask, default: the cluster's worker threads")
    batch.add_argument("--force", action="store_true", help="rebuild reports whose inputs did not change")
    batch.add_argument("--index", action="store_true", dest="index_only",
                       help="build nothing: rewrite index.html from the history (a killed batch's reports show as "
                            "interrupted); exit 3 while a batch runs")
    batch.add_argument("--dask", default="", metavar="ADDRESS",
                       help="build each report as a task on the Dask cluster at ADDRESS (tcp://HOST:8786), whose "
                            "workers share the output root and the inputs' paths; this process keeps the lock, "
                            "history and index")
    return parser
