"""Random streams of their own: every seeded statistic draws from a generator derived from its names.

Its names are (seed, what it is, whose it is), so adding a system or a cut-off never changes another number.
"""

from __future__ import annotations

import hashlib

import numpy as np

_SEPARATOR = "\x1f"  # unit separator: ("a b", "c") and ("a", "b c") give different streams


def stream(seed: int, *labels: str) -> np.random.Generator:
    """A generator for (seed, labels): the same seed and labels always give the same draws.

    labels name the statistic and what it is computed on, e.g. ("randomization", "monoT5", "BM25", "10").
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0; got {seed!r}")
    digest = hashlib.sha256(_SEPARATOR.join(labels).encode("utf-8")).digest()
    spawn_key = tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, len(digest), 4))
    return np.random.default_rng(np.random.SeedSequence(entropy=int(seed), spawn_key=spawn_key))
