"""How a failed step is said (build/steps/step_failures.py): a timed-out cell with the limit, a full disk
naming it, a notebook that is not JSON as bad input, a dead kernel as such."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from ndcg_report.errors import BuildError
from tests.helpers import PassedNbval, build_args, build_in_process, cli, one_line


def test_a_timed_out_cell_is_named_with_the_limit(tmp_path):
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"),
                                               nbformat.v4.new_code_cell("import time\ntime.sleep(60)")])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, tmp_path / "slow.ipynb")
    result = cli(*build_args(tmp_path / "out", "--notebook", tmp_path / "slow.ipynb", "--timeout", "2"))
    one_line(result, 1, "step papermill failed: cell 1 (`import time`) did not finish within --timeout 2 s")
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".out.*"))


def test_a_disk_that_fills_while_papermill_writes_is_one_line_naming_it(tmp_path, monkeypatch):
    from ndcg_report.build import pipeline as build

    from ndcg_report.build.steps.processes import Finished

    class OutOfSpace(PassedNbval):
        """papermill's process: it writes half the notebook, then the disk is full."""

        def __init__(self, command, env, **kwargs):
            self.papermill = "ndcg_report.build.steps.papermill_process" in command
            if self.papermill:
                executed = Path(command[command.index("ndcg_report.build.steps.papermill_process") + 2])
                executed.write_text('{"cells": [{"cell_type": "code", "source": "x = 1", "outp')  # cut short

        def wait(self):
            stderr = ('Traceback (most recent call last):\n  File "papermill/iorw.py", line 1\n'
                      "OSError: [Errno 28] No space left on device\n")
            return Finished(1, "", stderr) if self.papermill else super().wait()

    monkeypatch.setattr(build, "ChildProcess", OutOfSpace)
    with pytest.raises(BuildError) as caught:
        build_in_process(tmp_path / "out")
    message = str(caught.value)
    assert message.startswith(f"step papermill failed: no space left on the disk holding {tmp_path} (")
    assert "\n" not in message and not list(tmp_path.glob(".out.*"))
    executed = tmp_path / "report.ipynb"  # a cut notebook read later (papermill said it succeeded) is one line too
    executed.write_text('{"cells": [')
    with pytest.raises(BuildError, match="report.ipynb was cut short; no space left on the disk holding"):
        build._read_notebook(executed)


def test_a_notebook_that_is_not_json_is_bad_input(tmp_path):
    (tmp_path / "bad.ipynb").write_text("{ not json")
    result = cli(*build_args(tmp_path / "out", "--notebook", tmp_path / "bad.ipynb"))
    one_line(result, 2, "bad.ipynb: not a Jupyter notebook (not JSON")
    assert not list(tmp_path.glob(".out.*")) and not (tmp_path / "out").exists()


def test_a_killed_step_or_dead_kernel_is_not_reported_as_outputs_differ(tmp_path):
    from ndcg_report.build.pipeline import _check_nbval
    from ndcg_report.build.steps.processes import Finished
    from ndcg_report.build.steps.step_failures import KERNEL_DIED
    from ndcg_report.errors import BuildError

    for finished, message in (
            (Finished(-signal.SIGKILL, "...", ""), "step nbval failed: it was killed by SIGKILL (out of memory?)"),
            (Finished(1, f"F\nFAILED report.ipynb::Cell 7\n{KERNEL_DIED}\n", ""),
             "step nbval failed in Cell 7: the kernel died (killed: out of memory?)")):
        with pytest.raises(BuildError) as raised:
            _check_nbval(finished, tmp_path / "report.ipynb")
        assert str(raised.value) == message
