"""The connection to a Dask cluster, for `batch --dask` and `eval --dask` only.

Through dask.distributed; nothing else imports this module, so without --dask nothing of Dask is
imported.

A bad address or a scheduler that does not answer within CONNECT_TIMEOUT seconds is a
ParameterError (one line, exit 2) before anything is built or read by a worker.
"""

from __future__ import annotations

import logging
from concurrent.futures import CancelledError

from distributed import Client, KilledWorker
from distributed.comm import get_address_host_port

from ndcg_report.errors import ParameterError

CONNECT_TIMEOUT = 10.0  # seconds
# What a lost worker or scheduler raises from a future's result: the task did not finish (CommClosedError
# and TimeoutError are OSErrors; a future the scheduler dropped raises CancelledError).
LOST = (KilledWorker, CancelledError, OSError)


def connect(address: str, timeout: float = CONNECT_TIMEOUT) -> Client:
    """A client of the scheduler at address (tcp://HOST:PORT, or HOST:PORT); ParameterError if the
    address is malformed or no scheduler answers within timeout seconds."""
    fix = ("start one with `dask scheduler` (and workers with `dask worker ADDRESS`) and give the address it "
           "prints, e.g. tcp://HOST:8786")
    try:
        get_address_host_port(address)  # Client() itself would leave a half-made client behind
    except ValueError as exc:
        raise ParameterError(f"--dask {address!r} is not a scheduler address ({exc}); {fix}") from None
    quiet_dask_logging()
    try:
        return _Client(address, timeout=timeout, set_as_default=False)
    except (OSError, ValueError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise ParameterError(f"--dask {address}: no Dask scheduler answered within {timeout:g} s ({reason}); "
                             f"{fix}") from None
    except Exception as exc:  # noqa: BLE001 - e.g. TypeError for tls:// without TLS settings
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise ParameterError(f"--dask {address}: cannot connect ({type(exc).__name__}: {reason}); {fix}") from None


class _Client(Client):
    """A Client that, if it could not connect, does not try to close itself when collected (that
    waits 20 s for a connection that never was, then prints a traceback)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self._never_connected = True
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._never_connected = False

    def __del__(self) -> None:
        if not getattr(self, "_never_connected", False):
            super().__del__()


def quiet_dask_logging() -> None:
    """Silence Dask's own log records (tracebacks of a lost scheduler, reconnection attempts) for the
    command line, which says what went wrong in one line of its own."""
    for name in ["distributed", "tornado", *(n for n in logging.root.manager.loggerDict if n.startswith("distributed."))]:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def worker_threads(client: Client) -> int:
    """Threads of the cluster's workers now (each runs one task at a time)."""
    return sum(client.nthreads().values())


def lost_message(exc: BaseException) -> str:
    """One line for a task that did not finish because a worker or the scheduler was lost."""
    if isinstance(exc, KilledWorker):
        return (f"Dask gave up on the task after the workers running it died ({' '.join(str(exc).split())}); "
                "check the workers' logs (memory limits, crashes)")
    if isinstance(exc, CancelledError):
        return f"the Dask scheduler dropped the task ({' '.join(str(exc).split()) or 'cancelled'})"
    return f"lost the connection to the Dask scheduler ({type(exc).__name__}: {' '.join(str(exc).split())})"
