"""What other tools load by name: the console script, the kernel provisioner, the nbconvert exporter,
the nbval step's pytest plugin and the modules the build runs with `python -m`; and every file of the
package is tracked by git, so that a clean clone has it."""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
DECLARED = [(group, name, target) for group, entries in
            [("console_scripts", PYPROJECT["project"]["scripts"]), *PYPROJECT["project"]["entry-points"].items()]
            for name, target in entries.items()]


@pytest.mark.parametrize("group,name,target", DECLARED, ids=[f"{group}:{name}" for group, name, _ in DECLARED])
def test_each_declared_entry_point_is_installed_and_loads(group, name, target):
    installed = {point.name: point for point in importlib.metadata.entry_points(group=group)}
    assert name in installed, f"{group}:{name} is not installed: run `make test` (it reinstalls after pyproject.toml changes)"
    assert installed[name].value == target, f"the installed {name} points at {installed[name].value}, pyproject at {target}"
    module, _, attribute = target.partition(":")
    assert callable(getattr(importlib.import_module(module), attribute))


@pytest.mark.parametrize("module", [
    "ndcg_report.cli",  # python -m ndcg_report.cli (each report of a batch is built so)
    "ndcg_report.build.steps.papermill_process",
    "ndcg_report.build.kernels.kernel_forks",
    "ndcg_report.build.steps.nbval_plugin",  # pytest -p ndcg_report.build.steps.nbval_plugin
])
def test_modules_started_by_name_exist(module):
    assert importlib.util.find_spec(module) is not None
    source = Path(importlib.util.find_spec(module).origin).read_text(encoding="utf-8")
    if module != "ndcg_report.build.steps.nbval_plugin":
        assert '__name__ == "__main__"' in source


def test_the_build_names_the_modules_it_starts():
    """The pipeline starts papermill's process, nbval's plugin and the fork server by these names."""
    text = "".join((ROOT / "src/ndcg_report/build" / name).read_text(encoding="utf-8")
                   for name in ("pipeline.py", "kernels/kernel_forks.py"))
    for module in ("ndcg_report.build.steps.papermill_process", "ndcg_report.build.steps.nbval_plugin",
                   "ndcg_report.build.kernels.kernel_forks"):
        assert f'"{module}"' in text


def test_every_file_of_the_package_is_tracked_by_git():
    """A file of the package that git ignores is missing from a clean clone (a `build/` pattern once
    hid src/ndcg_report/build/'s new modules)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    files = [path.relative_to(ROOT).as_posix() for path in (ROOT / "src" / "ndcg_report").rglob("*")
             if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"]
    ignored = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], input="\n".join(files), cwd=ROOT,
                             capture_output=True, text=True).stdout.split()
    assert not ignored, f"ignored by .gitignore, so missing from a clean clone: {ignored}"


def test_each_command_module_adds_the_subcommand_it_names_in_the_order_help_lists_them():
    """cli dispatches a subcommand to the module whose NAME it is: each module must add exactly that one."""
    import argparse

    from ndcg_report.cli import COMMANDS, build_parser

    subcommands = next(action for action in build_parser()._actions if isinstance(action, argparse._SubParsersAction))
    assert list(subcommands.choices) == [command.NAME for command in COMMANDS] == [
        "eval", "build", "suite", "bm25", "judges", "pool", "table", "gate", "demo", "batch"]
    assert all(callable(command.add_parser) and callable(command.run) for command in COMMANDS)
