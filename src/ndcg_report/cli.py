"""The `ndcg-report` command line: exit 0 done, 1 a step failed, 2 bad input or usage."""

from __future__ import annotations

import argparse
import errno
import os
import signal
import sys
from collections.abc import Iterable, Sequence

from ndcg_report.errors import BuildError, InputError, ParameterError
from ndcg_report.interrupts import exit_code, install as install_stop_signals, restore as restore_signals
from ndcg_report.interrupts import signal_name, signal_of

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
MAX_MESSAGE = 1000  # characters of an error line: a message built from hostile input stays readable


EXIT_CODES = """exit codes:
  0    done
  1    a step failed (a notebook cell, nbval, a timeout, writing an output); the previous report stays
  2    bad input or usage: one line naming the file, the line and the fix; nothing written
  3    batch only: another batch holds the output root
  130  interrupted (Ctrl-C; 143 SIGTERM, 129 SIGHUP): one line, staging removed"""


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
        self.exit(EXIT_BAD_INPUT, _one_line(f"{self.prog}: error: {message} (see {self.prog} --help)") + "\n")

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
            _silence_stdout()
            _error(f"cannot write the output ({getattr(exc, 'strerror', None) or exc})")
            sys.exit(EXIT_FAILED)


def _add_metric_options(parser: argparse.ArgumentParser, report: bool = False) -> None:
    from ndcg_report.core.presets import help_text

    parser.add_argument(
        "-m", "--measure", action="append", dest="measures", metavar="MEASURE",
        help="a measure to compute, repeatable: trec_eval's names (ndcg_cut.10,100 recall.1000 map recip_rank P.10 "
             "map_cut.100 Rprec success.1,5 num_rel_ret all_trec) or ir_measures' (nDCG@10 R@1000 AP RR@10 P@10 "
             "AP@100), several in one value separated by spaces; a family named without a cut-off takes -k, else "
             "trec_eval's default cut-offs (default: nDCG at -k)")
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
    parser.add_argument("--missing", default="zero", choices=("zero", "skip"),
                        help="queries with relevant docs that the run lacks: score 0 (trec_eval -c) or leave out")
    parser.add_argument("--no-relevant", default=None, choices=("skip", "zero"), dest="no_relevant",
                        help="queries with nothing relevant in qrels (for nDCG: no positive label; for the binary "
                             "measures: none at the relevance level): leave out, or score 0 as trec_eval does "
                             + ("(default: skip)" if report else
                                "(default: skip; zero with --format trec, which averages as trec_eval does)"))


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
    evaluate.add_argument("qrels", help="qrels: TREC `qid iter docid rel` lines, BEIR TSV, JSON, JSON lines (plain or "
                                        ".gz) or Parquet")
    evaluate.add_argument("run", help="run: TREC `qid Q0 docid rank score tag` lines, JSON, JSON lines (plain or .gz) "
                                      "or Parquet")
    _add_metric_options(evaluate)
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
    build.add_argument("--qrels", required=True, help="the qrels")
    source = build.add_mutually_exclusive_group(required=True)
    source.add_argument("--baseline", default="", help="the baseline run (e.g. Anserini BM25)")
    source.add_argument("--corpus", default="", help="JSON-lines corpus: build (and cache) a BM25 baseline from it")
    build.add_argument("--topics", default="", help="qid<TAB>query text lines, BEIR queries.jsonl or a TREC topic file: "
                                                    "shown in the tables; required with --corpus")
    build.add_argument("--docs", default="", metavar="CORPUS",
                       help="document text for the drill-downs: BEIR corpus.jsonl or docid<TAB>text, plain or gzip "
                            "(default: the --corpus, if any); only the documents shown are read")
    build.add_argument("--drilldown", type=int, default=200, metavar="N",
                       help="queries with a drill-down of their rankings: all up to N, above it the largest wins, "
                            "losses and spreads; 0 for none")
    build.add_argument("--drilldown-depth", type=int, default=10, metavar="K", dest="drilldown_depth",
                       help="the top K of the drill-downs, of unjudged.tsv and of the rank overlap")
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

    bm25 = commands.add_parser("bm25", help="build a BM25 run from a corpus and topics (the baseline alone)")
    bm25.add_argument("--corpus", required=True, help="JSON-lines corpus, one {_id, title, text} per line")
    bm25.add_argument("--topics", required=True, help="qid<TAB>query text")
    bm25.add_argument("--out", required=True, help="the TREC run to write (tag bm25)")
    _add_bm25_options(bm25)

    pool = commands.add_parser("pool", help="write the unjudged documents of the runs' top k, for a judging round")
    pool.add_argument("qrels", help="the qrels (what is judged already)")
    pool.add_argument("runs", nargs="+", metavar="[NAME=]RUN", help="the runs to pool (a plain RUN is named by its file)")
    pool.add_argument("-k", "--depth", type=int, default=10, help="pool depth: each run's top k")
    pool.add_argument("--out", required=True, help="the TSV to write: qid, docid, best_rank, n_systems, systems")

    demo = commands.add_parser("demo", help="build an embedded demo report (default: TREC DL 2019 passage)")
    demo.add_argument("dataset", nargs="?", default="dl19", choices=("dl19", "cranfield", "rag"),
                      help="dl19: monoT5, two fusions and a re-ranking depth ablation against Anserini BM25; "
                           "cranfield: BM25+RM3 against BM25 built from the corpus; rag: chunk retrievers for RAG "
                           "(JSON-lines grades and ranked lists, the rag preset)")
    demo.add_argument("--out", default="", help="output folder (default: reports/demo, reports/demo-cranfield, "
                                                "reports/demo-rag)")
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




def _bm25_settings(args: argparse.Namespace) -> dict:
    """k1, b and top_k from the command line, Anserini's defaults where not given."""
    from ndcg_report.baseline.settings import BM25_DEFAULTS

    given = {"k1": args.k1, "b": args.b, "top_k": args.top_k}
    return {name: BM25_DEFAULTS[name] if value is None else value for name, value in given.items()}


def run_build(args: argparse.Namespace, argv: Sequence[str], started: float) -> str:
    """Validate, build the BM25 baseline if asked, then build the report; return the line to print
    (with the time since `started`, time.monotonic() when the command began). The build's kernel fork
    server is started first: it imports what the kernels need while this process imports and checks."""
    from pathlib import Path

    from ndcg_report.build.kernels.kernel_forks import running_fork_server, server_label

    out = args.out or (_demo_out(args.dataset) if args.command == "demo" else "")
    with running_fork_server(server_label(Path(out))) as fork_server:  # or a batch's, running for all its builds
        return _run_build(args, argv, started, fork_server)


def _demo_out(dataset: str) -> str:
    from ndcg_report.build.demos import DEMOS

    return DEMOS[dataset].out if dataset in DEMOS else ""


def _run_build(args: argparse.Namespace, argv: Sequence[str], started: float, fork_server: str) -> str:
    import shlex
    import time
    from pathlib import Path

    from ndcg_report.inputs.reading import read_topics
    from ndcg_report.build.pipeline import build_report, check_notebook, check_out_dir, check_timeout, input_paths
    from ndcg_report.build.loading import check_run_and_qrels
    from ndcg_report.build.corpus_baseline import with_bm25_baseline
    from ndcg_report.build.demos import DEMOS
    from ndcg_report.build.parameters import demo_values, validate_parameters
    from ndcg_report.analysis.systems import check_name, split_run_option
    from ndcg_report.baseline.settings import BM25_DEFAULTS

    command = shlex.join(["ndcg-report", *argv])
    bm25 = dict(BM25_DEFAULTS)
    if args.command == "demo":
        values = demo_values(args.dataset)
        values["command"] = command
        out = args.out or DEMOS[args.dataset].out
    else:
        runs = [split_run_option(text) for text in args.run]
        if args.run_name:
            if len(runs) != 1:
                raise ParameterError("--run-name names a single --run; with several runs, give each as --run NAME=PATH")
            if runs[0][0]:
                raise ParameterError("the run is named twice (--run NAME=PATH and --run-name); give one name")
            runs = [(check_name(args.run_name, "--run-name"), runs[0][1])]
        values = dict(
            runs=[{"name": name, "path": path} for name, path in runs], qrels=args.qrels, baseline=args.baseline,
            corpus=args.corpus, topics=args.topics, ks=args.cutoffs or "", gain=args.gain, missing=args.missing,
            no_relevant=args.no_relevant or "skip", title=args.name, seed=args.seed, baseline_name=args.baseline_name,
            command=command, measures=" ".join(args.measures or []), preset=args.preset,
            rel_level="" if args.rel_level is None else args.rel_level, headline=args.headline,
            judged_only=args.judged_only, docs=args.docs, drilldown=args.drilldown,
            drilldown_depth=args.drilldown_depth,
        )
        given = [option for option, value in (("--k1", args.k1), ("--b", args.b), ("--top-k", args.top_k),
                                               ("--cache-dir", args.cache_dir)) if value not in (None, "")]
        if args.baseline and given:
            verb = "applies" if len(given) == 1 else "apply"
            raise ParameterError(f"{' and '.join(given)} {verb} only with --corpus: they set how BM25 is built "
                                 "from a corpus, and --baseline gives the baseline run; drop them or use --corpus")
        bm25 = _bm25_settings(args)
        out = args.out
    check_timeout(args.timeout)
    params = validate_parameters(**values)
    notebook = getattr(args, "notebook", "")
    if notebook:
        check_notebook(Path(notebook))
    check_out_dir(Path(out).resolve(), [*input_paths(params), *([Path(notebook)] if notebook else [])])
    if params.baseline is None:  # check run, qrels and topics before a long BM25 build
        check_run_and_qrels(params)
        read_topics(params.topics)
    params = with_bm25_baseline(params, **bm25, cache_dir=args.cache_dir or None, log=_log)
    result = build_report(params, Path(out), timeout=args.timeout, notebook=Path(notebook) if notebook else None,
                          progress=sys.stderr.isatty(), fork_server=fork_server)
    for note in result.notes:
        _log(f"ndcg-report: note: {note}")
    return f"built {result.out_dir / 'report.html'} in {time.monotonic() - started:.1f} s (the whole command)\n"


def run_bm25(args: argparse.Namespace) -> str:
    """Build (or reuse from the cache) the BM25 run of a corpus and topics; copy it to --out."""
    from pathlib import Path

    from ndcg_report.baseline.cache import cached_bm25_run
    from ndcg_report.files import copy_file_atomic, folder_problem, overwritten_input

    out = Path(args.out)
    if out.is_dir():
        raise ParameterError(f"--out {out} is a folder; give the path of the run file to write")
    clash = overwritten_input(out, [Path(args.corpus), Path(args.topics)], folder=False)
    if clash is not None:
        raise ParameterError(f"--out {out} is the input {clash}, which would be replaced; write the run to another file")
    problem = folder_problem(out.parent)
    if problem:
        raise ParameterError(f"--out {out}: its folder {problem}")
    run_path, _ = cached_bm25_run(
        args.corpus, args.topics, **_bm25_settings(args), cache_dir=args.cache_dir or None,
        progress=sys.stderr.isatty(), log=_log,
    )
    copy_file_atomic(run_path, out)
    return f"wrote {out}\n"


def run_pool(args: argparse.Namespace) -> str:
    """The depth-k pool of unjudged documents over the runs (core.toplists.unjudged_pool), as TSV."""
    from pathlib import Path

    import pyarrow.compute as pc

    from ndcg_report.core.toplists import pool_tsv_chunks, rankings, unjudged_pool
    from ndcg_report.files import folder_problem, overwritten_input, write_lines_atomic
    from ndcg_report.inputs.reading import read_qrels, read_run
    from ndcg_report.analysis.systems import check_distinct_paths, derived_name, split_run_option, unique_names

    if not 1 <= args.depth <= 100_000:
        raise ParameterError(f"--depth must be a whole number from 1 to 100,000; got {args.depth}")
    out = Path(args.out)
    given = [split_run_option(text) for text in args.runs]
    paths = [Path(path) for _, path in given]
    if out.is_dir():
        raise ParameterError(f"--out {out} is a folder; give the path of the TSV file to write")
    clash = overwritten_input(out, [Path(args.qrels), *paths])
    if clash is not None:
        raise ParameterError(f"--out {out} is the input {clash}, which would be replaced; write the pool to another file")
    check_distinct_paths(paths, [f"run {i}" for i in range(1, len(paths) + 1)])
    names = unique_names([name for name, _ in given], [derived_name("", path, i) for i, path in enumerate(paths, 1)])
    qrels = read_qrels(args.qrels)
    tops = {name: rankings(read_run(path), qrels, args.depth).top for name, path in zip(names, paths)}
    pool = unjudged_pool(tops)
    problem = folder_problem(out.parent)
    if problem:
        raise ParameterError(f"--out {out}: its folder {problem}")
    write_lines_atomic(out, (bytes(chunk).decode("utf-8") for chunk in pool_tsv_chunks(pool)))
    queries = len(pc.unique(pool["qid"]))
    return f"wrote {out}: {pool.num_rows:,} unjudged documents in the top {args.depth} of {len(names)} run(s), {queries:,} queries\n"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: exit 0, 1, 2, 3 (batch) or 128 + a stop signal; one line on error, never a traceback."""
    replaced = install_stop_signals()  # first: Ctrl-C, SIGTERM and SIGHUP stop every command alike, from the start
    try:
        return _main(argv)
    except KeyboardInterrupt as exc:  # interrupts.Interrupted for SIGTERM and SIGHUP; anywhere, output included
        signum = signal_of(exc)
        _silence_stdout()  # what is left in the buffer must not block the exit on a full pipe
        _error("interrupted" + ("" if signum == signal.SIGINT else f" by {signal_name(signum)}"), prefix="ndcg-report: ")
        return exit_code(signum)
    finally:
        restore_signals(replaced)


def _main(argv: Sequence[str] | None) -> int:
    import time

    started = time.monotonic()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    try:
        if args.command == "batch":
            from ndcg_report.batch.runner import main as run_batch

            return run_batch(args.config, jobs=args.jobs, force=args.force, index_only=args.index_only,
                             dask=args.dask)
        if args.command == "eval":
            from ndcg_report.cli_eval import run_eval

            output = run_eval(args)
        elif args.command == "bm25":
            output = run_bm25(args)
        elif args.command == "pool":
            output = run_pool(args)
        else:
            from ndcg_report.build.supervisor import die_with_supervisor

            die_with_supervisor()
            output = run_build(args, argv, started)
        return _write(output)
    except (InputError, ParameterError) as exc:
        _error(str(exc))
        return EXIT_BAD_INPUT
    except BuildError as exc:
        _error(str(exc))
        return EXIT_FAILED
    except OSError as exc:  # reading inputs raises InputError: what is left is writing an output
        _error(f"cannot write {exc.filename or 'the output'} ({exc.strerror or exc}); check the disk and the permissions")
        return EXIT_FAILED
    except MemoryError:
        _error("out of memory")
        return EXIT_FAILED
    except Exception as exc:  # noqa: BLE001 - never a traceback: one line naming what broke
        _error(f"internal error ({type(exc).__name__}: {exc}); please report it with the command that caused it")
        return EXIT_FAILED


def _write(output: str | Iterable[bytes | memoryview]) -> int:
    """Print the output (text, or chunks of UTF-8 bytes as they come); a failed write (a full disk, a
    closed standard output) is one line and exit 1."""
    try:
        if sys.stdout is None:
            raise OSError(errno.EBADF, "standard output is closed")
        if isinstance(output, str):
            sys.stdout.write(output)
        else:
            sys.stdout.flush()
            binary = getattr(sys.stdout, "buffer", None)
            for chunk in output:
                if binary is not None:
                    binary.write(chunk)
                else:
                    sys.stdout.write(bytes(chunk).decode("utf-8"))
        sys.stdout.flush()
    except BrokenPipeError:  # the reader stopped reading (`| head`): not an error
        _silence_stdout()
    except (OSError, ValueError) as exc:  # ValueError: writing to a closed file
        _silence_stdout()
        _error(f"cannot write the output ({getattr(exc, 'strerror', None) or exc})")
        return EXIT_FAILED
    return EXIT_OK


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so Python's flush at exit does not fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


def _one_line(message: str) -> str:
    """message on one line, cut at MAX_MESSAGE characters."""
    text = " ".join(str(message).splitlines())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def _error(message: str, prefix: str = "ndcg-report: error: ") -> None:
    """One line on standard error, cut at MAX_MESSAGE characters (quietly nothing if stderr is closed too)."""
    try:
        print(_one_line(f"{prefix}{message}"), file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


def console() -> None:
    """The `ndcg-report` command: main(), then the process ends without the interpreter's teardown
    (0.2 s after a build: freeing pandas', pyarrow's and nbconvert's objects, which the system frees
    anyway) once the atexit handlers have run and the output is flushed; as usual if a thread that
    is not a daemon is still running (the interpreter would wait for it)."""
    import atexit
    import threading

    code = main()
    if any(thread is not threading.main_thread() and not thread.daemon for thread in threading.enumerate()):
        sys.exit(code)
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (AttributeError, OSError, ValueError):  # closed, or no reader left: nothing more to say
                pass
        os._exit(code)


if __name__ == "__main__":
    console()
