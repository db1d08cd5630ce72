"""The report notebook's end of the build: the Report read from parameters, its files written.

The parameters are validated ones, read through the build's input cache (analysis.compare.compare_runs on
the checked runs); the files are written beside the notebook, except in nbval's re-execution.
"""

from __future__ import annotations

import json
import os
import warnings
from itertools import chain, islice
from pathlib import Path

import pandas as pd

from ndcg_report.analysis.checks import data_warnings
from ndcg_report.analysis.compare import compare_runs
from ndcg_report.analysis.gate.built import QUERIES_FILE
from ndcg_report.analysis.gate.since_last import GATE_FILE
from ndcg_report.analysis.gate.verdict import GateVerdict
from ndcg_report.analysis.content import FIGURES_FOLDER
from ndcg_report.analysis.paper.report_files import leaderboard_files
from ndcg_report.analysis.outputs import per_query_csv_chunks, summary_record
from ndcg_report.analysis.report_model import Report, ReportParameters
from ndcg_report.analysis.tables.groups import group_table
from ndcg_report.analysis.tables.report_groups import per_group_csv_chunks
from ndcg_report.build.input_cache import cache_folder
from ndcg_report.build.kernels.forked_figures import ForkedFigureFiles
from ndcg_report.build.loading import baseline_path, checked_baseline, checked_runs, input_qrels, judgment_sets
from ndcg_report.build.steps.processes import REVALIDATION_ENV
from ndcg_report.core.relevance_level import RelevanceLevelWarning
from ndcg_report.core.toplists import pool_tsv_chunks
from ndcg_report.errors import ParameterError
from ndcg_report.files import text_line_count
from ndcg_report.inputs.access.snapshots import input_sha256, snapshot_of
from ndcg_report.inputs.access.sources import source_path
from ndcg_report.inputs.detection import describe_input
from ndcg_report.inputs.formats.parquet import is_parquet, parquet_row_count
from ndcg_report.inputs.reading import read_topics


def load_report(params: ReportParameters, keep_figures: bool = False) -> Report:
    """Read the inputs (in a build, from the build's copies, parsed once before any kernel: build.input_snapshots,
    build.input_cache), evaluate every system and compare each with the baseline. keep_figures: keep each
    figure's SVG for save_outputs (never in the build's nbval re-execution, which writes no file)."""
    hashed = ([item.path for item in params.compared_runs] + [item.path for item in params.judgment_sets[1:]]
              + [path for path in (params.baseline, params.qrels) if path])
    digests = {path: input_sha256(path) for path in hashed}  # shown in the files table, and the cache's key
    cache = cache_folder()
    baseline_path(params)
    qrels = input_qrels(params.qrels, cache, digests)
    sets = judgment_sets(params, qrels, cache, digests)
    baseline, averaged = checked_baseline(params, qrels, cache, digests)  # evaluated last, after the runs
    topics = read_topics(params.topics) if params.topics else None
    compared = checked_runs(params, qrels, cache, digests, paired_with=averaged)  # the runs, then the other baselines
    runs = islice(compared, len(params.runs))  # compare_runs reads the other baselines after the runs: each in its turn
    baselines = chain([("", baseline)], compared) if params.more_baselines else baseline
    with warnings.catch_warnings():  # the report's data checks say it, in the report
        warnings.simplefilter("ignore", RelevanceLevelWarning)
        experiment = compare_runs(  # takes the runs one at a time from the generator: never two in memory
            runs, sets or qrels, baselines,
            fill_unjudged_from=params.fill_unjudged_from,
            baseline_name=params.baseline_name, measures=params.measures, rel_level=params.rel_level,
            preset=params.preset, headline=params.headline, judged_only=params.judged_only,
            drilldown_depth=params.drilldown_depth, gain=params.gain, missing=params.missing, no_relevant=params.no_relevant,
            identical_ids=params.identical_ids, max_retrieved=params.max_retrieved, seed=params.seed, topics=topics, groups=params.groups,
        )
    del baseline, baselines
    records = [file_record(f"run: {name}", item.path, digests[item.path])
               for name, item in zip(experiment.names, params.runs)]
    records += [file_record(f"baseline: {name}", item.path, digests[item.path])
                for name, item in zip(experiment.more_baselines, params.more_baselines)]
    baseline = file_record(f"baseline: {experiment.baseline_name}", params.baseline, digests[params.baseline])
    if params.corpus is not None:  # the run is a cache entry named by its 64-hex key
        baseline["file"] = f"BM25 of {params.corpus.name} (cached run)"
    records.append(baseline)
    judged = [(f"qrels: {item.name}", item.path) for item in params.judgment_sets] or [("qrels", params.qrels)]
    records += [file_record(role, path, digests.get(path)) for role, path in (*judged, ("topics", params.topics),
                                                            ("corpus", params.corpus), ("documents", params.docs))
                if path is not None]
    records += [file_record("groups", params.groups)] if params.groups is not None else []
    group_rows = group_table(experiment) if experiment.groups is not None else None
    revalidation = bool(os.environ.get(REVALIDATION_ENV))  # nbval's re-execution: it compares no image/png
    report = Report(params, experiment, qrels, pd.DataFrame(records), group_rows=group_rows,
                    figures=ForkedFigureFiles(pixels=not revalidation, svg=keep_figures and not revalidation))
    report.warnings.extend(data_warnings(report))
    return report


def file_record(role: str, path: Path, digest: str | None = None) -> dict:
    """Role, file name, the format it was read in, sha256 of the bytes as stored (of a Parquet folder:
    over its files; digest if already known), and the number of lines of its text (of a Parquet file
    or folder: its rows). In a build, of the build's copy, with the format the build read it as."""
    readable = source_path(path)
    lines = parquet_row_count(readable) if is_parquet(readable) else text_line_count(readable)
    snapshot = snapshot_of(path)
    kind = role.split(":")[0].replace("baseline", "run")
    return {"role": role, "file": path.name,
            "format": snapshot.format if snapshot is not None and snapshot.format else describe_input(readable, kind),
            "sha256": digest or input_sha256(path), "lines": lines}


def output_folder(output_dir: str | Path) -> Path | None:
    """The notebook's `output_dir`, checked in its first cell, before any work: None for "" (nothing
    is written); a folder that does not exist is made, with its parents, as `ndcg-report build --out`
    makes its folder; a file in its place, or a folder that cannot be made or written to, is a
    ParameterError. In the build's nbval re-execution nothing is made (save_outputs writes nothing)."""
    if output_dir in ("", None):
        return None
    if not isinstance(output_dir, (str, Path)):
        raise ParameterError(f"output_dir must be a folder path; got {output_dir!r}")
    folder = Path(output_dir).expanduser()
    if os.environ.get(REVALIDATION_ENV):
        return folder
    if folder.exists() and not folder.is_dir():
        raise ParameterError(f"output_dir {str(output_dir)!r} is a file, not a folder; give a folder (made if missing)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ParameterError(f"output_dir {str(output_dir)!r} cannot be made ({error.strerror or error}); "
                             "give a folder you can write to") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ParameterError(f"output_dir {str(output_dir)!r} cannot be written to; give a folder you can write to")
    return folder


def save_outputs(report: Report, folder: str | Path, record: dict | None = None, gate: GateVerdict | None = None) -> None:
    """Write per_query.csv, summary.json (record: summary_record's, if already made), leaderboard.tex and
    leaderboard.md, unjudged.tsv (the depth-k pool), queries.json (the topics' text, if given), every figure shown as SVG
    into figures/ (those load_report kept) and, with query groups, per_group.csv into folder. In the build's
    nbval re-execution (REVALIDATION_ENV set) nothing is written: the files are papermill's, from the
    execution the report shows, and nbval compares a cell's outputs, never files."""
    if os.environ.get(REVALIDATION_ENV):
        return
    folder = Path(folder)
    with open(folder / "unjudged.tsv", "wb") as out:
        for chunk in pool_tsv_chunks(report.experiment.unjudged_pool()):
            out.write(chunk)
    with open(folder / "per_query.csv", "wb") as out:
        for chunk in per_query_csv_chunks(report):
            out.write(chunk)
    figures = report.figures.files()
    if figures:
        (folder / FIGURES_FOLDER).mkdir(exist_ok=True)
        for name, svg in figures.items():
            (folder / name).write_bytes(svg)
    if report.group_rows is not None:
        with open(folder / "per_group.csv", "wb") as out:
            for chunk in per_group_csv_chunks(report):
                out.write(chunk)
    if report.experiment.topics is not None:  # the query text, for `gate`'s list of the queries that fell
        topics = report.experiment.topics
        queries = {str(qid): str(text) for qid, text in topics.items()}
        (folder / QUERIES_FILE).write_text(json.dumps(queries, indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    if gate is not None:  # built --against an earlier build: the verdict, as `ndcg-report gate --json` writes it
        (folder / GATE_FILE).write_text(json.dumps(gate.to_dict(), indent=2, allow_nan=False) + "\n", encoding="utf-8")
    record = summary_record(report) if record is None else record
    text = json.dumps(record, indent=2, sort_keys=False, allow_nan=False) + "\n"
    (folder / "summary.json").write_text(text, encoding="utf-8")
    for name, table in leaderboard_files(record).items():  # leaderboard.tex and leaderboard.md, for a paper
        (folder / name).write_text(table, encoding="utf-8")
