"""What compare_runs was given, kept by its Experiment: what `Experiment.report` builds the report from.

Paths are kept as given. An object (a table, a DataFrame, a parsed Run) is kept by a weak reference, so
the Experiment never holds a run its caller let go (compare_runs' memory contract); a dict or list,
which cannot be referenced weakly, is not kept, nor are runs given by an iterator. (The qrels, topics
and groups need none of this: the Experiment holds them as read.)
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ndcg_report.errors import ParameterError
from ndcg_report.inputs.formats.python_data import is_one_run


@dataclass(frozen=True)
class _Weak:
    """An input kept by a weak reference: gone once its caller lets it go."""

    ref: weakref.ReferenceType


@dataclass(frozen=True)
class _NotKept:
    """An input that could only be kept by holding it (a dict, a list): not kept."""

    kind: str


def kept(value: object) -> object:
    """value as the Experiment keeps it: a path itself, an object weakly, a dict or list not at all."""
    if value is None or isinstance(value, (str, Path)):
        return value
    try:
        return _Weak(weakref.ref(value))
    except TypeError:
        return _NotKept(type(value).__name__)


def given(value: object, what: str) -> object:
    """The input kept by kept(); ParameterError if it was not kept or its caller has let it go since."""
    again = ("give build_report the inputs themselves: build_report({'runs': ..., 'qrels': ..., 'baseline': ...}, "
             "out_dir, ...)")
    if isinstance(value, _NotKept):
        raise ParameterError(f"the {what} was given to compare_runs as a {value.kind}, which an Experiment does not keep "
                             f"(it holds no run its caller may let go); {again}")
    if not isinstance(value, _Weak):
        return value
    found = value.ref()
    if found is None:
        raise ParameterError(f"the {what} given to compare_runs as an object has been let go since (an Experiment keeps "
                             f"no copy); {again}")
    return found


@dataclass(frozen=True, eq=False)
class Sources:
    """compare_runs' inputs as kept (kept()) and its other arguments (`options`, by keyword)."""

    runs: tuple[object, ...] | None  # each run as kept, in order; None: given by an iterator, not kept
    qrels: object  # one set of judgements, or {name: judgements}, each as kept
    baseline: object
    topics: object | None = None
    groups: object | None = None
    options: Mapping[str, object] = field(default_factory=dict)

    @classmethod
    def of(cls, runs: object, qrels: object, baseline: object, topics: object, groups: object,
           options: Mapping[str, object]) -> Sources:
        """compare_runs' arguments as an Experiment keeps them."""
        from ndcg_report.analysis.judgments.sets import is_named_sets

        pairs = given_pairs(runs)
        sets = {name: kept(value) for name, value in qrels.items()} if is_named_sets(qrels) else kept(qrels)  # type: ignore[union-attr]
        return cls(None if pairs is None else tuple(kept(run) for _, run in pairs), sets, kept(baseline), kept(topics),
                   kept(groups), dict(options))


def check_pair(pair: tuple) -> tuple:
    """pair itself; ParameterError unless it is (name as text, run)."""
    if len(pair) != 2 or not isinstance(pair[0], str):
        raise ParameterError("give each named run as a (name, run) pair, the name as text")
    return pair


def given_pairs(runs: object) -> list[tuple[str, object]] | None:
    """(name given, '' where none; the run) of compare_runs' `runs` in order, each checked (check_pair): a
    mapping's items, a list's runs or (name, run) pairs, one run; None for an iterator, whose runs are
    read once and not held."""
    if is_one_run(runs):  # a pytrec_eval/ranx dict of one run, not a mapping of names to runs
        return [("", runs)]
    if isinstance(runs, Mapping):
        if any(not isinstance(name, str) for name in runs):
            raise ParameterError("the names of runs (the mapping's keys) must be text")
        return list(runs.items())
    if isinstance(runs, (list, tuple)):
        return [check_pair(item) if isinstance(item, tuple) else ("", item) for item in runs]
    if isinstance(runs, Iterator):
        return None
    return [("", runs)]
