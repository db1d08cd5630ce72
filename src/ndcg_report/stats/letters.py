"""Compact letter display of a pairwise test: two systems share a letter when they do not differ.

Not differing means not differing significantly. Letters are the maximal groups of mutually non-different
systems (maximal cliques, networkx), `a` for the group holding the best system.
"""

from __future__ import annotations

import string

import numpy as np

_ALPHABET = string.ascii_lowercase + string.ascii_uppercase


def compact_letters(means: np.ndarray, pvalues: np.ndarray, alpha: float = 0.05) -> list[str]:
    """Letters per system (same order as means): systems i and j share a letter iff pvalues[i, j] >= alpha.

    Groups are ordered by their best mean (then their next best, ...), so `a` marks the top group.
    """
    import networkx as nx

    means = np.asarray(means, dtype=np.float64)
    pvalues = np.asarray(pvalues, dtype=np.float64)
    n = len(means)
    if pvalues.shape != (n, n):
        raise ValueError(f"pvalues must be {n} x {n}; got {pvalues.shape}")
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((i, j) for i in range(n) for j in range(i + 1, n) if pvalues[i, j] >= alpha)
    groups = [sorted(clique, key=lambda i: (-means[i], i)) for clique in nx.find_cliques(graph)]
    groups.sort(key=lambda members: ([-means[i] for i in members], members))
    letters = [""] * n
    for number, members in enumerate(groups):
        for i in members:
            letters[i] += _letter(number)
    return letters


def _letter(number: int) -> str:
    """a..z, A..Z, then g53, g54, ... (more groups than that means the display has stopped helping)."""
    return _ALPHABET[number] if number < len(_ALPHABET) else f"g{number + 1}"
