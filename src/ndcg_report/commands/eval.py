"""`ndcg-report eval`: a run evaluated (in memory, streamed or on Dask), printed as trec_eval, CSV or JSON."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ndcg_report.commands.output import write_output
from ndcg_report.commands.parser import _add_metric_options
from ndcg_report.errors import BuildError, InputError, ParameterError

if TYPE_CHECKING:
    from ndcg_report.core.conventions import Averaging
    from ndcg_report.core.evaluation import Evaluation
    from ndcg_report.core.partitions import Options
    from ndcg_report.inputs.run_blocks import ReadAhead

NAME = "eval"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """eval's arguments: trec_eval's order (QRELS RUN...), its measures and options, the layout and the reading."""
    evaluate = subparsers.add_parser(NAME, help="print nDCG@k and the other measures of a run (trec_eval's argument order and layout)")
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


def run(args: argparse.Namespace) -> int:
    """Set the process up for one large read (commands.eval_process), then evaluate and print."""
    from ndcg_report.commands.eval_process import prepare_eval_process

    prepare_eval_process()
    return write_output(run_eval(args))


class ListMeasures(argparse.Action):
    """`eval --list`: print every measure family (its names, definition, `all` row and what is relevant
    to it: core.measures.catalogue) and exit 0, as --help does, before QRELS and RUN are asked for."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)  # type: ignore[arg-type]

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        from ndcg_report.core.measures.catalogue import listing

        parser._print_message(listing(), sys.stdout)
        parser.exit()


def run_eval(args: argparse.Namespace) -> Iterator[bytes | memoryview]:
    """Evaluate each run, then render them in chunks; nothing is printed until every evaluation has
    succeeded. One run prints as it always did; several print one table (trec_eval's lines run after
    run, as trec_eval prints each; csv and json with a `run` column or key). A run given as the qrels,
    or qrels as the run, is told so with the order eval takes."""
    from ndcg_report.inputs.formats.trec_lines import LooksSwapped

    try:
        return _run_eval(args)
    except LooksSwapped as exc:
        raise LooksSwapped(exc.path, exc.line, exc.problem, "the order is QRELS RUN: ndcg-report eval QRELS RUN") from None


def _run_eval(args: argparse.Namespace) -> Iterator[bytes | memoryview]:
    from pathlib import Path

    from ndcg_report.core.presets import averaging, measure_set
    from ndcg_report.inputs.access.sources import source_path
    from ndcg_report.inputs.access.stamps import InputWatch

    asked = measure_set(args.preset, args.measures, args.cutoffs, args.rel_level, args.judged_only)
    if args.digits is not None and not 0 <= args.digits <= 17:
        raise ParameterError("--digits must be between 0 and 17")
    runs = _named_runs(args.runs)
    args.qrels = str(source_path(args.qrels))  # <(...) read once; FIFOs refused
    runs = [(name, str(source_path(path))) for name, path in runs]
    inputs = InputWatch.of(Path(path) for path in [args.qrels, *(path for _, path in runs)])  # read more than once
    reading = _start_reading(args, runs[0][1])  # the first run is read while the evaluation's modules load
    try:
        from ndcg_report.core.partitions import Options

        # every format averages alike: as trec_eval -c, or as the preset's community does, unless told otherwise
        policies = averaging(args.preset, args.missing, args.no_relevant, args.identical_ids)
        options = Options.of(None, args.gain, policies.missing, policies.no_relevant, asked.measures, asked.rel_level,
                             policies.identical_ids, args.max_retrieved)
        try:
            evaluations = [(name, _evaluate_run(argparse.Namespace(**{**vars(args), "run": path}), options, policies,
                                                reading if i == 0 else None))
                           for i, (name, path) in enumerate(runs)]
        except InputError:
            inputs.check("evaluation")  # a file changed while it was read explains what was read in it
            raise
    finally:
        if reading is not None:
            reading.close()  # used up, or given up on an error
    inputs.check("evaluation")  # the numbers are of one version of each file: the qrels are read once per run
    return _rendered(evaluations, args)


def _start_reading(args: argparse.Namespace, run: str) -> "ReadAhead | None":
    """The run's blocks being read on a thread from now, if eval will stream it; else None."""
    if args.dask or not _streams(argparse.Namespace(**{**vars(args), "run": run})):
        return None
    from ndcg_report.inputs.run_blocks import start_reading

    return start_reading(run)


def _named_runs(given: list[str]) -> list[tuple[str, str]]:
    """(name, path) of each RUN or NAME=RUN (analysis.systems.named_run_paths); one run is unnamed, its
    name (if given) dropped: its output names no run."""
    from ndcg_report.analysis.systems import named_run_paths

    runs = named_run_paths(given)
    return [("", runs[0][1])] if len(runs) == 1 else runs


def _rendered(evaluations: list[tuple[str, Evaluation]], args: argparse.Namespace) -> Iterator[bytes | memoryview]:
    """The chunks of the output: one run as it always printed; several one after the other (trec),
    with a leading `run` column (csv) or as a `runs` list of named records (json)."""
    from itertools import chain

    from ndcg_report.core.output_formats import csv_chunks, json_chunks, trec_chunks

    digits = 4 if args.digits is None else args.digits
    if len(evaluations) == 1:
        evaluation = evaluations[0][1]
        if args.format == "trec":
            return trec_chunks(evaluation, args.per_query, digits)
        if args.format == "csv":
            return csv_chunks(evaluation, args.per_query, digits)
        return json_chunks(evaluation, args.per_query, args.digits)
    if args.format == "trec":
        return chain.from_iterable(trec_chunks(evaluation, args.per_query, digits) for _, evaluation in evaluations)
    if args.format == "csv":
        return chain.from_iterable(_csv_with_run(name, evaluation, args.per_query, digits, first=i == 0)
                                   for i, (name, evaluation) in enumerate(evaluations))
    return _json_runs(evaluations, args.per_query, args.digits)


def _csv_with_run(name: str, evaluation: Evaluation, per_query: bool, digits: int, first: bool) -> Iterator[bytes]:
    """csv_chunks of one run with its name as a first `run` column; the header line only if first."""
    from ndcg_report.core.output_formats import PER_QUERY_COLUMNS, csv_chunks, csv_text

    lead = f"{csv_text(name)},"
    if per_query:
        if first:
            yield ("run," + ",".join(PER_QUERY_COLUMNS) + "\n").encode("utf-8")
        yield from csv_chunks(evaluation, True, digits, lead=lead, header=False)
        return
    lines = b"".join(bytes(chunk) for chunk in csv_chunks(evaluation, False, digits)).decode("utf-8").splitlines()
    yield ("".join(f"{lead}{line}\n" for line in lines[1:])
           if not first else f"run,{lines[0]}\n" + "".join(f"{lead}{line}\n" for line in lines[1:])).encode("utf-8")


def _json_runs(evaluations: list[tuple[str, Evaluation]], per_query: bool, digits: int | None) -> Iterator[bytes]:
    """{"runs": [{"run": NAME, ...one run's object...}, ...]}: each run's object as json_chunks writes it."""
    import json

    from ndcg_report.core.output_formats import json_chunks

    yield b'{\n"runs": [\n'
    for i, (name, evaluation) in enumerate(evaluations):
        text = b"".join(bytes(chunk) for chunk in json_chunks(evaluation, per_query, digits)).rstrip(b"\n")
        yield (b",\n" if i else b"") + b'{\n  "run": ' + json.dumps(name).encode("utf-8") + b"," + text[1:]
    yield b"\n]\n}\n"


def _evaluate_run(args: argparse.Namespace, options: "Options", policies: "Averaging",
                  reading: "ReadAhead | None" = None) -> Evaluation:
    """One run evaluated in memory, streamed or on Dask, checked, and its averaging noted on stderr;
    `reading`: its blocks already being read (_start_reading), if it streams."""
    no_relevant = policies.no_relevant
    if args.dask:
        evaluation = _evaluate_on_cluster(args, options)
    elif _streams(args):
        from ndcg_report.core.streaming import QueryNotContiguous, evaluate_streaming

        try:
            evaluation = evaluate_streaming(args.run, args.qrels, None, args.gain, options.missing, no_relevant,
                                            measures=options.measures, rel_level=options.rel_level,
                                            identical_ids=options.identical_ids, max_retrieved=options.max_retrieved,
                                            reading=reading)
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
    else:
        _note_averaging(evaluation, policies)
    return evaluation


def fits_in_memory(run: str) -> bool:
    from ndcg_report.inputs.run_blocks import fits_in_memory as fits

    return fits(run)


def _note_averaging(evaluation: Evaluation, policies: Averaging) -> None:
    """A note on stderr where the means are not trec_eval -c's: how many queries a policy left out
    (a preset's or one given), or how many run lines it dropped."""
    from ndcg_report.core.conventions import left_out_counts
    from ndcg_report.core.measures.names import level_text

    reasons = {"missing": "the run lacks", "graded": "with no positive label (nDCG)",
               "binary": f"with no label >= {level_text(evaluation.rel_level)} (binary measures)"}
    counts = left_out_counts(evaluation, list(evaluation.measures), policies.missing, policies.no_relevant)
    left_out = [f"{count} {reasons[reason]}" for reason, count in counts.items()]
    origin = f"the preset {policies.source}" if policies.source and not policies.given else "the options given"
    if left_out:
        print(f"ndcg-report: note: as {origin} average, the means leave out the judged queries "
              f"{' and '.join(left_out)}, so they differ from trec_eval -c's, which counts them as 0", file=sys.stderr)
    if evaluation.identical_dropped:
        print(f"ndcg-report: note: as {origin} do, {evaluation.identical_dropped} run line(s) whose docid is their "
              "qid were dropped (--identical-ids drop)", file=sys.stderr)


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
    """Whether eval streams the run: as asked, else when it is large (inputs/run_blocks.streams_by_default)."""
    from pathlib import Path

    from ndcg_report.inputs.run_blocks import streams_by_default

    run = Path(args.run)
    if args.reading is not None:
        return args.reading == "stream"
    try:
        return run.exists() and streams_by_default(run)
    except (OSError, ValueError, InputError):  # not readable, not Parquet: the reader says what is wrong
        return False
