"""`ndcg-report bm25`: the BM25 run of a corpus and topics (built, or reused from the cache) to a file."""

from __future__ import annotations

import argparse
import sys

from ndcg_report.commands.build_report import bm25_settings
from ndcg_report.commands.output import Note, log, write_output
from ndcg_report.commands.parser import _add_bm25_options
from ndcg_report.errors import ParameterError

NAME = "bm25"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """bm25's options: the corpus, the topics, the run to write, and BM25's settings."""
    bm25 = subparsers.add_parser(NAME, help="build a BM25 run from a corpus and topics (the baseline alone)")
    bm25.add_argument("--corpus", required=True, help="JSON-lines corpus, one {_id, title, text} per line")
    bm25.add_argument("--topics", required=True, help="{topics formats}")
    bm25.add_argument("--out", required=True, help="the TREC run to write (tag bm25)")
    _add_bm25_options(bm25)


def run(args: argparse.Namespace) -> int:
    return write_output(run_bm25(args))


def run_bm25(args: argparse.Namespace) -> Note:
    """Build (or reuse from the cache) the BM25 run of a corpus and topics; copy it to --out."""
    from pathlib import Path

    from ndcg_report.baseline.cache import cached_bm25_run
    from ndcg_report.files import OUTPUT_ROOM, copy_file_atomic, folder_problem, overwritten_input, shown_path, unusable_path

    out = Path(args.out)
    problem = unusable_path(out, OUTPUT_ROOM)
    if problem:
        raise ParameterError(f"--out {shown_path(out)} {problem}")
    if out.is_dir():
        raise ParameterError(f"--out {out} is a folder; give the path of the run file to write")
    clash = overwritten_input(out, [Path(args.corpus), Path(args.topics)], folder=False)
    if clash is not None:
        raise ParameterError(f"--out {out} is the input {clash}, which would be replaced; write the run to another file")
    problem = folder_problem(out.parent)
    if problem:
        raise ParameterError(f"--out {out}: its folder {problem}")
    run_path, _ = cached_bm25_run(
        args.corpus, args.topics, **bm25_settings(args), cache_dir=args.cache_dir or None,
        progress=sys.stderr.isatty(), log=log,
    )
    copy_file_atomic(run_path, out)
    return Note(f"wrote {out}\n")
