"""The eval command's process set-up (commands.eval_process): NumPy loads with one BLAS thread and no
huge-page advice unless the user's environment says otherwise, and no child sees those settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = r"""
import json, os, sys
from ndcg_report.commands.eval_process import prepare_eval_process
if sys.argv[1] == "prepared":
    prepare_eval_process()
import numpy
from threadpoolctl import threadpool_info
from numpy._core.multiarray import _get_madvise_hugepage
blas = [pool["num_threads"] for pool in threadpool_info() if pool["internal_api"] == "openblas"]
print(json.dumps({"blas_threads": blas, "hugepage": bool(_get_madvise_hugepage()),
                  "env": {name: os.environ.get(name) for name in ("OPENBLAS_NUM_THREADS", "NUMPY_MADVISE_HUGEPAGE")}}))
"""


def probe(mode: str, **env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "NUMPY_MADVISE_HUGEPAGE",
                                                                "OMP_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True,
                          env={**clean, **env})
    return json.loads(done.stdout)


def test_numpy_loads_with_one_blas_thread_and_no_huge_pages_and_the_environment_is_put_back():
    prepared = probe("prepared")
    if not prepared["blas_threads"]:
        pytest.skip("this NumPy has no OpenBLAS")
    assert prepared["blas_threads"] == [1] and prepared["hugepage"] is False
    assert prepared["env"] == {"OPENBLAS_NUM_THREADS": None, "NUMPY_MADVISE_HUGEPAGE": None}  # children see the user's


def test_the_users_settings_win():
    given = probe("prepared", OPENBLAS_NUM_THREADS="2", NUMPY_MADVISE_HUGEPAGE="1")
    if not given["blas_threads"]:
        pytest.skip("this NumPy has no OpenBLAS")
    assert given["blas_threads"] == [2] and given["hugepage"] is True
    assert given["env"] == {"OPENBLAS_NUM_THREADS": "2", "NUMPY_MADVISE_HUGEPAGE": "1"}
