"""The kernel provisioner `ndcg-report-fork`: kernels forked by the build's fork server.

The jupyter_client kernel provisioner `ndcg-report-fork`: kernels forked by the build's fork server
(build/kernels/kernel_forks.py) when the environment names one, else launched as LocalProvisioner launches
them. A forked kernel is not a child of this process: ForkedKernel looks at it instead of waiting.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
from typing import Any

from jupyter_client.connect import KernelConnectionInfo
from jupyter_client.provisioning import LocalProvisioner

from ndcg_report.files import process_alive
from ndcg_report.build.kernels.kernel_forks import FORK_SERVER_ENV, LAUNCHER, REAP_SECONDS

ANSWER_SECONDS = 120.0  # how long to wait for a fork (the server may still be importing)


class ForkedKernel:
    """The Popen-like handle LocalProvisioner manages, for a kernel forked by the server (not a child of
    this process: it is waited for by looking at it)."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._killed = False

    def poll(self) -> int | None:
        if self.returncode is None and not process_alive(self.pid):
            self.returncode = -signal.SIGKILL if self._killed else 0
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
    """LocalProvisioner whose kernels come from the build's fork server when there is one."""

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        server = (kwargs.get("env") or os.environ).get(FORK_SERVER_ENV, "")
        pid = _ask_for_kernel(server, cmd, kwargs) if server and hasattr(os, "fork") else None
        if pid is None:
            return await super().launch_kernel(cmd, **kwargs)
        self.process = ForkedKernel(pid)
        self.pid = self.pgid = pid  # the kernel leads a session of its own, as launched kernels do
        self.cwd = kwargs.get("cwd", os.getcwd())
        return self.connection_info


def _ask_for_kernel(server: str, cmd: list[str], kwargs: dict) -> int | None:
    """The pid of a kernel forked by the server for `cmd` (`python -m ipykernel_launcher ARGS`), or None
    if cmd is another or the server does not answer (the caller then launches it as usual)."""
    if len(cmd) < 3 or tuple(cmd[1:3]) != LAUNCHER or os.path.realpath(cmd[0]) != os.path.realpath(sys.executable):
        return None
    request = {"args": cmd[3:], "cwd": str(kwargs.get("cwd") or os.getcwd()),
               "env": dict(kwargs.get("env") or os.environ)}
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(ANSWER_SECONDS)
            connection.connect(server)
            connection.sendall(json.dumps(request).encode("utf-8") + b"\n")
            answer = connection.makefile("rb").readline()
        return int(json.loads(answer)["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


