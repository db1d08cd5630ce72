"""A suite's parameters checked without reading the data: each collection's report parameters, the names.

A suite is collections, each with its qrels, baseline, runs by system name and optional topics, and
the measure and averaging options of a report (for all, or per collection). Each collection's
parameters are exactly a report's (build.parameters.validate_parameters), so a suite's cell is the
number that collection's own report shows. The names that tie the collections together are checked
here once, for the command line, a batch and the suite notebook alike (check_suite_names).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ndcg_report.analysis.report_model import ReportParameters
from ndcg_report.analysis.systems import check_name, check_title
from ndcg_report.analysis.options.table import names
from ndcg_report.analysis.tables.suite import OVER_COLLECTIONS
from ndcg_report.build.parameters import validate_parameters
from ndcg_report.core.measures.names import measure_of
from ndcg_report.errors import InputError, ParameterError

DEFAULT_BASELINE_NAME = "baseline"  # each collection's baseline differs: the suite shows them under one name
COLLECTION_OPTIONS = (*names("notebook", "measure"), "seed")  # validate_parameters' options a collection may set
COLLECTION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")  # a folder name: collections/NAME/ of --with-reports


@dataclass(frozen=True)
class SuiteCollection:
    """One collection of a suite: its name, its report's parameters, the validate_parameters arguments
    they were made from (paths absolute: the notebook makes the same parameters from them) and the
    link to its report ('' none)."""

    name: str
    params: ReportParameters
    values: Mapping[str, object]
    report: str = ""


@dataclass(frozen=True)
class SuiteParameters:
    """Validated suite parameters: every collection's report parameters (absolute paths, measures parsed)."""

    title: str
    collections: tuple[SuiteCollection, ...]
    systems: tuple[str, ...]  # the systems shown, in order; () = every system of any collection, in the order met
    baseline_name: str
    headline: str  # the measure of the tests over collections and the figures; '' = the first collection's
    command: str  # the command that rebuilds the suite

    def input_paths(self) -> list[Path]:
        """Every input file of every collection, each once."""
        paths = [path for collection in self.collections for path in _report_inputs(collection.params)]
        return list(dict.fromkeys(paths))


def check_collection_name(name: object, where: str) -> str:
    """A collection's name, checked: text, a safe folder name, not a column of the suite's table."""
    if not isinstance(name, str) or not COLLECTION_NAME.fullmatch(name):
        raise ParameterError(f"{where}: {name!r} is not a safe collection name (letters, digits, '.', '_', '-'; "
                             "starting with a letter or digit; at most 80 characters)")
    if name in OVER_COLLECTIONS:
        raise ParameterError(f"{where}: {name!r} is a column of the suite's table ({', '.join(OVER_COLLECTIONS)}); "
                             "rename the collection")
    return name


def check_suite_names(systems_of: Mapping[str, Sequence[str]], systems: Sequence[str], baseline_name: str) -> None:
    """ParameterError (without the file: callers prefix it) for two collections with one name (ignoring
    case), a collection without runs, a system named like the baseline, or a chosen system in no collection.
    systems_of: collection name -> its systems' names."""
    seen: dict[str, str] = {}
    for name, names in systems_of.items():
        if name.casefold() in seen:
            raise ParameterError(f"collection {name!r}: the name is already used by collection {seen[name.casefold()]!r} "
                                 "(names must be unique, ignoring case); rename one")
        seen[name.casefold()] = name
        if not names:
            raise ParameterError(f"collection {name!r} has no runs; give at least one as runs: {{SYSTEM: PATH}}")
        clash = [system for system in names if system.casefold() == baseline_name.casefold()]
        if clash:
            raise ParameterError(f"collection {name!r}: system {clash[0]!r} is named like the suite's baseline "
                                 f"{baseline_name!r}; rename the system or set baseline_name")
    found = list(dict.fromkeys(system for names in systems_of.values() for system in names))
    for system in systems:
        if system not in found:
            raise ParameterError(f"system {system!r} is in no collection (the systems are {', '.join(map(repr, found))}); "
                                 "remove it from systems or add its runs")
    if len(set(systems)) != len(systems):
        raise ParameterError("systems names a system twice; give each once")


def validate_suite_parameters(
    collections: Sequence[Mapping], title: str = "", systems: Sequence[str] = (),
    baseline_name: str = DEFAULT_BASELINE_NAME, headline: str = "", command: str = "",
    reports: Mapping[str, str] | None = None,
) -> SuiteParameters:
    """Check every suite parameter without reading the data; ParameterError, or InputError for a missing file.

    collections: mappings with `name`, `runs` (a mapping SYSTEM: PATH, or a list of {name, path}),
    `qrels`, `baseline`, optional `topics`, and any of COLLECTION_OPTIONS (validate_parameters' own).
    systems: the systems to show, in order (default: all); baseline_name: the baseline's name in the
    suite; headline: the measure of the tests over collections (default: the first collection's);
    reports: collection name -> the link to its report, for those built beside the suite.
    """
    if isinstance(collections, (str, bytes, Mapping)) or not isinstance(collections, Sequence) or not collections:
        raise ParameterError("give at least one collection, as a list of {name, qrels, baseline, runs, topics}")
    title = check_title(str(title), "the suite's title")
    base = check_name(baseline_name, "baseline_name") if baseline_name else DEFAULT_BASELINE_NAME
    systems = tuple(check_name(system, "systems") for system in systems or ())
    reports = dict(reports or {})
    runs_of = {}
    for position, given in enumerate(collections, start=1):
        if not isinstance(given, Mapping):
            raise ParameterError(f"collection {position}: give a mapping of name, qrels, baseline, runs and topics")
        name = check_collection_name(given.get("name"), f"collection {position}: name")
        runs_of[name] = _collection_runs(given.get("runs"), name)
    check_suite_names({name: [system for system, _ in runs] for name, runs in runs_of.items()}, systems, base)
    chosen = [SuiteCollection(name, *_collection_parameters(given, runs_of[name], title, base), reports.get(name, ""))
              for name, given in zip(runs_of, collections)]
    unknown = sorted(set(reports) - set(runs_of))
    if unknown:
        raise ParameterError(f"reports: {unknown[0]!r} is not a collection of the suite")
    if headline:
        measures = list(dict.fromkeys(m for c in chosen for m in c.params.measures))
        headline = measure_of(headline, measures).label
    return SuiteParameters(title=title, collections=tuple(chosen), systems=systems, baseline_name=base,
                           headline=headline, command=str(command))


def suite_notebook_parameters(params: SuiteParameters) -> dict:
    """The papermill parameters of the suite notebook (absolute paths, plain values)."""
    return {
        "title": params.title, "systems": list(params.systems), "baseline_name": params.baseline_name,
        "headline": params.headline, "command": params.command, "output_dir": ".",
        "reports": {c.name: c.report for c in params.collections if c.report},
        "collections": [collection_values(c) for c in params.collections],
    }


def collection_values(collection: SuiteCollection) -> dict:
    """A collection as validate_suite_parameters takes it: its name, its runs as {name, path}, its files
    and options as given, every path absolute."""
    runs = [{"name": item.name, "path": str(item.path)} for item in collection.params.runs]
    options = {key: value for key, value in collection.values.items() if key not in ("runs", "title", "baseline_name")}
    return {"name": collection.name, "runs": runs, **options}


def _collection_runs(runs: object, collection: str) -> list[tuple[str, object]]:
    """(system, path) of a collection's runs: a mapping SYSTEM: PATH or a list of {name, path}; every
    run named (the suite matches systems across collections by name)."""
    where = f"collection {collection!r}: runs"
    if isinstance(runs, Mapping):
        pairs = list(runs.items())
    elif isinstance(runs, Sequence) and not isinstance(runs, (str, bytes)):
        if not all(isinstance(item, Mapping) and set(item) <= {"name", "path"} for item in runs):
            raise ParameterError(f"{where}: give a mapping SYSTEM: PATH (or a list of {{name, path}})")
        pairs = [(item.get("name"), item.get("path")) for item in runs]
    elif runs is None:
        pairs = []
    else:
        raise ParameterError(f"{where}: give a mapping SYSTEM: PATH; got {runs!r}")
    named = []
    for system, path in pairs:
        if not isinstance(system, str) or not system.strip():
            raise ParameterError(f"{where}: every run needs its system's name (SYSTEM: PATH); got {system!r}")
        named.append((check_name(system, f"{where} {system!r}"), path))
    return named


def _collection_parameters(given: Mapping, runs: list[tuple[str, object]], title: str,
                           baseline_name: str) -> tuple[ReportParameters, dict]:
    """The collection's report parameters (validate_parameters, its errors prefixed with the collection's
    name) and the arguments they were made from, with the files' absolute paths."""
    name = given["name"]
    unknown = sorted(set(given) - {"name", "runs", "qrels", "baseline", "topics", *COLLECTION_OPTIONS})
    if unknown:
        raise ParameterError(f"collection {name!r}: unknown key {unknown[0]!r}; the keys are name, runs, qrels, "
                             f"baseline, topics, {', '.join(COLLECTION_OPTIONS)}")
    for key in ("qrels", "baseline"):
        if not given.get(key):
            raise ParameterError(f"collection {name!r}: give its {key} (a suite compares each collection's runs with "
                                 "its own baseline run)")
    options = {key: given[key] for key in COLLECTION_OPTIONS if key in given and given[key] is not None}
    values = dict(runs=[{"name": system, "path": path} for system, path in runs], qrels=given["qrels"],
                  baseline=given["baseline"], topics=given.get("topics") or "", baseline_name=baseline_name,
                  title=f"{title}: {name}" if title else name, **options)
    try:
        params = validate_parameters(**values)
    except ParameterError as exc:
        raise ParameterError(f"collection {name!r}: {exc}") from None
    except InputError as exc:  # a missing file: named, and where the suite gives it
        given = {os.path.abspath(str(path)): f"system {system!r}" for system, path in runs}
        given.update({os.path.abspath(str(values[key])): key for key in ("qrels", "baseline", "topics") if values[key]})
        role = given.get(os.path.abspath(exc.path))
        fix = f"check the path of {role} in collection {name!r}" if role else f"{exc.fix} of collection {name!r}"
        raise InputError(exc.path, exc.line, exc.problem, fix) from None
    files = {"qrels": str(params.qrels), "baseline": str(params.baseline), "topics": str(params.topics or "")}
    return params, {**values, **files}


def _report_inputs(params: ReportParameters) -> list[Path]:
    return [*(item.path for item in params.runs), params.qrels,
            *(path for path in (params.baseline, params.topics) if path is not None)]
