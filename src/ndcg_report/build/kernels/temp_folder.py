"""Whether the temporary folder (TMPDIR) is safe for a build's private folders: no other user may swap them.

A build's kernels keep their connection files (the HMAC key and addresses) and sockets in 0700 folders made
in the temporary folder (kernel_forks.socket_folder). In a folder owned by another user, or one others may
write without the sticky bit, that user could rename such a folder and put one of theirs in its place, then
run code as the build's user in its kernels: the build is refused there before anything starts.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ndcg_report.errors import ParameterError
from ndcg_report.owners import shared_folder_problem

_FIX = "set TMPDIR to a folder of your own (mkdir -m 700)"


def check_temporary_folder(folder: str | None = None) -> None:
    """ParameterError unless no other user could swap what is made in folder (default: tempfile.gettempdir(),
    from TMPDIR): owners.shared_folder_problem, for it and the folders above it."""
    folder = folder or tempfile.gettempdir()
    try:
        os.stat(folder)
    except OSError as exc:
        raise ParameterError(f"the temporary folder {folder} cannot be read ({exc.strerror}); {_FIX}") from None
    problem = shared_folder_problem(Path(folder))
    if problem:
        raise ParameterError(f"the temporary folder {folder} is not safe: {problem}, so another user could swap a "
                             f"build's kernel connection files and run code as you; {_FIX}")
