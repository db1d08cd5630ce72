"""Kernels forked from the build's fork server (build/kernels/kernel_forks.py, build/kernels/fork_provisioner.py):
what a kernel sees, that it is forked, and that it never outlives the server or the build; a server named
in the environment is asked only if it is this user's own and answers in time (build/kernels/server_trust.py);
nothing of the caller's folder or settings runs in a build's children (child_environment)."""

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
from tests.helpers import NOBODY, build_from, figures

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

SMALL = Path(__file__).resolve().parents[1] / "data" / "small"
PLANTED = ("json", "socket", "select", "shutil", "tempfile", "subprocess", "dataclasses", "yaml", "papermill")


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
            assert sorted(path.name for path in folder.iterdir()) == [*(f"kernel-{port}" for port in range(1, 6)),
                                                                      "kernel.json"]
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
        folder = Path(manager.connection_file).parent  # the kernel's private folder holds only its connection file
        assert folder.parent == deep and [path.name for path in folder.iterdir()] == ["kernel.json"]
        assert folder.stat().st_mode & 0o777 == 0o700
    finally:
        client.stop_channels()
        manager.shutdown_kernel()
    assert list(deep.iterdir()) == []


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


def test_both_kernels_of_a_build_are_forks_also_with_an_environment_past_4_kib(tmp_path):
    """The kernel's request holds its environment: one past the server's line limit (4 KiB) made every
    kernel launched instead, without a word."""
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
                            capture_output=True, text=True, check=False, env={**os.environ, "LARGE": "x" * 16384})
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


def test_a_silent_fork_server_costs_a_build_seconds(tmp_path):
    """A server that never says a word: the build drops it after 5 s and launches its kernels as usual."""
    import time as clock

    private = tmp_path / "forks"
    private.mkdir(mode=0o700)  # passes every ownership check: only its behaviour gives it away
    server = HostileServer(private / "socket", "silent")
    try:
        started = clock.monotonic()
        result = build_from(tmp_path, tmp_path / "out", NDCG_REPORT_KERNEL_FORKS=str(private / "socket"))
        took = clock.monotonic() - started
    finally:
        server.close()
    assert result.returncode == 0, result.stderr
    assert took < 30, f"the build took {took:.0f} s"
    assert server.connections >= 1 and server.received == b"", "a request went to a server that never said hello"


@pytest.mark.parametrize("how", ["drip", "stall", "foreign"])
def test_a_fork_server_that_drips_or_lies_is_dropped_and_signals_nothing(tmp_path, how):
    """A kernel's starter (the provisioner) asking a server that sends a byte every 20 s, one that says it
    is importing every 4 s (a real one says so each second; it held each kernel 120 s), or one that names
    a process that is not its child: dropped within seconds, nothing believed, nothing signalled."""
    import time as clock

    from ndcg_report.build.kernels.fork_provisioner import _ask_for_kernel

    private = tmp_path / "forks"
    private.mkdir(mode=0o700)
    victim = subprocess.Popen(["sleep", "300"], start_new_session=True)
    server = HostileServer(private / "socket", how, victim.pid)
    try:
        started = clock.monotonic()
        asked = _ask_for_kernel(str(private / "socket"), [sys.executable, "-m", "ipykernel_launcher", "-f", "k.json"],
                                {"cwd": str(tmp_path), "env": {"SECRET_TOKEN": "s3cr3t"}})
        took = clock.monotonic() - started
        assert asked is None and took < 7, (asked, took)
        assert victim.poll() is None
        if how == "drip":
            assert server.received == b"", "a request (with the environment) went to a server that never said hello"
    finally:
        server.close()
        victim.kill()
        victim.wait()


@pytest.mark.parametrize("where", ["an open folder", "another user's process", "NDCG_REPORT_NO_FORKS=1"])
def test_a_fork_server_not_ours_is_never_asked(tmp_path, where):
    folder = tmp_path / "forks"
    folder.mkdir(mode=0o700)
    env = {"NDCG_REPORT_KERNEL_FORKS": str(folder / "socket"), "SECRET_TOKEN": "s3cr3t"}
    if where == "an open folder":
        os.chmod(folder, 0o755)
    elif where == "NDCG_REPORT_NO_FORKS=1":
        env["NDCG_REPORT_NO_FORKS"] = "1"
    if where == "another user's process":
        if os.geteuid() != 0:
            pytest.skip("needs root, to serve the socket as another user")
        import shutil
        import tempfile

        reachable = Path(tempfile.mkdtemp())  # pytest's folders are private: another user cannot reach them
        os.chmod(reachable, 0o755)
        folder = reachable / "forks"
        folder.mkdir(mode=0o700)
        env["NDCG_REPORT_KERNEL_FORKS"] = str(folder / "socket")
        os.chown(folder, NOBODY, NOBODY)
        python = python_for(NOBODY)
        serving = subprocess.Popen(
            [python, "-c", "import socket, sys, time\ns = socket.socket(socket.AF_UNIX)\n"
             "s.bind(sys.argv[1]); s.listen(8); print('up', flush=True)\nwhile True:\n"
             "    c, _ = s.accept(); c.sendall(b'ndcg-report-forks 1\\n'); print(c.recv(1 << 20), flush=True)",
             str(folder / "socket")], user=NOBODY, stdout=subprocess.PIPE, text=True, cwd="/")
        assert serving.stdout.readline() == "up\n"
        os.chown(folder, 0, 0)  # a private folder of this user's, the socket too: only the peer gives it away
        os.chown(folder / "socket", 0, 0)
        try:
            result = build_from(tmp_path, tmp_path / "out", **env)
        finally:
            serving.kill()
            heard = serving.communicate()[0]
            shutil.rmtree(reachable)
        assert result.returncode == 0, result.stderr
        assert "s3cr3t" not in heard and heard == ""
        return
    server = HostileServer(folder / "socket", "proper")
    try:
        result = build_from(tmp_path, tmp_path / "out", **env)
    finally:
        server.close()
    assert result.returncode == 0, result.stderr
    assert server.connections == 0 and b"s3cr3t" not in server.received


def test_a_killed_build_leaves_no_socket_folder(tmp_path):
    """A build killed outright (out of memory) takes its fork server with it (die-with-parent), and the
    next build removes the socket folders of this user's builds that are gone; others' are left."""
    import time as clock

    from ndcg_report.build.kernels.kernel_forks import remove_stale_socket_folders, running_fork_server

    holder = subprocess.Popen([sys.executable, "-c", "import time\nfrom ndcg_report.build.kernels.kernel_forks import "
                               "running_fork_server\nwith running_fork_server() as path:\n    print(path, flush=True)\n"
                               "    time.sleep(300)"], stdout=subprocess.PIPE, text=True)
    folder = Path(holder.stdout.readline().strip()).parent
    assert folder.is_dir()
    holder.kill()
    holder.wait()
    clock.sleep(0.5)
    with running_fork_server():  # the next build
        assert not folder.exists()
    dead = tmp_path / "ndcg-report-forks-99999999-abcdefgh"
    alive = tmp_path / f"ndcg-report-forks-{os.getpid()}-abcdefgh"
    for path in (dead, alive):
        path.mkdir(mode=0o700)
        (path / "socket").touch()
    remove_stale_socket_folders(str(tmp_path))
    assert not dead.exists() and alive.is_dir()


class HostileServer:
    """A Unix socket server in a thread, behaving as `how` says to every asker, recording what it got:
    'silent' never says a word, 'drip' sends a byte every 20 s, 'stall' says hello, then importing every
    4 s, 'foreign' speaks the protocol and names a process that is not its child, 'proper' says hello
    (and would fork nothing)."""

    def __init__(self, path: Path, how: str, victim: int = 0) -> None:
        import socket
        import threading

        self.path, self.how, self.victim, self.received = path, how, victim, b""
        self.connections = 0
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(8)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        import threading

        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection) -> None:
        import time as clock

        try:
            connection.settimeout(60)
            if self.how == "silent":
                clock.sleep(60)
            elif self.how == "drip":
                for byte in b"ndcg-report-forks 1\n":
                    connection.sendall(bytes([byte]))
                    clock.sleep(20)
            elif self.how == "stall":
                connection.sendall(b"ndcg-report-forks 1\n")
                self.received += connection.recv(1 << 20)
                for _ in range(30):
                    connection.sendall(b"importing\n")
                    clock.sleep(4)
            elif self.how == "foreign" and self._asked_at_once(connection):  # an asker that does not wait for hello
                connection.sendall(json.dumps({"pid": self.victim}).encode() + b"\n")
            else:
                connection.sendall(b"ndcg-report-forks 1\n")
                self.received += connection.recv(1 << 20)
                if self.how == "foreign":
                    connection.sendall(b"ready\n")
                    self.received += connection.recv(100)
                    connection.sendall(json.dumps({"pid": self.victim}).encode() + b"\n")
        except OSError:
            pass
        finally:
            connection.close()

    def _asked_at_once(self, connection) -> bool:
        import socket

        connection.settimeout(1)
        try:
            self.received += connection.recv(1 << 20)
        except socket.timeout:
            return False
        finally:
            connection.settimeout(60)
        return True

    def close(self) -> None:
        self.listener.close()


def python_for(uid: int) -> str:
    """A Python interpreter that user uid may run (the venv's may sit in root's home), else skip."""
    for python in ("/usr/bin/python3", "/usr/local/bin/python3", sys.executable):
        try:
            if subprocess.run([python, "-c", ""], user=uid, cwd="/", check=False).returncode == 0:
                return python
        except OSError:
            continue
    pytest.skip("no Python interpreter that another user may run")


@pytest.mark.parametrize("forks", ["", "1"], ids=["forked kernels", "NDCG_REPORT_NO_FORKS=1"])
def test_modules_in_the_working_folder_never_run(tmp_path, forks):
    folder = tmp_path / "hostile"
    folder.mkdir()
    for name in PLANTED:  # each would leave a file behind if it ran
        (folder / f"{name}.py").write_text(f"open({str(tmp_path / ('ran-' + name))!r}, 'w').close()\n"
                                           "raise SystemExit('planted module ran')\n")
    result = build_from(folder, tmp_path / "out", NDCG_REPORT_NO_FORKS=forks)
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in tmp_path.glob("ran-*")) == []
    assert (tmp_path / "out" / "report.html").is_file()


def test_the_builds_own_variables_in_the_callers_environment_change_nothing(tmp_path):
    """NDCG_REPORT_NBVAL (nbval's re-execution writes no files) exported by the caller is not papermill's."""
    result = build_from(tmp_path, tmp_path / "out", NDCG_REPORT_NBVAL="1")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "summary.json").is_file()


def test_the_users_ipython_jupyter_and_pytest_settings_neither_run_nor_change_a_build(tmp_path):
    """A startup file or kernel config in the user's IPython profile, a Jupyter config, pytest options,
    warnings-as-errors and Python's inspect mode (PYTHONINSPECT: every step ended in 'SystemExit: 0') in
    the caller's environment: nothing of them runs, the report is the same."""
    home = tmp_path / "home"
    startup = home / ".ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    ran = tmp_path / "ran"
    (startup / "00-hostile.py").write_text(f"open({str(ran / 'startup')!r}, 'w').close()\n")
    (home / ".ipython" / "profile_default" / "ipython_kernel_config.py").write_text(
        f"c.InteractiveShellApp.exec_lines = ['open({str(ran / 'kernel-config')!r}, \"w\").close()']\n")
    (home / ".jupyter").mkdir()
    (home / ".jupyter" / "jupyter_config.py").write_text(
        f"c.InteractiveShellApp.exec_lines = ['open({str(ran / 'jupyter-config')!r}, \"w\").close()']\n")
    ran.mkdir()
    result = build_from(tmp_path, tmp_path / "out", HOME=str(home), PYTEST_ADDOPTS="--no-such-option -x",
                        PYTHONWARNINGS="error", JUPYTER_CONFIG_PATH=str(home / ".jupyter"), PYTHONINSPECT="1")
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in ran.iterdir()) == []
    assert "ResourceWarning" not in result.stderr
    assert build_from(tmp_path, tmp_path / "clean").returncode == 0
    assert figures(tmp_path / "out") == figures(tmp_path / "clean")
