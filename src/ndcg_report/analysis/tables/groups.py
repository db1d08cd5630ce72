"""Query groups inside one report: each group a block with the Experiment's tests on its queries alone.

A group's numbers are the Experiment's, restricted to the group's queries: the same means, the same
paired randomization test and bootstrap interval (stats.paired.compare_arrays), drawn from streams
of their own (the Experiment's names plus "group" and the group's name), and Holm over the
experiment's systems for one measure within the group: the group's own family.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ndcg_report.analysis.experiment import Experiment
from ndcg_report.analysis.tables.blocks import Block, block_rows
from ndcg_report.core.measures.names import cutoff_dtype
from ndcg_report.errors import ParameterError
from ndcg_report.inputs.formats.groups import check_groups_known, read_groups
from ndcg_report.inputs.reading import Qrels
from ndcg_report.inputs.records import RecordProblem, identifier
from ndcg_report.stats.paired import COLUMNS, TESTS, compare_arrays, holm, paired_values, stream_label
from ndcg_report.stats.streams import stream

NO_GROUP = "(no group)"
GroupsLike = "Mapping | pd.Series | str | Path"


def group_table(experiment: Experiment, groups: GroupsLike | None = None, *, no_group: str = NO_GROUP) -> pd.DataFrame:
    """Each system against the baseline within each query group: one row per (group, system, measure).

    The same numbers as the Experiment's, over each group's queries alone; each group's tests are its
    own Holm family (see the module), so a group's verdict never depends on the other groups.

    Parameters
    ----------
    experiment
        What `compare_runs` returned.
    groups
        The group of each qid (a Series or a mapping qid -> group), a mapping group -> list of qids
        (DL-HARD's folds.json as json.load returns it), or a groups file (`read_groups`). Qids are
        matched as text (915593 is "915593"); a query in two groups is a ParameterError. None: the
        groups given to `compare_runs` (`experiment.groups`).
    no_group
        The name of the group of the experiment's queries in no group (counted and reported like the
        others); no group may be named so.

    Returns
    -------
    pandas.DataFrame
        `group`, then analysis.tables.blocks.ROW_COLUMNS: system, role (`run` or `baseline`), measure
        (its label, `nDCG@10`), n (queries), mean, delta, ci_low, ci_high (the family-adjusted bootstrap
        interval of the delta, as a report's verdict), ci_level, p_holm (randomization test, Holm over
        the systems within the group), significant (p_holm < alpha). Groups in the order first given,
        `no_group` last; systems as the experiment's, the baseline last, whose rows have no delta. In
        a group of one query the interval and p-values are undefined (NaN) and nothing is significant;
        a group naming none of the experiment's queries has n 0 and no numbers.

    Raises
    ------
    InputError
        A bad groups file, or one that names no query of the experiment.
    ParameterError
        Groups in memory that name no query of the experiment, a query in two groups, a group named
        like `no_group`.

    Examples
    --------
    In `tests/data/small/` of the checkout:

    >>> experiment = compare_runs({"monoT5": "monot5.txt"}, "qrels.txt", baseline="bm25.txt",
    ...                           baseline_name="BM25", measures="nDCG@10", n_resamples=1000)
    >>> table = group_table(experiment, {"first": ["1037798", "104861"], "second": [1063750]})
    >>> table[["group", "system", "n"]].values.tolist()
    [['first', 'monoT5', 2], ['first', 'BM25', 2], ['second', 'monoT5', 1], ['second', 'BM25', 1], ['(no group)', 'monoT5', 5], ['(no group)', 'BM25', 5]]
    """
    if groups is None:
        if experiment.groups is None:
            raise ParameterError("give the groups: group_table(experiment, groups), or compare_runs(..., groups=...)")
        groups = experiment.groups
    membership = group_membership(groups)
    return block_rows(group_blocks(experiment, membership, no_group, source=_source(groups)), "group",
                      experiment.systems, experiment.measures, experiment.baseline_name)


def group_membership(groups: GroupsLike) -> pd.Series:
    """The group of each qid (index `qid`, text; values the group names) from any form group_table takes."""
    if isinstance(groups, (str, Path)):
        return read_groups(groups)
    if isinstance(groups, pd.Series):
        pairs = list(zip(groups.index, groups.to_numpy()))
    elif isinstance(groups, Mapping):
        if groups and all(_is_list(value) for value in groups.values()):
            pairs = [(qid, group) for group, members in groups.items() for qid in members]
        else:
            pairs = list(groups.items())
    else:
        raise ParameterError(f"groups must be a mapping, a pandas Series or a groups file; got {type(groups).__name__}")
    qids, names, seen = [], [], {}
    for qid, group in pairs:
        try:
            qid = identifier(qid.item() if isinstance(qid, np.generic) else qid, "qid")
        except RecordProblem as exc:
            raise ParameterError(f"groups: {exc.problem}; {exc.fix}") from None
        if not isinstance(group, (str, int, np.integer)) or isinstance(group, bool) or not str(group).strip():
            raise ParameterError(f"groups: query {qid!r} has group {group!r}; name every group with text")
        if qid in seen:
            raise ParameterError(f"groups: query {qid!r} is in group {seen[qid]!r} and in {str(group)!r}; "
                                 "put each query in one group only")
        seen[qid] = str(group)
        qids.append(qid)
        names.append(str(group).strip())
    if not qids:
        raise ParameterError("groups: no query in any group; give the group of each query")
    return pd.Series(names, index=pd.Index(qids, name="qid", dtype=object), name="group", dtype=object)


def checked_groups(groups: GroupsLike, qrels: Qrels) -> pd.Series:
    """group_membership(groups), checked to name a query of the qrels (InputError naming a groups file,
    else ParameterError)."""
    membership = group_membership(groups)
    qids = set(map(str, qrels.table.column("qid").unique().to_pylist()))
    check_groups_known(membership, qids, groups if isinstance(groups, (str, Path)) else None)
    return membership


def group_blocks(experiment: Experiment, membership: pd.Series, no_group: str = NO_GROUP,
                 source: str | Path | None = None) -> dict[str, Block]:
    """A Block per group (in the order first given, `no_group` last if any query is in none), each with
    the experiment's means and tests over the group's queries. InputError (naming `source`) or
    ParameterError when no group names a query of the experiment."""
    qids = pd.Index(experiment.baseline.qids.astype(str))
    check_groups_known(membership, set(qids), source)
    names = list(pd.unique(membership.to_numpy()))
    if no_group in names:
        raise ParameterError(f"a group is named {no_group!r}, the name of the queries in no group; rename it")
    members = {name: set(membership.index[membership.to_numpy() == name]) for name in names}
    outside = set(qids) - set(membership.index)
    if outside:
        members[no_group] = outside
    pairs = {(name, measure): paired_values(experiment.evaluations[name], experiment.baseline, measure)
             for name in experiment.names for measure in experiment.measures}
    return {group: _group_block(experiment, group, queries, pairs) for group, queries in members.items()}


def _group_block(experiment: Experiment, group: str, queries: set[str], pairs: Mapping) -> Block:
    """The experiment restricted to one group's queries, with the group's own streams and Holm family."""
    means, counts = {}, {}
    for measure in experiment.measures:
        table = experiment.scores(measure)
        inside = table[table.index.isin(queries)]
        means[measure.label] = [measure.family.mean(inside[name].to_numpy()) for name in experiment.systems]
        counts[measure.label] = len(inside)
    family_size = len(experiment.names)
    family_confidence = 1 - (1 - experiment.confidence) / family_size
    rows = []
    for name in experiment.names:
        for measure in experiment.measures:
            qids, x, y = pairs[(name, measure)]
            keep = pd.Index(qids.astype(str)).isin(queries)
            labels = (name, experiment.baseline_name, stream_label(measure), "group", group)
            found = compare_arrays(x[keep], y[keep], flip_rng=stream(experiment.seed, "randomization", *labels),
                                   boot_rng=stream(experiment.seed, "bootstrap", *labels),
                                   n_resamples=experiment.n_resamples, confidence=experiment.confidence,
                                   large_n=experiment.large_n, family_confidence=family_confidence)
            if found["n"] < 2:  # one query: no test and no interval (compare_arrays still flips its sign)
                found.update({f"{test}_pvalue": np.nan for test in TESTS})
            rows.append({"system": name, "measure": measure.measure, "k": measure.k, **found,
                         "family_size": family_size, "family_confidence": family_confidence})
    table = pd.DataFrame(rows)
    table["k"] = pd.array(table["k"], dtype=cutoff_dtype(experiment.measures))
    for test in TESTS:
        table[f"holm_{test}_pvalue"] = table.groupby(["measure", "k"], sort=False, dropna=False)[
            f"{test}_pvalue"].transform(lambda p: holm(p.to_numpy(dtype=float)))
    comparisons = table.set_index(["system", "measure", "k"])[list(COLUMNS)]
    index = pd.Index(list(experiment.systems))
    return Block(names=experiment.names, baseline_name=experiment.baseline_name, measures=experiment.measures,
                 means=pd.DataFrame(means, index=index), counts=pd.DataFrame(counts, index=index),
                 comparisons=comparisons, alpha=experiment.alpha)


def _is_list(value: object) -> bool:
    return isinstance(value, (list, tuple, set, frozenset, np.ndarray, pd.Index, pd.Series)) or (
        isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping)))


def _source(groups: GroupsLike) -> str | None:
    return str(groups) if isinstance(groups, (str, Path)) else None
