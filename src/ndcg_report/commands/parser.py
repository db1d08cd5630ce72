"""The command line's parser: every subcommand and option, with defaults and exit codes in --help."""

from __future__ import annotations

import argparse
import re
import sys

from ndcg_report.commands.output import EXIT_BAD_INPUT, EXIT_FAILED, error_line, one_line, silence_stdout

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
    from ndcg_report.core.presets import help_text

    parser.add_argument(
        "-m", "--measure", action="append", dest="measures", metavar="MEASURE",
        help="a measure to compute, repeatable: trec_eval's names (ndcg_cut.10,100 recall.1000 map recip_rank P.10 "
             "map_cut.100 Rprec success.1,5 num_rel_ret bpref infAP iprec_at_recall.0.1 set_F all_trec) or "
             "ir_measures' (nDCG@10 R@1000 AP RR@10 P@10 AP@100 Bpref IPrec@0.1 SetF), several in one value "
             "separated by spaces; a family named without a cut-off takes -k, else trec_eval's default cut-offs "
             "(default: nDCG at -k)")
    parser.add_argument(
        "-k", "--cutoffs", default=None,
        help="comma-separated cut-offs of nDCG (without -m or --preset) or of the families named without one; "
             "'all' means no cut-off (default: 1,3,5,10,20,100,1000)",
    )
    parser.add_argument("-l", "--rel-level", default=None, dest="rel_level", metavar="N",
                        help="relevance level, trec_eval's -l: the binary measures (P, R, AP, RR, Rprec, Success) "
                             "count a label >= N as relevant; nDCG always uses the graded labels (default: 1, or "
                             "the preset's)")
    parser.add_argument("--preset", default="", metavar="NAME",
                        help=f"a published measure set, before any -m: {help_text()}")
    parser.add_argument("--judged-only", action="store_true", dest="judged_only",
                        help="add beside each nDCG measure its judged-only twin, nDCG_judged: the run without its "
                             "unjudged documents, ranked again (Sakai's condensed list; ir_measures' judged_only)")
    if report:
        parser.add_argument("--headline", default="", metavar="MEASURE",
                            help="the measure of the verdicts, the pairwise tests and the figures (default: the "
                                 "preset's, else nDCG@10 if computed, else the first measure)")
    parser.add_argument("--gain", default="linear", choices=("linear", "exponential"),
                        help="linear: gain = label (trec_eval); exponential: 2**label - 1")
    parser.add_argument("--missing", default=None, choices=("zero", "skip"),
                        help="queries with relevant docs that the run lacks: score 0 (trec_eval -c) or leave out "
                             "(default: zero, or the preset's)")
    parser.add_argument("--no-relevant", default=None, choices=("zero", "skip"), dest="no_relevant",
                        help="queries with nothing relevant in qrels (for nDCG: no positive label; for the binary "
                             "measures: none at the relevance level): score 0 as trec_eval -c does, or leave out "
                             "(default: zero, or the preset's)")
    parser.add_argument("--identical-ids", default=None, choices=("keep", "drop"), dest="identical_ids",
                        help="run lines whose docid is their qid: keep (trec_eval) or drop (BEIR's "
                             "ignore_identical_ids) (default: keep, or the preset's: drop for beir)")


def _add_bm25_options(parser: argparse.ArgumentParser, corpus_only: bool = False) -> None:
    if corpus_only:
        parser = parser.add_argument_group(  # type: ignore[assignment]
            "BM25 baseline from a corpus (only with --corpus)",
            "how the baseline is built from --corpus and --topics; refused with --baseline")
    parser.add_argument("--k1", type=float, default=None, help="BM25 k1 (default 0.9, as Anserini)")
    parser.add_argument("--b", type=float, default=None, help="BM25 b (default 0.4, as Anserini)")
    parser.add_argument("--top-k", type=int, default=None, dest="top_k",
                        help="documents retrieved per query (default 1000)")
    parser.add_argument("--cache-dir", default="", dest="cache_dir",
                        help="folder of cached BM25 runs (default: $NDCG_REPORT_CACHE/bm25 or the user cache)")


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
    build.add_argument("--run", required=True, action="append", metavar="[NAME=]PATH",
                       help="a run under test; repeat for several systems. NAME=PATH names it, a plain PATH is "
                            "named by its file name without .gz, .txt, .run, ... (two runs with one name: exit 2)")
    build.add_argument("--qrels", required=True, action="append", metavar="[NAME=]PATH",
                       help="the qrels; repeat as NAME=PATH to compare judgment sets (human against LLM labels): "
                            "the first is the reference every section uses, a section compares the others with it")
    build.add_argument("--fill-unjudged-from", default="", metavar="NAME",
                       help="with several --qrels: one more set, the reference's labels where it has them and "
                            "NAME's for the pairs it lacks")
    source = build.add_mutually_exclusive_group(required=True)
    source.add_argument("--baseline", default="", help="the baseline run (e.g. Anserini BM25)")
    source.add_argument("--corpus", default="", help="JSON-lines corpus: build (and cache) a BM25 baseline from it")
    build.add_argument("--topics", default="", help="{topics formats}: "
                                                    "shown in the tables; required with --corpus")
    build.add_argument("--groups", default="", metavar="FILE",
                       help="query groups: qid<TAB>group lines, or JSON {group: [qids]} (DL-HARD's folds.json): "
                            "each system against the baseline within each group, per_group.csv beside the report")
    build.add_argument("--docs", default="", metavar="CORPUS",
                       help="document text for the drill-downs: BEIR corpus.jsonl or docid<TAB>text, plain or gzip "
                            "(default: the --corpus, if any); only the documents shown are read")
    build.add_argument("--drilldown", type=int, default=200, metavar="N",
                       help="queries with a drill-down of their rankings: all up to N, above it the largest wins, "
                            "losses and spreads; 0 for none")
    build.add_argument("--drilldown-depth", type=int, default=10, metavar="K", dest="drilldown_depth",
                       help="the top K of the drill-downs, of unjudged.tsv and of the rank overlap (N x K at most "
                            "50,000)")
    _add_bm25_options(build, corpus_only=True)
    _add_metric_options(build, report=True)
    build.add_argument("--name", default="", help="report title (default: made from the system names)")
    build.add_argument("--run-name", default="", help="display name of the one run (default: its file name); "
                                                      "with several runs, use --run NAME=PATH")
    build.add_argument("--baseline-name", default="", help="display name of the baseline (default: its file name; "
                                                           "BM25 with --corpus)")
    build.add_argument("--seed", type=int, default=42, help="seed of the bootstrap and randomization tests")
    build.add_argument("--timeout", type=int, default=600, help="seconds one notebook cell may take")
    build.add_argument("--notebook", default="", help="a customised copy of the report notebook")
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
    suite.add_argument("--timeout", type=int, default=600, help="seconds one notebook cell may take")

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
    demo.add_argument("--cache-dir", default="", dest="cache_dir",
                      help="folder of cached BM25 runs, for cranfield (default: $NDCG_REPORT_CACHE/bm25 or the "
                           "user cache)")
    demo.add_argument("--timeout", type=int, default=600, help="seconds one notebook cell may take")

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
