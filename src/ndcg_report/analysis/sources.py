"""What compare_runs was given, kept by its Experiment: what `Experiment.report` builds the report from.

Each input is kept as given (a path, or the caller's own object: a reference, never a copy), so that a
report can be built later from the same data; runs given by an iterator were read once and let go,
and are not kept (such an Experiment cannot make its report).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from ndcg_report.inputs.formats.python_data import is_one_run


@dataclass(frozen=True, eq=False)
class Sources:
    """compare_runs' inputs as given and its other arguments (`options`, by keyword)."""

    runs: tuple[object, ...] | None  # each run as given, in order; None: given by an iterator, not kept
    qrels: object  # one set of judgements, or {name: judgements}
    baseline: object
    topics: object | None = None
    groups: object | None = None
    options: Mapping[str, object] = field(default_factory=dict)


def given_runs(runs: object) -> tuple[object, ...] | None:
    """The runs of compare_runs' `runs` in order, without their names (a mapping's values, a list's runs or
    (name, run) pairs' runs, one run); None for an iterator, whose runs are read once and not held."""
    if is_one_run(runs):
        return (runs,)
    if isinstance(runs, Mapping):
        return tuple(runs.values())
    if isinstance(runs, (list, tuple)):
        return tuple(item[1] if isinstance(item, tuple) and len(item) == 2 else item for item in runs)
    if isinstance(runs, Iterator):
        return None
    return (runs,)
