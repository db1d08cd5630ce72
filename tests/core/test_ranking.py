"""Ranks of run lines and the (query, docid) pair index, against plain Python references."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndcg_report.inputs.pair_index import PairIndex, build_pair_index, candidate_matches, rows_sharing_a_key
from ndcg_report.core import ranking
from ndcg_report.core.ranking import rank_within_query


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def reference_ranks(codes: list[int], scores: list[float], docids: list[str]) -> list[int]:
    """trec_eval's order per query: score descending, then docid descending by bytes."""
    ranks = [0] * len(codes)
    for code in set(codes):
        lines = [i for i in range(len(codes)) if codes[i] == code]
        lines.sort(key=lambda i: (scores[i], docids[i].encode()), reverse=True)
        for rank, line in enumerate(lines):
            ranks[line] = rank
    return ranks


@st.composite
def run_lines(draw) -> tuple[np.ndarray, np.ndarray, list[str], bool]:
    """Lines of a few queries with heavily tied scores, presorted as runs are written, or shuffled."""
    seed = draw(st.integers(0, 2**32 - 1))
    presorted = draw(st.booleans())
    rng = np.random.default_rng(seed)
    codes, scores, docids = [], [], []
    kind = draw(st.sampled_from(["ties", "near", "wide"]))
    for code in rng.permutation(int(rng.integers(1, 5))):
        n = int(rng.integers(1, 30))
        names = list(dict.fromkeys(f"d{rng.integers(0, 50)}{'é' * int(rng.integers(0, 2))}" for _ in range(n)))
        values = rng.integers(0, 4, len(names)).astype(float)
        if kind == "near":  # differ in the last bits only: equal in any truncated sort key
            values = 1.0 + values * 2.0**-52 - (rng.random(len(names)) < 0.3) * 2.0
        elif kind == "wide":  # the whole float range, both signs, and -0.0 (equal to 0.0)
            values = np.choose(rng.integers(0, 4, len(names)), [values * 1e300, -values * 1e-300, -0.0 * values, values])
        values = np.sort(values)[::-1]
        codes += [int(code)] * len(names)
        scores += values.tolist()
        docids += names
    order = np.arange(len(codes)) if presorted else rng.permutation(len(codes))
    return (np.array(codes, dtype=np.int32)[order], np.array(scores)[order],
            [docids[i] for i in order], presorted)


@settings(max_examples=200, deadline=None)
@given(run_lines(), st.integers(0, 2**32 - 1), st.booleans())
def test_ranks_of_any_rows_match_the_reference(monkeypatch_module, lines, seed, pyarrow_only):
    codes, scores, docids, _ = lines
    # pyarrow_only: the fallback for runs too large for packed sort words
    monkeypatch_module.setattr(ranking, "_MIN_SCORE_BITS", 65 if pyarrow_only else 8)
    expected = np.array(reference_ranks(codes.tolist(), scores.tolist(), docids))
    ranks = rank_within_query(codes, scores, pa.array(docids))
    assert ranks.rank.tolist() == expected.tolist()
    rows = np.sort(np.random.default_rng(seed).choice(len(codes), size=len(codes) // 2, replace=False))
    some = rank_within_query(codes, scores, pa.array(docids), rows)
    assert some.rank.tolist() == expected[rows].tolist()
    tied = sum(1 for i in range(len(codes)) if any(
        j != i and codes[j] == codes[i] and scores[j] == scores[i] for j in range(len(codes))))
    assert ranks.tied_lines == tied
    assert some.tied_lines == tied  # counted over every line, whichever rows are ranked


def wide_index(keys: np.ndarray, row_bits: int) -> PairIndex:
    """An index with more row bits than its size needs (as for files of billions of lines)."""
    packed = keys & ~np.uint64((1 << row_bits) - 1)
    packed |= np.arange(len(keys), dtype=np.uint64)
    return PairIndex(packed=np.sort(packed), row_bits=row_bits)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 7), max_size=40), st.lists(st.integers(0, 7), max_size=40), st.integers(0, 62),
       st.booleans())
def test_pair_index_finds_every_equal_key_under_heavy_collisions(left_keys, right_keys, shift, wide):
    # keys from a tiny set, moved to any bit position: many entries share their high bits
    left = np.array(left_keys, dtype=np.uint64) << np.uint64(shift)
    right = np.array(right_keys, dtype=np.uint64) << np.uint64(shift)
    if wide:  # 33 + 33 row bits: the rows no longer fit in one word together
        left_index, right_index = wide_index(left, 33), wide_index(right, 33)
    else:
        left_index, right_index = build_pair_index(left.copy()), build_pair_index(right.copy())
    rows, partners = candidate_matches(left_index, right_index)
    found = set(zip(rows.tolist(), partners.tolist()))
    assert len(found) == len(rows) and rows.tolist() == sorted(rows.tolist())
    equal = {(i, j) for i in range(len(left)) for j in range(len(right)) if left[i] == right[j]}
    assert equal <= found  # candidates may include more (equal high bits); callers verify them
    repeated = {i for i in range(len(left)) for j in range(len(left)) if i != j and left[i] == left[j]}
    assert repeated <= set(rows_sharing_a_key(left_index).tolist())
