"""`ndcg-report demo`: an embedded demo report, built as `build` builds one (commands.build_report)."""

from __future__ import annotations

import argparse

from ndcg_report.commands import build_report
from ndcg_report.commands.parser import add_demo_parser

NAME = "demo"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """demo's options: the dataset, the folder to write, the BM25 cache and the cells' timeout."""
    add_demo_parser(subparsers)


def run(args: argparse.Namespace) -> int:
    return build_report.run(args)
