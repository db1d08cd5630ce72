"""The package's folders are its stages, and imports point down only: no cycles, no reaching up."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "ndcg_report"

# Lower numbers are lower layers; a module may import its own layer's package and any lower layer.
# stats and baseline are siblings: neither may import the other.
LAYERS = {
    "ndcg_report.errors": 0, "ndcg_report.files": 0, "ndcg_report.version": 0, "ndcg_report.interrupts": 0,
    "ndcg_report.dask_cluster": 1,  # imported only with --dask (batch and eval)
    "ndcg_report.inputs": 1,
    "ndcg_report.core": 2,
    "ndcg_report.stats": 3, "ndcg_report.baseline": 3,
    "ndcg_report.analysis": 4,
    "ndcg_report.build": 4.5,
    "ndcg_report.batch": 5,
    "ndcg_report.commands": 5.5,  # each command, its parser and output, under ndcg_report.cli
    "ndcg_report.cli": 6,
}


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
        if there == here:
            continue
        assert LAYERS[there] < LAYERS[here], f"{module} (layer {LAYERS[here]}) imports {target} (layer {LAYERS[there]})"


def test_no_import_cycles():
    graph = {m: {t for t in imported_modules(p) if t in MODULES and t != "ndcg_report"} for m, p in MODULES.items()}
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
