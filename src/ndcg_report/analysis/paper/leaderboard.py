"""The leaderboard of a report's summary.json as a paper table: LaTeX, Markdown or CSV, nothing recomputed.

Every number is summary.json's: each system's mean (`systems[].summary`), its mark against the baseline
(`comparisons`: the sign of the delta where the Holm-adjusted randomization p-value is below alpha, as
the report marks it), the letters of the pairwise test (`pairwise`, on the headline measure only) and
the † of a measure past the depth a system retrieved (`systems[].depth.median`, as the report marks it).
Summaries of schema 3 on hold every key read here; an older one is refused naming what it lacks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from ndcg_report.analysis.html import DEEPER
from ndcg_report.analysis.paper.grid import (
    ABOVE, BELOW, DIGITS, Cell, Column, Grid, Row, best_shown, checked_digits, number_text, row_letters,
)
from ndcg_report.analysis.paper.latex import latex_grid
from ndcg_report.analysis.paper.markdown import markdown_grid
from ndcg_report.analysis.text import number
from ndcg_report.core.measures.names import (
    Measure, cutoff_dtype, cutoff_text, level_text, measure_of, shallow_measures,
)
from ndcg_report.errors import ParameterError

NEEDED = ("parameters.measures", "parameters.headline", "parameters.alpha", "parameters.n_resamples", "systems",
          "baseline", "comparisons", "comparison_family.size", "pairwise.measure", "pairwise.alpha",
          "pairwise.means", "pairwise.pvalues", "pairwise.n_resamples")
CSV_COLUMNS = ("system", "role", "measure", "k", "n", "mean", "delta", "p_holm", "significance")
NORMAL_LIMIT = "normal limit"  # a randomization p-value computed in its large-sample limit (stats.resampling)


@dataclass(frozen=True)
class Leaderboard:
    """What a paper table shows, read from a summary: the systems under test in row order, the baseline,
    the measures (columns), and per system and measure label its mean, query count and, for a system
    under test, delta, Holm-adjusted randomization p-value and mark (+1, -1, 0); the pairwise record;
    each system's median lines per judged query (`depths`, over every system of the report; empty in a
    summary without them) and the measures it is measured past that depth (`shallow`)."""

    title: str
    names: tuple[str, ...]
    baseline: str
    measures: tuple[Measure, ...]
    headline: Measure
    means: Mapping[str, Mapping[str, float | None]]
    counts: Mapping[str, Mapping[str, int | None]]
    comparisons: Mapping[str, Mapping[str, Mapping]]
    alpha: float
    n_resamples: int
    family_size: int
    rel_level: float | None
    pairwise: Mapping
    depths: Mapping[str, float]
    more: Mapping[str, Mapping] = field(default_factory=dict)  # summary.json's more_baselines: per other baseline

    @property
    def baselines(self) -> tuple[str, ...]:
        """Every baseline, the first (the headline's) first."""
        return (self.baseline, *self.more)

    @property
    def shallow(self) -> dict[str, list[Measure]]:
        """Per system, the measures of the table past the depth it retrieved (the report's †)."""
        found = shallow_measures(self.measures, self.depths or {})
        return {name: found.get(name, []) for name in self.systems}

    @property
    def systems(self) -> tuple[str, ...]:
        """The rows: the systems under test, then the baseline; with several baselines, every baseline in order."""
        if self.more:
            return (*(name for name in self.names if name not in self.more), *self.baselines)
        return (*self.names, self.baseline)

    def mark(self, name: str, label: str, baseline: str | None = None) -> int:
        """+1 significantly above a baseline (default: the first), -1 below, 0 neither (the report's ▲/▼)."""
        if baseline not in (None, self.baseline):
            found = self.more[baseline]["comparisons"].get(name)
            return self._sign(found[label]) if found else 0
        if name == self.baseline:
            return 0
        return self._sign(self.comparisons[name][label])

    def _sign(self, record: Mapping) -> int:
        p, delta = record.get("holm_randomization_pvalue"), record.get("delta")
        if p is None or delta is None or not p < self.alpha:
            return 0
        return (delta > 0) - (delta < 0)

    def better_than(self, name: str) -> list[str]:
        """The systems the pairwise test finds `name` significantly better than (on its measure)."""
        means, pvalues = self.pairwise["means"], self.pairwise["pvalues"]
        return [other for other in pvalues.get(name, {}) if other != name and pvalues[name][other] is not None
                and pvalues[name][other] < self.pairwise["alpha"] and means[name] > means[other]]


def read_leaderboard(summary: Mapping, measures: Iterable[str] | None = None,
                     systems: Sequence[str] | None = None) -> Leaderboard:
    """The leaderboard of a summary.json dict: every measure, or those named (labels 'nDCG@10' or any
    name of the measure); the systems under test by the headline (best first), or those named in the
    order named; the baseline last, always. ParameterError naming what is missing or unknown."""
    try:
        return _read(summary, measures, systems)
    except (KeyError, TypeError, AttributeError, IndexError) as exc:  # a summary.json edited by hand
        raise ParameterError(f"summary.json is not laid out as ndcg-report writes it ({type(exc).__name__}: {exc}); "
                             "build the report again") from None


def _read(summary: Mapping, measures: Iterable[str] | None, systems: Sequence[str] | None) -> Leaderboard:
    missing = [path for path in NEEDED if not _has(summary, path)]
    if missing:
        raise ParameterError(
            f"this summary.json (schema_version {summary.get('schema_version')!r}, written by ndcg-report "
            f"{summary.get('ndcg_report_version', '?')}) lacks {', '.join(missing)}, which the tables need "
            "(summaries of schema 3 on have them); build the report again with this version")
    p = summary["parameters"]
    records = {system["name"]: system for system in summary["systems"]}
    baseline = summary["baseline"]
    if baseline not in records:
        raise ParameterError(f"summary.json names the baseline {baseline!r} but lists no system of that name")
    own = records[baseline]["summary"]
    more = summary.get("more_baselines") or {}
    every = tuple(Measure(own[label]["measure"], own[label]["k"]) for label in p["measures"])
    chosen = _chosen_measures(measures, every)
    headline = measure_of(p["headline"], every)
    given = [system["name"] for system in summary["systems"] if system["name"] != baseline]
    names = _chosen_systems(systems, given, baseline, records, headline.label)
    return Leaderboard(
        title=summary.get("title") or "", names=tuple(names), baseline=baseline, measures=chosen, headline=headline,
        means={n: {m.label: records[n]["summary"][m.label]["mean"] for m in chosen} for n in (*names, baseline)},
        counts={n: {m.label: records[n]["summary"][m.label]["n"] for m in chosen} for n in (*names, baseline)},
        comparisons={name: summary["comparisons"][name] for name in names}, alpha=float(p["alpha"]),
        n_resamples=int(p["n_resamples"]), family_size=int(summary["comparison_family"]["size"]),
        rel_level=p.get("rel_level"), pairwise=summary["pairwise"], depths=_depths(summary["systems"]),
        more={base: more[base] for base in more if base in names})


def _depths(systems: Sequence[Mapping]) -> dict[str, float]:
    """{name: median lines per judged query} of every system whose record has it (a report's summary.json
    of schema 3 on, an Experiment's record); {} where one lacks it, so that no † is guessed."""
    medians = {system["name"]: (system.get("depth") or {}).get("median") for system in systems}
    return {} if any(median is None for median in medians.values()) else {k: float(v) for k, v in medians.items()}


def leaderboard_latex(summary: Mapping, *, measures: Iterable[str] | None = None, systems: Sequence[str] | None = None,
                      letters: bool = False, digits: int = DIGITS, caption: str | None = None,
                      label: str = "tab:leaderboard") -> str:
    """The leaderboard as a LaTeX table (booktabs): systems as rows, the baseline last, (measure, k) as
    columns, the best of each column bold, ↑/↓ where significantly above/below the baseline, with
    `letters` ranx-style superscripts of the systems a system is significantly better than on the
    headline; the caption (`caption`, default the report's title, then the notes) says what each is."""
    return latex_grid(leaderboard_grid(read_leaderboard(summary, measures, systems), letters=letters, digits=digits,
                                       caption=caption), label=label)


def leaderboard_markdown(summary: Mapping, *, measures: Iterable[str] | None = None,
                         systems: Sequence[str] | None = None, letters: bool = False, digits: int = DIGITS,
                         caption: str | None = None) -> str:
    """The leaderboard as a GitHub Markdown table with the same bold, marks (▲/▼) and letters, and a
    legend line."""
    return markdown_grid(leaderboard_grid(read_leaderboard(summary, measures, systems), letters=letters,
                                          digits=digits, caption=caption))


def leaderboard_csv(summary: Mapping, *, measures: Iterable[str] | None = None, systems: Sequence[str] | None = None,
                    digits: int = DIGITS) -> str:
    """The leaderboard as CSV, one row per (system, measure): CSV_COLUMNS (significance +1/-1/0, empty
    for the baseline), numbers with `digits` decimals."""
    rows = leaderboard_rows(read_leaderboard(summary, measures, systems))
    return rows.to_csv(index=False, lineterminator="\n", float_format=f"%.{checked_digits(digits)}f")


def leaderboard_grid(board: Leaderboard, *, letters: bool = False, digits: int = DIGITS,
                     caption: str | None = None) -> Grid:
    """The leaderboard laid out: one row per system (the baseline last), one column per measure."""
    digits = checked_digits(digits)
    if letters and board.headline not in board.measures:
        raise ParameterError(f"the letters are those of the pairwise test on {board.headline.label}, the "
                             f"headline measure: name it among the measures too, or leave the letters out")
    systems, shallow = board.systems, board.shallow
    letter_of = dict(zip(systems, row_letters(len(systems)))) if letters else {}
    texts = [[number_text(board.means[name][m.label], digits) for m in board.measures] for name in systems]
    best = list(zip(*[best_shown(column) for column in zip(*texts)])) if board.measures else [()] * len(systems)
    rows = []
    for i, name in enumerate(systems):
        above = set(board.better_than(name)) if letters else set()
        cells = tuple(Cell(text=texts[i][j], bold=best[i][j], mark=board.mark(name, m.label),
                           letters="".join(letter_of[o] for o in systems if o in above) if m == board.headline else "",
                           shallow=m in shallow[name] and texts[i][j] != "",
                           more_marks=tuple(board.mark(name, m.label, base) for base in board.more))
                      for j, m in enumerate(board.measures))
        role = f"baseline {board.baselines.index(name) + 1}" if board.more and name in board.baselines else ""
        rows.append(Row(name=name, cells=cells, letter=letter_of.get(name, ""), baseline=name in board.baselines,
                        role=role))
    columns = tuple(Column(m.label, m.measure, f"@{cutoff_text(m.k)}") if m.k is not None else Column(m.label)
                    for m in board.measures)
    title = caption if caption is not None else board.title or "Leaderboard"
    return Grid(stub="System", columns=columns, rows=tuple(rows), caption=_sentence(title),
                notes=tuple(_notes(board, letters)), letters=letters, numbered=bool(board.more))


def leaderboard_rows(board: Leaderboard) -> pd.DataFrame:
    """One row per (system, measure): CSV_COLUMNS, the baseline's without delta, p_holm and significance; with
    several baselines, role 'baseline N' and, after them, delta, p_holm and significance against each other
    baseline (columns suffixed ' vs NAME'), empty against itself."""
    rows = []
    for name in board.systems:
        tested = name != board.baseline
        role = ("run" if tested else "baseline") if name not in board.more else f"baseline {board.baselines.index(name) + 1}"
        for m in board.measures:
            found = board.comparisons[name][m.label] if tested else {}
            row = {"system": name, "role": role, "measure": m.measure, "k": m.k,
                   "n": board.counts[name][m.label], "mean": board.means[name][m.label],
                   "delta": found.get("delta"), "p_holm": found.get("holm_randomization_pvalue"),
                   "significance": board.mark(name, m.label) if tested else None}
            for base in board.more:
                other = (board.more[base]["comparisons"].get(name) or {}).get(m.label, {})
                row.update({f"delta vs {base}": other.get("delta"), f"p_holm vs {base}": other.get("holm_randomization_pvalue"),
                            f"significance vs {base}": board.mark(name, m.label, base) if other else None})
            rows.append(row)
    more = [f"{column} vs {base}" for base in board.more for column in ("delta", "p_holm", "significance")]
    frame = pd.DataFrame(rows, columns=[*CSV_COLUMNS, *more])
    frame["k"] = pd.array(frame["k"], dtype=cutoff_dtype(board.measures))
    for column in frame.columns:
        if column in ("n", "significance") or column.startswith("significance vs "):
            frame[column] = frame[column].astype("Int64")
        elif column in ("mean", "delta", "p_holm") or column.startswith(("delta vs ", "p_holm vs ")):
            frame[column] = frame[column].astype(float)
    return frame


def _notes(board: Leaderboard, letters: bool) -> list[str]:
    """What the numbers are over, what bold, ▲/▼ and the letters mean, with the test, correction and alpha."""
    counts = sorted({n for name in board.systems for n in board.counts[name].values() if n is not None})
    over = (f"Means over {counts[0]:,} queries" if len(counts) == 1 else
            f"Means over each system's own averaged queries ({counts[0]:,} to {counts[-1]:,})" if counts else "Means")
    if board.rel_level is not None and float(board.rel_level) != 1 and any(m.kind == "binary" for m in board.measures):
        level = level_text(float(board.rel_level))
        over += f"; binary measures count a label ≥ {level} as relevant"
    notes = [over + ".", "Bold: the best of each column."]
    if board.names:
        m, base = board.family_size, board.baseline
        flips = f"{board.n_resamples:,} sign flips"
        if any(r.get("randomization_method") == NORMAL_LIMIT for c in board.comparisons.values() for r in c.values()):
            flips += " or, over many queries, their normal limit"
        family = (f"Holm-adjusted over the {m} systems compared with {base} on each measure" if m > 1
                  else f"one comparison with {base} per measure, so no correction")
        if board.more:
            numbered = ", ".join(f"{i}: {name}" for i, name in enumerate(board.baselines, start=1))
            notes.append(f"{ABOVE}n/{BELOW}n: significantly better/worse than baseline n ({numbered}; paired "
                         f"randomization test, {flips}; Holm-adjusted over the systems compared with that baseline on "
                         f"each measure, each baseline its own family; α = {board.alpha:g}).")
        else:
            notes.append(f"{ABOVE}/{BELOW}: significantly better/worse than {base} (paired randomization test, {flips}; "
                         f"{family}; α = {board.alpha:g}).")
    deep = {name: board.depths[name] for name in board.systems if board.shallow[name]}
    if deep:
        notes.append(f"{DEEPER}: measured past the depth the system retrieved ("
                     + "; ".join(f"{name}: {number(depth)}" for name, depth in deep.items())
                     + " lines per judged query, median): a cut-off deeper than that or, when another system retrieves deeper, a measure of the "
                     "whole ranking; the ranks it never retrieved count as not relevant.")
    if letters:
        test = board.pairwise
        count = len(test["means"])
        notes.append(f"Superscripts: the systems (by their letter) a system is significantly better than on "
                     f"{board.headline.label} (randomized Tukey HSD over the {count} systems, "
                     f"{int(test['n_resamples']):,} permutations, α = {float(test['alpha']):g}); that test is run on "
                     f"the headline measure only, so only its column has letters. A letter here names one system "
                     f"(the # column), unlike the groups of the HTML report's leaderboard (a, ab), where "
                     f"systems sharing a letter do not differ significantly.")
    return notes


def _chosen_measures(measures: Iterable[str] | None, every: tuple[Measure, ...]) -> tuple[Measure, ...]:
    if measures is None:
        return every
    chosen: list[Measure] = []
    for value in measures:
        try:
            measure = measure_of(value, every)
        except ParameterError as exc:
            raise ParameterError(f"measure {value!r}: {exc}") from None
        if measure not in chosen:
            chosen.append(measure)
    if not chosen:
        raise ParameterError(f"no measure named; the report has {', '.join(m.label for m in every)}")
    return tuple(chosen)


def _chosen_systems(systems: Sequence[str] | None, given: list[str], baseline: str, records: Mapping,
                    headline: str) -> list[str]:
    if systems is None:
        mean = {name: records[name]["summary"][headline]["mean"] for name in given}
        return sorted(given, key=lambda name: (-(mean[name] if mean[name] is not None else float("-inf")),
                                               given.index(name)))
    unknown = [name for name in systems if name not in given and name != baseline]
    if unknown:
        raise ParameterError(f"no system is named {', '.join(map(repr, unknown))} in this report; its systems are "
                             f"{', '.join(map(repr, given))} and the baseline {baseline!r}")
    return list(dict.fromkeys(name for name in systems if name != baseline))


def _has(record: Mapping, path: str) -> bool:
    for key in path.split("."):
        if not isinstance(record, Mapping) or key not in record:
            return False
        record = record[key]
    return True


def _sentence(text: str) -> str:
    text = " ".join(str(text).split())
    return text if not text or text.endswith((".", "!", "?")) else text + "."
