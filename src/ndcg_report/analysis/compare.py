"""compare_runs: every run evaluated, one at a time, against the qrels and compared with the baseline.

Each run is read, named, evaluated, ranked (top k) and its ties bounded before the next is read, so
runs given as paths or by a generator are never in memory together; the Experiment keeps the results.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from ndcg_report.analysis.experiment import Experiment, RunInfo
from ndcg_report.stats.paired import ALPHA
from ndcg_report.analysis.judgments.sets import named_judgment_sets
from ndcg_report.analysis.options.checks import check
from ndcg_report.analysis.options.table import DEFAULTS
from ndcg_report.analysis.sources import InputStore, Sources, check_pair, given_pairs, path_or_none
from ndcg_report.analysis.tables.groups import checked_groups
from ndcg_report.analysis.systems import check_distinct_paths, check_name, derived_name, unique_names
from ndcg_report.core.measures.names import Measure
from ndcg_report.core.evaluation import Evaluation
from ndcg_report.core.conventions import without_identical_ids
from ndcg_report.core.evaluation_pass import evaluate_pass
from ndcg_report.core.presets import averaging, choose_headline, measure_set
from ndcg_report.core.relevance_level import warn_relevance_level
from ndcg_report.core.ties import TieRange, tie_range
from ndcg_report.core.toplists import Rankings, rankings
from ndcg_report.errors import ParameterError
from ndcg_report.inputs.tables import QrelsLike, RunLike, load_qrels, load_run
from ndcg_report.inputs.reading import Qrels, Run
from ndcg_report.stats.paired import CONFIDENCE, N_RESAMPLES, compare_systems
from ndcg_report.stats.resampling import LARGE_N

# Characters of a query's text a report shows (a TREC description fits); a longer one is cut, so the
# text in its tables and drill-downs stays within queries shown x this, whatever the topics hold.
MAX_QUERY_TEXT = 1_000


def compare_runs(
    runs: Mapping[str, RunLike] | Sequence[RunLike | tuple[str, RunLike]] | Iterator | RunLike,
    qrels: QrelsLike | Mapping[str, QrelsLike],
    baseline: RunLike | Sequence[RunLike | tuple[str, RunLike]] | Mapping[str, RunLike],
    *,
    fill_unjudged_from: str = "",
    groups: "Mapping | pd.Series | str | Path | None" = None,
    cutoffs: str | Sequence | None = None,
    measures: str | Sequence | None = None,
    rel_level: float | str | None = None,
    preset: str = "",
    headline: Measure | str | None = None,
    judged_only: bool = False,
    drilldown_depth: int = DEFAULTS["drilldown_depth"],
    gain: str = DEFAULTS["gain"],
    missing: str | None = None,
    no_relevant: str | None = None,
    identical_ids: str | None = None,
    max_retrieved: int | None = DEFAULTS["max_retrieved"],
    seed: int = DEFAULTS["seed"],
    baseline_name: str = "",
    topics: pd.Series | None = None,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    alpha: float = ALPHA,
    large_n: int = LARGE_N,
    rank_depth: int | None = None,
) -> Experiment:
    """Evaluate every run and the baseline on qrels and compare each run with the baseline.

    Everything a report shows (the report's notebook calls exactly this).

    Parameters
    ----------
    runs
        The systems under test: a mapping of display names to runs, a list of runs or of
        `(name, run)` pairs, an iterator of either (a generator that reads each run when asked),
        or a single run. A run is a path, what `read_run` returned, a pyarrow Table or pandas
        DataFrame with `qid`, `docid` (or `docno`) and `score`, or any other form `evaluate` takes.
        A run without a name, or named `""`, is named by its file name without `.gz`, `.txt`,
        `.run`, `.trec`, `.tsv`, `.res`, `.json`, `.jsonl`, `.ndjson`, `.parquet`, `.pq` or `.parq`
        (a table by its run tag); two systems with one name are a ParameterError. The
        runs are taken one at a time: each is read, evaluated, ranked and its ties bounded before
        the next is read, and none is kept parsed, so runs given as paths or by a generator are never
        in memory together. For `Experiment.report` the Experiment keeps each path, and each object by a
        weak reference (a dict or list not at all): never a run its caller let go.
    qrels
        The judgements, in any form `evaluate` takes; or several judgment sets by name
        (`{"human": ..., "umbrela": ...}`, each in any such form): the first is the reference, which
        every table of the Experiment uses, and `Experiment.judgments` compares every other set with it
        (label agreement, system orders, verdicts under each set: analysis.judgments).
    groups
        Query groups: the group of each qid (a Series or mapping), a mapping group -> list of qids
        (DL-HARD's folds.json), or a groups file; kept as `Experiment.groups` for
        `group_table(experiment)`. A ParameterError (InputError for a file) if no group names a
        query of the qrels or a query is in two groups.
    fill_unjudged_from
        With several sets: one more set, the reference's labels where it has them and this set's for
        the pairs it lacks (named `REFERENCE+NAME`), compared as the others are.
    baseline
        The baseline run, named `baseline_name`, else the same way, else `baseline`. Or several
        baselines (`[bm25, ("v1", "v1.txt")]` or `{"BM25": ..., "v1": ...}`): the first is the headline's
        (the verdicts, figures, groups and judges compare with it, and `baseline_name` names it if it
        has no name of its own); each other one is shown as a system (compared with the first, after
        the runs) and every other system is also compared with it, Holm-adjusted over the systems
        compared with it (`Experiment.comparisons_with`): each baseline's numbers are those of a
        report with that baseline alone and the others as runs.
    cutoffs
        As for `evaluate`: without `measures` or `preset`, nDCG at these cut-offs (default
        1,3,5,10,20,100,1000).
    measures
        As for `evaluate`; with `preset`, added to its measures.
    rel_level
        As for `evaluate`; with `preset`, it overrides the preset's level.
    preset
        A published measure set with its relevance level and headline: `trec-dl`, `msmarco`,
        `beir` or `rag`.
    headline
        The measure of the verdicts, the pairwise test and the figures (default: the preset's,
        else nDCG@10 if computed, else the first measure that is not a count).
    judged_only
        Add beside each nDCG measure its judged-only twin (`nDCG_judged`).
    drilldown_depth
        The top k of the rankings, the unjudged pool and the rank overlap (default 10); `rank_depth`
        is its older name, still taken.
    gain
        As for `evaluate`.
    missing
        As for `evaluate`: None is the preset's, else trec_eval's (`"zero"`).
    no_relevant
        As for `evaluate`: None is the preset's, else trec_eval's (`"zero"`).
    identical_ids
        As for `evaluate`: None is the preset's (`"drop"` for `beir`), else `"keep"`.
    max_retrieved
        trec_eval's -M, as `evaluate`'s: only each query's first N lines (in trec_eval's order) count in
        every measure, test and tie range; 0 (the default) or None: every line. The rankings shown keep every line.
    seed
        Seed of the bootstrap, randomization and Tukey HSD resampling (default 42).
    baseline_name
        The baseline's display name.
    topics
        Query text by qid, as `read_topics` returns it; labels the per-query tables.
    n_resamples
        Resamples of each Monte Carlo statistic (default 10,000).
    confidence
        The confidence of the intervals (default 0.95).
    alpha
        The significance level of the verdicts and the letters (default 0.05).
    large_n
        Over more than this many paired queries (5,000), the resampling statistics use their
        large-sample limits where those are accurate (stats.resampling, stats.tukey_hsd).

    Returns
    -------
    Experiment
        The evaluations, the comparisons with the baseline and the pairwise test.

    Raises
    ------
    InputError
        A bad input file.
    ParameterError
        A bad value: an unknown measure or preset, a headline not computed, two systems with one
        name, the same file given twice, a run named like the baseline.

    Warns
    -----
    RelevanceLevelWarning
        As `evaluate` warns, once per call: the binary measures find nothing relevant in some
        judged queries that nDCG averages (labels above 0, none at `rel_level`).

    Examples
    --------
    In `tests/data/small/` of the checkout:

    >>> experiment = compare_runs({"monoT5": "monot5.txt"}, "qrels.txt", baseline="bm25.txt",
    ...                           baseline_name="BM25", preset="trec-dl")
    >>> experiment.systems
    ('monoT5', 'BM25')
    >>> str(experiment.headline.label)
    'nDCG@10'
    >>> round(float(experiment.leaderboard.loc["monoT5", "nDCG@10"]), 4)
    0.6003
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"seed must be a whole number >= 0; got {seed!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ParameterError(f"n_resamples must be a whole number >= 1; got {n_resamples!r}")
    for label, value in (("confidence", confidence), ("alpha", alpha)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not 0 < value < 1:
            raise ParameterError(f"{label} must be a number between 0 and 1; got {value!r}")
    if rank_depth is not None:
        if drilldown_depth != DEFAULTS["drilldown_depth"]:
            raise ParameterError("rank_depth is the older name of drilldown_depth, also given; give it once")
        drilldown_depth = rank_depth
    given_topics, topics = topics, _topics(topics)
    pairs = _given_runs(runs)
    asked = measure_set(preset, measures, cutoffs, rel_level, judged_only)
    chosen_headline = choose_headline(headline, preset, asked.measures)
    if isinstance(large_n, bool) or not isinstance(large_n, (int, np.integer)) or large_n < 1:
        raise ParameterError(f"large_n must be a whole number >= 1; got {large_n!r}")
    drilldown_depth = check("drilldown_depth", drilldown_depth)
    max_retrieved = check("max_retrieved", 0 if max_retrieved is None else max_retrieved)
    named_sets = named_judgment_sets(qrels, fill_unjudged_from)
    qrels_read = next(iter(named_sets.values())) if named_sets else load_qrels(qrels)
    membership = None if groups is None else checked_groups(groups, qrels_read)
    others = dict(list(named_sets.items())[1:])
    (first_name, first), more = given_baselines(baseline, baseline_name)
    baseline_run = load_run(first)
    base_name = first_name or derived_name(baseline_run.tag, baseline_run.path, 0)
    policies = averaging(preset, missing, no_relevant, identical_ids)
    derive = _Derive(qrels_read, dict(gain=gain, missing=policies.missing, no_relevant=policies.no_relevant,
                                      identical_ids=policies.identical_ids, measures=asked.measures,
                                      max_retrieved=max_retrieved or None,
                                      rel_level=asked.rel_level), int(drilldown_depth), others)
    store = InputStore()  # each input given as an object, written once for report(): never held in memory
    kept_baseline = store.keep(first, _run_columns(baseline_run))
    names = _Names(base_name, baseline_run.path)
    systems, kept_runs = [], []
    while (pair := next(pairs, None)) is not None:  # one run at a time: read, named, evaluated, then let go
        name, run = names.add(*pair)
        kept_runs.append(store.keep(pair[1], _run_columns(run)))
        del pair  # not held while the next run is read
        systems.append(derive(name, run))
        del run
    if not systems:
        raise ParameterError("give at least one run to compare with the baseline")
    kept_more = []
    for position, (given_name, other) in enumerate(more, start=2):  # the other baselines, after the runs
        name, run = names.add(given_name, other, f"baseline {position}")
        kept_more.append((name, store.keep(other, _run_columns(run))))
        systems.append(derive(name, run))
        del run
    del more
    systems.append(derive(base_name, baseline_run))
    del baseline_run
    evaluations = {system.name: system.evaluation for system in systems}
    warn_relevance_level(evaluations[base_name], "compare_runs")  # the same queries in every system: once
    comparisons = compare_systems({name: evaluations[name] for name in names.names}, evaluations[base_name],
                                  base_name, seed, n_resamples, confidence, large_n)
    with_others = {other: compare_systems({name: evaluations[name] for name in (*names.names, base_name) if name != other},
                                          evaluations[other], other, seed, n_resamples, confidence, large_n)
                   for other, _ in kept_more}  # each in its own Holm family: as a report with that baseline alone
    sources = Sources(
        runs=tuple(kept_runs), baseline=kept_baseline, more_baselines=tuple(kept_more), topics=path_or_none(given_topics),
        groups=path_or_none(groups), store=store,
        qrels={name: store.keep(value, named_sets[name].table.select(["qid", "docid", "rel"]))
               for name, value in qrels.items()} if named_sets else path_or_none(qrels),  # type: ignore[union-attr]
        options=dict(fill_unjudged_from=fill_unjudged_from, cutoffs=cutoffs, measures=measures, rel_level=rel_level,
                     preset=preset, headline=headline, judged_only=judged_only, drilldown_depth=drilldown_depth,
                     gain=gain, missing=missing, no_relevant=no_relevant, identical_ids=identical_ids, max_retrieved=max_retrieved, seed=seed,
                     baseline_name=baseline_name, n_resamples=n_resamples, confidence=confidence, alpha=alpha,
                     large_n=large_n))
    judgments = None
    if others:
        from ndcg_report.analysis.judgments.comparison import compare_judgments

        under = {next(iter(named_sets)): evaluations,
                 **{name: {system.name: system.under[name] for system in systems} for name in others}}
        judgments = compare_judgments(under, named_sets, baseline=base_name, alpha=alpha, seed=seed,
                                      n_resamples=n_resamples, confidence=confidence, large_n=large_n,
                                      filled=named_sets.filled, reference_comparisons=comparisons)
    return Experiment(
        names=tuple(names.names), baseline_name=base_name, evaluations=evaluations,
        runs={system.name: system.info for system in systems}, qrels=qrels_read, comparisons=comparisons,
        tie_ranges={system.name: system.tie_range for system in systems if system.tie_range is not None},
        rankings={system.name: system.rankings for system in systems}, topics=topics, seed=int(seed),
        n_resamples=int(n_resamples), confidence=confidence, alpha=alpha, headline=chosen_headline, preset=preset,
        drilldown_depth=int(drilldown_depth), large_n=int(large_n), averaging=policies, judgments=judgments,
        groups=membership, sources=sources, more_baselines=with_others,
    )


@dataclass(frozen=True, eq=False)
class _System:
    """Everything an Experiment keeps of one run."""

    name: str
    evaluation: Evaluation
    info: RunInfo
    rankings: Rankings
    tie_range: TieRange | None  # None: no tied scores
    under: Mapping[str, Evaluation]  # its evaluation under each judgment set other than the reference


@dataclass(frozen=True, eq=False)
class _Derive:
    """Evaluates one run against the qrels and derives from it all an Experiment shows of it (its
    top k, its tie range), so that the run itself can be let go."""

    qrels: Qrels
    options: dict
    drilldown_depth: int
    others: Mapping[str, Qrels]  # the other judgment sets: each run is evaluated under each too

    def __call__(self, name: str, run: Run) -> _System:
        """The run's _System; ParameterError if it has no query in common with the qrels. With
        identical_ids "drop", the lines whose docid is their qid are dropped before anything is derived
        (its rankings and tie range too), and the evaluation says how many."""
        dropped = 0
        if self.options["identical_ids"] == "drop":
            run, dropped = without_identical_ids(run)
        evaluation = evaluate_pass(run, self.qrels, **self.options)
        if dropped:
            evaluation = replace(evaluation, identical_dropped=dropped)
        if evaluation.counts.in_both == 0:
            raise ParameterError(f"{name!r} has no query in common with the qrels; check that they are for the same topics")
        return _System(
            name=name, evaluation=evaluation, info=RunInfo(path=run.path, tag=run.tag),
            rankings=rankings(run, self.qrels, self.drilldown_depth, evaluation.rel_level),
            tie_range=tie_range(run, self.qrels, evaluation) if evaluation.tied_lines else None,
            under={name: evaluate_pass(run, qrels, **self.options) for name, qrels in self.others.items()},
        )


class _Names:
    """The names of the systems under test, given or made from their files, checked as each run is
    read: a file given twice or two systems with one name is a ParameterError (report.systems)."""

    def __init__(self, baseline_name: str, baseline_path: str) -> None:
        self.baseline_name, self.baseline_path = baseline_name, baseline_path
        self.given: list[str] = []
        self.derived: list[str] = []
        self.paths: list[tuple[Path, str]] = []
        self.names: list[str] = []
        self.roles: list[str] = []

    def add(self, given: str, run_like: RunLike, role: str = "") -> tuple[str, Run]:
        """(name, the run read) of the next run under test (role: what a message calls it, 'run N' by default;
        'baseline 2' for another baseline)."""
        run = load_run(run_like)
        position = len(self.given) + 1
        role = role or f"run {position}"
        if run.path:
            self.paths.append((Path(run.path), role))
        known = self.paths + ([(Path(self.baseline_path), "the baseline")] if self.baseline_path else [])
        check_distinct_paths([path for path, _ in known], [role for _, role in known])
        self.given.append(given)
        self.derived.append(derived_name(run.tag, run.path, position))
        self.roles.append(role)
        # a clash is an error, never a silent rename
        self.names = unique_names(self.given, self.derived, reserved=[self.baseline_name], roles=self.roles)
        return self.names[-1], run


def given_baselines(baseline: object, baseline_name: str = "") -> tuple[tuple[str, object], Iterator[tuple[str, object]]]:
    """((name or '', run) of the first baseline, (name or '', run) of each other, as they are asked for) of
    compare_runs' `baseline`: one run, a list of runs or (name, run) pairs, a mapping of names to runs, or
    an iterator of either. baseline_name names the first where it has no name of its own; ParameterError if
    it has another, or if no baseline is given."""
    pairs = given_pairs(baseline)
    if pairs is None:  # an iterator of baselines: the first taken now, the others each read when its turn comes
        given = _checked_pairs(baseline)  # type: ignore[arg-type]
        found = next(given, None)
        if found is None:
            raise ParameterError("give a baseline run to compare the runs with")
        (name, first), more = found, given
    elif not pairs:
        raise ParameterError("give a baseline run to compare the runs with")
    else:
        (name, first), more = pairs[0], iter([(check_name(str(n), "baseline") if n else "", run) for n, run in pairs[1:]])
        name = check_name(str(name), "baseline") if name else ""
    if baseline_name:
        own = check_name(baseline_name, "baseline_name")
        if name and name != own:
            raise ParameterError(f"the first baseline is named twice ({name!r} and baseline_name {own!r}); give one name")
        name = own
    return (name, first), more


def _run_columns(run: Run) -> "pa.Table":
    """What a report reads of a run given as an object: its qid, docid and score (build_report's Parquet)."""
    return run.table.select(["qid", "docid", "score"])


def _topics(topics: "pd.Series | str | Path | None") -> pd.Series | None:
    """Query text by qid, each cut to MAX_QUERY_TEXT characters (shown_text): a Series as read_topics
    returns, or a topics file to read."""
    if topics is None:
        return topics
    if isinstance(topics, pd.Series):
        return shown_text(topics)
    if isinstance(topics, (str, Path)):
        from ndcg_report.inputs.reading import read_topics

        return shown_text(read_topics(topics))
    raise ParameterError(f"topics must be a path or a pandas Series of query text by qid; got {type(topics).__name__}")


def shown_text(topics: pd.Series, limit: int = MAX_QUERY_TEXT) -> pd.Series:
    """The query texts as a report shows them: one longer than `limit` characters cut to limit - 1 and
    an ellipsis (the text of every query is then shown in tables and drill-downs within a bound)."""
    long = topics.map(lambda text: isinstance(text, str) and len(text) > limit).astype(bool)
    if not long.any():
        return topics
    cut = topics.copy()
    cut[long] = topics[long].map(lambda text: text[:limit - 1] + "\u2026")
    return cut


def _given_runs(runs: Mapping[str, RunLike] | Sequence | Iterator | RunLike) -> Iterator[tuple[str, RunLike]]:
    """(given name, '' where none; the run) pairs in the order given. From a mapping or list every pair
    is checked at once; from an iterator each as it is asked for, so that it need not hold more than
    the run being read."""
    pairs = given_pairs(runs)  # checked: each (name as text, run)
    if pairs is None:
        return _checked_pairs(runs)  # type: ignore[arg-type]
    if not pairs:
        raise ParameterError("give at least one run to compare with the baseline")
    return iter([(check_name(str(name), "runs") if name else "", run) for name, run in pairs])


def _checked_pairs(items: Iterator) -> Iterator[tuple[str, RunLike]]:
    """The pairs of an iterator of runs or (name, run) pairs, each checked as it is taken, none held
    once handed on."""
    while True:
        try:
            item = next(items)
        except StopIteration:
            return
        name, run = check_pair(item if isinstance(item, tuple) else ("", item))
        del item
        yield (check_name(str(name), "runs") if name else ""), run
        del run
