"""The comparison tables: one system against one baseline on every measure, with every statistic.

With several baselines every system is compared with each (each baseline its own Holm family:
Experiment.comparisons_with), and so is the first baseline with every other one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ndcg_report.analysis.experiment import Experiment
from ndcg_report.analysis.html import DEEPER
from ndcg_report.analysis.text import number, p_pair, percent, signed
from ndcg_report.stats.resampling import MONTE_CARLO, pvalue_floor

if TYPE_CHECKING:
    from ndcg_report.analysis.report_model import Report


def compared_pairs(experiment: Experiment) -> list[tuple[str, str]]:
    """(system, baseline) of every comparison table, by system in the order given, each against every
    baseline in order; then the first baseline against each other one."""
    pairs = [(name, base) for name in experiment.names for base in experiment.baselines if base != name]
    return pairs + [(experiment.baseline_name, base) for base in experiment.more_baselines]


def family_size(experiment: Experiment, baseline: str | None = None) -> int:
    """How many systems are compared with a baseline (default: the first): the Holm family on one measure."""
    return int(experiment.comparisons_with(baseline)["family_size"].iloc[0])


def randomization_floors(experiment: Experiment, method: str, baseline: str | None = None,
                         ) -> tuple[float | None, float | None]:
    """The smallest randomization p-value and Holm-adjusted one that experiment's Monte Carlo gives against a
    baseline (default: the first; stats.resampling.pvalue_floor); (None, None) for a p-value from the normal
    limit, which has none."""
    if method != MONTE_CARLO:
        return None, None
    return (pvalue_floor(experiment.n_resamples),
            pvalue_floor(experiment.n_resamples, multiplier=family_size(experiment, baseline)))


def comparison_table(report: "Report", name: str, baseline: str | None = None) -> pd.DataFrame:
    """One system against a baseline (default: the first) per measure, with every statistic, rounded for display.

    Column labels are fixed ("system", "baseline"): the heading above the table names both, and a
    system called "delta" or "n" cannot collide with a statistic.
    """
    experiment = report.experiment
    base = baseline or experiment.baseline_name
    c = experiment.comparison(name) if base == experiment.baseline_name else experiment.comparisons_with(base).loc[name]
    m = family_size(experiment, base)
    columns = {
        "n": c["n"].astype(int), "system": c["run_mean"], "baseline": c["baseline_mean"],
        "delta": c["delta"], "relative": [percent(v) for v in c["relative_delta"]],
        f"{experiment.confidence:.0%} CI of delta" + (" (unadjusted)" if m > 1 else ""):
            [f"[{signed(lo)}, {signed(hi)}]" for lo, hi in zip(c["ci_low"], c["ci_high"])],
        "W/T/L": [f"{int(w)}/{int(t)}/{int(l)}" for w, t, l in zip(c["wins"], c["ties"], c["losses"])],
        "t-test p (Holm)": [p_pair(p, h) for p, h in zip(c["t_pvalue"], c["holm_t_pvalue"])],
        "Wilcoxon p (Holm)": [p_pair(p, h) for p, h in zip(c["wilcoxon_pvalue"], c["holm_wilcoxon_pvalue"])],
        "randomization p (Holm)": [p_pair(p, h, *randomization_floors(experiment, method, base)) for p, h, method in
                                   zip(c["randomization_pvalue"], c["holm_randomization_pvalue"],
                                       c["randomization_method"])],
        "effect size d_z": c["effect_size"],
    }
    shallow = experiment.shallow_measures()
    too_deep = [[who for who, system in (("system", name), ("baseline", base))
                 if measure in shallow[system]] for measure in experiment.measures]
    if any(too_deep):
        depth = experiment.depth()["median"]
        medians = {"system": depth[name], "baseline": depth[base]}
        columns["depth"] = ["; ".join(f"{DEEPER}\u00a0{who}\u00a0{number(medians[who])}\u00a0deep" for who in whose)
                            for whose in too_deep]  # no-break spaces: the note stays on one line
    table = pd.DataFrame({key: list(values) for key, values in columns.items()},
                         index=pd.Index(experiment.labels))
    return table.round(4)
