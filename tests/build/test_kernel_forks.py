"""Kernels forked from the build's fork server (build/kernels/kernel_forks.py, build/kernels/fork_provisioner.py):
what a kernel sees, that it is forked, and that it never outlives the server or the build."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from ndcg_report.build.pipeline import _kernel_environment
from ndcg_report.build.kernels.fork_provisioner import ForkedKernel, _ask_for_kernel
from ndcg_report.build.kernels.kernel_forks import FORK_SERVER_ENV, NO_FORKS_ENV, running_fork_server

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

SMALL = Path(__file__).resolve().parents[1] / "data" / "small"


def parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def parent_command(pid: int) -> str:
    return Path(f"/proc/{parent(pid)}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def gone(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ForkedKernel(pid).poll() is not None:
            return True
        time.sleep(0.05)
    return False


def test_a_forked_kernel_runs_in_its_folder_and_environment_and_dies_with_the_server(tmp_path, monkeypatch):
    from jupyter_client.manager import KernelManager

    env = {**_kernel_environment(tmp_path), "SEEN_BY_THE_KERNEL": "yes"}  # the build's kernel.json, in tmp_path
    monkeypatch.setenv("JUPYTER_PATH", env["JUPYTER_PATH"])
    printed: list[str] = []
    with running_fork_server() as server:
        manager = KernelManager(kernel_name="python3")
        manager.start_kernel(env={**env, FORK_SERVER_ENV: server}, cwd=str(tmp_path))
        pid = manager.provisioner.pid
        assert "ndcg_report.build.kernels.kernel_forks" in parent_command(pid)
        client = manager.client()
        client.start_channels()
        client.wait_for_ready(timeout=60)
        reply = client.execute_interactive(
            "import os, sys; print(os.getcwd(), os.environ['SEEN_BY_THE_KERNEL'], "
            f"'{FORK_SERVER_ENV}' in os.environ, 'ndcg_report.analysis.plots' in sys.modules, hash('x'))",
            output_hook=lambda message: printed.append(message["content"].get("text", "")) if message["msg_type"] == "stream" else None,
            timeout=60)
        assert reply["content"]["status"] == "ok"
        assert printed == [f"{tmp_path} yes False True {hash_with_seed_0('x')}\n"]
        client.stop_channels()
    assert gone(pid), "the kernel outlived its fork server"


def hash_with_seed_0(text: str) -> int:
    return int(subprocess.run([sys.executable, "-c", f"print(hash({text!r}))"], env={**os.environ, "PYTHONHASHSEED": "0"},
                              capture_output=True, text=True, check=True).stdout)


@pytest.mark.parametrize("forked", [True, False], ids=["forked", "launched"])
def test_a_kernel_needs_no_free_tcp_port(tmp_path, monkeypatch, forked):
    """jupyter_client chose a kernel's TCP ports by letting free ones go, and the kernel died at its start
    if one was taken before it bound it (by the build's other kernel, starting beside it): here every port
    chosen is taken. The kernel talks over Unix sockets in a private folder, removed with it."""
    from jupyter_client.localinterfaces import localhost
    from jupyter_client.manager import KernelManager
    from jupyter_client.provisioning.local_provisioner import LocalPortCache

    taken = socket.socket()
    taken.bind((localhost(), 0))
    taken.listen()
    monkeypatch.setattr(LocalPortCache, "find_available_port", lambda self, ip: taken.getsockname()[1])
    if not forked:
        monkeypatch.setenv(NO_FORKS_ENV, "1")
    env = _kernel_environment(tmp_path)
    monkeypatch.setenv("JUPYTER_PATH", env["JUPYTER_PATH"])
    with taken, running_fork_server() as server:
        assert bool(server) is forked
        manager = KernelManager(kernel_name="python3")
        manager.start_kernel(env={**env, FORK_SERVER_ENV: server}, cwd=str(tmp_path))
        client = manager.client()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=60)
            assert client.execute_interactive("1 + 1", timeout=60)["content"]["status"] == "ok"
            folder = Path(manager.ip).parent
            assert manager.transport == "ipc" and folder.name.startswith("ndcg-report-forks-")
            assert sorted(path.name for path in folder.iterdir()) == [f"kernel-{port}" for port in range(1, 6)]
            assert folder.stat().st_mode & 0o777 == 0o700 and folder.stat().st_uid == os.geteuid()
        finally:
            client.stop_channels()
            manager.shutdown_kernel()
    assert not folder.exists()


@pytest.mark.parametrize("why", ["a path too long", "no sockets there"])
def test_a_temporary_folder_that_cannot_hold_a_socket_keeps_tcp(tmp_path, monkeypatch, why):
    from jupyter_client.manager import KernelManager

    deep = tmp_path / ("x" * (100 if why == "a path too long" else 1))
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    if why == "no sockets there":
        monkeypatch.setattr(socket.socket, "bind", refuse_unix_sockets(socket.socket.bind))
    monkeypatch.setenv(NO_FORKS_ENV, "1")
    env = _kernel_environment(tmp_path)
    monkeypatch.setenv("JUPYTER_PATH", env["JUPYTER_PATH"])
    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(env=env, cwd=str(tmp_path))
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        assert manager.transport == "tcp"
        assert [path for path in deep.iterdir() if path.is_dir()] == []  # the folder made for the sockets is gone
    finally:
        client.stop_channels()
        manager.shutdown_kernel()


def test_a_killed_kernel_starters_socket_folder_goes_with_the_next_build_forks_or_not(monkeypatch):
    """papermill's or nbval's process killed before its kernel's clean-up leaves the kernel's socket folder:
    the next build removes it, even one that forks no kernels."""
    holder = subprocess.Popen([sys.executable, "-c", "import time\nfrom ndcg_report.build.kernels.kernel_forks import "
                               "socket_folder\nprint(socket_folder(), flush=True)\ntime.sleep(300)"],
                              stdout=subprocess.PIPE, text=True)
    folder = Path(holder.stdout.readline().strip())
    assert folder.is_dir()
    holder.kill()
    holder.wait()
    monkeypatch.setenv(NO_FORKS_ENV, "1")
    with running_fork_server() as server:
        assert server == "" and not folder.exists()


def refuse_unix_sockets(bind):
    def refusing(self, address):
        if self.family == socket.AF_UNIX:
            raise OSError(95, "Operation not supported")
        return bind(self, address)
    return refusing


def test_a_kernel_is_launched_as_usual_without_a_server(tmp_path, monkeypatch):
    monkeypatch.setenv(NO_FORKS_ENV, "1")
    with running_fork_server() as server:
        assert server == ""
    assert _ask_for_kernel(str(tmp_path / "no-socket"), [sys.executable, "-m", "ipykernel_launcher", "-f", "x"], {}) is None
    assert _ask_for_kernel("", ["other-python", "-m", "ipykernel_launcher"], {}) is None


def test_a_server_killed_takes_its_kernels_with_it(tmp_path):
    with running_fork_server() as server:
        connection = tmp_path / "kernel.json"
        from jupyter_client.connect import write_connection_file

        write_connection_file(str(connection))
        pid, _ = _ask_for_kernel(server, [sys.executable, "-m", "ipykernel_launcher", "-f", str(connection)],
                              {"cwd": str(tmp_path), "env": dict(os.environ)})
        assert pid and not gone(pid, 1)
        os.kill(parent(pid), signal.SIGKILL)
        assert gone(pid), "a kernel outlived its killed fork server"


def test_both_kernels_of_a_build_are_forks(tmp_path):
    import nbformat

    from ndcg_report.build.pipeline import package_file

    notebook = nbformat.read(package_file("notebooks", "ndcg_report.ipynb"), as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(
        "import os\nppid = open(f'/proc/{os.getpid()}/stat').read().rsplit(')', 1)[1].split()[1]\n"
        "print(open(f'/proc/{ppid}/cmdline').read().split(chr(0))[2])\n"
        "from ipykernel.kernelapp import IPKernelApp\nprint(IPKernelApp.instance().transport)"))
    forked = tmp_path / "forked.ipynb"
    nbformat.write(notebook, forked)
    result = subprocess.run([sys.executable, "-m", "ndcg_report.cli", "build", "--run", str(SMALL / "monot5.txt"),
                             "--baseline", str(SMALL / "bm25.txt"), "--qrels", str(SMALL / "qrels.txt"), "-k", "10",
                             "--out", str(tmp_path / "out"), "--notebook", str(forked)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr  # nbval's kernel printed the same line
    cells = json.loads((tmp_path / "out" / "report.ipynb").read_text())["cells"]
    assert "".join(cells[-1]["outputs"][0]["text"]) == "ndcg_report.build.kernels.kernel_forks\nipc\n"


def test_a_build_without_forks_launches_its_kernels_as_usual(tmp_path):
    result = subprocess.run([sys.executable, "-m", "ndcg_report.cli", "build", "--run", str(SMALL / "monot5.txt"),
                             "--baseline", str(SMALL / "bm25.txt"), "--qrels", str(SMALL / "qrels.txt"), "-k", "10",
                             "--out", str(tmp_path / "out")],
                            capture_output=True, text=True, check=False, env={**os.environ, NO_FORKS_ENV: "1"})
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "report.html").is_file()


def test_a_server_still_importing_ends_at_once_when_the_build_does():
    """Bad input is found while the server imports (about 1.5 s of CPU): the build must not wait for it."""
    label = f"test-{os.getpid()}-{time.monotonic_ns()}"
    started = time.monotonic()
    with running_fork_server(label) as server:
        assert Path(server).exists() and running_with(label)
    assert time.monotonic() - started < 1.5
    assert not Path(server).exists() and not running_with(label)


def running_with(text: str) -> list[int]:
    """Processes whose command line holds text."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if text.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


def test_a_build_uses_the_fork_server_it_is_given(tmp_path):
    """A batch starts one fork server for all its builds and hands its socket down in the environment."""
    import nbformat

    from ndcg_report.batch.builds import BuildJob, LocalBuilds
    from ndcg_report.build.pipeline import package_file

    notebook = nbformat.read(package_file("notebooks", "ndcg_report.ipynb"), as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(
        "import os\nprint(open(f'/proc/{os.getpid()}/stat').read().rsplit(')', 1)[1].split()[1])"))
    forked = tmp_path / "forked.ipynb"
    nbformat.write(notebook, forked)
    label = f"test-{os.getpid()}-{time.monotonic_ns()}"
    with running_fork_server(label) as server:
        [server_pid] = running_with(label)
        command = [sys.executable, "-m", "ndcg_report.cli", "build", "--run", str(SMALL / "monot5.txt"),
                   "--baseline", str(SMALL / "bm25.txt"), "--qrels", str(SMALL / "qrels.txt"), "-k", "10",
                   "--out", str(tmp_path / "out"), "--notebook", str(forked)]
        ran = LocalBuilds(fork_server=server).run(BuildJob("r", command, {}, tmp_path / "attempt.json"))
    assert ran.returncode == 0, ran.stderr
    cells = json.loads((tmp_path / "out" / "report.ipynb").read_text())["cells"]
    assert "".join(cells[-1]["outputs"][0]["text"]) == f"{server_pid}\n"
