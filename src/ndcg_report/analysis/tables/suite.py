"""compare_suite and the Suite: systems x collections of each measure, each cell its collection's verdict.

Each collection is an Experiment (given, or made by compare_runs from its arguments), and each cell
is exactly what that collection's report shows: its mean, and its mark against the baseline from its
own Holm family. Over collections: the mean (and over how many), the mean rank, wins/ties/losses
against the baseline and the tests of stats.across_collections, all on the collections' means.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ndcg_report.analysis.compare import compare_runs
from ndcg_report.analysis.experiment import Experiment
from ndcg_report.stats.paired import ALPHA
from ndcg_report.analysis.tables.blocks import block_rows, experiment_block, wide_marks, wide_means
from ndcg_report.core.measures.names import Measure, measure_of
from ndcg_report.errors import ParameterError
from ndcg_report.stats.across_collections import AcrossCollections, across_collections

if TYPE_CHECKING:
    from matplotlib.figure import Figure

OVER_COLLECTIONS = ("mean", "collections", "mean_rank", "ranked_on", "wins", "ties", "losses")
REQUIRED = ("runs", "qrels", "baseline")


@dataclass(frozen=True, eq=False)
class Suite:
    """Systems against one baseline on several collections: each collection's own numbers and verdicts,
    and what they say together. Made by `compare_suite`.

    Attributes
    ----------
    collections
        The collections' names, in the order given.
    experiments
        Each collection's Experiment (its report's numbers).
    names
        The systems under test, in order (the union over collections, or as chosen).
    baseline_name
        The baseline's name in the suite's tables (each collection's own baseline).
    measures
        Every measure of any collection, in the order first asked for.
    headline
        The measure of the tests over collections, the figures and the display.
    alpha
        The significance level of the tests over collections (each cell keeps its collection's).

    Examples
    --------
    In `tests/data/small/` of the checkout:

    >>> dl19 = compare_runs({"monoT5": "monot5.txt"}, "qrels.txt", baseline="bm25.txt", baseline_name="BM25",
    ...                     measures="nDCG@10 AP", n_resamples=1000)
    >>> suite = compare_suite({"dl19": dl19, "again": dl19})
    >>> list(suite.table.columns)
    ['dl19', 'again', 'mean', 'collections', 'mean_rank', 'ranked_on', 'wins', 'ties', 'losses']
    >>> suite.cells.columns[:4].tolist()
    ['collection', 'system', 'role', 'measure']
    >>> int(suite.significance.at[("nDCG@10", "monoT5"), "dl19"])
    1
    >>> figure = suite.plot_critical_difference()
    """

    collections: tuple[str, ...]
    experiments: Mapping[str, Experiment]
    names: tuple[str, ...]
    baseline_name: str
    measures: tuple[Measure, ...]
    headline: Measure
    alpha: float = ALPHA

    @property
    def systems(self) -> tuple[str, ...]:
        """Every system, the baseline last."""
        return (*self.names, self.baseline_name)

    @cached_property
    def cells(self) -> pd.DataFrame:
        """One row per (collection, system, measure), what `table.csv` holds: collection, system, role,
        measure (its label, 'nDCG@10'), n, mean, delta, ci_low, ci_high, ci_level, p_holm, significant
        (analysis.tables.blocks.block_rows: the collection's own numbers and Holm family; the
        baseline's rows without delta; a system missing from a collection has a row of missing
        values, never 0)."""
        blocks = {name: experiment_block(self.experiments[name]) for name in self.collections}
        return block_rows(blocks, "collection", self.systems, self.measures, self.baseline_name)

    def to_latex(self, **options: object) -> str:
        """The systems x collections table of one measure (default: the first) as LaTeX: analysis.paper.suite.suite_latex."""
        from ndcg_report.analysis.paper.suite import suite_latex

        return suite_latex(self.cells, **{"alpha": self.alpha, **options})  # type: ignore[arg-type]

    def to_markdown(self, **options: object) -> str:
        """The same table as GitHub Markdown and a legend line: analysis.paper.suite.suite_markdown."""
        from ndcg_report.analysis.paper.suite import suite_markdown

        return suite_markdown(self.cells, **{"alpha": self.alpha, **options})  # type: ignore[arg-type]

    @cached_property
    def table(self) -> pd.DataFrame:
        """Index (measure label, system), columns: each collection's mean (NaN where the system or the
        measure is missing), then over collections `mean` (of the collections present), `collections`
        (how many), `mean_rank` (1 = best, over the `ranked_on` collections that have every system),
        and `wins`, `ties`, `losses` of the system's mean against the baseline's (NA for the baseline)."""
        parts = []
        for measure in self.measures:
            means = self.means(measure)
            test = self.across(measure)
            over = pd.DataFrame({"mean": means.mean(axis=1), "collections": means.notna().sum(axis=1),
                                 "mean_rank": test.mean_ranks.reindex(means.index), "ranked_on": len(test.ranked)},
                                index=means.index)
            counts = test.wilcoxon[["wins", "ties", "losses"]].reindex(means.index).astype("Int64")
            parts.append(pd.concat([means, over, counts], axis=1))
        table = pd.concat(parts, keys=[m.label for m in self.measures], names=["measure", "system"])
        table.columns.name = None
        return table

    @cached_property
    def significance(self) -> pd.DataFrame:
        """Index (measure label, system), columns the collections: +1 significantly above the baseline in
        that collection's own Holm family, -1 below, 0 neither (each collection's report verdict), NA
        for the baseline and where the system or the measure is missing."""
        return pd.concat([wide_marks(self.cells, "collection", m.label) for m in self.measures],
                         keys=[m.label for m in self.measures], names=["measure", "system"])

    def measure(self, value: Measure | str | int | None = None) -> Measure:
        """The measure `value` names (a label, a Measure, an nDCG cut-off); None: the headline."""
        return self.headline if value is None else measure_of(value, self.measures)

    def means(self, measure: Measure | str | int | None = None) -> pd.DataFrame:
        """Systems x collections of one measure's means (default: the headline); NaN where missing."""
        return wide_means(self.cells, "collection", self.measure(measure).label)

    def across(self, measure: Measure | str | int | None = None) -> AcrossCollections:
        """The tests over collections of one measure (default: the headline): Wilcoxon of each system
        against the baseline, Friedman over all systems with the Nemenyi post-hoc; 'no power' below
        stats.across_collections.MIN_COLLECTIONS collections."""
        chosen = self.measure(measure)
        if chosen not in self._across:
            self._across[chosen] = across_collections(self.means(chosen).T, self.baseline_name, self.alpha, chosen.label)
        return self._across[chosen]

    @property
    def tests(self) -> AcrossCollections:
        """across() of the headline measure."""
        return self.across()

    @cached_property
    def _across(self) -> dict[Measure, AcrossCollections]:
        return {}

    def plot_deltas(self, measure: Measure | str | int | None = None) -> "Figure":
        """Each system's delta against the baseline per collection (collections on the x axis) with the
        interval of its collection's verdict; filled where significant."""
        from ndcg_report.analysis.tables.figures import block_deltas

        return block_deltas(self.cells, "collection", self.measure(measure).label)

    def plot_critical_difference(self, measure: Measure | str | int | None = None) -> "Figure":
        """Demšar's critical-difference diagram of the mean ranks (Nemenyi) over the collections."""
        from ndcg_report.analysis.tables.figures import critical_difference_diagram

        return critical_difference_diagram(self.across(measure))

    def _repr_html_(self) -> str:
        """The headline's table, marks and the tests over collections, every name escaped."""
        from ndcg_report.analysis.tables.display import suite_html

        label = self.headline.label
        return suite_html(self.means(), self.significance.loc[label], self.table.loc[label], self.tests,
                          [e.alpha for e in self.experiments.values()])

    def __repr__(self) -> str:
        return (f"Suite({len(self.names)} system(s) against {self.baseline_name!r} on {len(self.collections)} "
                f"collection(s): {', '.join(self.collections)}; headline {self.headline.label})")


def compare_suite(
    collections: Mapping[str, Experiment | Mapping[str, Any]],
    *,
    baseline_name: str | None = None,
    systems: Sequence[str] | None = None,
    headline: Measure | str | None = None,
    alpha: float = ALPHA,
    **options: Any,
) -> Suite:
    """Compare systems with a baseline on several collections, each with its own qrels, baseline and runs.

    Parameters
    ----------
    collections
        Collection name -> an Experiment (what `compare_runs` returned), or a mapping of compare_runs'
        keyword arguments (`runs`, `qrels` and `baseline` at least; `topics`, `preset`, `measures`, ...).
        The names are text, and none may be one of the table's other columns (OVER_COLLECTIONS).
    baseline_name
        The baseline's name in the suite (passed to compare_runs where a collection's arguments give
        none). Without it every collection's baseline must have the same name.
    systems
        The systems to show, in this order (default: every system of any collection, in the order met);
        a name in no collection is a ParameterError.
    headline
        The measure of the tests over collections and the figures (default: the first collection's).
    alpha
        The significance level of the tests over collections (default 0.05).
    **options
        compare_runs keyword arguments for every collection given as arguments (e.g. preset="trec-dl",
        seed=, n_resamples=); a collection's own arguments win.

    Returns
    -------
    Suite
        The collections' experiments, the systems x collections tables, the tests over collections
        and the figures; in Jupyter it shows its headline table.

    Raises
    ------
    ParameterError
        No collection, a bad name, an unknown or missing argument, collections whose baselines are
        named differently without baseline_name, a system named like the baseline, a system in no
        collection; compare_runs' own, prefixed with the collection's name.
    InputError
        A bad input file.

    Examples
    --------
    In `tests/data/small/` of the checkout (one collection twice, to keep it short):

    >>> suite = compare_suite({"first": {"runs": {"monoT5": "monot5.txt"}, "qrels": "qrels.txt", "baseline": "bm25.txt"},
    ...                        "second": {"runs": {"monoT5": "monot5.txt"}, "qrels": "qrels.txt", "baseline": "bm25.txt"}},
    ...                       baseline_name="BM25", preset="trec-dl", n_resamples=1000)
    >>> suite.systems
    ('monoT5', 'BM25')
    >>> round(float(suite.table.at[("nDCG@10", "monoT5"), "first"]), 4)
    0.6003
    >>> suite.tests.wilcoxon.at["monoT5", "verdict"]
    'no power'
    """
    if not isinstance(collections, Mapping) or not collections:
        raise ParameterError("give at least one collection, as a mapping of names to experiments or compare_runs arguments")
    experiments: dict[str, Experiment] = {}
    for name, given in collections.items():
        _check_collection_name(name)
        experiments[name] = _experiment(name, given, baseline_name, options)
    base = _baseline_name(experiments, baseline_name)
    found = list(dict.fromkeys(system for e in experiments.values() for system in e.names))
    for collection, experiment in experiments.items():
        if base in experiment.names:
            raise ParameterError(f"collection {collection!r}: a system under test is named {base!r}, the suite's "
                                 "baseline; rename it or give another baseline_name")
    names = _chosen_systems(systems, found)
    measures = tuple(dict.fromkeys(m for e in experiments.values() for m in e.measures))
    chosen = next(iter(experiments.values())).headline if headline is None else measure_of(headline, measures)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) or not 0 < alpha < 1:
        raise ParameterError(f"alpha must be a number between 0 and 1; got {alpha!r}")
    return Suite(collections=tuple(experiments), experiments=experiments, names=tuple(names), baseline_name=base,
                 measures=measures, headline=chosen, alpha=float(alpha))


def _check_collection_name(name: object) -> None:
    if not isinstance(name, str) or not name.strip():
        raise ParameterError(f"a collection's name must be non-empty text; got {name!r}")
    if name in OVER_COLLECTIONS:
        raise ParameterError(f"a collection is named {name!r}, a column of the suite's table; rename it")


def _experiment(name: str, given: Experiment | Mapping[str, Any], baseline_name: str | None,
                options: Mapping[str, Any]) -> Experiment:
    """The collection's Experiment: as given, or compare_runs(**options, **given)."""
    if isinstance(given, Experiment):
        return given
    if not isinstance(given, Mapping):
        raise ParameterError(f"collection {name!r}: give an Experiment or a mapping of compare_runs arguments; "
                             f"got {type(given).__name__}")
    accepted = inspect.signature(compare_runs).parameters
    arguments = {**options, **given}
    if baseline_name is not None:
        arguments.setdefault("baseline_name", baseline_name)
    unknown = [key for key in arguments if key not in accepted]
    if unknown:
        raise ParameterError(f"collection {name!r}: unknown argument {unknown[0]!r}; the arguments are compare_runs' "
                             f"({', '.join(accepted)})")
    missing = [key for key in REQUIRED if arguments.get(key) is None]
    if missing:
        raise ParameterError(f"collection {name!r}: no {missing[0]!r} given; give its runs, qrels and baseline")
    try:
        return compare_runs(**arguments)
    except ParameterError as exc:
        raise ParameterError(f"collection {name!r}: {exc}") from None


def _baseline_name(experiments: Mapping[str, Experiment], baseline_name: str | None) -> str:
    if baseline_name is not None:
        if not isinstance(baseline_name, str) or not baseline_name.strip():
            raise ParameterError(f"baseline_name must be non-empty text; got {baseline_name!r}")
        return baseline_name
    named = {collection: e.baseline_name for collection, e in experiments.items()}
    if len(set(named.values())) > 1:
        shown = ", ".join(f"{base!r} ({collection})" for collection, base in named.items())
        raise ParameterError(f"the collections' baselines are named {shown}; give baseline_name= to show them as one")
    return next(iter(named.values()))


def _chosen_systems(systems: Sequence[str] | None, found: list[str]) -> list[str]:
    if systems is None:
        return found
    if isinstance(systems, str):
        systems = [systems]
    chosen = list(systems)
    for name in chosen:
        if name not in found:
            raise ParameterError(f"system {name!r} is in no collection; the systems are {', '.join(map(repr, found))}")
    if len(set(chosen)) != len(chosen) or not chosen:
        raise ParameterError("give each system once, and at least one")
    return chosen
