"""One check per option type: a value given anywhere (flag, YAML, keyword, notebook) checked and normalised."""

from __future__ import annotations

import math
import reprlib
import difflib
from collections.abc import Callable, Mapping, Sequence

from ndcg_report.analysis.options.table import ALIASES, BY_NAME, PATH_KINDS, ReportOption
from ndcg_report.errors import ParameterError


def shown(value: object, limit: int = 60) -> str:
    """A short repr of a value for a message: nested containers elided, cut at limit."""
    shorter = reprlib.Repr()
    shorter.maxlevel, shorter.maxlist, shorter.maxdict, shorter.maxstring, shorter.maxother = 2, 4, 4, limit, limit
    text = shorter.repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bounds(option: ReportOption) -> str:
    if option.high is None:
        return f">= {option.low:,}" if option.low is not None else ""
    return f"from {option.low:,} to {option.high:,}"


def check_int(option: ReportOption, value: object, where: str) -> int:
    """A whole number within the option's bounds (a NumPy integer too; never a bool)."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not _within(option, value):
        unit = f" of {option.unit}" if option.unit else ""
        raise ParameterError(f"{where}: {shown(value)} must be a whole number{unit} {_bounds(option)}")
    return int(value)


def check_number(option: ReportOption, value: object, where: str) -> float:
    """A finite number within the option's bounds."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not _within(option, value):
        raise ParameterError(f"{where}: {shown(value)} must be a number {_bounds(option)}")
    return float(value)


def check_open_number(option: ReportOption, value: object, where: str) -> float:
    """A finite number strictly between the option's bounds (a significance level: above 0, below 1)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not option.low < value < option.high:
        raise ParameterError(f"{where}: {shown(value)} must be a number above {option.low:g} and below {option.high:g}")
    return float(value)


def _within(option: ReportOption, value: float) -> bool:
    return (option.low is None or value >= option.low) and (option.high is None or value <= option.high)


def check_bool(option: ReportOption, value: object, where: str) -> bool:
    """True or false, nothing that merely reads as one."""
    if not isinstance(value, bool):
        raise ParameterError(f"{where}: {shown(value)} must be true or false")
    return value


def check_choice(option: ReportOption, value: object, where: str) -> str:
    """One of the option's choices ('' where its default is '': not given)."""
    if value == "" and option.default == "":
        return ""
    if not isinstance(value, str) or value not in option.choices:
        raise ParameterError(f"{where}: {shown(value)} is not one of {', '.join(option.choices)}")
    return value


def check_text(option: ReportOption, value: object, where: str) -> str:
    """Text (a number given in YAML is its text)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ParameterError(f"{where}: {shown(value)} must be text")
    return str(value)


def check_title_option(option: ReportOption, value: object, where: str) -> str:
    """A report title: text without control characters (analysis.systems.check_title)."""
    from ndcg_report.analysis.systems import check_title

    return check_title(check_text(option, value, where), where)


def check_name_option(option: ReportOption, value: object, where: str) -> str:
    """A display name, or '' (named by its file): analysis.systems.check_name."""
    from ndcg_report.analysis.systems import check_name

    text = check_text(option, value, where)
    return check_name(text, where) if text else ""


def check_cutoffs(option: ReportOption, value: object, where: str) -> str:
    """Cut-offs as their canonical text ('1,10,all'), from '1,10,all', 10 or [1, 10, 'all']; '' not given."""
    from ndcg_report.core.measures.names import parse_cutoffs

    if value in ("", None):
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, list, tuple)) or (
            isinstance(value, (list, tuple)) and not all(isinstance(item, (str, int)) and not isinstance(item, bool)
                                                         for item in value)):
        raise ParameterError(f"{where}: {shown(value)} must be cut-offs such as '1,10,100' or [1, 10, all]")
    try:
        return ",".join(str(k) for k in parse_cutoffs(str(value) if isinstance(value, int) else value))
    except ParameterError as exc:
        raise ParameterError(f"{where}: {exc}") from None


def check_measures(option: ReportOption, value: object, where: str) -> str:
    """Measure names separated by spaces, from a text or a list of names; '' not given."""
    from ndcg_report.core.measures.names import resolve_measures

    if isinstance(value, (list, tuple)):
        if not all(isinstance(item, str) and item.strip() for item in value):
            raise ParameterError(f"{where}: {shown(value)} must be measure names such as [nDCG@10, RR, R@1000]")
        value = " ".join(item.strip() for item in value)
    return _resolved(value, where, resolve_measures)


def check_headline(option: ReportOption, value: object, where: str) -> str:
    """One measure's name; '' not given (whether it is among the measures: check_measure_choice)."""
    from ndcg_report.core.measures.names import resolve_measures

    return _resolved(value, where, resolve_measures)


def check_preset(option: ReportOption, value: object, where: str) -> str:
    """A preset's name; '' none."""
    from ndcg_report.core.presets import preset

    return _resolved(value, where, preset)


def _resolved(value: object, where: str, resolve: Callable[[str], object]) -> str:
    if value in ("", None):
        return ""
    if not isinstance(value, str) or not value.strip():
        raise ParameterError(f"{where}: {shown(value)} must be text (a non-empty string)")
    try:
        resolve(value.strip())
    except ParameterError as exc:
        raise ParameterError(f"{where}: {exc}") from None
    return value.strip()


def check_rel_level(option: ReportOption, value: object, where: str) -> str:
    """A relevance level (a number >= 0) as it was given; '' not given."""
    from ndcg_report.core.measures.names import parse_rel_level

    if value in ("", None):
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ParameterError(f"{where}: {shown(value)} must be a number such as 2")
    try:
        parse_rel_level(value)
    except ParameterError as exc:
        raise ParameterError(f"{where}: {exc}") from None
    return str(value)


CHECKS: dict[str, Callable[[ReportOption, object, str], object]] = {
    "int": check_int, "number": check_number, "open_number": check_open_number, "bool": check_bool, "choice": check_choice, "text": check_text,
    "title": check_title_option, "name": check_name_option, "cutoffs": check_cutoffs, "measures": check_measures,
    "headline": check_headline, "preset": check_preset, "rel_level": check_rel_level,
}


def check(name: str, value: object, where: str = "") -> object:
    """The checked, normalised value of option `name` (or an alias of it); ParameterError in one line
    starting with where (default: the option's name)."""
    option = BY_NAME[ALIASES.get(name, name)]
    if option.kind in PATH_KINDS:
        raise ValueError(f"{option.name} is a path: it is checked where it is given")  # pragma: no cover - our bug
    return CHECKS[option.kind](option, value, where or option.name)


def check_given(given: Mapping[str, object], known: Sequence[str],
                where: Callable[[str], str] = str) -> dict[str, object]:
    """The options given (by name or an older spelling), checked, by name. ParameterError for a key that
    is none of known's, or an option given twice; where(key) says where a key was given (a YAML key)."""
    values: dict[str, object] = {}
    spelled: dict[str, str] = {}
    for key, value in given.items():
        name = ALIASES.get(key, key)
        if name not in known:
            close = difflib.get_close_matches(key, [*known, *(a for a, n in ALIASES.items() if n in known)], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(known)})"
            raise ParameterError(f"{where(key)}: not a report option{hint}")
        if name in spelled:
            raise ParameterError(f"{where(key)}: {key!r} and {spelled[name]!r} are one option ({name}); give it once")
        spelled[name] = key
        values[name] = check(name, value, where(key))
    return values


def checked_options(given: Mapping[str, object], known: Sequence[str],
                    where: Callable[[str], str] = str) -> dict[str, object]:
    """Every option of known: as given (check_given), else the table's default."""
    values = check_given(given, known, where)
    return {name: values[name] if name in values else BY_NAME[name].default for name in known}
