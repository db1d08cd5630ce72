"""Each family's own row is what is said of it: docs/measures.md's table, `eval --list` and the names an
unknown measure's error lists are derived from the Family rows (core.measures.catalogue), and the page
fails the suite when it is not what scripts/measures_page.py writes."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from ndcg_report import ParameterError
from ndcg_report.core.measures.catalogue import ir_names, known_names, markdown_table, trec_names
from ndcg_report.core.measures.names import resolve_measures
from ndcg_report.core.measures.registry import FAMILIES

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "measures.md"


def page_script():
    spec = importlib.util.spec_from_file_location("measures_page", ROOT / "scripts" / "measures_page.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)  # type: ignore[union-attr]
    return script


def test_the_measures_page_has_the_families_table_as_the_script_writes_it():
    text = PAGE.read_text(encoding="utf-8")
    assert page_script().page_with_table(text) == text, "run scripts/measures_page.py"


def test_a_definition_changed_on_the_page_alone_fails_the_check_and_the_script_puts_it_back():
    script = page_script()
    text = PAGE.read_text(encoding="utf-8")
    changed = text.replace("| 1 if a relevant document is in the top k, else 0 |", "| 1 if lucky |")
    assert changed != text
    assert script.page_with_table(changed) != changed  # what the test above and --check compare
    assert script.page_with_table(changed) == text


def test_every_family_has_one_row_of_the_table_with_its_definition():
    rows = markdown_table().splitlines()[2:]
    assert len(rows) == len(FAMILIES)
    for row, family in zip(rows, FAMILIES.values()):
        cells = row.split(" | ")
        assert cells[0].startswith("| " + ", ".join(f"`{name}`" for name in ir_names(family)))
        assert cells[2] == family.definition.replace("*", "\\*")
    assert "| `gm_map` | `gm_map` | AP | geometric mean (a value below 0.00001 counts as 0.00001); printed overall only |" in (
        markdown_table())


def test_eval_list_prints_every_family_s_names_and_definition_without_qrels_or_run():
    listed = subprocess.run([sys.executable, "-m", "ndcg_report.cli", "eval", "--list"], capture_output=True, text=True,
                            timeout=120)
    assert listed.returncode == 0 and listed.stderr == ""
    text = " ".join(listed.stdout.split())  # the definitions are wrapped
    for family in FAMILIES.values():
        assert family.definition in text
        assert ", ".join(ir_names(family)) in text and ", ".join(trec_names(family)) in text
    assert "nDCG_judged, nDCG_judged@K (also ndcg'); trec_eval: ndcg_judged, ndcg_judged_cut.K (not trec_eval's)" in text
    missing = subprocess.run([sys.executable, "-m", "ndcg_report.cli", "eval"], capture_output=True, text=True,
                             timeout=120)
    assert missing.returncode == 2 and "the following arguments are required: qrels, RUN" in missing.stderr


def test_the_known_names_are_every_family_s_and_each_one_parses():
    names = known_names()
    for name in ("ndcg_judged", "ndcg_judged_cut.K", "recip_rank_cut.K", "nDCG_judged@K", "RR@K", "all_trec"):
        assert f" {name} " in f" {names} "
    for family in FAMILIES.values():
        for name in (*ir_names(family), *trec_names(family)):
            assert resolve_measures(name.replace("@K", "@10").replace(".K", ".10").replace("@X", "@0.2")
                                    .replace(".X", ".0.2")).measures[0].measure == family.name
    with pytest.raises(ParameterError, match="known: nDCG nDCG@K nDCG_judged nDCG_judged@K P@K "):
        resolve_measures("ndcg_cutt.10")
