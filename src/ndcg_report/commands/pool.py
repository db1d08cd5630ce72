"""`ndcg-report pool`: the unjudged documents of the runs' top k, as a TSV for the next judging round.

Every query of the runs is pooled, those the qrels do not judge at all too (they need judging most);
the printed line says how many of those there are.
"""

from __future__ import annotations

import argparse

from ndcg_report.commands.output import Note, write_output
from ndcg_report.errors import ParameterError

NAME = "pool"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """pool's arguments: the qrels, the runs, the depth and the TSV to write."""
    pool = subparsers.add_parser(NAME, help="write the unjudged documents of the runs' top k, for a judging round")
    pool.add_argument("qrels", help="the qrels (what is judged already)")
    pool.add_argument("runs", nargs="+", metavar="[NAME=]RUN", help="the runs to pool (a plain RUN is named by its file)")
    pool.add_argument("-k", "--depth", type=int, default=10, help="pool depth: each run's top k")
    pool.add_argument("--out", required=True, help="the TSV to write: qid, docid, best_rank, n_systems, systems")


def run(args: argparse.Namespace) -> int:
    return write_output(run_pool(args))


def run_pool(args: argparse.Namespace) -> Note:
    """The depth-k pool of unjudged documents over the runs (core.toplists.unjudged_pool), as TSV."""
    from pathlib import Path

    from ndcg_report.core.toplists import pool_query_counts, pool_tsv_chunks, rankings, unjudged_pool
    from ndcg_report.files import OUTPUT_ROOM, folder_problem, overwritten_input, shown_path, unusable_path, write_lines_atomic
    from ndcg_report.inputs.reading import read_qrels, read_run
    from ndcg_report.analysis.systems import named_run_paths, split_run_option

    if not 1 <= args.depth <= 100_000:
        raise ParameterError(f"--depth must be a whole number from 1 to 100,000; got {args.depth}")
    out = Path(args.out)
    given = [split_run_option(text, "RUN") for text in args.runs]
    paths = [Path(path) for _, path in given]
    problem = unusable_path(out, OUTPUT_ROOM)
    if problem:
        raise ParameterError(f"--out {shown_path(out)} {problem}")
    if out.is_dir():
        raise ParameterError(f"--out {out} is a folder; give the path of the TSV file to write")
    clash = overwritten_input(out, [Path(args.qrels), *paths])
    if clash is not None:
        raise ParameterError(f"--out {out} is the input {clash}, which would be replaced; write the pool to another file")
    names = [name for name, _ in named_run_paths(args.runs)]
    qrels = read_qrels(args.qrels)
    # every query of the runs, those without any judgement too: they need judging most
    tops = {name: rankings(read_run(path), qrels, args.depth).pool_top() for name, path in zip(names, paths)}
    pool = unjudged_pool(tops)
    problem = folder_problem(out.parent)
    if problem:
        raise ParameterError(f"--out {out}: its folder {problem}")
    write_lines_atomic(out, (bytes(chunk).decode("utf-8") for chunk in pool_tsv_chunks(pool)))
    queries, without = pool_query_counts(pool, qrels.table)
    return Note(f"wrote {out}: {pool.num_rows:,} unjudged documents in the top {args.depth} of {len(names)} run(s), "
            f"{queries:,} quer{'y' if queries == 1 else 'ies'}, {without:,} of them with no judgement at all in the qrels\n")
