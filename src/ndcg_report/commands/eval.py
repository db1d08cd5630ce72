"""`ndcg-report eval`: a run evaluated (in memory, streamed or on Dask), printed as trec_eval, CSV or JSON.

The command line's parser is in commands.parser.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ndcg_report.errors import BuildError, InputError, ParameterError

if TYPE_CHECKING:
    from ndcg_report.core.evaluation import Evaluation
    from ndcg_report.core.partitions import Options


def run_eval(args: argparse.Namespace) -> Iterator[bytes | memoryview]:
    """Evaluate, then render in chunks; nothing is printed until the evaluation has succeeded."""
    from ndcg_report.core.output_formats import csv_chunks, json_chunks, trec_chunks
    from ndcg_report.core.partitions import Options
    from ndcg_report.core.presets import measure_set

    from ndcg_report.inputs.sources import source_path

    asked = measure_set(args.preset, args.measures, args.cutoffs, args.rel_level, args.judged_only)
    if args.digits is not None and not 0 <= args.digits <= 17:
        raise ParameterError("--digits must be between 0 and 17")
    args.qrels, args.run = str(source_path(args.qrels)), str(source_path(args.run))  # <(...) read once; FIFOs refused
    # trec_eval's layout averages as trec_eval does, unless told otherwise; csv and json leave such queries out
    no_relevant = args.no_relevant or ("zero" if args.format == "trec" else "skip")
    options = Options.of(None, args.gain, args.missing, no_relevant, asked.measures, asked.rel_level,
                         args.max_retrieved)
    if args.dask:
        evaluation = _evaluate_on_cluster(args, options)
    elif _streams(args):
        from ndcg_report.core.streaming import QueryNotContiguous, evaluate_streaming

        try:
            evaluation = evaluate_streaming(args.run, args.qrels, None, args.gain, args.missing, no_relevant,
                                            measures=options.measures, rel_level=options.rel_level,
                                            max_retrieved=options.max_retrieved)
        except QueryNotContiguous:
            if args.reading == "stream" or not fits_in_memory(args.run):
                raise
            print(f"ndcg-report: note: {args.run} lists a query's lines in more than one place, so it cannot be "
                  "read in blocks of whole queries; evaluating it in memory", file=sys.stderr)
            evaluation = _evaluate_in_memory(args, options)
    else:
        evaluation = _evaluate_in_memory(args, options)
    if evaluation.counts.in_both == 0:
        raise InputError(args.run, None, f"no query in common with the qrels {args.qrels}",
                         "check that the run and the qrels are for the same topics")
    if evaluation.counts.averaged == 0:
        print(f"ndcg-report: warning: no query was averaged, so the means are nan: none of the "
              f"{evaluation.counts.in_both} queries in both files has a relevant document in {args.qrels} "
              f"(--no-relevant {no_relevant}); --no-relevant zero averages them as 0", file=sys.stderr)
    elif args.format == "trec":
        _note_trec_averaging(evaluation, args.no_relevant)
    if args.format == "trec":
        return trec_chunks(evaluation, args.per_query, 4 if args.digits is None else args.digits)
    if args.format == "csv":
        return csv_chunks(evaluation, args.per_query, 4 if args.digits is None else args.digits)
    return json_chunks(evaluation, args.per_query, args.digits)


def fits_in_memory(run: str) -> bool:
    from ndcg_report.core.streaming import fits_in_memory as fits

    return fits(run)


def _note_trec_averaging(evaluation: Evaluation, given: str | None) -> None:
    """A note on stderr where the `all` rows of --format trec are not averaged as csv and json average
    them (queries with nothing relevant: trec_eval scores them 0, the default elsewhere leaves them out)."""
    from ndcg_report.core.measures.names import level_text

    graded, binary = evaluation.counts.no_relevant, evaluation.counts.below_level
    kinds = {measure.kind for measure in evaluation.measures}
    parts = ([f"{graded} with no positive label (nDCG)"] if graded and kinds & {"graded", "gain"} else []) + (
        [f"{binary} with no label >= {level_text(evaluation.rel_level)} (binary measures)"]
        if binary and "binary" in kinds else [])
    if not parts:
        return
    queries = " and ".join(parts)
    if given is None:
        print(f"ndcg-report: note: the all rows average as trec_eval -c does: the judged queries {queries} count as 0; "
              "--format csv and json leave them out of the means unless given --no-relevant zero", file=sys.stderr)
    elif given == "skip":
        print(f"ndcg-report: note: with --no-relevant skip the all rows leave out the judged queries {queries}, so "
              "they differ from trec_eval's, which counts them as 0", file=sys.stderr)


def _evaluate_in_memory(args: argparse.Namespace, options: "Options") -> Evaluation:
    """The whole run read at once, the qrels on a thread meanwhile (NumPy and pyarrow release the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    from ndcg_report.inputs.reading import read_qrels, read_run

    with ThreadPoolExecutor(1) as pool:
        qrels_read = pool.submit(read_qrels, args.qrels)
        try:
            run = read_run(args.run)
        finally:
            qrels = qrels_read.result()  # a bad qrels file is reported first, as if read first
    return options.evaluate(run, qrels)


def _evaluate_on_cluster(args: argparse.Namespace, options: "Options") -> Evaluation:
    """eval --dask: the Parquet run's files evaluated one task each on the cluster, merged here."""
    from pathlib import Path

    from ndcg_report.inputs.formats.parquet import is_parquet

    run = Path(args.run)
    if args.reading is not None:
        raise ParameterError(f"--{'stream' if args.reading == 'stream' else 'in-memory'} does not apply with --dask: "
                             "the workers read the Parquet run, one file per task; drop it")
    if run.exists() and not is_parquet(run):
        raise ParameterError(f"--dask evaluates a Parquet run (a folder of files partitioned by query, one task per "
                             f"file); {run} is a text run (TREC text, JSON or JSON lines; --dask reads Parquet only): "
                             "evaluate it without --dask, or write it as Parquet")
    from ndcg_report.core.partitions import evaluate_partitioned
    from ndcg_report.dask_cluster import LOST, connect, lost_message
    from ndcg_report.inputs.formats.parquet import parquet_files
    from ndcg_report.inputs.reading import read_qrels

    parquet_files(run)  # a missing run or an empty folder: before connecting
    qrels = read_qrels(args.qrels)  # so is a bad qrels file (the workers read it again)
    client = connect(args.dask)
    try:
        return evaluate_partitioned(run, qrels, client.get_executor(pure=False), options)
    except LOST as exc:
        raise BuildError(f"step worker failed: {lost_message(exc)}") from None
    finally:
        client.close(timeout=10)


def _streams(args: argparse.Namespace) -> bool:
    """Whether eval streams the run: as asked, else when it is large (core/streaming.streams_by_default)."""
    from pathlib import Path

    from ndcg_report.core.streaming import streams_by_default

    run = Path(args.run)
    if args.reading is not None:
        return args.reading == "stream"
    try:
        return run.exists() and streams_by_default(run)
    except (OSError, ValueError, InputError):  # not readable, not Parquet: the reader says what is wrong
        return False
