"""Measure names: the Measure key, and parsing names, cut-offs and the relevance level.

A measure is a `Measure(measure, k)`: the family's ir_measures name and a cut-off (an int, or None for
the whole ranking). `nDCG@10` is `Measure("nDCG", 10)`, trec_eval's `ndcg_cut_10`; `AP` is
`Measure("AP", None)`, trec_eval's `map`. The families, their names and what each computes are in
registry.py and a module per family beside it; semantics are trec_eval 10's.
"""

from __future__ import annotations

import math
import re
from numbers import Integral
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ndcg_report.core.measures.catalogue import known_names
from ndcg_report.core.measures.family import Family, Kind
from ndcg_report.core.measures.registry import FAMILIES, PARAMETER_EXAMPLES, PARAMETER_TWINS, TREC_NICKNAMES, TREC_ORDER
from ndcg_report.errors import ParameterError

GAINS = ("linear", "exponential")  # nDCG's gain of a label: itself (trec_eval), or 2**label - 1

MAX_CUTOFF = 1_000_000_000  # deeper than any run; larger numbers overflow the rank arithmetic
DEFAULT_CUTOFFS: tuple[int | str, ...] = (1, 3, 5, 10, 20, 100, 1000)
DEFAULT_REL_LEVEL = 1


class Measure(NamedTuple):
    """One measure at one cut-off: `Measure("nDCG", 10)` is nDCG@10; k None is the whole ranking.

    The key `(measure, k)` of every table; `measures=` takes it wherever it takes a name.

    Attributes
    ----------
    measure
        The measure's name in ir_measures' spelling: `nDCG`, `P`, `R`, `AP`, `RR`, `Rprec`,
        `Success`, `NumRet`, `NumRel`, `NumRelRet`, `Bpref`, `infAP`, `IPrec`, `SetP`, ...; trec_eval's
        where ir_measures has none (`gm_map`, `Rprec_mult`, `utility`, ...).
    k
        The cut-off, an integer >= 1; None for the whole ranking. For IPrec and Rprec_mult a number
        (a recall level, a multiple of R; their Family.fractional), not a rank.

    Examples
    --------
    >>> Measure("nDCG", 10).label
    'nDCG@10'
    >>> Measure("AP")
    Measure(measure='AP', k=None)
    """

    measure: str
    k: int | None = None

    @property
    def label(self) -> str:
        """ir_measures' spelling: 'nDCG@10', 'AP', 'RR@10', 'IPrec@0.1'."""
        return self.measure if self.k is None else f"{self.measure}@{cutoff_text(self.k)}"

    @property
    def depth(self) -> int | None:
        """The rank the measure looks down to (its k), None for the whole ranking or a k that is not a
        rank (IPrec's recall level)."""
        return None if self.k is None or self.family.fractional else int(self.k)

    @property
    def family(self) -> Family:
        return FAMILIES[self.measure]

    @property
    def kind(self) -> Kind:
        return self.family.kind

    def trec_name(self, gain: str = "linear") -> str:
        """trec_eval's name as it prints it ('ndcg_cut_10', 'map', 'P_10'); a measure trec_eval lacks
        has a name of the same shape ('recip_rank_cut_10'; exponential gain 'ndcg_exp_cut_10')."""
        base = self.family.trec_base(self.k is not None, gain)
        if self.k is None:
            return base
        return f"{base}_{self.k:.2f}" if self.family.fractional else f"{base}_{self.k}"  # trec_eval's %3.2f

    def __str__(self) -> str:
        return self.label


DEPTH_RATIO = 0.9  # a system whose median depth is below this share of another's is retrieved less deep


def shallow_measures(measures: Iterable[Measure], medians: Mapping[str, float]) -> dict[str, list[Measure]]:
    """Per system of `medians` (its median lines per judged query), the measures it is measured past the
    depth it retrieved: a cut-off k above its median, and, when another system retrieves deeper (its
    median below DEPTH_RATIO of the deepest), every measure without one. Counts are never listed."""
    measures = list(measures)
    deepest = max(medians.values(), default=0.0)
    return {name: [m for m in measures if m.kind != "count" and (
                m.depth > depth if m.depth is not None else depth < DEPTH_RATIO * deepest)]
            for name, depth in medians.items()}


# trec_eval's measures that print text, not a number per query: not computed (see docs/measures.md)
TEXT_NAMES = {"runid": "run tag", "relstring": "string of the top 10 documents' labels"}
_NAMES: dict[str, tuple[str, bool]] = {}  # lower-cased name -> (family, names the family with cut-offs)
for _family in FAMILIES.values():
    for _alias in (_family.name, *_family.aliases):
        _NAMES[_alias.lower()] = (_family.name, _family.cutoff == "required")
    if _family.trec:
        _NAMES[_family.trec.lower()] = (_family.name, False)
    if _family.trec_cut:
        _NAMES[_family.trec_cut.lower()] = (_family.name, True)
_TOKEN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_-]*?)(?:\((?P<params>[^()]*)\))?"
                    r"(?:(?:@(?P<at>[^@]+))|(?:\.(?P<dot>[^@]+))|(?:_(?P<under>\d+(?:\.\d+)?)))?$")


@dataclass(frozen=True)
class MeasureSet:
    """The measures to compute, in the order they were asked for, and the relevance level."""

    measures: tuple[Measure, ...]
    rel_level: float


def parse_cutoffs(value: str | int | Iterable) -> tuple[int | str, ...]:
    """Parse '1,3,10,all' (or a list) into sorted unique cut-offs, `all` last; 1 <= k <= MAX_CUTOFF.

    Parameters
    ----------
    value
        Cut-offs as text separated by commas, one integer, or a list of integers and `"all"`
        (no cut-off). Each k is a whole number from 1 to 1,000,000,000.

    Returns
    -------
    tuple
        The cut-offs, sorted and without repeats, `"all"` last.

    Raises
    ------
    ParameterError
        A cut-off that is not a whole number in range, or none at all.

    Examples
    --------
    >>> parse_cutoffs("10,1,all,3,10")
    (1, 3, 10, 'all')
    >>> parse_cutoffs([100, 5])
    (5, 100)
    """
    items = value.split(",") if isinstance(value, str) else [value] if isinstance(value, int) else list(value)
    cutoffs: set[int] = set()
    has_all = False
    for item in items:
        text = "all" if item is None else str(item).strip().lower()
        if text == "all":
            has_all = True
            continue
        cutoffs.add(_cutoff(text, item))
    if not cutoffs and not has_all:
        raise ParameterError("give at least one cut-off, e.g. -k 1,3,5,10")
    return tuple(sorted(cutoffs)) + (("all",) if has_all else ())


def _cutoff(text: str, given: object) -> int:
    try:
        k = int(text)
    except ValueError:
        raise ParameterError(f"cut-off {given!r} is not a whole number or 'all'") from None
    if k < 1 or str(k) != text.lstrip("+"):
        raise ParameterError(f"cut-off {given!r} must be a whole number >= 1 or 'all'")
    if k > MAX_CUTOFF:
        raise ParameterError(f"cut-off {given!r} is larger than {MAX_CUTOFF:,}; use 'all' for no cut-off")
    return k


def cutoff_text(k: float) -> str:
    """A cut-off as a label shows it: 10, 0.1, 1 (not 1.0), whether an int or a float of a table."""
    number = float(k)
    return str(int(number)) if number.is_integer() else repr(number)


def _fraction(text: str, given: object) -> float:
    """A fractional family's k (IPrec's recall level, Rprec_mult's multiple of R): a finite number >= 0."""
    try:
        k = float(text)
    except ValueError:
        raise ParameterError(f"{given!r} is not a number; IPrec and Rprec_mult take numbers, e.g. IPrec@0.1") from None
    if not math.isfinite(k) or k < 0:
        raise ParameterError(f"{given!r} must be a finite number >= 0, e.g. IPrec@0.1 or Rprec_mult@0.2")
    return k


def parse_rel_level(value: object) -> float:
    """The relevance level (trec_eval's -l): a finite number >= 0; a label >= it is relevant."""
    if isinstance(value, bool):
        raise ParameterError(f"the relevance level must be a number >= 0, e.g. 1 or 2; got {value!r}")
    try:
        level = float(str(value).strip()) if isinstance(value, str) else float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ParameterError(f"the relevance level must be a number >= 0, e.g. 1 or 2; got {value!r}") from None
    if not math.isfinite(level) or level < 0:
        raise ParameterError(f"the relevance level must be a finite number >= 0, e.g. 1 or 2; got {value!r}")
    return level


def level_text(level: float) -> str:
    """2.0 -> '2', 0.5 -> '0.5'."""
    return str(int(level)) if float(level).is_integer() else repr(float(level))


def resolve_measures(
    measures: str | Measure | Iterable | None = None,
    cutoffs: str | Iterable | None = None,
    rel_level: object = None,
) -> MeasureSet:
    """The measures asked for, in their order (duplicates dropped), and the relevance level.

    measures: names in trec_eval's spelling (`ndcg_cut.10,100`, `recall.1000`, `map`, `P_10`) or
    ir_measures' (`nDCG@10`, `R@1000`, `AP`, `RR@10`, `AP(rel=2)@100`), several in one text
    separated by spaces, or Measure objects; None: nDCG at `cutoffs`. A family named without a
    cut-off takes `cutoffs` if given, else trec_eval's default cut-offs for it. rel_level: None
    takes the `(rel=N)` of the names, else 1; levels that disagree are an error.
    """
    if cutoffs is not None:
        cutoffs = parse_cutoffs(cutoffs)
    items = [] if measures is None else [measures] if isinstance(measures, (str, Measure)) else list(measures)
    if not items:
        ks = cutoffs if cutoffs is not None else DEFAULT_CUTOFFS
        found = [Measure("nDCG", None if k == "all" else k) for k in ks]
        return MeasureSet(tuple(found), parse_rel_level(DEFAULT_REL_LEVEL if rel_level is None else rel_level))
    found: list[Measure] = []
    levels: dict[float, str] = {}
    for item in items:
        if isinstance(item, Measure):
            found.append(_checked(item))
            continue
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            found.append(_checked(Measure(item[0], item[1])))
            continue
        text = str(item)  # an ir_measures measure object prints as its name
        tokens = text.replace(";", " ").split()
        if not tokens:
            raise ParameterError(f"measure {text!r} is empty; name one, e.g. nDCG@10 or ndcg_cut.10")
        for token in tokens:
            parsed, level = _parse_token(token, cutoffs)
            found += parsed
            if level is not None:
                levels.setdefault(level, token)
    level = _one_level(levels, rel_level)
    unique = list(dict.fromkeys(found))
    if not unique:
        raise ParameterError("give at least one measure, e.g. -m nDCG@10")
    return MeasureSet(tuple(unique), level)


def _one_level(levels: dict[float, str], rel_level: object) -> float:
    """The relevance level: the one given, or the one the measure names carry (they must agree)."""
    given = None if rel_level is None else parse_rel_level(rel_level)
    if len(levels) > 1:
        named = ", ".join(levels.values())
        raise ParameterError(f"the measures {named} give different relevance levels; one level (-l N) applies to "
                             "every binary measure: evaluate the levels separately")
    if levels:
        (level, token), = levels.items()
        if given is not None and given != level:
            raise ParameterError(f"{token} asks for relevance level {level_text(level)} but the level given is "
                                 f"{level_text(given)}; give one of them")
        return level
    return DEFAULT_REL_LEVEL if given is None else given


def _parse_token(token: str, cutoffs: tuple | None) -> tuple[list[Measure], float | None]:
    """Measures named by one token, and the relevance level its `(rel=N)` gives (None if none)."""
    lowered = token.lower()
    for nickname, names in TREC_NICKNAMES.items():
        if lowered == nickname:
            measures = []
            for name in names:
                measures += _parse_token(name, cutoffs)[0]
            return measures, None
    match = _TOKEN.match(token)
    if match and match["name"] in TEXT_NAMES:
        raise ParameterError(f"{match['name']} is trec_eval's {TEXT_NAMES[match['name']]}, text rather than a number "
                             "of a query: not computed here (-m all_trec computes every numeric measure)")
    if not match or match["name"].lower() not in _NAMES:
        raise ParameterError(f"unknown measure {token!r}; known: {known_names()}")
    family_name, cut_family = _NAMES[match["name"].lower()]
    level, switches = _params(match["params"], token) if match["params"] is not None else (None, ())
    for switch in switches:  # judged_only=True, relative=True: the family's twin
        if family_name not in PARAMETER_TWINS[switch]:
            raise ParameterError(f"measure {token!r}: {switch} is taken for {' and '.join(PARAMETER_TWINS[switch])} "
                                 f"only ({PARAMETER_EXAMPLES[switch]})")
        family_name = PARAMETER_TWINS[switch][family_name]
    family = FAMILIES[family_name]
    given = match["at"] or match["dot"] or match["under"]
    if given is not None:
        if family.cutoff == "none":
            raise ParameterError(f"{family.name} takes no cut-off; write {family.name} (in {token!r})")
        if match["dot"] is None and match["at"] is None and not cut_family:
            raise ParameterError(f"unknown measure {token!r}; known: {known_names()}")
        texts = [text.strip().lower() for text in given.split(",")]
        if not all(texts):
            raise ParameterError(f"measure {token!r} has an empty cut-off; e.g. {family.name}@10")
        if "all" in texts and family.cutoff == "required":
            raise ParameterError(f"{family.name} needs a whole-number cut-off, e.g. {family.name}@10 (in {token!r})")
        if family.fractional:
            return [Measure(family.name, k) for k in sorted({_fraction(text, text) for text in texts})], level
        ks = sorted({_cutoff(text, text) for text in texts if text != "all"})
        return [Measure(family.name, k) for k in ks] + ([Measure(family.name, None)] if "all" in texts else []), level
    if not cut_family:  # nDCG, AP, RR, Rprec, counts: the whole ranking
        return [Measure(family.name, None)], level
    ks = cutoffs if cutoffs is not None and not family.fractional else family.trec_defaults  # -k: ranks
    if not ks:
        raise ParameterError(f"{token!r} needs a cut-off, e.g. {family.name}@10")
    measures = []
    for k in ks:
        if k == "all":
            if family.cutoff == "required":
                raise ParameterError(f"{family.name} needs a cut-off, and the cut-offs given (-k) include 'all'; "
                                     f"name its cut-offs, e.g. {family.name}@10")
            measures.append(Measure(family.name, None))
        else:
            measures.append(Measure(family.name, float(k) if family.fractional else int(k)))
    return measures, level


def _params(text: str, token: str) -> tuple[float | None, tuple[str, ...]]:
    """(the relevance level of ir_measures' `(rel=N)` or None, the switches set True: `judged_only`
    (nDCG), `relative` (SetP)); any other parameter is refused."""
    level, switches, given = None, [], False
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, _, value = (item.strip() for item in part.partition("="))
        given = True
        if key == "rel" and value:
            level = parse_rel_level(value)
        elif key in PARAMETER_TWINS and value in ("True", "False"):
            switches += [key] if value == "True" else []
        else:
            raise ParameterError(f"measure {token!r}: only the parameters rel=N (the relevance level), "
                                 "judged_only=True (nDCG) and relative=True (SetP) are taken; the gain is --gain")
    if not given:
        raise ParameterError(f"measure {token!r} has empty parameters; write e.g. AP(rel=2)")
    return level, tuple(switches)


def _checked(measure: Measure) -> Measure:
    """A Measure whose family exists and whose cut-off fits it."""
    if measure.measure not in FAMILIES:
        raise ParameterError(f"unknown measure {measure.measure!r}; known: {known_names()}")
    family = FAMILIES[measure.measure]
    if measure.k is None and family.cutoff == "required":
        raise ParameterError(f"{family.name} needs a cut-off, e.g. {family.name}@10")
    if measure.k is not None:
        if family.cutoff == "none":
            raise ParameterError(f"{family.name} takes no cut-off")
        if family.fractional:
            return Measure(family.name, _fraction(str(measure.k).strip(), measure.k))
        return Measure(family.name, _cutoff(str(measure.k).strip(), measure.k))
    return measure


def measure_of(value: "str | Measure | int | None", measures: Sequence[Measure]) -> Measure:
    """The measure among `measures` that value names: a Measure, a name ('RR@10', 'ndcg_cut_10'), or a
    cut-off of nDCG (10, '10', 'all'); ParameterError if it is not among them."""
    if isinstance(value, Measure):
        wanted = value
    elif (isinstance(value, Integral) and not isinstance(value, bool)) or (
            isinstance(value, str) and (value.strip().isdigit() or value.strip() == "all")):
        text = str(value).strip()
        wanted = Measure("nDCG", None if text == "all" else int(text))
    else:
        parsed = resolve_measures(str(value), cutoffs=None).measures
        if len(parsed) != 1:
            raise ParameterError(f"{value!r} names {len(parsed)} measures; name one, e.g. nDCG@10")
        wanted = parsed[0]
    if wanted not in measures:
        raise ParameterError(f"{wanted.label} was not computed; have {', '.join(m.label for m in measures)}")
    return wanted


def cutoff_dtype(measures: Iterable[Measure]) -> str:
    """The pandas dtype of a column of their cut-offs: Int64 (NA for none), Float64 where a fractional
    family's k is among them (IPrec@0.1)."""
    return "Float64" if any(m.k is not None and m.family.fractional for m in measures) else "Int64"


def trec_sorted(measures: Iterable[Measure], gain: str = "linear") -> list[Measure]:
    """Measures in trec_eval's printing order: by family as measures.c lists them, then cut-off."""
    def key(measure: Measure) -> tuple[int, int]:
        base = measure.family.trec_base(measure.k is not None, gain)
        return TREC_ORDER.index(base), -1 if measure.k is None else measure.k
    return sorted(measures, key=key)
