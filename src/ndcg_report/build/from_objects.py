"""A report from Python objects: an Experiment, or runs and qrels held in Python, built as `build` builds one.

`build_report(experiment_or_inputs, out_dir, title=...)` builds the same HTML report through the same
papermill -> nbval -> nbconvert pipeline and atomic publish as `ndcg-report build`. An input given as
a path is read where it is, as `build` reads it; an input given as an object (a DataFrame, a pyarrow
Table, a pytrec_eval or ranx dict, a ranx or ir_measures object, what `read_run` returned) is written
once as Parquet (topics as BEIR queries.jsonl, groups as JSON), checked and hashed as a file, and
published in the report's `inputs/` folder, which "How to reproduce" names with the `ndcg-report build`
command that rebuilds the report from it.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from ndcg_report.analysis.compare import given_baselines
from ndcg_report.analysis.experiment import Experiment
from ndcg_report.stats.paired import ALPHA
from ndcg_report.analysis.options.table import ALIASES, BY_NAME, names
from ndcg_report.analysis.report_model import ReportParameters, RunInput, build_command
from ndcg_report.analysis.judgments.sets import is_named_sets
from ndcg_report.analysis.sources import given, given_pairs
from ndcg_report.analysis.systems import derived_name
from ndcg_report.build.parameters import validate_parameters
from ndcg_report.build.publish import INPUTS_FOLDER
from ndcg_report.build.pipeline import BuildResult, build_notebook, check_timeout, report_job
from ndcg_report.core.measures.names import Measure
from ndcg_report.errors import ParameterError
from ndcg_report.stats.paired import CONFIDENCE, N_RESAMPLES
from ndcg_report.stats.resampling import LARGE_N

__all__ = ["BuildResult", "INPUTS", "build_report"]

INPUTS = INPUTS_FOLDER  # the report's folder of the inputs it was given as objects
INPUT_KEYS = ("runs", "qrels", "baseline", "topics", "groups")  # of build_report's mapping of inputs
REPORT_ONLY = ("title", "timeout", "drilldown")  # the report options an Experiment does not hold
ANALYSIS_OPTIONS = tuple(name for name in names("python") if name not in REPORT_ONLY)  # compare_runs' own
REPORT_DEFAULTS = {"n_resamples": N_RESAMPLES, "confidence": CONFIDENCE, "alpha": ALPHA, "large_n": LARGE_N}
REBUILT = "NEW_FOLDER"  # the --out of the rebuild command of a report built from objects


@dataclass(frozen=True)
class _Inputs:
    """A report's inputs, each a path or an object; names as the report shows them ('' = its file's name)."""

    runs: tuple[tuple[str, object], ...]
    qrels: object | tuple[tuple[str, object], ...]  # one set, or (name, set) pairs, the reference first
    baseline: object
    baseline_name: str
    topics: object | None
    groups: object | None
    options: Mapping[str, object]
    more_baselines: tuple[tuple[str, object], ...] = ()  # (name, run) of every baseline after the first


def build_report(source: Experiment | Mapping[str, object], out_dir: str | Path, *, progress: bool = False,
                 docs: str | Path = "", **options: object) -> BuildResult:
    """Build the HTML report of an Experiment, or of inputs held in Python, as `ndcg-report build` would.

    The same papermill -> nbval -> nbconvert steps and atomic publish as `build`, with the same numbers
    (per_query.csv and summary.json's figures are `build`'s on the same data). An input given as a path
    is read where it is; one given as an object is written once into the report's `inputs/` folder
    (runs and qrels as Parquet, topics as BEIR queries.jsonl, groups as JSON), hashed as a file, and
    named with the command that rebuilds the report under "How to reproduce".

    Parameters
    ----------
    source
        An Experiment (the inputs compare_runs was given: paths as given, objects as compare_runs
        wrote them to its private temporary folder, analysis.sources; and its settings), or a mapping with `runs`, `qrels` and `baseline` and optionally
        `topics` and `groups`, each in any form compare_runs takes.
    out_dir
        The report's folder: absent, empty or an earlier report's; on any failure it is left as it was.
    progress
        Show the steps and a bar over the cells on stderr.
    docs
        A document text file for the drill-downs (BEIR corpus.jsonl or docid<TAB>text).
    **options
        The report options (docs/report-options.md: `title`, `timeout`, `drilldown`), and with a
        mapping also compare_runs' (`preset`, `measures`, `cutoffs`, `rel_level`, `headline`,
        `baseline_name`, `seed`, ...). With an Experiment those are its own.

    Returns
    -------
    BuildResult
        The report's folder, the build's seconds and notes on what publishing kept.

    Raises
    ------
    ParameterError
        A bad call or value (an unknown key or option, statistics
        other than a report's: 10,000 resamples, 0.95, alpha 0.05).
    InputError
        A bad input file.
    BuildError
        A step failed (papermill, nbval, nbconvert).

    Examples
    --------
    In `tests/data/small/` of the checkout:

    >>> experiment = compare_runs({"monoT5": "monot5.txt"}, "qrels.txt", baseline="bm25.txt", baseline_name="BM25")
    >>> result = build_report(experiment, "report", title="monoT5 against BM25")  # doctest: +SKIP
    >>> sorted(path.name for path in result.out_dir.iterdir())[:3]  # doctest: +SKIP
    ['figures', 'leaderboard.md', 'leaderboard.tex']
    """
    report = {name: options.pop(name) for name in REPORT_ONLY if name in options}
    inputs = _experiment_inputs(source, options) if isinstance(source, Experiment) else _mapping_inputs(source, options)
    timeout = check_timeout(report.pop("timeout", BY_NAME["timeout"].default), "timeout")
    folder = Path(tempfile.mkdtemp(prefix="ndcg-report-inputs-")).resolve()  # this user's alone (0700), removed below
    try:
        values, written = _files(inputs, folder)
        params = validate_parameters(**values, **report, docs=str(docs or ""))
        if written:
            shown = {path: Path(INPUTS, path.name) for path in written}
            params = replace(params, command=build_command(_with_paths(params, shown), out=REBUILT))
        job = report_job(params)
        job = replace(job, parameters={**job.parameters, "inputs_folder": INPUTS if written else ""},
                      prepare=(lambda staging, _server: _copy_into(staging / INPUTS, written)) if written else None)
        return build_notebook(job, Path(out_dir), timeout, progress=progress)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _experiment_inputs(experiment: Experiment, options: Mapping[str, object]) -> _Inputs:
    """An Experiment's inputs and settings (analysis.sources: paths, and the files objects were written to at
    compare time); ParameterError if an option would change them."""
    if options:
        raise ParameterError(f"{', '.join(sorted(options))}: an Experiment's report uses the Experiment's own settings; "
                             "call compare_runs again to change them")
    sources = experiment.sources
    if sources is None:
        raise ParameterError("this Experiment was not made by compare_runs, which keeps its inputs for a report; "
                             "give build_report the inputs themselves")
    settings = {key: value for key, value in sources.options.items() if ALIASES.get(key, key) in ANALYSIS_OPTIONS}
    _check_report_defaults(sources.options)
    if isinstance(sources.qrels, dict):
        qrels: object = {name: given(value, f"judgment set {name!r}") for name, value in sources.qrels.items()}
    else:  # one set: its file, else the Qrels the Experiment evaluated with (kept, as read)
        qrels = sources.qrels if sources.qrels is not None else experiment.qrels
    topics = sources.topics if sources.topics is not None else experiment.topics
    groups = sources.groups if sources.groups is not None else experiment.groups
    return _Inputs(runs=tuple((name, given(run, f"run {name!r}")) for name, run in zip(experiment.names, sources.runs)),
                   qrels=_qrels_sets(qrels), baseline=given(sources.baseline, "baseline"),
                   baseline_name=experiment.baseline_name, topics=topics, groups=groups,
                   options={**settings, "baseline_name": experiment.baseline_name},
                   more_baselines=tuple((name, given(run, f"baseline {name!r}")) for name, run in sources.more_baselines))


def _mapping_inputs(source: object, options: Mapping[str, object]) -> _Inputs:
    """The inputs of build_report's mapping form, checked: the keys, and compare_runs' options."""
    if not isinstance(source, Mapping):
        raise ParameterError(f"build_report takes an Experiment or a mapping of inputs ({', '.join(INPUT_KEYS)}); "
                             f"got {type(source).__name__}")
    unknown = [str(key) for key in source if key not in INPUT_KEYS]
    missing = [key for key in INPUT_KEYS[:3] if source.get(key) is None]
    if unknown or missing:
        problem = f"unknown key {', '.join(map(repr, unknown))}" if unknown else f"no {', '.join(missing)}"
        raise ParameterError(f"build_report's inputs: {problem}; give {', '.join(INPUT_KEYS[:3])} (and optionally "
                             f"{', '.join(INPUT_KEYS[3:])})")
    odd = sorted(key for key in options if ALIASES.get(key, key) not in ANALYSIS_OPTIONS and key not in REPORT_DEFAULTS)
    if odd:
        raise ParameterError(f"build_report: unknown option {', '.join(odd)}; give compare_runs' options "
                             f"({', '.join(ANALYSIS_OPTIONS)}), {', '.join(REPORT_ONLY)}, progress or docs")
    _check_report_defaults(options)
    pairs = given_pairs(source["runs"])
    if pairs is None:
        raise ParameterError("build_report's runs: give a mapping of names to runs or a list, not an iterator "
                             "(the report reads them again)")
    (baseline_name, baseline), more = given_baselines(source["baseline"], str(options.get("baseline_name") or ""))
    return _Inputs(runs=tuple(pairs), qrels=_qrels_sets(source["qrels"]), baseline=baseline,
                   baseline_name=baseline_name, topics=source.get("topics"), groups=source.get("groups"),
                   options={key: value for key, value in options.items() if ALIASES.get(key, key) in ANALYSIS_OPTIONS},
                   more_baselines=tuple(more))


def _check_report_defaults(options: Mapping[str, object]) -> None:
    """ParameterError if a statistic's setting differs from the one every report uses."""
    for key, default in REPORT_DEFAULTS.items():
        if key in options and options[key] != default:
            raise ParameterError(f"{key}={options[key]!r}: a report uses {key}={default!r} (as `ndcg-report build`); "
                                 "use the Experiment's tables for other settings")


def _qrels_sets(qrels: object) -> object | tuple[tuple[str, object], ...]:
    """One set of judgements as it is, or several as (name, set) pairs (compare_runs' rule)."""
    return tuple((str(name), value) for name, value in qrels.items()) if is_named_sets(qrels) else qrels  # type: ignore[union-attr]


def _files(inputs: _Inputs, folder: Path) -> tuple[dict, list[Path]]:
    """validate_parameters' values for inputs, each object written into folder as a file; and those files."""
    from ndcg_report.inputs.tables import load_qrels, load_run

    written: list[Path] = []

    def written_as(table: object, name: str) -> str:
        target = folder / name
        _write_parquet(table, target)
        written.append(target)
        return str(target)

    def run_entry(name: str, run: object, position: int, file: str) -> tuple[str, str]:
        """(name shown, path) of a run; one given as an object is named as compare_runs names it."""
        if isinstance(run, (str, Path)):
            return name, str(run)
        loaded = load_run(run)
        shown = name or derived_name(loaded.tag, loaded.path or None, position)
        return shown, written_as(loaded.table.select(["qid", "docid", "score"]), file)

    def qrels_path(value: object, file: str) -> str:
        if isinstance(value, (str, Path)):
            return str(value)
        return written_as(load_qrels(value).table.select(["qid", "docid", "rel"]), file)

    def text_file(value: object, file: str, write) -> str:
        if value is None or isinstance(value, (str, Path)):
            return str(value or "")
        target = folder / file
        write(value, target)
        written.append(target)
        return str(target)

    runs = []
    for position, (name, run) in enumerate(inputs.runs, start=1):
        shown, path = run_entry(name, run, position, f"run-{position}.parquet")
        runs.append({"name": shown, "path": path})
    baseline_name, baseline = run_entry(inputs.baseline_name, inputs.baseline, 0, "baseline.parquet")
    if inputs.more_baselines:  # every baseline by name, the first first
        more = [run_entry(name, run, position, f"baseline-{position}.parquet")
                for position, (name, run) in enumerate(inputs.more_baselines, start=len(runs) + 1)]
        baseline = [{"name": name, "path": path} for name, path in [(baseline_name, baseline), *more]]  # type: ignore[assignment]
    if isinstance(inputs.qrels, tuple):
        qrels: object = [{"name": name, "path": qrels_path(value, f"qrels-{number}.parquet")}
                         for number, (name, value) in enumerate(inputs.qrels, start=1)]
    else:
        qrels = qrels_path(inputs.qrels, "qrels.parquet")
    values = dict(
        runs=runs, qrels=qrels, baseline=baseline, baseline_name=baseline_name,
        topics=text_file(inputs.topics, "topics.jsonl", _write_topics),
        groups=text_file(inputs.groups, "groups.json", _write_groups),
        **{key: _plain(value) for key, value in inputs.options.items() if key != "baseline_name" and value is not None},
    )
    return values, written


def _plain(value: object) -> object:
    """An option as validate_parameters reads it: a Measure by its label, in a list too; else as it is."""
    if isinstance(value, Measure):
        return value.label
    if isinstance(value, (list, tuple)):
        return [item.label if isinstance(item, Measure) else item for item in value]
    return value


def _write_parquet(table: object, target: Path) -> None:
    import pyarrow.parquet as pq

    pq.write_table(table, target)


def _write_topics(topics: object, target: Path) -> None:
    """Query text by qid (a pandas Series) as BEIR queries.jsonl: one {"_id", "text"} object per line."""
    import pandas as pd

    if not isinstance(topics, pd.Series):
        raise ParameterError(f"topics must be a path or a pandas Series of query text by qid; got {type(topics).__name__}")
    with target.open("w", encoding="utf-8") as out:
        for qid, text in topics.items():
            out.write(json.dumps({"_id": str(qid), "text": str(text)}, ensure_ascii=False) + "\n")


def _write_groups(groups: object, target: Path) -> None:
    """Query groups in any form compare_runs takes, as JSON {group: [qids]} in the order first given."""
    from ndcg_report.analysis.tables.groups import group_membership

    membership = group_membership(groups)  # type: ignore[arg-type]
    grouped: dict[str, list[str]] = {}
    for qid, group in zip(membership.index, membership.to_numpy()):
        grouped.setdefault(str(group), []).append(str(qid))
    target.write_text(json.dumps(grouped, ensure_ascii=False), encoding="utf-8")


def _with_paths(params: ReportParameters, shown: Mapping[Path, Path]) -> ReportParameters:
    """params with every input file in shown replaced by its path there (the report's own copies)."""

    def path(value: Path | None) -> Path | None:
        return shown.get(value, value) if value is not None else None

    return replace(params, runs=tuple(RunInput(item.name, path(item.path)) for item in params.runs),
                   more_baselines=tuple(RunInput(item.name, path(item.path)) for item in params.more_baselines),
                   judgment_sets=tuple(RunInput(item.name, path(item.path)) for item in params.judgment_sets),
                   qrels=path(params.qrels), baseline=path(params.baseline), topics=path(params.topics),
                   groups=path(params.groups))


def _copy_into(folder: Path, files: list[Path]) -> None:
    """The inputs written from objects, copied into the report's inputs/ folder (published with it)."""
    folder.mkdir()
    for path in files:
        shutil.copyfile(path, folder / path.name)
