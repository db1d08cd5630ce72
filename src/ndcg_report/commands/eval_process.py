"""The eval command's process set up for one large read: before NumPy loads, and before any big allocation.

eval is a short process that allocates and frees blocks of tens of MB many times over. Left as they
are, three defaults of the libraries cost it a tenth of its time on two cores (benchmarks/README.md):
- NumPy's bundled OpenBLAS starts a thread per core that spins while it waits for work; eval does
  no linear algebra, so it loads with one thread (OPENBLAS_NUM_THREADS, unless the user set it);
- NumPy asks for transparent huge pages for arrays of 4 MiB or more, and the kernel zeroes 2 MiB
  at each first touch of memory it just handed out (NUMPY_MADVISE_HUGEPAGE, unless set);
- glibc's malloc hands blocks of freed memory back to the system and faults them in again for
  the next block: it keeps up to TRIM_KEEP_BYTES of freed memory instead, and serves blocks up to
  32 MiB from its heap (mallopt; other C libraries are left as they are).
The two variables are set only while NumPy loads, then put back, so no child process sees them.
"""

from __future__ import annotations

import ctypes
import os
import sys

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)
MMAP_ABOVE_BYTES = 32 << 20  # glibc's largest threshold for serving a block from the heap
TRIM_KEEP_BYTES = 1 << 30  # freed memory kept for reuse; it was in use a moment before, so peak memory is unchanged
_LOAD_SETTINGS = {"OPENBLAS_NUM_THREADS": "1", "NUMPY_MADVISE_HUGEPAGE": "0"}


def prepare_eval_process() -> None:
    """Load NumPy with one BLAS thread and no huge-page advice, and keep freed memory (glibc) for reuse;
    does nothing to NumPy once it is loaded, or to a setting the user's environment gives."""
    _keep_freed_memory()
    if "numpy" in sys.modules:
        return
    added = [name for name in _LOAD_SETTINGS if name not in os.environ]
    for name in added:
        os.environ[name] = _LOAD_SETTINGS[name]
    try:
        import numpy  # noqa: F401 - loaded now, with the settings above
    finally:
        for name in added:
            os.environ.pop(name, None)


def _keep_freed_memory() -> None:
    """mallopt on glibc: blocks up to MMAP_ABOVE_BYTES from the heap, up to TRIM_KEEP_BYTES of freed memory kept."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl, macOS): its allocator as it is
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    mallopt(_M_MMAP_THRESHOLD, MMAP_ABOVE_BYTES)
    mallopt(_M_TRIM_THRESHOLD, TRIM_KEEP_BYTES)
