"""`ndcg-report demo`: an embedded demo report, built as `build` builds one (commands.build_report)."""

from __future__ import annotations

import argparse

from ndcg_report.commands import build_report
from ndcg_report.commands.report_flags import add_flags

NAME = "demo"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """demo's options: the dataset, the folder to write, the BM25 cache and the cells' timeout."""
    demo = subparsers.add_parser(NAME, help="build an embedded demo report (default: TREC DL 2019 passage)")
    demo.add_argument("dataset", nargs="?", default="dl19", choices=("dl19", "judges", "cranfield", "rag"),
                      help="dl19: monoT5, two fusions and a re-ranking depth ablation against Anserini BM25; judges: "
                           "the same runs judged by NIST and by a simulated lenient judge (judgment sets compared); "
                           "cranfield: BM25+RM3 against BM25 built from the corpus; rag: chunk retrievers for RAG "
                           "(JSON-lines grades and ranked lists, the rag preset)")
    demo.add_argument("--out", default="", help="output folder (default: reports/demo, reports/demo-judges, "
                                                "reports/demo-cranfield, reports/demo-rag)")
    add_flags(demo, ["cache_dir", "timeout"])


def run(args: argparse.Namespace) -> int:
    return build_report.run(args)
