"""Tests over collections (Demšar 2006): Wilcoxon per system, Friedman, the Nemenyi post-hoc, power.

The unit is a collection's mean, not a query: `means` is collections x systems (NaN where a system
is missing). Each system is compared with the baseline by scipy's Wilcoxon signed-rank test over the
collections both have (zero differences split between the signs, as Demšar does; Holm over the
systems); all systems together by scipy's Friedman test over the collections every system has, with
the Nemenyi post-hoc: two systems differ when their mean ranks differ by at least the critical
difference q_alpha * sqrt(k(k+1)/(6N)), q_alpha the studentized range's upper alpha point (k
systems, infinite df) over sqrt(2). A test gives a verdict only over at least MIN_COLLECTIONS
collections and only if the strongest possible outcome over that many could reach alpha (for Wilcoxon,
after Holm's first step); otherwise its verdict is NO_POWER.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ndcg_report.stats.paired import holm

MIN_COLLECTIONS = 5  # below this, Friedman's chi-square is far from its distribution and Wilcoxon cannot reject
NO_POWER = "no power"
POSTHOC = "Nemenyi"


@dataclass(frozen=True, eq=False)
class AcrossCollections:
    """The tests over collections of one measure (see the module's docstring for which and why).

    wilcoxon: index the systems under test; columns collections (both present), wins, ties, losses
    (of the system's mean against the baseline's), statistic (Demšar's T = min(R+, R-)), pvalue,
    p_holm (over the systems), min_pvalue (the smallest p-value the exact test can give over that
    many collections), verdict ('better', 'worse', 'no difference' or NO_POWER). mean_ranks: every
    system's mean rank (1 = best) over the `ranked` collections, those every system is present in;
    friedman_*: scipy's friedmanchisquare over them (NaN with fewer than 3 systems or 2 collections);
    nemenyi_pvalues: systems x systems; groups: the maximal sets of systems (by mean rank) whose
    ranks differ by less than the critical difference, the bars of the CD diagram.
    """

    measure: str
    baseline_name: str
    alpha: float
    wilcoxon: pd.DataFrame
    ranked: tuple[str, ...]
    mean_ranks: pd.Series
    friedman_statistic: float
    friedman_pvalue: float
    friedman_verdict: str  # 'differ', 'no difference', NO_POWER, or 'needs 3 systems'
    q_alpha: float
    critical_difference: float
    nemenyi_pvalues: pd.DataFrame
    groups: tuple[tuple[str, ...], ...]
    posthoc: str = POSTHOC
    min_collections: int = MIN_COLLECTIONS

    @property
    def has_power(self) -> bool:
        """Whether the Friedman test could give a verdict (enough collections)."""
        return self.friedman_verdict != NO_POWER

    def differ(self, first: str, second: str) -> bool:
        """Whether the post-hoc finds two systems different: only when Friedman's test rejects."""
        return self.friedman_verdict == "differ" and bool(self.nemenyi_pvalues.at[first, second] < self.alpha)

    def record(self) -> dict:
        """The tests as plain JSON data (NaN as None), for a suite's summary.json."""
        def number(value: object) -> float | int | None:
            return None if value is None or pd.isna(value) else value.item() if isinstance(value, np.generic) else value

        wilcoxon = [{"system": str(name), **{key: number(value) if key != "verdict" else value
                                             for key, value in row.items()}}
                    for name, row in self.wilcoxon.to_dict("index").items()]
        return {
            "measure": self.measure, "baseline": self.baseline_name, "alpha": self.alpha,
            "min_collections": self.min_collections,
            "wilcoxon": {"test": "Wilcoxon signed-rank over the collections' means (zero_method zsplit), "
                                 "Holm over the systems", "systems": wilcoxon},
            "friedman": {"collections": list(self.ranked), "statistic": number(self.friedman_statistic),
                         "pvalue": number(self.friedman_pvalue), "verdict": self.friedman_verdict},
            "posthoc": {"test": self.posthoc, "q_alpha": number(self.q_alpha),
                        "critical_difference": number(self.critical_difference),
                        "mean_ranks": {str(name): number(rank) for name, rank in self.mean_ranks.items()},
                        "groups": [list(group) for group in self.groups],
                        "pvalues": {str(first): {str(second): number(p) for second, p in row.items()}
                                    for first, row in self.nemenyi_pvalues.to_dict("index").items()}},
        }

    def summary(self) -> str:
        """One sentence: Friedman's test over how many collections, what it says, and the post-hoc's
        critical difference (or why there is no verdict)."""
        ranked = len(self.ranked)
        if self.friedman_verdict == "needs 3 systems":
            friedman = "Friedman's test needs at least 3 systems (the Wilcoxon test compares the two)."
        elif self.friedman_verdict == NO_POWER:
            friedman = (f"Friedman's test over {ranked} collection(s) with every system: no power (a verdict needs at "
                        f"least {self.min_collections} collections), so no verdict.")
        else:
            friedman = (f"Friedman's test over {ranked} collections with every system: chi-square "
                        f"{self.friedman_statistic:.3f}, p {self.friedman_pvalue:.4g}: the systems "
                        f"{'differ' if self.friedman_verdict == 'differ' else 'do not differ significantly'} at "
                        f"alpha {self.alpha:g}; {self.posthoc} critical difference {self.critical_difference:.3f} "
                        "in mean rank.")
        return friedman


def across_collections(means: pd.DataFrame, baseline_name: str, alpha: float = 0.05, measure: str = "") -> AcrossCollections:
    """The tests over collections of one measure: `means` is collections x systems (the baseline among
    them), a system's mean in each collection, NaN where it is missing."""
    names = [name for name in means.columns if name != baseline_name]
    complete = means.dropna(axis=0, how="any")
    k, n = means.shape[1], len(complete)
    ranks = complete.rank(axis=1, ascending=False, method="average")  # 1 = the highest mean
    mean_ranks = ranks.mean() if n else pd.Series(np.nan, index=means.columns)
    statistic = pvalue = np.nan
    if k >= 3 and n >= 2 and complete.nunique(axis=1).gt(1).any():
        result = stats.friedmanchisquare(*(complete[name].to_numpy() for name in complete.columns))
        statistic, pvalue = float(result.statistic), float(result.pvalue)
    if k < 3:
        verdict = "needs 3 systems"
    elif not _friedman_has_power(n, k, alpha):
        verdict = NO_POWER
    else:
        verdict = "differ" if pvalue < alpha else "no difference"
    q_alpha = float(stats.studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2)) if k >= 2 else np.nan
    cd = critical_difference(k, n, alpha) if n and k >= 2 else np.nan
    return AcrossCollections(
        measure=measure, baseline_name=baseline_name, alpha=alpha,
        wilcoxon=wilcoxon_against_baseline(means, baseline_name, names, alpha),
        ranked=tuple(map(str, complete.index)), mean_ranks=mean_ranks, friedman_statistic=statistic,
        friedman_pvalue=pvalue, friedman_verdict=verdict, q_alpha=q_alpha, critical_difference=cd,
        nemenyi_pvalues=nemenyi_pvalues(mean_ranks, n), groups=rank_groups(mean_ranks, cd),
    )


def wilcoxon_against_baseline(means: pd.DataFrame, baseline_name: str, names: list[str], alpha: float) -> pd.DataFrame:
    """Each system against the baseline over the collections both are present in: scipy's wilcoxon
    (zero_method 'zsplit': a tie counts half to each side, as Demšar 2006 does), Holm over the systems.
    NO_POWER below MIN_COLLECTIONS collections, or where even every collection favouring one side
    could not pass Holm's first step (min_pvalue times the number of systems above alpha)."""
    rows = []
    for name in names:
        both = means[[name, baseline_name]].dropna()
        d = both[name].to_numpy() - both[baseline_name].to_numpy()
        n = len(d)
        statistic = pvalue = np.nan
        if n and np.any(d != 0):
            result = stats.wilcoxon(d, zero_method="zsplit")
            statistic, pvalue = float(result.statistic), float(result.pvalue)
        elif n:
            pvalue = 1.0
        rows.append({"system": name, "collections": n, "wins": int((d > 0).sum()), "ties": int((d == 0).sum()),
                     "losses": int((d < 0).sum()), "statistic": statistic, "pvalue": pvalue,
                     "min_pvalue": wilcoxon_min_pvalue(n), "delta": float(d.mean()) if n else np.nan})
    table = pd.DataFrame(rows, columns=["system", "collections", "wins", "ties", "losses", "statistic", "pvalue",
                                        "min_pvalue", "delta"]).set_index("system")
    table["p_holm"] = holm(table["pvalue"].to_numpy(dtype=float)) if len(table) else []
    family = max(len(names), 1)  # Holm's first step tests the smallest p-value at alpha / family
    table["verdict"] = [
        NO_POWER if count < MIN_COLLECTIONS or low * family > alpha else
        ("better" if delta > 0 else "worse") if p < alpha else "no difference"
        for count, low, p, delta in zip(table["collections"], table["min_pvalue"], table["p_holm"], table["delta"])
    ]
    return table.drop(columns="delta")


def wilcoxon_min_pvalue(n: int) -> float:
    """The smallest two-sided p-value the exact Wilcoxon signed-rank test gives over n pairs: every
    difference of one sign, probability 2 / 2**n (1 for none). 0.0625 over 5: it cannot reject at 0.05
    with fewer than 6 collections."""
    return min(1.0, 2.0 / 2.0 ** n) if n else 1.0


def _friedman_has_power(n: int, k: int, alpha: float) -> bool:
    """At least MIN_COLLECTIONS collections, and the strongest outcome (every collection ranks the k
    systems alike: chi-square N(k-1)) would reach alpha."""
    return n >= MIN_COLLECTIONS and bool(stats.chi2.sf(n * (k - 1), k - 1) <= alpha)


def critical_difference(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of mean ranks for k systems over n collections (Demšar 2006, eq. 5):
    q_alpha * sqrt(k(k+1)/(6n)), q_alpha = studentized_range.ppf(1 - alpha, k, inf) / sqrt(2)."""
    q_alpha = stats.studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2)
    return float(q_alpha * math.sqrt(k * (k + 1) / (6 * n)))


def nemenyi_pvalues(mean_ranks: pd.Series, n: int) -> pd.DataFrame:
    """Nemenyi's p-value of every pair (systems x systems, diagonal 1): the studentized range's tail at
    |R_i - R_j| * sqrt(2) / sqrt(k(k+1)/(6n)) (as scikit-posthocs' posthoc_nemenyi_friedman)."""
    names = list(mean_ranks.index)
    k = len(names)
    values = np.ones((k, k))
    if n and k >= 2:
        scale = math.sqrt(k * (k + 1) / (6 * n))
        gaps = np.abs(mean_ranks.to_numpy()[:, None] - mean_ranks.to_numpy()[None, :])
        values = stats.studentized_range.sf(gaps * math.sqrt(2) / scale, k, np.inf)
        np.fill_diagonal(values, 1.0)
    elif k:
        values = np.full((k, k), np.nan)
        np.fill_diagonal(values, 1.0)
    return pd.DataFrame(np.minimum(values, 1.0), index=pd.Index(names), columns=pd.Index(names))


def rank_groups(mean_ranks: pd.Series, cd: float) -> tuple[tuple[str, ...], ...]:
    """The maximal runs of systems, in mean-rank order (best first), whose ranks span less than cd:
    systems the post-hoc does not tell apart (single systems left out). None for an undefined cd."""
    if not np.isfinite(cd) or mean_ranks.isna().any():
        return ()
    order = mean_ranks.sort_values(kind="stable")
    names, ranks = list(order.index), order.to_numpy()
    runs = []
    for start in range(len(names)):
        end = start
        while end + 1 < len(names) and ranks[end + 1] - ranks[start] < cd:
            end += 1
        if end > start and not (runs and runs[-1][1] >= end):
            runs.append((start, end))
    return tuple(tuple(names[start:end + 1]) for start, end in runs)
