"""Nothing of the caller's folder runs as code or changes a
report. Each test plants what a hostile or careless folder may hold and builds from inside it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SMALL = Path(__file__).parent / "data" / "small"
CONSOLE = Path(sys.executable).parent / "ndcg-report"  # the installed command: its own folder first on sys.path
PLANTED = ("json", "socket", "select", "shutil", "tempfile", "subprocess", "dataclasses", "yaml", "papermill")


def build_from(folder: Path, out: Path, **env: str) -> subprocess.CompletedProcess:
    """`ndcg-report build` of the small DL 2019 set, started in `folder`, into `out`."""
    return subprocess.run([str(CONSOLE), "build", "--run", f"monoT5={SMALL / 'monot5.txt'}", "--baseline",
                           str(SMALL / "bm25.txt"), "--qrels", str(SMALL / "qrels.txt"), "--out", str(out)],
                          cwd=folder, capture_output=True, text=True, env={**os.environ, **env}, check=False)


def figures(report: Path) -> list[str]:
    notebook = json.loads((report / "report.ipynb").read_text())
    return [output["data"]["image/png"] for cell in notebook["cells"] for output in cell.get("outputs", [])
            if "image/png" in output.get("data", {})]


@pytest.mark.parametrize("forks", ["", "1"], ids=["forked kernels", "NDCG_REPORT_NO_FORKS=1"])
def test_01_modules_in_the_working_folder_never_run(tmp_path, forks):
    folder = tmp_path / "hostile"
    folder.mkdir()
    for name in PLANTED:  # each would leave a file behind if it ran
        (folder / f"{name}.py").write_text(f"open({str(tmp_path / ('ran-' + name))!r}, 'w').close()\n"
                                           "raise SystemExit('planted module ran')\n")
    result = build_from(folder, tmp_path / "out", NDCG_REPORT_NO_FORKS=forks)
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in tmp_path.glob("ran-*")) == []
    assert (tmp_path / "out" / "report.html").is_file()


def test_02_a_matplotlibrc_in_the_working_folder_changes_no_figure(tmp_path):
    clean, planted = tmp_path / "clean", tmp_path / "planted"
    clean.mkdir()
    planted.mkdir()
    (planted / "matplotlibrc").write_text("figure.facecolor: red\naxes.facecolor: red\nlegend.frameon: False\n"
                                          "lines.linewidth: 9\nfont.size: 30\n")
    assert build_from(clean, tmp_path / "a").returncode == 0
    result = build_from(planted, tmp_path / "b")
    assert result.returncode == 0, result.stderr
    assert figures(tmp_path / "a") and figures(tmp_path / "a") == figures(tmp_path / "b")


# --- another user's files never join a published report ----------------------------------

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to give files to another user (chown)")


def plant_staging(parent: Path, name: str, uid: int) -> Path:
    """What another local user plants in a shared parent: a dead build's staging folder of `name`, its
    marker claiming none of its entries, a page, an open folder and a link to a secret."""
    planted = parent / f".{name}.staging-99999999-deadbeef"
    planted.mkdir()
    (planted / ".ndcg-report-owned").write_text("made by ndcg-report, process 99999999\nowns only: nothing\n")
    (planted / "index.html").write_text("<p>planted</p>")
    (planted / "assets").mkdir(mode=0o777)
    (planted / "passwd.txt").symlink_to("/etc/passwd")
    for path in (planted, *planted.iterdir()):
        os.lchown(path, uid, uid)
    return planted


@as_root
def test_03_a_staging_folder_planted_by_another_user_is_left_alone(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)  # as /tmp
    assert build_from(tmp_path, shared / "report").returncode == 0  # a report to be rebuilt there
    planted = plant_staging(shared, "report", NOBODY)
    result = build_from(tmp_path, shared / "report")
    assert result.returncode == 0, result.stderr
    assert "kept" not in result.stdout + result.stderr
    report = shared / "report"
    assert not {"index.html", "assets", "passwd.txt"} & {path.name for path in report.iterdir()}
    assert sorted(path.name for path in planted.iterdir()) == [".ndcg-report-owned", "assets", "index.html", "passwd.txt"]
    assert all(os.lstat(path).st_uid == os.geteuid() for path in (report, *report.iterdir()))


@as_root
def test_03_a_batch_root_leaves_another_users_staging_alone(tmp_path):
    from ndcg_report.batch.leftovers import clean_stale_folders

    planted = plant_staging(tmp_path, "nightly", NOBODY)
    mine = plant_staging(tmp_path, "weekly", os.geteuid())  # the same shape, of this user: a dead build's
    (tmp_path / "weekly").mkdir()
    (tmp_path / "nightly").mkdir()  # the report the planted folder claims to be for
    clean_stale_folders(tmp_path)
    assert planted.is_dir() and (planted / "index.html").is_file()
    assert list((tmp_path / "nightly").iterdir()) == []
    assert not mine.exists() and (tmp_path / "weekly" / "index.html").is_file()  # its entries handed back


def test_03_a_staging_folder_is_private_until_published(tmp_path):
    from ndcg_report.files import new_owned_folder, open_up

    old = os.umask(0o022)
    try:
        staging = new_owned_folder(tmp_path, ".report.staging")
        assert staging.stat().st_mode & 0o7777 == 0o700
        os.chmod(staging, 0o1777)  # whatever it had, publishing gives the umask's mode
        open_up(staging)
        assert staging.stat().st_mode & 0o7777 == 0o755
    finally:
        os.umask(old)
    result = build_from(tmp_path, tmp_path / "published")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "published").stat().st_mode & 0o7777 == 0o777 & ~old


# --- a fork server named in the environment is used only if it is ours --------------------

class HostileServer:
    """A Unix socket server in a thread, behaving as `how` says to every asker, recording what it got:
    'silent' never says a word, 'drip' sends a byte every 20 s, 'foreign' speaks the protocol and names
    a process that is not its child, 'proper' says hello (and would fork nothing)."""

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


def test_04_a_silent_fork_server_costs_a_build_seconds(tmp_path):
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


@pytest.mark.parametrize("how", ["drip", "foreign"])
def test_04_a_fork_server_that_drips_or_lies_is_dropped_and_signals_nothing(tmp_path, how):
    """A kernel's starter (the provisioner) asking a server that sends a byte every 20 s, or one that names
    a process that is not its child: dropped within its 5 s per line, nothing believed, nothing signalled."""
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
def test_04_a_fork_server_not_ours_is_never_asked(tmp_path, where):
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


def python_for(uid: int) -> str:
    """A Python interpreter that user uid may run (the venv's may sit in root's home), else skip."""
    for python in ("/usr/bin/python3", "/usr/local/bin/python3", sys.executable):
        try:
            if subprocess.run([python, "-c", ""], user=uid, cwd="/", check=False).returncode == 0:
                return python
        except OSError:
            continue
    pytest.skip("no Python interpreter that another user may run")


def test_11_a_killed_build_leaves_no_socket_folder(tmp_path):
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


def test_11_the_builds_own_variables_in_the_callers_environment_change_nothing(tmp_path):
    """NDCG_REPORT_NBVAL (nbval's re-execution writes no files) exported by the caller is not papermill's."""
    result = build_from(tmp_path, tmp_path / "out", NDCG_REPORT_NBVAL="1")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "summary.json").is_file()


def test_the_users_ipython_jupyter_and_pytest_settings_neither_run_nor_change_a_build(tmp_path):
    """A startup file or kernel config in the user's IPython profile, a Jupyter config, pytest options and
    warnings-as-errors in the caller's environment: nothing of them runs, the report is the same."""
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
                        PYTHONWARNINGS="error", JUPYTER_CONFIG_PATH=str(home / ".jupyter"))
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in ran.iterdir()) == []
    assert "ResourceWarning" not in result.stderr
    assert build_from(tmp_path, tmp_path / "clean").returncode == 0
    assert figures(tmp_path / "out") == figures(tmp_path / "clean")
