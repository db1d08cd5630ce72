"""The documentation cannot drift from the code: the site builds with `mkdocs build --strict` (a broken
link, a missing page or an API object that no longer exists fails it), loads nothing from the network,
documents every public name, and every example marked `<!-- test: run -->` (in the README and in docs/)
and every example in the public docstrings runs."""

from __future__ import annotations

import doctest
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ndcg_report

SHARE_KERNEL_FORKS = True  # its builds fork their kernels from the session's server (conftest.py)

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
SMALL = REPO / "tests" / "data" / "small"  # 8 DL 2019 queries: what the examples run on
MARKER = "<!-- test: run -->"
API_PAGE = DOCS / "api.md"


def _environment() -> dict[str, str]:
    """The checkout's package first on the path, so the examples run against this source."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), *filter(None, [env.get("PYTHONPATH")])])
    env["MPLBACKEND"] = "agg"
    env["NO_MKDOCS_2_WARNING"] = "1"
    return env


def _mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], capture_output=True, text=True, env=_environment(),
                          cwd=config.parent, timeout=300)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as `make docs` builds it, into a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    result = _mkdocs_build(REPO / "mkdocs.yml", out)
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    return out


def test_site_builds_strict_with_every_page(site):
    pages = sorted(path.relative_to(DOCS).with_suffix(".html").as_posix() for path in DOCS.rglob("*.md"))
    missing = [page for page in pages if not (site / page).is_file()]
    assert not missing, missing
    assert (site / "api.html").read_text(encoding="utf-8").count('class="doc doc-heading"') >= 13


# Elements that would make a browser fetch something: a page must load only files of the site.
_LOADS = re.compile(r"<(?:script|link|img|iframe|source|audio|video|embed|object)\b[^>]*?\b(?:src|href|data|srcset)\s*=\s*"
                    r"[\"']?([^\"' >]+)", re.IGNORECASE)
_CSS_LOADS = re.compile(r"(?:@import\s+(?:url\()?|url\()\s*[\"']?((?:https?:)?//[^\"')\s]+)", re.IGNORECASE)


def test_site_loads_nothing_from_the_network(site):
    remote = []
    for page in site.rglob("*.html"):
        for target in _LOADS.findall(page.read_text(encoding="utf-8")):
            if re.match(r"(?:https?:)?//", target, re.IGNORECASE):
                remote.append(f"{page.relative_to(site)}: {target}")
    for sheet in site.rglob("*.css"):
        remote += [f"{sheet.relative_to(site)}: {url}" for url in _CSS_LOADS.findall(sheet.read_text(encoding="utf-8"))]
    assert not remote, "pages load from the network:\n" + "\n".join(sorted(set(remote)))
    assert "fonts.googleapis" not in (site / "index.html").read_text(encoding="utf-8")


def test_a_reference_to_a_vanished_api_name_fails_the_build(tmp_path):
    """What keeps the API reference complete: a `:::` to an object that no longer exists fails --strict."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# API\n\n::: ndcg_report.core.metrics.evaluate_vanished\n")
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: check\nstrict: true\ntheme:\n  name: material\n  font: false\nplugins:\n  - mkdocstrings:\n"
        f"      handlers:\n        python:\n          paths: [{str(REPO / 'src')!r}]\n"
    )
    result = _mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0
    assert "evaluate_vanished" in result.stdout + result.stderr


def _reference_paths() -> list[str]:
    return re.findall(r"^::: (\S+)\s*$", API_PAGE.read_text(encoding="utf-8"), re.MULTILINE)


def _resolve(path: str) -> object:
    import importlib

    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("name", ndcg_report.__all__)
def test_every_public_name_is_in_the_api_reference(name):
    public = getattr(ndcg_report, name)
    documented = [path for path in _reference_paths() if path.rpartition(".")[2] == name]
    assert documented, f"docs/api.md has no `::: ...{name}` for ndcg_report.{name}"
    assert any(_resolve(path) is public for path in documented), (name, documented)


def test_the_api_reference_documents_only_public_names():
    assert sorted(path.rpartition(".")[2] for path in _reference_paths()) == sorted(ndcg_report.__all__)


def _docstring_sections(name: str) -> tuple[str, set[str]]:
    """The kind of the public object (function, class, attribute) and its numpy sections, as
    mkdocstrings reads them (griffe, from the source)."""
    import griffe

    path = next(path for path in _reference_paths() if path.rpartition(".")[2] == name)
    package = griffe.load("ndcg_report", search_paths=[str(REPO / "src")], docstring_parser="numpy")
    obj = package[path.removeprefix("ndcg_report.")]
    assert obj.docstring is not None, f"{path} has no docstring"
    return obj.kind.value, {section.kind.value for section in obj.docstring.parsed}


@pytest.mark.parametrize("name", ndcg_report.__all__)
def test_every_public_docstring_has_parameters_returns_and_an_example(name):
    kind, sections = _docstring_sections(name)
    assert "examples" in sections, f"{name}: no Examples section"
    if kind == "function":
        assert {"parameters", "returns"} <= sections, f"{name}: sections {sorted(sections)}"
    elif kind == "class":  # a class: its constructor's parameters, or the attributes it holds
        assert sections & {"parameters", "attributes"}, f"{name}: sections {sorted(sections)}"


@pytest.fixture()
def small_data(tmp_path) -> Path:
    """A folder holding the small data the examples name (qrels.txt, bm25.txt, monot5.txt, topics.txt)."""
    for path in SMALL.iterdir():
        shutil.copy(path, tmp_path / path.name)
    return tmp_path


def test_docstring_examples_run(small_data, monkeypatch):
    monkeypatch.chdir(small_data)
    public = {name: getattr(ndcg_report, name) for name in ndcg_report.__all__}
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    examples = 0
    for name, obj in public.items():
        if name == "__version__":  # a string: its docstring is the module attribute's, checked above
            continue
        for test in finder.find(obj, name, globs=dict(public)):
            examples += len(test.examples)
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0
    assert examples >= 25


def _marked_blocks() -> list[tuple[str, str, str]]:
    """(where, language, code) of every fenced block right after a `<!-- test: run -->` line."""
    blocks = []
    for page in [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]:
        lines = page.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if line.strip() != MARKER:
                continue
            fence = re.match(r"```(\w+)$", lines[number + 1])
            assert fence, f"{page.name}:{number + 1}: {MARKER} must be followed by a fenced code block"
            end = lines.index("```", number + 2)
            blocks.append((f"{page.relative_to(REPO)}:{number + 2}", fence.group(1), "\n".join(lines[number + 2:end])))
    return blocks


BLOCKS = _marked_blocks()


def test_the_tours_are_run():
    where = [block[0] for block in BLOCKS]
    assert sum(place.startswith("README.md") for place in where) >= 2  # the CLI tour and the Python tour
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize(("where", "language", "code"), BLOCKS, ids=[block[0] for block in BLOCKS])
def test_marked_example_runs(where, language, code, small_data, tmp_path_factory):
    env = _environment()
    if language == "python":
        command = [sys.executable, "-c", code]
    elif language in ("sh", "bash", "console"):
        shims = tmp_path_factory.mktemp("bin")  # `ndcg-report` as this checkout's command line
        (shims / "ndcg-report").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m ndcg_report.cli "$@"\n')
        (shims / "ndcg-report").chmod(0o755)
        env["PATH"] = f"{shims}{os.pathsep}{env['PATH']}"
        command = ["bash", "-e", "-o", "pipefail", "-c", code]
    else:
        raise AssertionError(f"{where}: cannot run a {language} block")
    result = subprocess.run(command, cwd=small_data, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{where} failed:\n{code}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


def test_the_config_reference_lists_every_config_key():
    from ndcg_report.batch.config import REPORT_KEYS, SUITE_ENTRY_KEYS, TOP_KEYS

    text = (DOCS / "scheduled-builds.md").read_text(encoding="utf-8")
    table = text[text.index("| key | where |"):]
    table = table[:table.index("\n\n")]
    documented = {key for row in table.splitlines()[2:] for key in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert documented == set(TOP_KEYS) | set(REPORT_KEYS) | set(SUITE_ENTRY_KEYS)


def test_the_notebook_parameter_table_lists_every_parameter():
    import json

    notebook = json.loads((REPO / "src/ndcg_report/build/notebooks/ndcg_report.ipynb").read_text(encoding="utf-8"))
    cell = next(cell for cell in notebook["cells"] if "parameters" in cell["metadata"].get("tags", []))
    parameters = set(re.findall(r"^(\w+)\s*:", "".join(cell["source"]), re.MULTILINE))
    text = (DOCS / "notebook.md").read_text(encoding="utf-8")
    table = text[text.index("| parameter | type |"):]
    table = table[:table.index("\n\n")]
    documented = {key for row in table.splitlines()[2:] for key in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert documented == parameters


def test_the_readme_is_short_and_points_to_the_docs():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert "make docs" in text and "docs/demo-report.png" in text
