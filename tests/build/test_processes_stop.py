"""A stop signal that arrives while a build starts a child process (Popen running its fork handlers)
stops the build: it was raised inside a fork handler, where Python drops exceptions, and lost; and a
child dies when the build is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

PROBE = r"""
import os, signal, sys
from ndcg_report import interrupts
from ndcg_report.build.steps.processes import ChildProcess

interrupts.install()
fired = []
def stop_now():  # a Ctrl-C whose handler runs inside the fork handlers, as it did in the failing build
    if not fired:
        fired.append(1)
        signal.raise_signal(signal.SIGINT)
os.register_at_fork(after_in_parent=stop_now)
try:
    child = ChildProcess([sys.executable, "-c", "import time; time.sleep(60)"], env=dict(os.environ))
    print("started, the stop lost", flush=True)
    child.kill()
except KeyboardInterrupt as exc:
    print("interrupted", interrupts.signal_of(exc), flush=True)
"""


def test_a_stop_during_the_fork_of_a_child_is_raised_and_the_child_killed():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.strip() == "interrupted 2", done.stderr
    assert "Exception ignored" not in done.stderr


def test_a_child_of_the_build_dies_when_the_build_is_killed(tmp_path):
    starter = textwrap.dedent("""
        import sys, time
        from ndcg_report.build.steps.processes import ChildProcess
        child = ChildProcess([sys.executable, "-c", "import time; time.sleep(60)"], env={})
        print(child._process.pid, flush=True)
        time.sleep(60)
    """)
    process = subprocess.Popen([sys.executable, "-c", starter], stdout=subprocess.PIPE, text=True)
    child = int(process.stdout.readline())
    process.send_signal(signal.SIGKILL)  # as the kernel's OOM killer does
    process.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and Path(f"/proc/{child}").exists() and "Z" not in _state(child):
        time.sleep(0.05)
    alive = Path(f"/proc/{child}").exists() and "Z" not in _state(child)
    if alive:
        os.kill(child, signal.SIGKILL)
    assert not alive


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_a_child_started_niced_runs_at_that_much_lower_priority_and_nbval_is_started_so(tmp_path, monkeypatch):
    """nbval's process waits on papermill's cells: niced, it leaves the fork server's imports (which both
    kernels wait for) the cores; a child started without nice keeps this process's priority."""
    from ndcg_report.build import pipeline
    from ndcg_report.build.steps.processes import ChildProcess

    show = [sys.executable, "-c", "import os; print(os.nice(0))"]
    own = os.nice(0)
    assert ChildProcess(show, dict(os.environ), nice=10).wait().stdout.strip() == str(min(own + 10, 19))
    assert ChildProcess(show, dict(os.environ)).wait().stdout.strip() == str(own)
    started = {}
    monkeypatch.setattr(pipeline, "ChildProcess", lambda command, env, **options: started.update(options))
    (tmp_path / ".jupyter").mkdir()
    pipeline._start_nbval(tmp_path / "report.ipynb", {}, 60)
    assert started["nice"] == 10
