"""The `ndcg-report batch` config: YAML loaded and validated into frozen dataclasses.

Every structural problem (unknown key, bad value, duplicate name) is a ParameterError naming the
config file, the report and the key; nothing is built until the whole config is valid. Whether an
input FILE exists is not checked here: a missing file fails only its own report (step validate).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ndcg_report.errors import ParameterError
from ndcg_report.core.presets import choose_headline, measure_set
from ndcg_report.build.parameters import PACKAGE_PREFIX
from ndcg_report.analysis.gate.options import checked_gate_options, gate_options
from ndcg_report.analysis.options.checks import check_given
from ndcg_report.analysis.options.table import ALIASES, defaults, names
from ndcg_report.analysis.systems import check_name
from ndcg_report.inputs.ids import control_character
from ndcg_report.batch.config_yaml import read_config_yaml, shown as _shown

TOP_KEYS = ("output", "cache_dir", "defaults", "reports")
FILE_KEYS = ("qrels", "baseline", "corpus", "topics", "docs", "groups")  # the inputs besides the runs
BM25_KEYS = names("yaml", "bm25")
MEASURE_KEYS = names("yaml", "measure")
OPTION_KEYS = names("yaml")  # the report options a config takes: analysis.options.table's
ALIAS_KEYS = tuple(alias for alias, name in ALIASES.items() if name in OPTION_KEYS)  # older spellings, still read
GATE_KEY = "gate"  # a report's gate (analysis/gate/options.py's "yaml" surface), in defaults or per report
REPORT_KEYS = ("name", "run", "runs", *FILE_KEYS, *OPTION_KEYS, *ALIAS_KEYS, GATE_KEY)
SUITE_ENTRY_KEYS = ("name", "suite", "title", "timeout", "with_reports")  # a suite's other keys are in its own file
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")
RESERVED_NAMES = frozenset({"index.html"})


class ReportOptions(Mapping[str, Any]):
    """The options of `ndcg-report build` for one report, by the options table's names (defaults
    applied, values checked), read as options["seed"] or options.seed."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self._values = dict(values)

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __repr__(self) -> str:
        return f"ReportOptions({self._values!r})"


def default_options() -> dict[str, Any]:
    """Every option a config takes, at the options table's default."""
    return defaults("yaml")


@dataclass(frozen=True)
class InputFile:
    """One input of a report: its role, absolute path and, for a run, its display name."""

    role: str  # run (`run 1`, `run 2`, ... with several), qrels (`qrels NAME` of several sets), baseline, ...
    path: Path  # absolute; may not exist (checked when the report builds)
    name: str = ""  # a run's display name ('' = its file name), a judgment set's name


@dataclass(frozen=True)
class ReportConfig:
    name: str
    inputs: tuple[InputFile, ...]  # the runs, qrels, then baseline or corpus, then topics if given; a suite's config
    options: ReportOptions
    with_reports: bool = False  # a suite: build its collections' reports too (suite --with-reports)
    gate: Mapping[str, Any] | None = None  # every gate option (checked, defaults applied); None: not gated

    @property
    def suite(self) -> Path | None:
        """The suite config of a `suite:` entry (built by `ndcg-report suite`), else None."""
        return self.path("suite")

    def path(self, role: str) -> Path | None:
        return next((item.path for item in self.inputs if item.role == role), None)

    @property
    def runs(self) -> tuple[InputFile, ...]:
        return tuple(item for item in self.inputs if item.role.startswith("run"))

    @property
    def uses_corpus(self) -> bool:
        return self.path("corpus") is not None


@dataclass(frozen=True)
class BatchConfig:
    path: Path  # the config file, absolute
    output: Path  # the output root, absolute
    cache_dir: Path | None  # BM25 cache folder passed to every build (None: the build's default)
    reports: tuple[ReportConfig, ...]


def load_config(path: str | Path) -> BatchConfig:
    """Read and validate a batch config; raise ParameterError (one line) on any problem."""
    label = str(path)
    config_path = Path(path).expanduser().resolve()
    return parse_config(read_config_yaml(config_path, label), config_path, label)


def parse_config(data: object, config_path: Path, label: str) -> BatchConfig:
    """Validate already-parsed YAML; paths are relative to config_path's folder."""
    base = config_path.parent
    if not isinstance(data, dict):
        raise ParameterError(f"{label}: the config must be a mapping with keys {', '.join(TOP_KEYS)}")
    _check_keys(data, TOP_KEYS, f"{label}:")
    if "output" not in data:
        raise ParameterError(f"{label}: key 'output' is required (the folder the reports and index.html go to)")
    output = _locate(_text(data["output"], f"{label}: key 'output'", path=True), base)
    cache_dir = None
    if data.get("cache_dir") is not None:
        cache_dir = _locate(_text(data["cache_dir"], f"{label}: key 'cache_dir'", path=True), base)
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise ParameterError(f"{label}: key 'defaults' must be a mapping of report options")
    _check_keys(defaults, (*OPTION_KEYS, *ALIAS_KEYS, GATE_KEY), f"{label}: defaults:")
    merged_defaults = {**default_options(), **given_options(defaults, lambda key: f"{label}: defaults: key '{key}'")}
    default_gate = given_gate(defaults, None, f"{label}: defaults:")
    reports = data.get("reports")
    if not isinstance(reports, list) or not reports:
        raise ParameterError(f"{label}: key 'reports' must be a non-empty list of reports")
    parsed: list[ReportConfig] = []
    seen: dict[str, str] = {}
    for number, entry in enumerate(reports, start=1):
        report = _parse_report(entry, number, merged_defaults, default_gate, base, label)
        folded = report.name.casefold()
        if folded in seen:
            raise ParameterError(f"{label}: report '{report.name}': key 'name': {_shown(report.name)} is already used by "
                                 f"report '{seen[folded]}' (names must be unique, ignoring case)")
        seen[folded] = report.name
        parsed.append(report)
    return BatchConfig(path=config_path, output=output, cache_dir=cache_dir, reports=tuple(parsed))


def _parse_report(entry: object, number: int, defaults: dict, default_gate: dict | None, base: Path,
                  label: str) -> ReportConfig:
    if not isinstance(entry, dict):
        raise ParameterError(f"{label}: report #{number}: must be a mapping with at least name, run, qrels "
                             "and baseline (or corpus and topics)")
    if "name" not in entry:
        raise ParameterError(f"{label}: report #{number}: key 'name' is required")
    name = entry["name"]
    if not isinstance(name, str):
        raise ParameterError(f"{label}: report #{number}: key 'name': {_shown(name)} must be a string (quote it)")
    if not NAME_PATTERN.fullmatch(name) or name in RESERVED_NAMES:
        raise ParameterError(
            f"{label}: report #{number}: key 'name': {_shown(name)} is not a safe folder name (letters, digits, '.', '_', "
            "'-'; starting with a letter or digit; at most 80 characters; not index.html)"
        )
    where = f"{label}: report '{name}':"
    if "suite" in entry:
        return _parse_suite_entry(entry, name, defaults, base, where)
    _check_keys(entry, REPORT_KEYS, where)
    if ("run" in entry) == ("runs" in entry):
        raise ParameterError(f"{where} give exactly one of 'run' (one run) and 'runs' (a list of runs)")
    if "qrels" not in entry:
        raise ParameterError(f"{where} key 'qrels' is required")
    if ("baseline" in entry) == ("corpus" in entry):
        raise ParameterError(f"{where} give exactly one of 'baseline' (a run) and 'corpus' (to build BM25 from)")
    if "corpus" in entry and "topics" not in entry:
        raise ParameterError(f"{where} key 'topics' is required with 'corpus' (BM25 needs the query text)")
    if "baseline" in entry:
        for key in BM25_KEYS:
            if key in entry:
                raise ParameterError(f"{where} key '{key}' applies only to a BM25 baseline built from a 'corpus'")
    if "runs" in entry and "run_name" in entry:
        raise ParameterError(f"{where} key 'run_name' names a single 'run'; give each of 'runs' as {{name, path}}")
    runs = _parse_runs(entry, where, base)
    baselines = _parse_baselines(entry["baseline"], where, base) if "baseline" in entry else ()
    inputs = runs + _parse_judgment_sets(entry["qrels"], where, base) + baselines + tuple(
        InputFile(role, _locate(_text(entry[role], f"{where} key '{role}'", path=True), base))
        for role in FILE_KEYS if role in entry and role not in ("qrels", "baseline")
    )
    values = dict(defaults)
    if "runs" in entry:
        values["run_name"] = ""  # a default run_name names one-run reports only; runs carry their own names
    values.update(given_options(entry, lambda key: f"{where} key '{key}'"))
    check_measure_options(values, where)
    options = _report_options(values, name)
    sets = [item.name for item in inputs if item.role.startswith("qrels ")]
    if options.fill_unjudged_from and options.fill_unjudged_from not in sets[1:]:
        raise ParameterError(f"{where} key 'fill_unjudged_from': {options.fill_unjudged_from!r} is not one of the "
                             f"judgment sets compared with the reference: give 'qrels' as a mapping NAME: PATH "
                             f"and name one of its sets after the first ({', '.join(sets[1:]) or 'none given'})")
    given = [item.name for item in runs] + [options.run_name]
    if options.baseline_name and options.baseline_name.casefold() in {n.casefold() for n in given if n}:
        raise ParameterError(f"{where} key 'baseline_name': {options.baseline_name!r} is also a run's name; "
                             "give the baseline another name")
    if options.baseline_name and any(item.name for item in baselines):
        raise ParameterError(f"{where} key 'baseline_name': the baselines are named by the keys of 'baseline'; "
                             "drop baseline_name")
    for item in baselines:
        if item.name.casefold() in {n.casefold() for n in given if n}:
            raise ParameterError(f"{where} key 'baseline' baseline {item.name!r}: {item.name!r} is also a run's name; "
                                 "give the baseline another name")
        if item.path in {run.path for run in runs}:
            raise ParameterError(f"{where} key 'baseline' baseline {item.name!r}: {item.path} is also a run; give each "
                                 "file once")
    gate = given_gate(entry, default_gate, where)
    if gate is not None:
        check_gated_measures(gate, values, where)
    return ReportConfig(name=name, inputs=inputs, options=options, gate=gate)


def _report_options(values: dict, name: str) -> ReportOptions:
    return ReportOptions({**values, "title": values["title"] or name})


def given_options(mapping: dict, where: Callable[[str], str]) -> dict[str, Any]:
    """The report options a config mapping gives (by name or an older spelling), checked, by name;
    its other keys are not looked at."""
    return check_given({key: value for key, value in mapping.items() if key in OPTION_KEYS or key in ALIAS_KEYS},
                       OPTION_KEYS, where)


def given_gate(mapping: dict, default: dict | None, where: str) -> dict[str, Any] | None:
    """The gate of a mapping's `gate:` key: a mapping of gate options over default's (or their defaults), `true`
    (default's, or every default), `false` (not gated); absent: default. ParameterError naming where and the key."""
    if GATE_KEY not in mapping:
        return default
    value = mapping[GATE_KEY]
    if value is False:
        return None
    known = ", ".join(option.name for option in gate_options("yaml"))
    if value is not True and not isinstance(value, dict):
        raise ParameterError(f"{where} key '{GATE_KEY}': {_shown(value)} must be a mapping of gate options ({known}), "
                             "true (gate with the defaults) or false (do not gate)")
    given = {} if value is True else value
    checked = checked_gate_options(given, "yaml", lambda key: f"{where} key '{GATE_KEY}: {key}'")
    return {**checked, **{key: (default or {}).get(key, checked[key]) for key in checked if key not in given}}


def check_gated_measures(gate: Mapping[str, Any], values: dict, where: str) -> None:
    """ParameterError naming where unless every measure the gate names is one the report computes."""
    if not gate["measures"]:
        return
    from ndcg_report.core.measures.names import resolve_measures

    labels = {measure.label for measure in check_measure_options(values, where).measures}
    for measure in resolve_measures(str(gate["measures"])).measures:
        if measure.label not in labels:
            raise ParameterError(f"{where} key '{GATE_KEY}: measures': {measure.label} is not a measure of this report "
                                 f"(it computes {', '.join(sorted(labels))}); gate a measure the report computes")


def _parse_suite_entry(entry: dict, name: str, defaults: dict, base: Path, where: str) -> ReportConfig:
    """A `suite:` entry: its suite config (read when it builds, as a report's inputs are), title, timeout
    and with_reports; of `defaults` only the timeout applies (the suite's options are in its config)."""
    _check_keys(entry, SUITE_ENTRY_KEYS, where)
    values = dict(defaults)
    values.update(given_options({key: entry[key] for key in ("title", "timeout") if key in entry},
                                lambda key: f"{where} key '{key}'"))
    with_reports = entry.get("with_reports", False)
    if not isinstance(with_reports, bool):
        raise ParameterError(f"{where} key 'with_reports': {_shown(with_reports)} must be true or false")
    path = _locate(_text(entry["suite"], f"{where} key 'suite'", path=True), base)
    return ReportConfig(name=name, inputs=(InputFile("suite", path),), options=_report_options(values, name),
                        with_reports=with_reports)


def check_measure_options(values: dict, where: str):
    """The measure set of checked values (preset, measures, k, rel_level, headline, judged_only), checked
    together: what a build would refuse (a headline that is not among the measures) is a ParameterError
    prefixed by where."""
    try:
        asked = measure_set(values["preset"], values["measures"] or None, values["cutoffs"] or None,
                            values["rel_level"] or None, values["judged_only"])
        choose_headline(values["headline"] or None, values["preset"], asked.measures)
    except ParameterError as exc:
        raise ParameterError(f"{where} {exc}") from None
    return asked


def _parse_baselines(value: object, where: str, base: Path) -> tuple[InputFile, ...]:
    """`baseline: PATH` (one baseline), or `baseline:` a mapping NAME: PATH of several, the first the
    headline's (InputFiles `baseline NAME`): every system is compared with each."""
    return _named_files(value, "baseline", "baseline", where, base)


def _parse_judgment_sets(value: object, where: str, base: Path) -> tuple[InputFile, ...]:
    """`qrels: PATH` (one set), or `qrels:` a mapping NAME: PATH of judgment sets to compare, the first
    the reference (InputFiles `qrels NAME`)."""
    return _named_files(value, "qrels", "set", where, base)


def _named_files(value: object, key: str, what: str, where: str, base: Path) -> tuple[InputFile, ...]:
    """`KEY: PATH` (InputFile KEY), or `KEY:` a mapping NAME: PATH, in order (InputFiles `KEY NAME`), each
    path once; what: what one of them is called in a message ('set', 'baseline')."""
    plural = {"set": "judgment sets", "baseline": "baselines"}.get(what, what + "s")
    if not isinstance(value, dict):
        return (InputFile(key, _locate(_text(value, f"{where} key '{key}'", path=True), base)),)
    if not value:
        raise ParameterError(f"{where} key '{key}': give a path, or a mapping NAME: PATH of {plural}")
    found, paths = [], {}
    for name, path_text in value.items():
        at = f"{where} key '{key}' {what} {_shown(name)}"
        name = check_name(_name_text(name, at), at)
        path = _locate(_text(path_text, at, path=True), base)
        if path in paths:
            one = "judgment set" if what == "set" else what
            raise ParameterError(f"{at}: {path} is already {what} {paths[path]!r}; give each {one} once")
        paths[path] = name
        found.append(InputFile(f"{key} {name}", path, name))
    return tuple(found)


def _parse_runs(entry: dict, where: str, base: Path) -> tuple[InputFile, ...]:
    """The report's runs: `run: PATH` or `runs:` a list of paths or {name, path} mappings."""
    if "run" in entry:
        return (InputFile("run", _locate(_text(entry["run"], f"{where} key 'run'", path=True), base)),)
    listed = entry["runs"]
    if not isinstance(listed, list) or not listed:
        raise ParameterError(f"{where} key 'runs': give a non-empty list of paths or {{name, path}} mappings")
    runs, names, paths = [], {}, {}
    for position, item in enumerate(listed, start=1):
        at = f"{where} key 'runs' item {position}"
        if isinstance(item, dict):
            unknown = set(item) - {"name", "path"}
            if unknown:
                raise ParameterError(f"{at}: unknown key {_shown(sorted(map(str, unknown))[0])} (known keys: name, path)")
            if "path" not in item:
                raise ParameterError(f"{at}: key 'path' is required")
            name = _name_text(item["name"], f"{at}: key 'name'") if item.get("name") is not None else ""
            path = _locate(_text(item["path"], f"{at}: key 'path'", path=True), base)
        else:
            name, path = "", _locate(_text(item, at, path=True), base)
        if name:
            name = check_name(name, at)
            if name.casefold() in names:
                raise ParameterError(f"{at}: the name {name!r} is already used by item {names[name.casefold()]}; "
                                     "give each run its own name")
            names[name.casefold()] = position
        if path in paths:
            raise ParameterError(f"{at}: {path} is already item {paths[path]}; give each run once")
        paths[path] = position
        runs.append(InputFile(f"run {position}", path, name))
    return tuple(runs)


def _name_text(value: object, where: str) -> str:
    """A name as text (a number given in YAML is its text); check_name checks it where it is used."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ParameterError(f"{where}: {_shown(value)} must be text")
    return str(value)


def _check_keys(mapping: dict, known: tuple[str, ...], where: str) -> None:
    for key in mapping:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else f" (known keys: {', '.join(known)})"
            raise ParameterError(f"{where} unknown key {_shown(str(key))}{hint}")


def _text(value: object, where: str, path: bool = False) -> str:
    if not isinstance(value, str) or not value.strip():
        kind = "a path" if path else "text"
        raise ParameterError(f"{where}: {_shown(value)} must be {kind} (a non-empty string)")
    if "\x00" in value:
        raise ParameterError(f"{where}: {_shown(value)} holds a NUL character; remove it")
    control = control_character(value)
    if control:
        raise ParameterError(f"{where}: {_shown(value)} holds a control character ({control}); remove it")
    return value


def _locate(spec: str, base: Path) -> Path:
    """Absolute path of spec: `package:REL` inside ndcg_report/data, else relative to base (the config's folder)."""
    if spec.startswith(PACKAGE_PREFIX):
        return Path(str(resources.files("ndcg_report") / "data" / spec[len(PACKAGE_PREFIX):])).resolve()
    path = Path(spec).expanduser()
    return (path if path.is_absolute() else base / path).resolve()


# The checks a suite's config (batch/suite_config.py) shares with a report's, under public names.
check_keys = _check_keys
check_text = _text
locate = _locate
