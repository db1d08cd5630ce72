"""The package's folders are its stages, and imports point down only: no cycles, no reaching up."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "ndcg_report"

PAGE = PACKAGE.parents[1] / "docs" / "internals" / "architecture.md"
PAGE_TEXT = PAGE.read_text(encoding="utf-8")
MAX_LINES = 450  # a module past it is split along its seams
MAX_MODULES = 15  # in one folder, not counting __init__.py


def page_layers(text: str) -> dict[str, float]:
    """The layer table of docs/internals/architecture.md: stage -> layer (lower numbers are lower layers).
    A module may import its own stage and any lower layer; stats and baseline share a layer and are
    siblings: neither may import the other."""
    rows = re.findall(r"^\| ([0-9.]+) \| `(ndcg_report(?:\.[a-z_]+)?)` \|", text, re.M)
    return {stage: float(layer) for layer, stage in rows}


LAYERS = page_layers(PAGE_TEXT)


def page_upward_imports(text: str) -> set[tuple[str, str]]:
    """The imports the page allows upward, each a line `- upward: `MODULE` -> `MODULE``: a call made
    inside a function (or a type-checking import), never at a module's import."""
    return set(re.findall(r"^- upward: `(ndcg_report[a-z_.]*)` -> `(ndcg_report[a-z_.]*)`", text, re.M))


UPWARD = page_upward_imports(PAGE_TEXT)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def stage(module: str) -> str:
    """The layer key of a module: its subpackage, or the top-level module itself."""
    parts = module.split(".")
    return ".".join(parts[:2])


def imported_modules(path: Path) -> set[str]:
    """Every ndcg_report module imported anywhere in the file (function-level imports too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("ndcg_report"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ndcg_report"):
            found.add(node.module)
    return found


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def test_every_module_belongs_to_a_layer():
    unknown = sorted(m for m in MODULES if m != "ndcg_report" and stage(m) not in LAYERS)
    assert not unknown, f"add these to a stage in LAYERS: {unknown}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "ndcg_report"))
def test_imports_point_down_only(module):
    here = stage(module)
    for target in imported_modules(MODULES[module]):
        there = stage(target)
        assert target != "ndcg_report", f"{module} imports the package facade; import the module that defines it"
        if there == here or (module, target) in UPWARD:
            continue
        assert LAYERS[there] < LAYERS[here], f"{module} (layer {LAYERS[here]}) imports {target} (layer {LAYERS[there]})"


def test_the_upward_imports_are_the_page_s_and_made_only_when_called():
    assert UPWARD == {("ndcg_report.analysis.experiment", "ndcg_report.build.from_objects")}
    for module, target in UPWARD:
        tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
        at_import = [node for node in tree.body if isinstance(node, ast.ImportFrom) and node.module == target]
        assert not at_import, f"{module} imports {target} when it is imported; import it inside the function"


def test_no_import_cycles():
    graph = {m: {t for t in imported_modules(p) if t in MODULES and t != "ndcg_report" and (m, t) not in UPWARD}
             for m, p in MODULES.items()}
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                path = trail + [node]
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(target):] + [target]))
            if target not in state:
                visit(target, trail + [node])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [])


def test_the_page_has_the_layer_table():
    assert LAYERS["ndcg_report.cli"] > LAYERS["ndcg_report.commands"] > LAYERS["ndcg_report.batch"] > \
        LAYERS["ndcg_report.build"] > LAYERS["ndcg_report.analysis"] > LAYERS["ndcg_report.stats"] > \
        LAYERS["ndcg_report.core"] > LAYERS["ndcg_report.inputs"] > LAYERS["ndcg_report.errors"]
    assert LAYERS["ndcg_report.stats"] == LAYERS["ndcg_report.baseline"]


def docstring_summary(path: Path) -> str:
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False) or ""
    return docstring.strip().split("\n")[0].strip()


def page_modules(text: str) -> dict[str, str]:
    """`- `path`: summary` lines of the page's module list."""
    listed = text.split("<!-- modules:", 1)[1].split("<!-- end of modules -->", 1)[0]
    return dict(re.findall(r"^- `([^`]+\.py)`: (.*)$", listed, re.M))


def test_every_module_is_on_the_page_with_its_docstring_line():
    listed = page_modules(PAGE_TEXT)
    modules = {path.relative_to(PACKAGE).as_posix(): path for path in PACKAGE.rglob("*.py")}
    missing = sorted(set(modules) - set(listed))
    assert not missing, f"not on docs/internals/architecture.md (run scripts/architecture_page.py): {missing}"
    gone = sorted(set(listed) - set(modules))
    assert not gone, f"on the page but not in the package: {gone}"
    differ = {name: (listed[name], docstring_summary(path)) for name, path in modules.items()
              if listed[name] != docstring_summary(path)}
    assert not differ, f"the page's line differs from the module's docstring (run scripts/architecture_page.py): {differ}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "ndcg_report"))
def test_every_module_says_what_it_does_in_one_line(module):
    summary = docstring_summary(MODULES[module])
    assert summary and len(summary) <= 120, f"{module}: give the docstring a first line of at most 120 characters"


def test_the_page_script_leaves_the_page_as_it_is():
    """scripts/architecture_page.py, which writes the list, would write the page as it stands."""
    spec = importlib.util.spec_from_file_location("architecture_page", PACKAGE.parents[1] / "scripts" / "architecture_page.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.page_with_modules(PAGE_TEXT) == PAGE_TEXT, "run scripts/architecture_page.py"


def test_no_module_is_too_long():
    long = {m: n for m, path in MODULES.items() if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"over {MAX_LINES} lines, split along their seams: {long}"


def test_no_folder_holds_too_many_modules():
    counts: dict[str, int] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name != "__init__.py":
            folder = path.parent.relative_to(PACKAGE.parent).as_posix()
            counts[folder] = counts.get(folder, 0) + 1
    crowded = {folder: n for folder, n in counts.items() if n > MAX_MODULES}
    assert not crowded, f"more than {MAX_MODULES} modules in a folder, group them: {crowded}"


def test_where_a_change_goes_names_files_that_exist():
    section = PAGE_TEXT[PAGE_TEXT.index("## Where a change goes"):PAGE_TEXT.index("## Modules")]
    named = set(re.findall(r"`((?:src|scripts|docs|notebooks|tests)/[^`]*)`", section))
    repo = PACKAGE.parents[1]
    assert len(named) >= 15
    missing = sorted(path for path in named if not (repo / path.replace("NAME.py", "eval.py")).exists())
    assert not missing, f"docs/internals/architecture.md's Where a change goes names what is not there: {missing}"
    for kind in ("A new measure", "A new input format", "A new report option", "A new report section", "A new command"):
        assert f"**{kind}**" in section


# --- the tests themselves: named after what they check, every folder collected ----------------------------

TESTS = PACKAGE.parents[1] / "tests"
TEST_FILES = sorted(path for path in TESTS.rglob("test_*.py") if "data" not in path.relative_to(TESTS).parts)
# A process reference: a numbered issue, session, stop or round, which a reader of the repository cannot open.
PROCESS_REFERENCE = re.compile(r"\b(issue|session|stop|round)s? #?\d+", re.I)
# Except a peer project's own issue (the project's name, then "issue" and its number), and a command-line
# option whose value is a count (a benchmark's number of timing rounds).
PEERS = ("PyTerrier", "ir_measures", "trec_eval", "ranx", "pytrec_eval", "papermill", "nbval", "nbconvert", "bm25s",
         "scipy", "jupyter_client", "pyzmq", "matplotlib", "pandas", "pyarrow")
ALLOWED_REFERENCE = re.compile(rf"(?:\b(?:{'|'.join(PEERS)})'?s? issues? #?\d+)|(?:--(?:issue|session|stop|round)s? \d+)",
                               re.I)
MAX_TEXT_BYTES = 2 << 20  # larger tracked files are data


def test_test_files_and_tests_are_named_after_what_they_check():
    """No test file named for a process ("hardening", a number but a module's), no test named
    test_<digits>_...: a test lives beside the module it guards and is named after the behaviour it checks."""
    assert len(TEST_FILES) > 50
    modules = {path.stem for path in PACKAGE.rglob("*.py")}  # a module's own digits are its name's (bm25)
    badly_named = [str(path.relative_to(TESTS)) for path in TEST_FILES if "hardening" in path.name.lower()
                   or path.stem[-1].isdigit() and path.stem.removeprefix("test_") not in modules]
    assert not badly_named, f"name these test files after the module they test: {badly_named}"
    numbered = [f"{path.relative_to(TESTS)}::{node.name}" for path in TEST_FILES
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and re.match(r"test_\d+", node.name)]
    assert not numbered, f"name these tests after the behaviour they check: {numbered}"


def test_no_tracked_text_names_an_issue_a_session_a_stop_or_a_round_by_number():
    """Comments, docstrings, docs and messages say what and why, never a numbered issue, session, stop or
    round: a reader cannot open those. A peer project's own issue and a command-line option's count are fine."""
    import subprocess

    repo = PACKAGE.parents[1]
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=False)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    found = []
    for name in listed.stdout.decode().split("\0"):
        path = repo / name
        if not name or name.startswith("tests/data/") or not path.is_file() or path.stat().st_size > MAX_TEXT_BYTES:
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue  # binary
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            for match in PROCESS_REFERENCE.finditer(line):
                if not any(allowed.start() <= match.start() < allowed.end()
                           for allowed in ALLOWED_REFERENCE.finditer(line)):
                    found.append(f"{name}:{number}: {match.group()}")
    assert not found, f"say what and why instead of naming a process step: {found}"


def test_pytest_collects_every_test_folder(request):
    """No folder of tests is one pytest skips by name (its default norecursedirs holds "build")."""
    from fnmatch import fnmatch

    skipped = request.config.getini("norecursedirs")
    missed = sorted({str(path.parent.relative_to(TESTS)) for path in TEST_FILES
                     for part in path.relative_to(TESTS).parts[:-1] if any(fnmatch(part, p) for p in skipped)})
    assert not missed, f"pytest would not collect these test folders (norecursedirs in pyproject.toml): {missed}"
