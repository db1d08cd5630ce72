"""The one table machinery: systems x measures over blocks of queries, each block its own Holm family.

A Block is what one set of queries says of the systems: a collection's Experiment, or a query group
of one (analysis.tables.groups). `block_rows` lays any number of blocks out as one tidy frame, one
row per (block, system, measure) with ROW_COLUMNS, the suite's `table.csv` and a report's
`per_group.csv`; `wide_means` and `wide_marks` turn it into the systems x blocks tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ndcg_report.analysis.experiment import Experiment
from ndcg_report.core.measures.names import Measure

ROW_COLUMNS = ("system", "role", "measure", "n", "mean", "delta", "ci_low", "ci_high", "ci_level", "p_holm",
               "significant")


@dataclass(frozen=True, eq=False)
class Block:
    """Every system's mean over one set of queries and its comparison with the baseline there.

    Attributes
    ----------
    names
        The systems under test, in order.
    baseline_name
        The block's own name of its baseline.
    measures
        The measures, in order.
    means
        Systems (the baseline last) x measure labels: each mean over the queries every system is
        averaged on (an Experiment's leaderboard).
    counts
        Systems x measure labels: how many queries each mean is over.
    comparisons
        Index (system, measure, k), systems in order and each with every measure in order: the
        statistics of stats.paired.COLUMNS, Holm over the block's systems per measure.
    alpha
        The block's significance level.
    """

    names: tuple[str, ...]
    baseline_name: str
    measures: tuple[Measure, ...]
    means: pd.DataFrame
    counts: pd.DataFrame
    comparisons: pd.DataFrame
    alpha: float

    def verdicts(self) -> pd.DataFrame:
        """Systems under test x measure labels: +1 significantly above the baseline, -1 below, 0
        neither (the Holm-adjusted randomization p-value against alpha, as Experiment.significance)."""
        table = self.comparisons
        signs = np.sign(table["delta"].to_numpy()) * (table["holm_randomization_pvalue"].to_numpy() < self.alpha)
        return pd.DataFrame(signs.astype(int).reshape(len(self.names), len(self.measures)), index=list(self.names),
                            columns=pd.Index([m.label for m in self.measures], name="measure"))


def experiment_block(experiment: Experiment) -> Block:
    """An Experiment as a block: its leaderboard, comparisons and alpha, exactly as its report shows them."""
    counts = pd.DataFrame({measure.label: len(experiment.scores(measure)) for measure in experiment.measures},
                          index=list(experiment.systems))
    return Block(names=experiment.names, baseline_name=experiment.baseline_name, measures=experiment.measures,
                 means=experiment.leaderboard, counts=counts, comparisons=experiment.comparisons,
                 alpha=experiment.alpha)


def block_rows(blocks: Mapping[str, Block], key: str, systems: Sequence[str], measures: Sequence[Measure],
               baseline_name: str) -> pd.DataFrame:
    """One row per (block, system, measure), in the order given (`systems` ends with the baseline,
    which in every block is that block's own baseline, shown as `baseline_name`): `key` (the block's
    name), then ROW_COLUMNS. mean: the block's mean (as its leaderboard) over n queries; for a system
    under test, delta and its family-adjusted bootstrap interval (ci_low, ci_high at ci_level, the
    interval of a report's verdict) over the n queries paired with the baseline, p_holm the
    Holm-adjusted randomization p-value of the block's family (its systems, one measure) and
    significant p_holm < the block's alpha (False where p_holm is NaN). The baseline's rows have no
    delta, interval, p or verdict; a system or measure a block lacks has a row of missing values
    (n and significant NA), never 0."""
    rows = []
    for block_name, block in blocks.items():
        tested = _tested(block)
        labels = {m.label for m in block.measures}
        for system in systems:
            role = "baseline" if system == baseline_name else "run"
            own = block.baseline_name if role == "baseline" else system
            in_block = role == "baseline" or system in block.names  # not the block's baseline under that name
            for measure in measures:
                row = {key: block_name, "system": system, "role": role, "measure": measure.label}
                present = in_block and measure.label in labels
                if present:
                    row["n"] = int(block.counts.at[own, measure.label])
                    row["mean"] = float(block.means.at[own, measure.label])
                if present and role == "run":
                    found = tested[(own, measure.label)]
                    row.update(n=int(found["n"]), delta=found["delta"], ci_low=found["family_ci_low"],
                               ci_high=found["family_ci_high"], ci_level=found["family_confidence"],
                               p_holm=found["holm_randomization_pvalue"],
                               significant=bool(found["holm_randomization_pvalue"] < block.alpha))
                rows.append(row)
    frame = pd.DataFrame(rows, columns=[key, *ROW_COLUMNS])
    frame["n"] = frame["n"].astype("Int64")
    for column in ("mean", "delta", "ci_low", "ci_high", "ci_level", "p_holm"):
        frame[column] = frame[column].astype(float)
    frame["significant"] = frame["significant"].astype("boolean")
    return frame


def _tested(block: Block) -> dict[tuple[str, str], dict]:
    """The comparison of each (system, measure label) of a block (its rows are systems in order, each
    with every measure in order)."""
    records = block.comparisons.to_dict("records")
    labels = [m.label for m in block.measures]
    return {(name, label): records[i * len(labels) + j]
            for i, name in enumerate(block.names) for j, label in enumerate(labels)}


def mark_interval_disagreements(rows: pd.DataFrame, key: str, measure: str) -> list[str]:
    """'SYSTEM in BLOCK' wherever one measure's mark and interval seem to disagree: significant (a filled
    marker) with an interval that includes 0, or not significant with one that excludes 0."""
    chosen = rows[(rows["measure"] == measure) & (rows["role"] == "run") & rows["delta"].notna()
                  & rows["ci_low"].notna() & rows["ci_high"].notna()]
    excludes_zero = (chosen["ci_low"] > 0) | (chosen["ci_high"] < 0)
    odd = excludes_zero != chosen["significant"].fillna(False).astype(bool)
    return [f"{system} in {block}" for system, block in zip(chosen.loc[odd, "system"], chosen.loc[odd, key])]


def wide_means(rows: pd.DataFrame, key: str, measure: str) -> pd.DataFrame:
    """Systems (in the rows' order) x blocks (in order) of one measure's means; NaN where missing."""
    return _wide(rows, key, measure, "mean").astype(float)


def wide_marks(rows: pd.DataFrame, key: str, measure: str) -> pd.DataFrame:
    """Systems x blocks of one measure: +1 significantly above the baseline, -1 below, 0 neither,
    NA for the baseline and where the system is missing (nullable Int64)."""
    signs = np.sign(rows["delta"]).where(rows["significant"].fillna(False).astype(bool), 0)
    signs = signs.where(rows["significant"].notna())
    marked = rows.assign(mark=signs)
    return _wide(marked, key, measure, "mark").astype("Int64")


def _wide(rows: pd.DataFrame, key: str, measure: str, column: str) -> pd.DataFrame:
    chosen = rows[rows["measure"] == measure]
    table = chosen.pivot(index="system", columns=key, values=column)
    table = table.reindex(index=pd.unique(chosen["system"]), columns=pd.unique(chosen[key]))
    table.index.name, table.columns.name = "system", key
    return table
