"""The Report and its settings: validated parameters as data, the rebuild command, the results.

build.parameters checks the parameters; the results are everything a report shows, computed once. The
build's notebook_io makes the Report; analysis.checks, analysis.results and analysis.outputs read it.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ndcg_report.analysis.options.command import input_words, option_words
from ndcg_report.analysis.options.table import on
from ndcg_report.core.conventions import Averaging
from ndcg_report.core.measures.names import Measure, level_text, parse_cutoffs
from ndcg_report.core.presets import choose_headline, measure_set, preset as find_preset

if TYPE_CHECKING:  # not imported at run time: the parameters are read where pandas is not needed (a batch)
    import pandas as pd

    from ndcg_report.analysis.figure_style import FigureFiles
    from ndcg_report.analysis.experiment import Experiment
    from ndcg_report.inputs.reading import Qrels


@dataclass(frozen=True)
class RunInput:
    """One system under test: its display name ('' = named by its file name) and its file."""

    name: str
    path: Path


@dataclass(frozen=True)
class ReportParameters:
    """Validated report parameters: absolute paths, parsed cut-offs, checked choices."""

    runs: tuple[RunInput, ...]
    qrels: Path
    baseline: Path | None  # None until the BM25 baseline of `corpus` is built; the first (the headline's) of several
    topics: Path | None
    cutoffs: tuple | None  # the -k given (None: not given)
    measures: tuple[Measure, ...]  # every measure computed, in order (the preset's first)
    rel_level: float
    headline: Measure
    gain: str
    missing: str
    no_relevant: str
    title: str  # '' = made from the system names
    seed: int
    baseline_name: str  # '' = the baseline's file name
    command: str = ""  # '' = an `ndcg-report build` command made from these parameters
    corpus: Path | None = None  # set when the baseline is a BM25 run built from this corpus
    bm25_settings: str = ""  # how that BM25 run was made (shown in the parameter table)
    demo: str = ""  # the demo these parameters are, if any
    preset: str = ""  # the preset the measures start from, if any
    judged_only: bool = False  # each nDCG measure has its judged-only twin (nDCG_judged) beside it
    docs: Path | None = None  # document text for the drill-downs (BEIR corpus.jsonl or docid<TAB>text)
    drilldown: int = 200  # queries with a drill-down block at most (0: none)
    drilldown_depth: int = 10  # the top k of the drill-downs, the unjudged pool and the rank overlap
    identical_ids: str = "keep"  # run lines whose docid is their qid: kept, or dropped (BEIR's convention)
    max_retrieved: int = 0  # trec_eval's -M: only a query's first N lines count (0: every line)
    averaging_given: tuple[str, ...] = ()  # the averaging policies an option set against the preset's (or trec_eval's)
    judgment_sets: tuple[RunInput, ...] = ()  # with several judgment sets: each by name, the reference (qrels) first
    fill_unjudged_from: str = ""  # a set whose labels fill the pairs the reference lacks, as one more set
    groups: Path | None = None  # query groups (qid<TAB>group, or JSON {group: [qids]}): a table per group
    against: Path | None = None  # an earlier build's folder: the report is gated against it (analysis.gate)
    gate_measures: str = ""  # the measures gated against it ('' = the headline)
    gate_margin: float = 0.0
    gate_alpha: float = 0.05
    more_baselines: tuple[RunInput, ...] = ()  # every baseline after the first, each also compared as a system

    @property
    def compared_runs(self) -> tuple[RunInput, ...]:
        """The runs, then the other baselines: every run file evaluated besides the first baseline, in order."""
        return (*self.runs, *self.more_baselines)

    @property
    def averaging(self) -> Averaging:
        """How the queries are averaged, and where each policy came from (core.conventions)."""
        return Averaging(self.missing, self.no_relevant, self.identical_ids, self.preset, self.averaging_given)

    @property
    def document_source(self) -> Path | None:
        """Where the drill-downs' document text comes from: --docs, else the BM25 corpus."""
        return self.docs or self.corpus


def baseline_inputs(params: ReportParameters) -> tuple[RunInput, ...]:
    """Every baseline given as a file, the first first (by baseline_name, '' = its file's name); () while a
    corpus BM25 is still to be built."""
    first = (RunInput(params.baseline_name, params.baseline),) if params.baseline is not None else ()
    return (*first, *params.more_baselines)


def _figure_files() -> "FigureFiles":
    """A report's figures drawn as they are added, PNG only (figure_style.FigureFiles)."""
    from ndcg_report.analysis.figure_style import FigureFiles

    return FigureFiles()


def default_title(names: Sequence[str], baseline_name: str, more_baselines: Sequence[str] = ()) -> str:
    """'A against B', 'A, B and C against D', or 'N systems against D'; with several baselines, the systems
    other than them against them all ('A and B against D and E')."""
    names = [name for name in names if name not in more_baselines]
    against = _listed([baseline_name, *more_baselines])
    if len(names) == 1:
        return f"{names[0]} against {against}"
    if len(names) <= 3:
        return f"{_listed(names)} against {against}"
    return f"{len(names)} systems against {against}"


def _listed(names: Sequence[str]) -> str:
    """'A', 'A and B', 'A, B and C'."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


MEASURE_OPTIONS = ("measures", "cutoffs", "rel_level", "preset", "judged_only", "headline")  # said by measure_words


def option_values(params: ReportParameters) -> dict[str, object]:
    """The report options params holds, as plain values by the options table's names (the notebook's
    parameters): every measure computed, by label."""
    values: dict[str, object] = {
        "cutoffs": ",".join(str(k) for k in params.cutoffs) if params.cutoffs else "",
        "measures": " ".join(measure.label for measure in params.measures), "rel_level": level_text(params.rel_level),
        "headline": params.headline.label, "run_name": "",  # each run carries its own name
    }
    return {**{option.name: getattr(params, option.name) for option in on("notebook", paths=False)
               if option.name not in values}, **values}


def build_command(params: ReportParameters, out: str = "REPORT_FOLDER") -> str:
    """An `ndcg-report build` command that rebuilds a report of these parameters into out: its inputs,
    the measure options (measure_words), then every other option not at the table's default."""
    runs = [(item.name, item.path) for item in params.runs]
    qrels = [(item.name, item.path) for item in params.judgment_sets or (RunInput("", params.qrels),)]
    several = bool(params.more_baselines)  # then each baseline as --baseline=NAME=PATH, the first named there
    files = {"corpus": params.corpus, "baseline": None if params.corpus or several else params.baseline,
             "topics": params.topics, "docs": params.docs, "groups": params.groups}
    names = [option.name for option in on("cli", paths=False) if option.name not in MEASURE_OPTIONS
             and not (several and option.name == "baseline_name")]
    baselines = [(item.name, item.path) for item in baseline_inputs(params)] if several else []
    words = [*input_words(runs, qrels, files, baselines), *measure_words(params),
             *option_words(option_values(params), names)]
    return shlex.join(["ndcg-report", "build", *words, "--out", out])  # the folder last, alone: to replace


def measure_words(params: ReportParameters) -> list[str]:
    """The options that choose these measures, level and headline: --preset and the measures it
    lacks as --measure (nDCG alone as --cutoffs, as it always was), --rel-level and --headline where
    not the default."""
    words: list[str] = []
    base: tuple[Measure, ...] = ()
    level = 1.0
    if params.preset:
        words.append(f"--preset={params.preset}")
        chosen = find_preset(params.preset)
        base, level = measure_set(params.preset).measures, chosen.rel_level
    extra = [measure for measure in params.measures if measure not in base
             and not (params.judged_only and measure.measure == "nDCG_judged")]
    only_ndcg = not base and all(measure.measure == "nDCG" for measure in extra)
    ks = ["all" if measure.k is None else measure.k for measure in extra]
    if only_ndcg and ks == list(parse_cutoffs(ks)):
        words.append(f"--cutoffs={','.join(str(k) for k in ks)}")
    elif extra:
        words.append(f"--measure={' '.join(measure.label for measure in extra)}")
    if params.rel_level != level:
        words.append(f"--rel-level={level_text(params.rel_level)}")
    if params.judged_only:
        words.append("--judged-only")
    if params.headline != choose_headline(None, params.preset, params.measures):
        words.append(f"--headline={params.headline.label}")
    return words


@dataclass(frozen=True)
class Report:
    """Everything the report shows, computed once from validated parameters."""

    params: ReportParameters
    experiment: Experiment
    qrels: Qrels
    files: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    group_rows: pd.DataFrame | None = None  # with query groups: analysis.tables.groups.group_table's rows
    figure_names: list[str] = field(default_factory=list)  # figures/NN-name.svg of each figure shown, in order
    figures: FigureFiles = field(default_factory=_figure_files)  # draws each figure; its SVGs when written

    @property
    def title(self) -> str:
        experiment = self.experiment
        return self.params.title or default_title(experiment.names, experiment.baseline_name,
                                                  tuple(experiment.more_baselines))

    @property
    def command(self) -> str:
        return self.params.command or build_command(self.params)

    @property
    def topics(self) -> pd.Series | None:
        return self.experiment.topics
