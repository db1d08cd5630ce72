"""The kernel provisioner `ndcg-report-fork`: kernels forked by the build's fork server.

A jupyter_client provisioner; the fork server (build/kernels/kernel_forks.py) is used when the
environment names one, else a kernel is launched as LocalProvisioner launches it. A forked kernel is
not a child of this process: ForkedKernel looks at it instead of waiting.

Either way the kernel's connection file (its HMAC key and addresses) is written in a private 0700 folder
of its own, not straight in the temporary folder as jupyter_client writes it (tempfile.mkstemp), where
another user could swap it; and the kernel talks over Unix sockets in that folder (zmq's ipc transport),
not TCP ports: jupyter_client picks a TCP port by binding port 0 and letting it go, and the kernel binds it
later, so a port taken meanwhile (by the build's other kernel, starting at the same moment, or any process)
killed the kernel at its start ("Kernel died before replying to kernel_info", about one build in 500).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sys
import time
from typing import Any

from jupyter_client.connect import KernelConnectionInfo
from jupyter_client.provisioning import LocalProvisioner

from ndcg_report.build.kernels.kernel_forks import (FORK_SERVER_ENV, LAUNCHER, REAP_SECONDS, forks_switched_off,
                                                    socket_folder)
from ndcg_report.build.kernels.server_trust import (ANSWER_SECONDS, GO, HELLO, IMPORT_SECONDS, IMPORTING,
                                                    IMPORTING_SECONDS, READY, child_of, forked_by, peer_pid,
                                                    read_line, trusted_socket)
from ndcg_report.working_folders import process_alive


class ForkedKernel:
    """The Popen-like handle LocalProvisioner manages, for a kernel forked by the server (not a child of
    this process: it is waited for by looking at it)."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int, server: int = 0) -> None:
        self.pid = pid
        self.server = server  # the fork server's pid (0 where the system cannot tell)
        self.returncode: int | None = None
        self._killed = False

    def poll(self) -> int | None:
        if self.returncode is None and not (process_alive(self.pid) and child_of(self.pid, self.server)):
            self.returncode = -signal.SIGKILL if self._killed else 0  # gone, or its pid is another's now
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"kernel {self.pid} still running")
            time.sleep(REAP_SECONDS)
        return self.returncode  # type: ignore[return-value]

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            self._killed = self._killed or signum == signal.SIGKILL
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


class ForkProvisioner(LocalProvisioner):
    """LocalProvisioner whose kernels come from the build's fork server when there is one, and keep their
    connection file, and their Unix sockets where the system has them, in a private folder removed with
    the kernel."""

    _folder: str | None = None  # the kernel's private folder (kernel_forks.socket_folder), while it has one

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        """As LocalProvisioner's, the kernel's connection file first put in a new private folder and its
        addresses moved from TCP ports to Unix sockets there (its first start only: a restart keeps the
        connection file and its addresses)."""
        manager = self.parent
        if manager is not None and self._folder is None:
            self._folder = socket_folder()  # an OSError here: no folder of its own, no kernel
            if not manager.connection_file:  # else jupyter_client's tempfile.mkstemp(".json") in TMPDIR itself
                manager.connection_file = os.path.join(self._folder, "kernel.json")
            if manager.transport == "tcp" and not self.ports_cached:
                _use_unix_sockets(manager, self._folder)
        return await super().pre_launch(**kwargs)

    async def cleanup(self, restart: bool = False) -> None:
        await super().cleanup(restart=restart)
        if not restart and self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        env = kwargs.get("env") or os.environ
        server = env.get(FORK_SERVER_ENV, "")
        forked = None
        if server and hasattr(os, "fork") and not forks_switched_off(env):
            forked = _ask_for_kernel(server, cmd, kwargs)
        if forked is None:
            return await super().launch_kernel(cmd, **kwargs)
        self.process = ForkedKernel(*forked)
        self.pid = self.pgid = forked[0]  # the kernel leads a session of its own, as launched kernels do
        self.cwd = kwargs.get("cwd", os.getcwd())
        return self.connection_info

    async def send_signal(self, signum: int) -> None:
        """Signal the kernel's process group, only while the kernel is the fork server's child (never a
        pid that has ended and been given to another process)."""
        if isinstance(self.process, ForkedKernel) and self.process.poll() is not None:
            return
        await super().send_signal(signum)


def _use_unix_sockets(manager: Any, folder: str) -> None:
    """Point the kernel manager's five addresses at Unix sockets in folder (the kernel's private folder);
    TCP as before where zmq has no ipc transport or the folder cannot hold a socket (a path too long, a
    file system without them)."""
    import zmq

    if not hasattr(socket, "AF_UNIX") or not zmq.has("ipc"):
        return
    address = os.path.join(folder, "kernel")
    if not _can_bind(f"{address}-0"):  # as long as the sockets' paths (kernel-1 ... kernel-5)
        return
    manager.transport = "ipc"
    manager.ip = address  # the sockets are kernel-1 ... kernel-5 (connect.write_connection_file numbers them)
    manager.cache_ports = False  # TCP's port cache


def _can_bind(path: str) -> bool:
    """Whether a Unix socket can be made at path (refused if the path is too long for one, or on a file
    system without them), removed again."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.bind(path)
        os.unlink(path)
        return True
    except OSError:
        return False


def _ask_for_kernel(server: str, cmd: list[str], kwargs: dict) -> tuple[int, int] | None:
    """(pid of a kernel forked for `cmd` (`python -m ipykernel_launcher ARGS`), the server's pid), or None
    if cmd is another, or the server is not this user's own (server_trust), or it keeps the asker waiting
    more than ANSWER_SECONDS for a line (IMPORTING_SECONDS while it imports, IMPORT_SECONDS in all), or
    names a pid that is not its child: the
    caller then launches the kernel as usual. The request (with the kernel's environment) is sent only to a
    trusted server, and the kernel is forked only on GO, so a kernel given up on is never forked too."""
    if len(cmd) < 3 or tuple(cmd[1:3]) != LAUNCHER or os.path.realpath(cmd[0]) != os.path.realpath(sys.executable):
        return None
    if not trusted_socket(server):
        return None
    request = {"args": cmd[3:], "cwd": str(kwargs.get("cwd") or os.getcwd()),
               "env": dict(kwargs.get("env") or os.environ)}
    deadline = time.monotonic() + IMPORT_SECONDS
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(ANSWER_SECONDS)
            connection.connect(server)
            maker = peer_pid(connection)
            if maker is None or read_line(connection, time.monotonic() + ANSWER_SECONDS) != HELLO:
                return None
            connection.sendall(json.dumps(request).encode("utf-8") + b"\n")
            while (line := read_line(connection, min(time.monotonic() + IMPORTING_SECONDS, deadline))) == IMPORTING:
                pass
            if line != READY:
                return None
            connection.sendall(GO)
            pid = int(json.loads(read_line(connection, time.monotonic() + ANSWER_SECONDS))["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    server = forked_by(pid, maker)
    return None if server is None else (pid, server)


