"""Presets: a community's whole convention, its measures, relevance level, headline and averaging.

Read from the table `data/presets.tsv` shipped in the package (its `source` column says where each
comes from); the averaging policies (missing, no_relevant, identical_ids) are core.conventions'.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from collections.abc import Sequence

from ndcg_report.core.measures.names import (
    Measure, MeasureSet, level_text, measure_of, parse_rel_level, resolve_measures,
)
from ndcg_report.core.measures.registry import JUDGED_ONLY
from ndcg_report.core.conventions import TREC_EVAL, Averaging, check_policy
from ndcg_report.errors import ParameterError

HEADLINE = Measure("nDCG", 10)  # the headline measure when neither the user nor a preset names one


@dataclass(frozen=True)
class Preset:
    """One row of presets.tsv."""

    name: str
    measures: str  # measure names, space-separated (ir_measures' spelling)
    rel_level: float
    headline: str
    missing: str  # core.conventions' policies
    no_relevant: str
    identical_ids: str
    source: str

    def describe(self) -> str:
        """'nDCG@10 nDCG@100 RR ... at relevance level 2 (headline nDCG@10), averaged as trec_eval -c'."""
        return (f"{self.measures} at relevance level {level_text(self.rel_level)} (headline {self.headline}), "
                f"{self.averaging_text()}")

    def averaging_text(self) -> str:
        """How the preset averages: 'averaged as trec_eval -c', or its policies."""
        if (self.missing, self.no_relevant, self.identical_ids) == ("zero", "zero", "keep"):
            return "averaged as trec_eval -c"
        return (f"averaged over {'every query of the qrels' if self.missing == 'zero' else 'the queries the run has'}, "
                f"{'scoring 0' if self.no_relevant == 'zero' else 'leaving out'} those with nothing relevant"
                + (", dropping a document whose id is the query's" if self.identical_ids == "drop" else ""))


@lru_cache(maxsize=1)
def presets() -> dict[str, Preset]:
    """Every preset of the package's presets.tsv, by name."""
    text = (resources.files("ndcg_report") / "data" / "presets.tsv").read_text(encoding="utf-8")
    lines = [line.split("\t") for line in text.splitlines() if line.strip()]
    header, rows = lines[0], lines[1:]
    found = {}
    for row in rows:
        fields = dict(zip(header, row))
        found[fields["preset"]] = Preset(
            fields["preset"], fields["measures"], parse_rel_level(fields["rel_level"]), fields["headline"],
            check_policy("missing", fields["missing"]), check_policy("no_relevant", fields["no_relevant"]),
            check_policy("identical_ids", fields["identical_ids"]), fields["source"])
    return found


def preset(name: str) -> Preset:
    """The preset called `name`; ParameterError naming the presets there are."""
    known = presets()
    if name not in known:
        raise ParameterError(f"there is no preset {name!r}; the presets are {', '.join(known)}")
    return known[name]


def measure_set(preset_name: str = "", measures: object = None, cutoffs: object = None,
                rel_level: object = None, judged_only: bool = False) -> MeasureSet:
    """The measures and relevance level of a preset (if named) followed by the measures given; a
    relevance level given overrides the preset's. Without a preset: resolve_measures as it is. With
    judged_only, each nDCG measure is followed by its judged-only twin (nDCG_judged, same cut-off)."""
    if not preset_name:
        asked = resolve_measures(measures, cutoffs, rel_level)
    else:
        chosen = preset(preset_name)
        extra = [] if measures is None else [measures] if isinstance(measures, str) else list(measures)
        level = chosen.rel_level if rel_level is None else rel_level
        asked = resolve_measures([chosen.measures, *extra], cutoffs, level)
    if not judged_only:
        return asked
    with_twins: list[Measure] = []
    for measure in asked.measures:
        with_twins.append(measure)
        if measure.measure in JUDGED_ONLY:
            with_twins.append(Measure(JUDGED_ONLY[measure.measure], measure.k))
    return MeasureSet(tuple(dict.fromkeys(with_twins)), asked.rel_level)


def help_text() -> str:
    """One line per preset, for --help."""
    return "; ".join(f"{p.name}: {p.describe()}" for p in presets().values())


def choose_headline(headline: "Measure | str | None", preset_name: str, measures: Sequence[Measure]) -> Measure:
    """The headline measure: the one named (it must be among `measures` and not a count), else the
    preset's, else nDCG@10 if computed, else the first measure that is not a count."""
    if headline not in (None, ""):
        try:
            chosen = measure_of(headline, measures)
        except ParameterError as exc:
            raise ParameterError(f"headline {headline}: {exc}; add it to the measures (-m) or choose another") from None
    elif preset_name:
        chosen = measure_of(preset(preset_name).headline, measures)
    elif HEADLINE in measures:
        chosen = HEADLINE
    else:
        chosen = next((m for m in measures if m.kind != "count"), measures[0])
    if chosen.kind == "count":
        raise ParameterError(f"the headline {chosen.label} is a count of documents, not a measure to compare "
                             "systems on; choose one such as nDCG@10 (--headline)")
    return chosen


def convention(preset_name: str = "") -> dict[str, str]:
    """The policies of a preset (core.presets), or trec_eval's without one."""
    if not preset_name:
        return dict(TREC_EVAL)
    chosen = preset(preset_name)
    return {"missing": chosen.missing, "no_relevant": chosen.no_relevant, "identical_ids": chosen.identical_ids}


def averaging(preset_name: str = "", missing: str | None = None, no_relevant: str | None = None,
              identical_ids: str | None = None) -> Averaging:
    """The policies in force: each one given (not None or ''), else the preset's, else trec_eval's."""
    base = convention(preset_name)
    given = {"missing": missing, "no_relevant": no_relevant, "identical_ids": identical_ids}
    chosen = {name: check_policy(name, value) if value not in (None, "") else base[name] for name, value in given.items()}
    overridden = tuple(name for name, value in given.items() if value not in (None, "") and value != base[name])
    return Averaging(**chosen, source=preset_name, given=overridden, defaults=tuple(base.values()))
