"""A build's kernels keep their connection files (HMAC key and addresses) in private 0700 folders, never
straight in the temporary folder (build/kernels/fork_provisioner.py); a temporary folder another user could
swap them in is refused (build/kernels/temp_folder.py); a killed kernel starter's folder goes with the next
build (kernel_forks.remove_stale_socket_folders)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ndcg_report.build.kernels.kernel_forks import NO_FORKS_ENV, running_fork_server
from ndcg_report.build.kernels.temp_folder import check_temporary_folder
from ndcg_report.build.pipeline import _kernel_environment
from ndcg_report.errors import ParameterError
from tests.helpers import NOBODY, SMALL, as_root, build_from, cli, one_line, small_config

# printed by both kernels of a build (nbval compares them): where the kernel's connection file is
WHERE_IS_MY_CONNECTION_FILE = """\
import os, tempfile
from ipykernel.kernelapp import IPKernelApp
folder = os.path.dirname(IPKernelApp.instance().abs_connection_file)
status = os.stat(folder)
print(os.path.dirname(folder) == tempfile.gettempdir(), os.path.basename(folder).startswith("ndcg-report-forks-"),
      oct(status.st_mode & 0o777), status.st_uid == os.geteuid(),
      sorted(name for name in os.listdir(tempfile.gettempdir()) if name.endswith(".json")))"""


def private_folder(path: Path, mode: int = 0o700) -> Path:
    path.mkdir()
    os.chmod(path, mode)
    return path


@pytest.mark.parametrize("forks, tmp_mode", [(True, 0o700), (False, 0o1777)], ids=["forked-0700", "launched-1777"])
def test_every_kernels_connection_file_is_in_a_private_folder(tmp_path, forks, tmp_mode):
    """jupyter_client wrote each kernel's connection file straight into TMPDIR (tempfile.mkstemp), where a
    user who may write there could swap it for one with a key they know; a /tmp-like folder (1777) is fine."""
    import nbformat

    from ndcg_report.build.pipeline import package_file

    notebook = nbformat.read(package_file("notebooks", "ndcg_report.ipynb"), as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(WHERE_IS_MY_CONNECTION_FILE))
    probe = tmp_path / "probe.ipynb"
    nbformat.write(notebook, probe)
    temporary = private_folder(tmp_path / "tmp", tmp_mode)
    env = {**os.environ, "TMPDIR": str(temporary), NO_FORKS_ENV: "0" if forks else "1"}
    result = subprocess.run([sys.executable, "-m", "ndcg_report.cli", "build", "--run", str(SMALL / "monot5.txt"),
                             "--baseline", str(SMALL / "bm25.txt"), "--qrels", str(SMALL / "qrels.txt"), "-k", "10",
                             "--out", str(tmp_path / "out"), "--notebook", str(probe)],
                            capture_output=True, text=True, check=False, env=env)
    assert result.returncode == 0, result.stderr  # nbval's kernel printed the same line
    cells = json.loads((tmp_path / "out" / "report.ipynb").read_text())["cells"]
    assert "".join(cells[-1]["outputs"][0]["text"]) == "True True 0o700 True []\n"
    assert list(temporary.iterdir()) == []  # every kernel's folder removed with it


@as_root
def test_a_temporary_folder_of_another_user_is_refused(tmp_path):
    temporary = private_folder(tmp_path / "tmp")
    os.chown(temporary, NOBODY, NOBODY)
    result = build_from(tmp_path, tmp_path / "out", TMPDIR=str(temporary))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"ndcg-report: error: the temporary folder {temporary} is not safe: {temporary} belongs to nobody (mode 0700), "
        "not to you, so another user could swap a build's kernel connection files and run code as you; set TMPDIR to "
        "a folder of your own (mkdir -m 700)"]
    assert list(temporary.iterdir()) == [] and not (tmp_path / "out").exists()


def test_a_temporary_folder_others_may_write_without_the_sticky_bit_is_refused(tmp_path):
    temporary = private_folder(tmp_path / "tmp", 0o777)
    result = build_from(tmp_path, tmp_path / "out", TMPDIR=str(temporary))
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(f"ndcg-report: error: the temporary folder {temporary} is not safe: {temporary} "
                                    "(mode 0777, owner ")
    assert "writable by other users without the sticky bit" in result.stderr
    assert result.stderr.rstrip().endswith("set TMPDIR to a folder of your own (mkdir -m 700)")
    assert list(temporary.iterdir()) == [] and not (tmp_path / "out").exists()


def test_a_batch_is_refused_such_a_temporary_folder_before_it_makes_its_output_root(tmp_path):
    temporary = private_folder(tmp_path / "tmp", 0o777)
    result = cli("batch", small_config(tmp_path), env={**os.environ, "TMPDIR": str(temporary)})
    one_line(result, 2, f"the temporary folder {temporary} is not safe: {temporary} (mode 0777")
    assert list(temporary.iterdir()) == [] and not (tmp_path / "out").exists()


@pytest.mark.parametrize("mode, refused", [(0o700, False), (0o755, False), (0o1777, False), (0o1770, False),
                                           (0o770, True), (0o757, True), (0o777, True)])
def test_which_temporary_folders_are_refused(tmp_path, mode, refused):
    temporary = private_folder(tmp_path / "tmp", mode)
    if mode & 0o070 and os.geteuid() == 0:
        os.chown(temporary, -1, NOBODY)  # a group with another member (nobody's own): a private group is the user's
    elif mode & 0o020:
        pytest.skip("needs root, to give the folder a group another user is in")
    if refused:
        with pytest.raises(ParameterError, match="without the sticky bit"):
            check_temporary_folder(str(temporary))
    else:
        check_temporary_folder(str(temporary))


def test_a_killed_kernel_starters_connection_file_goes_with_the_next_build(tmp_path, monkeypatch):
    """papermill's or nbval's process killed (INT, HUP, KILL) before its kernel's clean-up leaves the kernel's
    connection file: its folder is removed by the next build."""
    temporary = private_folder(tmp_path / "tmp")
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    env = {**_kernel_environment(tmp_path), "TMPDIR": str(temporary), NO_FORKS_ENV: "1"}
    holder = subprocess.Popen([sys.executable, "-c", "import time\nfrom jupyter_client.manager import KernelManager\n"
                               "manager = KernelManager(kernel_name='python3')\nmanager.start_kernel()\n"
                               "print(manager.connection_file, manager.provisioner.pid, flush=True)\ntime.sleep(300)"],
                              stdout=subprocess.PIPE, text=True, env=env)
    connection, kernel = holder.stdout.readline().split()
    try:
        holder.kill()
        holder.wait()
        assert Path(connection).is_file()  # left behind
        assert Path(connection).parent != temporary
        monkeypatch.setenv(NO_FORKS_ENV, "1")
        with running_fork_server():  # the next build
            assert list(temporary.iterdir()) == []
    finally:
        os.kill(int(kernel), signal.SIGKILL)
