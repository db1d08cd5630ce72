"""The families as a reader sees them: names, definition and averaging, for eval --list, the docs and errors.

Everything here is derived from the Family rows of registry.py: `eval --list` prints `listing()`,
docs/measures.md's table is `markdown_table()` (scripts/measures_page.py writes it, a test keeps it
true) and an unknown measure's error names `known_names()`. A cut-off is K (a rank) or X (a number:
IPrec's recall level, Rprec_mult's multiple of R).
"""

from __future__ import annotations

import textwrap

from ndcg_report.core.measures.family import MIN_GEO_MEAN, Family
from ndcg_report.core.measures.registry import FAMILIES, TREC_NICKNAMES

# The letters the definitions use
LEGEND = ("k: the cut-off, a rank (K in the names); X: a cut-off that is a number (IPrec, Rprec_mult); R: the "
          "documents judged relevant (label >= the relevance level); N: the documents retrieved; Rr: the relevant "
          "documents retrieved.")
# How a family's `all` row is made (Family.summary), and what a query needs to have something relevant to it
ALL_ROW = {"mean": "mean",
           "geometric_mean": f"geometric mean (a value below {MIN_GEO_MEAN:.5f} counts as {MIN_GEO_MEAN:.5f})",
           "sum": "sum (csv and json: the mean)",
           "positive_judgements": "sum (csv and json: the mean); with --missing zero (-c), the judgements with a "
                                  "label > 0 of every query"}
RELEVANT = {"positive": "a label > 0", "level": "a label >= the level", "any": "(not used: every query is averaged)"}


def ir_names(family: Family) -> tuple[str, ...]:
    """The family's own spellings: 'nDCG', 'nDCG@K'; 'P@K'; 'IPrec@X'; 'AP'."""
    cut = f"{family.name}@{'X' if family.fractional else 'K'}"
    return {"optional": (family.name, cut), "required": (cut,), "none": (family.name,)}[family.cutoff]


def trec_names(family: Family) -> tuple[str, ...]:
    """trec_eval's spellings (or ours of that shape, where trec_eval lacks the family): 'map', 'map_cut.K'."""
    cut = () if family.trec_cut is None else (f"{family.trec_cut}.{'X' if family.fractional else 'K'}",)
    return (() if family.trec is None else (family.trec,)) + cut


def other_names(family: Family) -> tuple[str, ...]:
    """Its aliases that are not one of its trec_eval names ('mrr' for RR, 'recall' for R)."""
    trec = {name.lower() for name in (family.trec, family.trec_cut) if name}
    return tuple(alias for alias in family.aliases if alias.lower() not in trec)


def known_names() -> str:
    """The measure names accepted, for messages: ir_measures' spellings that trec_eval does not share,
    then trec_eval's (and `all_trec`)."""
    own = [name for family in FAMILIES.values() for name in ir_names(family) if name not in trec_names(family)]
    trec = [name for family in FAMILIES.values() for name in trec_names(family)]
    return f"{' '.join(own)} (ir_measures), or {' '.join(trec + list(TREC_NICKNAMES))} (trec_eval)"


def _trec_text(family: Family, quote: str) -> str:
    names = ", ".join(f"{quote}{name}{quote}" for name in trec_names(family))
    return names + ("" if family.trec_eval_has else " (not trec_eval's)")


def _all_row(family: Family) -> str:
    return ALL_ROW[family.summary] + ("" if family.per_query else "; printed overall only")


def listing(width: int = 100) -> str:
    """What `eval --list` prints: the legend, then each family's names, definition, `all` row (how it is
    made over the queries) and what is relevant to it."""
    lines = [textwrap.fill(LEGEND, width), ""]
    for family in FAMILIES.values():
        also = other_names(family)
        lines.append(", ".join(ir_names(family)) + (f" (also {', '.join(also)})" if also else "")
                     + f"; trec_eval: {_trec_text(family, '')}")
        for label, text in (("per query", family.definition), ("over queries", _all_row(family)),
                            ("relevant if", RELEVANT[family.relevant])):
            lines.append(textwrap.fill(f"{label}: {text}", width, initial_indent="    ", subsequent_indent="      "))
    return "\n".join(lines) + "\n"


def markdown_table() -> str:
    """docs/measures.md's table of the families: names, definition, `all` row, what is relevant."""
    rows = ["| ir_measures | trec_eval | per query | over queries (`all` row) | relevant if |",
            "| --- | --- | --- | --- | --- |"]
    for family in FAMILIES.values():
        also = other_names(family)
        names = ", ".join(f"`{name}`" for name in ir_names(family)) + (
            f" (also {', '.join(f'`{name}`' for name in also)})" if also else "")
        definition = family.definition.replace("*", "\\*")  # p**N: no emphasis
        cells = (names, _trec_text(family, "`"), definition, _all_row(family), RELEVANT[family.relevant])
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows) + "\n"

