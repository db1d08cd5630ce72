"""The report's parameters checked without reading the data: paths made absolute, choices checked.

The demo's values are used only when no input at all is given.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path

from ndcg_report.core.measures.names import parse_cutoffs
from ndcg_report.core.presets import averaging, choose_headline, measure_set
from ndcg_report.analysis.options.checks import checked_options
from ndcg_report.analysis.options.table import on
from ndcg_report.analysis.drilldown import MAX_DRILLDOWN_ROWS
from ndcg_report.analysis.report_model import ReportParameters, RunInput
from ndcg_report.errors import InputError, ParameterError
from ndcg_report.inputs.ids import control_character
from ndcg_report.inputs.access.snapshots import snapshot_of
from ndcg_report.inputs.access.sources import source_path
from ndcg_report.build.demos import DEFAULT_DEMO, DEMOS
from ndcg_report.analysis.systems import (
    CORPUS_BASELINE_NAME, check_distinct_paths, check_name, check_title, derived_name, split_run_option,
    unique_names,
)

PACKAGE_PREFIX = "package:"
NOTEBOOK_OPTIONS = tuple(option.name for option in on("notebook", paths=False))  # what validate_parameters checks


def resolve_path(value: str, name: str, required: bool = True, folder_ok: bool = False) -> Path | None:
    """An absolute path; `package:REL` names a file shipped inside ndcg_report/data. With folder_ok
    (runs and qrels), a folder is accepted too: a Parquet dataset."""
    if not value:
        if required:
            raise ParameterError(f"{name} is required")
        return None
    if not isinstance(value, (str, Path)):
        raise ParameterError(f"{name} must be a path; got {value!r}")
    value = str(value)
    if "\x00" in value:
        raise ParameterError(f"{name} path holds a NUL character")
    control = control_character(value)
    if control:
        raise ParameterError(f"{name} path {value!r} holds a control character ({control}); rename the file")
    if value.startswith(PACKAGE_PREFIX):
        path = Path(str(resources.files("ndcg_report") / "data" / value[len(PACKAGE_PREFIX):]))
    else:
        path = Path(value).expanduser()
    path = Path(os.path.abspath(path))  # absolute, with a link's own name (the report shows the name given)
    readable = source_path(path)  # a process substitution <(...) read once into a copy; a named pipe refused
    if not (readable.is_file() or (folder_ok and readable.is_dir())):
        what = ("a folder, not a file" if readable.is_dir() else
                "no such file or folder" if folder_ok else "no such file")
        raise InputError(readable, None, what, f"check the {name} path")
    return path if snapshot_of(path) is not None else readable  # a build's copy is read, never named


def _documents_file(path: Path | None) -> Path | None:
    """The --docs file, if its first line reads as a document (inputs.documents.check_documents_file)."""
    from ndcg_report.inputs.documents import check_documents_file

    return None if path is None else check_documents_file(path)


def validate_parameters(
    runs: Sequence = (), run: str = "", qrels: str | Sequence = "", baseline: str | Sequence = "", topics: str = "",
    corpus: str = "", docs: str = "", groups: str = "", against: str = "", command: str = "", bm25_settings: str = "",
    **options: object,
) -> ReportParameters:
    """Check every report parameter without reading the data; raise ParameterError/InputError.

    options: the report options of analysis.options.table by name (or an older spelling: `ks`,
    `rank_depth`), each checked by its type's one check, the table's default where not given.
    runs: paths, `NAME=PATH` texts or {name, path} mappings; `run` (with the option `run_name`) is one
    run. qrels: a path, or a list of judgment sets as runs are given (the first the reference, each
    named by its file's name if not named). The baseline is a run file, or (baseline '') a BM25 run
    still to be built from corpus + topics; or several baselines as runs are given, the first the
    headline's (named by baseline_name if not named). With no run, qrels, baseline or corpus at all, the
    parameters are those of the default demo.
    """
    checked = checked_options(options, NOTEBOOK_OPTIONS)
    params = _validated(runs, run, qrels, baseline, topics, corpus, docs, groups, command, bm25_settings, checked)
    return _gated(params, against, checked)


def _validated(runs: Sequence, run: str, qrels: str | Sequence, baseline: str | Sequence, topics: str, corpus: str, docs: str,
               groups: str, command: str, bm25_settings: str, checked: dict) -> ReportParameters:
    """validate_parameters past the checks of its options (`checked`, by name): the inputs and what
    the options decide together."""
    title, baseline_name, preset, run_name = (checked[name] for name in ("title", "baseline_name", "preset", "run_name"))
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence):
        raise ParameterError(f"runs must be a list of paths or {{name, path}} mappings; got {runs!r}")
    demo = ""
    if not (runs or run or qrels or baseline or corpus):
        demo = DEFAULT_DEMO
        values = demo_values(demo)
        runs, qrels, baseline, topics = values["runs"], values["qrels"], values["baseline"], topics or values["topics"]
        title, baseline_name = title or values["title"], baseline_name or values["baseline_name"]
        preset = preset or values["preset"]
        command = command or "ndcg-report demo"
    if run and runs:
        raise ParameterError("give the runs as `runs` or one run as `run`, not both")
    if run_name and not run:
        raise ParameterError("run_name names `run`; with `runs`, give each run as {name, path} or NAME=PATH")
    entries = [{"name": run_name, "path": run}] if run else list(runs)
    if not entries:
        raise ParameterError("give at least one run (the system under test)")
    if not baseline and not corpus:
        raise ParameterError("a baseline is required: give a baseline run, or a corpus (and topics) to build BM25 from")
    if corpus and not topics:
        raise ParameterError("topics are required with a corpus: BM25 needs the query text")
    run_inputs = tuple(_run_input(entry, position) for position, entry in enumerate(entries, start=1))
    base_name, baseline_path, more_baselines = _baselines(baseline, baseline_name, corpus)
    paths = [item.path for item in run_inputs] + ([baseline_path] if baseline_path else [])
    roles = [f"run {i}" for i in range(1, len(run_inputs) + 1)] + (["the baseline"] if baseline_path else [])
    check_distinct_paths([*paths, *(item.path for item in more_baselines)],
                         [*roles, *(f"baseline {i}" for i in range(2, len(more_baselines) + 2))])
    shown_base = base_name or (derived_name("", baseline_path, 0) if baseline_path else CORPUS_BASELINE_NAME)
    compared = (*run_inputs, *more_baselines)
    unique_names([item.name for item in compared],  # the names the report will show: a clash fails now
                 [derived_name("", item.path, position) for position, item in enumerate(compared, start=1)],
                 reserved=[shown_base], roles=[*(f"run {i}" for i in range(1, len(run_inputs) + 1)),
                                               *(f"baseline {i}" for i in range(2, len(more_baselines) + 2))])
    drilldown, drilldown_depth = checked["drilldown"], checked["drilldown_depth"]
    if drilldown * drilldown_depth > MAX_DRILLDOWN_ROWS:
        raise ParameterError(f"drilldown {drilldown:,} x drilldown_depth {drilldown_depth:,} asks for "
                             f"{drilldown * drilldown_depth:,} ranked documents per system in the report's drill-downs, "
                             f"more than {MAX_DRILLDOWN_ROWS:,}: give fewer drill-downs or a smaller depth")
    cutoffs = parse_cutoffs(checked["cutoffs"]) if checked["cutoffs"] else None
    asked = measure_set(preset, checked["measures"] or None, cutoffs, checked["rel_level"] or None,
                        checked["judged_only"])
    fill_unjudged_from = checked["fill_unjudged_from"]
    qrels_path, judgment_sets = _judgment_sets(qrels, fill_unjudged_from)
    policies = averaging(preset, checked["missing"] or None, checked["no_relevant"] or None,
                         checked["identical_ids"] or None)
    return ReportParameters(
        runs=run_inputs, qrels=qrels_path, judgment_sets=judgment_sets, fill_unjudged_from=fill_unjudged_from,
        groups=resolve_path(groups, "groups", required=False),
        baseline=baseline_path, more_baselines=more_baselines,
        topics=resolve_path(topics, "topics", required=False), corpus=resolve_path(corpus, "corpus", required=False),
        cutoffs=cutoffs, measures=asked.measures, rel_level=asked.rel_level,
        headline=choose_headline(checked["headline"] or None, preset, asked.measures), preset=preset,
        judged_only=checked["judged_only"], docs=_documents_file(resolve_path(docs, "docs", required=False)),
        drilldown=drilldown, drilldown_depth=drilldown_depth, gain=checked["gain"],
        missing=policies.missing, no_relevant=policies.no_relevant, identical_ids=policies.identical_ids,
        max_retrieved=checked["max_retrieved"], averaging_given=policies.given,
        title=title, seed=checked["seed"], baseline_name=base_name, command=str(command),
        bm25_settings=bm25_settings, demo=demo,
    )


def _gated(params: ReportParameters, against: str, checked: dict) -> ReportParameters:
    """params gated against an earlier build's folder (a report folder: analysis.gate.built.read_report, else
    ParameterError), on measures both reports computed; unchanged without one."""
    from dataclasses import replace

    gate = {name: checked[name] for name in ("gate_measures", "gate_margin", "gate_alpha")}
    if not against:
        return replace(params, **gate)
    from ndcg_report.analysis.gate.built import read_report  # scipy.stats with it: not for a build not gated
    from ndcg_report.analysis.gate.verdict import asked_labels

    if not isinstance(against, (str, Path)):
        raise ParameterError(f"against must be the folder of an earlier build; got {against!r}")
    folder = Path(os.path.abspath(Path(against).expanduser()))
    before = read_report(folder, "--against")
    labels = {measure.label for measure in params.measures}
    lacking = [label for label in asked_labels(str(gate["gate_measures"]), params.headline.label)
               if label not in labels or label not in before.measures]
    if lacking:
        raise ParameterError(f"--gate-measure {lacking[0]}: not a measure of both this report and --against {folder} "
                             f"(it has {', '.join(before.measures)}); gate a measure both compute")
    return replace(params, against=folder, **gate)


def demo_values(name: str) -> dict:
    """The validate_parameters arguments of an embedded demo."""
    demo = DEMOS[name]
    return {
        "runs": [{"name": run_name, "path": path} for run_name, path in demo.runs],
        "qrels": [{"name": name, "path": path} for name, path in demo.judgment_sets] or demo.qrels,
        "baseline": demo.baseline, "corpus": demo.corpus, "topics": demo.topics, "title": demo.title,
        "baseline_name": demo.baseline_name, "preset": demo.preset, "docs": demo.docs,
    }


def _judgment_sets(qrels: str | Sequence, fill_from: str) -> tuple[Path, tuple[RunInput, ...]]:
    """(the reference qrels file, every judgment set by name when there are several: the reference first)
    of validate_parameters' qrels; ParameterError for a set given twice, two sets with one name, or a
    fill_from that names no set other than the reference."""
    from ndcg_report.analysis.judgments.sets import unique_set_name
    from ndcg_report.analysis.systems import file_name

    if not isinstance(fill_from, str):
        raise ParameterError(f"fill_unjudged_from must be the name of a judgment set; got {fill_from!r}")
    entries = [qrels] if isinstance(qrels, (str, Path)) else list(qrels) if isinstance(qrels, Sequence) else None
    if entries is None or not entries:
        raise ParameterError(f"qrels must be a path or a list of judgment sets (NAME=PATH or {{name, path}}); got {qrels!r}")
    given = [_run_input(entry, position, "judgment set", "--qrels") for position, entry in enumerate(entries, start=1)]
    if len(given) == 1 and not fill_from:
        return given[0].path, ()
    check_distinct_paths([item.path for item in given], [f"judgment set {i}" for i in range(1, len(given) + 1)], "judgment set")
    named: dict[str, RunInput] = {}
    for item in given:
        name = item.name or unique_set_name(file_name(item.path) or "judgments", named)
        if name.casefold() in {key.casefold() for key in named}:
            raise ParameterError(f"two judgment sets are named {name!r}; give each set its own name (--qrels NAME=PATH)")
        named[name] = RunInput(name, item.path)
    reference = next(iter(named))
    if fill_from and (fill_from not in named or fill_from == reference):
        others = ", ".join(repr(name) for name in named if name != reference) or "none given"
        raise ParameterError(f"--fill-unjudged-from {fill_from!r}: name a judgment set other than the reference "
                             f"{reference!r}: {others}")
    return named[reference].path, tuple(named.values())


def _baselines(baseline: str | Sequence, baseline_name: str, corpus: str) -> tuple[str, Path | None, tuple[RunInput, ...]]:
    """(the first baseline's name, '' = its file's; its path, None with a corpus; every other baseline) of
    validate_parameters' baseline: a path, or a list of paths, `NAME=PATH` texts or {name, path} mappings.
    ParameterError for the first named twice (NAME= and baseline_name) or other baselines with a corpus."""
    if isinstance(baseline, (str, Path)):  # one path, as it always was: no NAME= is read in it
        return baseline_name, resolve_path(baseline, "baseline", required=False, folder_ok=True) if baseline else None, ()
    entries = list(baseline) if isinstance(baseline, Sequence) else None
    if entries is None:
        raise ParameterError(f"baseline must be a path or a list of baselines (NAME=PATH or {{name, path}}); got {baseline!r}")
    if not entries:
        return baseline_name, None, ()
    if corpus:
        raise ParameterError("give one of a baseline run and a corpus (to build BM25 from), not both")
    given = [_run_input(entry, position, "baseline", "--baseline") for position, entry in enumerate(entries, start=1)]
    if len(given) == 1 and given[0].name and not baseline_name:
        return given[0].name, given[0].path, ()
    first, name = given[0], baseline_name
    if first.name and baseline_name and first.name != baseline_name:
        raise ParameterError(f"the first baseline is named twice ({first.name!r} and --baseline-name {baseline_name!r}); "
                             "give one name")
    return first.name or name, first.path, tuple(given[1:])


def _run_input(entry: object, position: int, what: str = "run", option: str = "--run") -> RunInput:
    """A RunInput from a path, a `NAME=PATH` text (given as `option`) or a {name, path} mapping (of a run,
    or a judgment set)."""
    where = f"{what} {position}"
    if isinstance(entry, Mapping):
        unknown = set(entry) - {"name", "path"}
        if unknown:
            raise ParameterError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}; give name and path")
        if not entry.get("path"):
            raise ParameterError(f"{where}: give its path")
        name, path = entry.get("name") or "", entry["path"]
    elif isinstance(entry, (str, Path)):
        name, path = split_run_option(str(entry), option)
    else:
        raise ParameterError(f"{where}: {entry!r} is neither a path nor a {{name, path}} mapping")
    name = check_name(str(name), where) if name else ""
    return RunInput(name=name, path=resolve_path(path, where, folder_ok=True))
