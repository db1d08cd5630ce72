"""What the commands' parsers share: one-line usage errors, defaults and exit codes in --help, shared options.

The measure options (eval, build, judges) and the BM25 options (build, bm25) are added by one function each.

`build`'s and `demo`'s options are here too: commands.build_report and commands.demo add them with
add_build_parser and add_demo_parser.
"""

from __future__ import annotations

import argparse
import sys

from ndcg_report.commands.output import error_line, one_line, silence_stdout
from ndcg_report.exit_codes import EXIT_BAD_INPUT, EXIT_FAILED, MEANINGS

EXIT_CODES = "exit codes:\n" + "\n".join(f"  {code:<4} {meaning}" for code, meaning in MEANINGS.items())


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Each option's help ends with its default, unless it has none (empty, off) or says it already."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        shown = action.default not in (None, "", False, argparse.SUPPRESS) and "default" not in text
        if shown and (action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE)):
            text += " (default: %(default)s)"
        return text


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


def add_build_parser(commands: argparse._SubParsersAction) -> None:
    """`build`: its options."""
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
    build.add_argument("--topics", default="", help="qid<TAB>query text lines, BEIR queries.jsonl or a TREC topic file: "
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


def add_demo_parser(commands: argparse._SubParsersAction) -> None:
    """`demo`: its options."""
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
