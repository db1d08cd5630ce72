"""The report options' table: each option's name, type, default, bounds, flag, keys and help, once.

`build` and `demo`'s flags, the batch config's keys and their checks, the notebook's parameters,
build_report's keywords, the rebuild command and the docs' options table are derived from OPTIONS.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from ndcg_report.baseline.settings import BM25_DEFAULTS
from ndcg_report.core.conventions import POLICIES
from ndcg_report.core.measures.names import GAINS

Surface = Literal["cli", "yaml", "python", "notebook"]
EVERYWHERE: frozenset[Surface] = frozenset(("cli", "yaml", "python", "notebook"))
MAX_TIMEOUT = 7 * 24 * 3600  # seconds a cell may take; nbval counts milliseconds in 32 bits (2,147,483 s)
MAX_DRILLDOWN = 100_000  # drill-down queries, and their depth


@dataclass(frozen=True, kw_only=True)
class ReportOption:
    """One report option: its one name (keyword, YAML key, notebook parameter) and every surface's spelling."""

    name: str
    kind: str  # how a value is checked: a key of analysis.options.checks.CHECKS, or a path kind (PATH_KINDS)
    default: object  # '' for text: not given (the preset's, the file's name, ...)
    help: str  # one line, without the default (derived from `default`, or said in `default_text`)
    notebook_help: str = ""  # the notebook's comment where it differs (papermill reads no line holding a second '=')
    flag: str = ""  # the command line's, '' = `--` and the name with dashes
    short: str = ""  # a one-letter flag beside it (-m, -k, -l)
    metavar: str | None = None
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    unit: str = ""  # what a number counts ('seconds'), said in a refusal
    default_text: str = ""  # the default as --help and the docs say it, where it is not `default` itself
    aliases: tuple[str, ...] = ()  # older spellings still accepted (a keyword, YAML key or flag without --)
    surfaces: frozenset[Surface] = EVERYWHERE
    group: str = ""  # "bm25": only with a corpus baseline; "measure": chooses the measures (eval and judges too)
    repeat: bool = False  # the flag may be given more than once (-m)

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def shown_default(self) -> str:
        """The default as help and docs say it ('' when there is nothing to say)."""
        if self.default_text:
            return self.default_text
        return "" if self.default is None or self.default is False or self.default in ("", ()) else f"{self.default:,}" if type(self.default) is int else str(self.default)


CLI_AND_YAML: frozenset[Surface] = frozenset(("cli", "yaml"))
YAML_ONLY: frozenset[Surface] = frozenset(("yaml",))

# The gate's options (`ndcg-report gate`'s flags, a batch's `gate:` keys: analysis.gate.options); a report
# built --against an earlier build takes the first three as gate_measures, gate_margin, gate_alpha.
GATE_OPTIONS: tuple[ReportOption, ...] = (
    ReportOption(name="measures", kind="measures", default="", flag="--measure", short="-m", metavar="MEASURE",
                 repeat=True, surfaces=CLI_AND_YAML, default_text="the report's headline measure",
                 notebook_help="the measures to gate, separated by spaces (nDCG@10 RR AP, or trec_eval's names); both "
                               "reports must compute them",
                 help="a measure to gate, repeatable (nDCG@10, RR, AP, ... or trec_eval's names); it must be in both "
                      "reports"),
    ReportOption(name="margin", kind="number", default=0.0, low=0, metavar="X", surfaces=CLI_AND_YAML,
                 default_text="0: any significant drop",
                 help="the smallest drop of a mean that counts as a regression (a drop of at least X that is not "
                      "significant is a warning)"),
    ReportOption(name="alpha", kind="open_number", default=0.05, low=0, high=1, metavar="A", surfaces=CLI_AND_YAML,
                 help="significance level of the one-sided test, after Holm over the systems x measures gated"),
    ReportOption(name="fail_on", kind="choice", default="regression", choices=("regression", "warning"),
                 surfaces=YAML_ONLY, help="the status that fails a batch (exit 4): a regression, or a warning too"),
    ReportOption(name="against", kind="choice", default="last", choices=("last", "pinned"), surfaces=YAML_ONLY,
                 help="the build gated against: the last good build, or the one pinned with `batch --pin NAME`"),
)



def _as_report_option(option: ReportOption) -> ReportOption:
    """A gate option as the report option of a build --against an earlier one: gate_NAME, --gate-NAME."""
    return replace(option, name=f"gate_{option.name}", flag=f"--gate-{option.cli_flag[2:]}", short="", group="gate",
                   surfaces=frozenset(("cli", "notebook")),
                   default_text=option.default_text if option.default == "" else "")


PATH_KINDS = ("runs", "judgment_sets", "baselines", "path")  # checked where they are given (paths are relative to it)

OPTIONS: tuple[ReportOption, ...] = (
    ReportOption(name="runs", kind="runs", default=(), flag="--run", metavar="[NAME=]PATH", repeat=True,
                 notebook_help="the systems under test: paths, or mappings with keys name and path (TREC, JSON, JSON lines, "
                               "Parquet)",
                 help="a run under test; repeat for several systems. NAME=PATH names it, a plain PATH is named by "
                      "its file name without .gz, .txt, .run, ... (two runs with one name: exit 2)"),
    ReportOption(name="qrels", kind="judgment_sets", default="", metavar="[NAME=]PATH", repeat=True,
                 notebook_help="relevance judgements: TREC qrels, BEIR TSV (with its header), JSON, JSON lines or "
                               "Parquet; or judgment sets to compare, a list of {name, path} (the first is the "
                               "reference every section uses)",
                 help="the qrels; repeat as NAME=PATH to compare judgment sets (human against LLM labels): the first "
                      "is the reference every section uses, a section compares the others with it"),
    ReportOption(name="fill_unjudged_from", kind="text", default="", metavar="NAME",
                 help="with several --qrels: one more set, the reference's labels where it has them and NAME's for "
                      "the pairs it lacks"),
    ReportOption(name="baseline", kind="baselines", default="", metavar="[NAME=]PATH", repeat=True,
                 notebook_help="the baseline run (e.g. Anserini BM25); or several baselines, a list of {name, path} "
                               "(the first the headline's)",
                 help="the baseline run (e.g. Anserini BM25); repeat as NAME=PATH for several: the first is the "
                      "headline's (verdicts, figures), every system is compared with each, each baseline in its own "
                      "Holm family"),
    ReportOption(name="corpus", kind="path", default="", surfaces=frozenset(("cli", "yaml", "notebook")),
                 help="JSON-lines corpus: build (and cache) a BM25 baseline from it"),
    ReportOption(name="topics", kind="path", default="",
                 help="qid<TAB>text lines (the query text), BEIR queries.jsonl or a TREC topic file: shown in the tables; "
                      "required with --corpus"),
    ReportOption(name="groups", kind="path", default="", metavar="FILE",
                 help="query groups: qid<TAB>group lines, or JSON {group: [qids]} (DL-HARD's folds.json): each system "
                      "against the baseline within each group, per_group.csv beside the report"),
    ReportOption(name="docs", kind="path", default="", metavar="CORPUS",
                 help="document text for the drill-downs: BEIR corpus.jsonl or docid<TAB>text, plain or gzip "
                      "(default: the --corpus, if any); only the documents shown are read"),
    ReportOption(name="drilldown", kind="int", default=200, metavar="N", low=0, high=MAX_DRILLDOWN,
                 help="queries with a drill-down of their rankings: all up to N, above it the largest wins, losses "
                      "and spreads; 0 for none"),
    ReportOption(name="drilldown_depth", kind="int", default=10, metavar="K", low=1, high=MAX_DRILLDOWN,
                 aliases=("rank_depth",),
                 help="the top K of the drill-downs, of unjudged.tsv and of the rank overlap (N x K at most 50,000)"),
    ReportOption(name="k1", kind="number", default=BM25_DEFAULTS["k1"], low=0, group="bm25",
                 surfaces=frozenset(("cli", "yaml")), default_text=f"{BM25_DEFAULTS['k1']}, as Anserini",
                 help="BM25 k1"),
    ReportOption(name="b", kind="number", default=BM25_DEFAULTS["b"], low=0, high=1, group="bm25",
                 surfaces=frozenset(("cli", "yaml")), default_text=f"{BM25_DEFAULTS['b']}, as Anserini",
                 help="BM25 b"),
    ReportOption(name="top_k", kind="int", default=BM25_DEFAULTS["top_k"], low=1, group="bm25",
                 surfaces=frozenset(("cli", "yaml")), help="documents retrieved per query"),
    ReportOption(name="cache_dir", kind="path", default="", group="bm25", surfaces=frozenset(("cli",)),
                 default_text="$NDCG_REPORT_CACHE/bm25 or the user cache", help="folder of cached BM25 runs"),
    ReportOption(name="measures", kind="measures", default="", flag="--measure", short="-m", metavar="MEASURE",
                 repeat=True, group="measure", default_text="nDCG at -k",
                 help="a measure to compute, repeatable: trec_eval's names (ndcg_cut.10,100 recall.1000 map "
                      "recip_rank P.10 map_cut.100 Rprec success.1,5 num_rel_ret bpref infAP iprec_at_recall.0.1 "
                      "set_F all_trec) or ir_measures' (nDCG@10 R@1000 AP RR@10 P@10 AP@100 Bpref IPrec@0.1 SetF), "
                      "several in one value separated by spaces; a family named without a cut-off takes -k, else "
                      "trec_eval's default cut-offs"),
    ReportOption(name="cutoffs", kind="cutoffs", default="", short="-k", group="measure", aliases=("ks", "k"),
                 default_text="1,3,5,10,20,100,1000",
                 help="comma-separated cut-offs of nDCG (without -m or --preset) or of the families named without "
                      "one; 'all' means no cut-off"),
    ReportOption(name="rel_level", kind="rel_level", default="", short="-l", metavar="N", group="measure",
                 default_text="1, or the preset's",
                 notebook_help="relevance level of the binary measures: a label at or above it is relevant",
                 help="relevance level, trec_eval's -l: the binary measures (P, R, AP, RR, Rprec, Success) count a "
                      "label >= N as relevant; nDCG always uses the graded labels"),
    ReportOption(name="preset", kind="preset", default="", metavar="NAME", group="measure",
                 help="a published measure set, before any -m"),
    ReportOption(name="judged_only", kind="bool", default=False, group="measure",
                 help="add beside each nDCG measure its judged-only twin, nDCG_judged: the run without its unjudged "
                      "documents, ranked again (Sakai's condensed list; ir_measures' judged_only)"),
    ReportOption(name="headline", kind="headline", default="", metavar="MEASURE", group="measure",
                 default_text="the preset's, else nDCG@10 if computed, else the first measure",
                 help="the measure of the verdicts, the pairwise tests and the figures"),
    ReportOption(name="gain", kind="choice", default="linear", choices=GAINS, group="measure",
                 notebook_help="linear (the label, as trec_eval) or exponential (2**label - 1)",
                 help="linear: gain = label (trec_eval); exponential: 2**label - 1"),
    ReportOption(name="missing", kind="choice", default="", choices=POLICIES["missing"], group="measure",
                 default_text="zero, or the preset's",
                 help="queries with relevant docs that the run lacks: score 0 (trec_eval -c) or leave out"),
    ReportOption(name="no_relevant", kind="choice", default="", choices=POLICIES["no_relevant"], group="measure",
                 default_text="zero, or the preset's",
                 help="queries with nothing relevant in qrels (for nDCG: no positive label; for the binary measures: "
                      "none at the relevance level): score 0 as trec_eval -c does, or leave out"),
    ReportOption(name="identical_ids", kind="choice", default="", choices=POLICIES["identical_ids"], group="measure",
                 default_text="keep, or the preset's: drop for beir",
                 help="run lines whose docid is their qid: keep (trec_eval) or drop (BEIR's ignore_identical_ids)"),
    ReportOption(name="max_retrieved", kind="int", default=0, flag="--max-retrieved", short="-M", metavar="N", low=0,
                 default_text="0: every line",
                 help="trec_eval's -M (as `eval -M`): only the first N lines of each query count, in trec_eval's order "
                      "(score descending, then docid descending), in every system's measures and tests"),
    ReportOption(name="title", kind="title", default="", flag="--name",
                 default_text="made from the system names", help="report title"),
    ReportOption(name="run_name", kind="name", default="", surfaces=frozenset(("cli", "yaml", "notebook")),
                 default_text="its file name", notebook_help="display name of `run` (with runs, each has its own)",
                 help="display name of the one run; with several runs, use --run NAME=PATH"),
    ReportOption(name="baseline_name", kind="name", default="", default_text="its file name; BM25 with --corpus",
                 help="display name of the baseline"),
    ReportOption(name="seed", kind="int", default=42, low=0, help="seed of the bootstrap and randomization tests"),
    ReportOption(name="timeout", kind="int", default=600, low=1, high=MAX_TIMEOUT, unit="seconds",
                 surfaces=frozenset(("cli", "yaml", "python")), help="seconds one notebook cell may take"),
    ReportOption(name="notebook", kind="path", default="", surfaces=frozenset(("cli",)),
                 help="a customised copy of the report notebook"),
    ReportOption(name="against", kind="path", default="", metavar="BEFORE_DIR", group="gate",
                 surfaces=frozenset(("cli", "notebook")),
                 help="an earlier build of this report (its folder): the report gets a section 'Since the last build', "
                      "gate.json beside it, and the build exits 4 on a regression, as `ndcg-report gate` would say"),
    *(_as_report_option(option) for option in GATE_OPTIONS if "cli" in option.surfaces),
)

BY_NAME: dict[str, ReportOption] = {option.name: option for option in OPTIONS}
ALIASES: dict[str, str] = {alias: option.name for option in OPTIONS for alias in option.aliases}
DEFAULTS: dict[str, object] = {option.name: option.default for option in OPTIONS}


def on(surface: Surface, *, paths: bool = True) -> tuple[ReportOption, ...]:
    """The options a surface takes, in the table's order (without the path options unless paths)."""
    return tuple(option for option in OPTIONS if surface in option.surfaces and (paths or option.kind not in PATH_KINDS))


def names(surface: Surface, group: str | None = None) -> tuple[str, ...]:
    """The names of a surface's options that are not paths (of one group only, if given)."""
    return tuple(option.name for option in on(surface, paths=False) if group is None or option.group == group)


def defaults(surface: Surface) -> dict[str, object]:
    """Every option of a surface (not its paths) at its default."""
    return {option.name: option.default for option in on(surface, paths=False)}
