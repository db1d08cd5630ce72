"""An input that is a stream (inputs/access/sources.py): checked while it is copied, refused at its first
binary piece or before it fills the temporary folder."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ndcg_report.errors import InputError
from tests.helpers import QRELS, one_line


def test_a_stream_of_binary_bytes_is_refused_at_its_first_piece(tmp_path):
    from ndcg_report.inputs.access.sources import copy_checked

    class Zeros(io.RawIOBase):
        read_count = 0

        def read(self, size=-1):
            Zeros.read_count += 1
            return b"\0" * (size if size > 0 else 1 << 16)

    with open(tmp_path / "copy", "wb") as copy, pytest.raises(InputError, match=r"/dev/fd/63:1: NUL byte: not UTF-8 text"):
        copy_checked(Path("/dev/fd/63"), Zeros(), copy)
    assert Zeros.read_count == 1 and (tmp_path / "copy").stat().st_size == 0


def test_a_stream_that_would_fill_the_temporary_folder_is_refused(tmp_path, monkeypatch):
    from ndcg_report.inputs.access import sources

    real = os.statvfs(tmp_path)

    class Room:  # 5 MiB free before the copy
        f_frsize = 1
        f_blocks = real.f_blocks * real.f_frsize

        @property
        def f_bavail(self):
            return (5 << 20) - (tmp_path / "copy").stat().st_size

    monkeypatch.setattr(sources.os, "statvfs", lambda folder: Room())
    text = io.BytesIO(b"q1 Q0 d1 1 1.0 t\n" * 200_000)  # 3.4 MB of text
    with open(tmp_path / "copy", "wb") as copy, pytest.raises(InputError, match=r"its copy would fill the temporary "
                                                                                 r"folder .* \(3 MiB would be left after 1 MiB\)"):
        sources.copy_checked(Path("/dev/fd/63"), text, copy, reserve=4 << 20)
    for gzip_or_parquet in (gzip.compress(b"q1 Q0 d1 1 1 t\n"), b"PAR1\0\0\0"):  # binary formats pass the text check
        with open(tmp_path / "copy", "wb") as copy:
            assert sources.copy_checked(Path("/dev/fd/63"), io.BytesIO(gzip_or_parquet), copy, reserve=0) > 0


def test_eval_of_a_process_substitution_of_zeros_is_one_line_at_once(tmp_path):
    started = time.monotonic()
    result = subprocess.run(["bash", "-c", f'exec "{sys.executable}" -m ndcg_report.cli eval "{QRELS}" <(cat /dev/zero)'],
                            capture_output=True, text=True, timeout=30, env={**os.environ, "TMPDIR": str(tmp_path)})
    one_line(result, 2, "NUL byte: not UTF-8 text")
    assert time.monotonic() - started < 5
    assert not [path for path in tmp_path.rglob("*") if path.is_file()]
