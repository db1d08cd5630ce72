"""Randomized Tukey HSD and the compact letter display: a loop implementation on the same
permutations, properties (symmetry, copies never differ, larger gaps never get larger p), letters."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndcg_report.stats.letters import compact_letters
from ndcg_report.stats.tukey_hsd import TOLERANCE, permutation_batches, randomized_tukey_hsd, tukey_hsd_pvalues


def loop_tukey_hsd(scores: list[list[float]], permutations: list) -> list[list[float]]:
    """Carterette's test written out: for every resample, each query's scores go to the systems in
    the order the permutation gives; a pair's p-value is (1 + resamples whose range of system means
    reaches the pair's gap) / (1 + resamples)."""
    n, m = len(scores), len(scores[0])
    means = [sum(scores[q][j] for q in range(n)) / n for j in range(m)]
    reaching = [[0] * m for _ in range(m)]
    resamples = 0
    for batch in permutations:
        for permutation in batch.tolist():
            sums = [0.0] * m
            for q in range(n):
                for j in range(m):
                    sums[j] += scores[q][permutation[q][j]]
            permuted = [total / n for total in sums]
            spread = max(permuted) - min(permuted)
            for a in range(m):
                for b in range(m):
                    if spread >= abs(means[a] - means[b]) - TOLERANCE:
                        reaching[a][b] += 1
            resamples += 1
    return [[1.0 if a == b else (reaching[a][b] + 1) / (resamples + 1) for b in range(m)] for a in range(m)]


@pytest.mark.parametrize("discrete", [True, False])
def test_matches_a_loop_implementation_on_the_same_permutations(discrete):
    rng = np.random.default_rng(11)
    n, m = 14, 4
    scores = rng.integers(0, 5, (n, m)) / 4 if discrete else rng.random((n, m))
    scores[:, 1] = np.clip(scores[:, 0] + rng.normal(0, 0.05, n), 0, 1)  # a near twin of system 0
    permutations = list(permutation_batches(np.random.default_rng(5), 700, n, m))
    ours = tukey_hsd_pvalues(scores, permutations)
    expected = loop_tukey_hsd(scores.tolist(), permutations)
    np.testing.assert_array_equal(ours, np.array(expected))
    assert randomized_tukey_hsd(scores, np.random.default_rng(5), 700).tolist() == ours.tolist()


def test_batches_concatenate_to_the_same_permutations_whatever_their_size(monkeypatch):
    import ndcg_report.stats.tukey_hsd as module

    whole = np.concatenate(list(permutation_batches(np.random.default_rng(1), 50, 7, 3)))
    monkeypatch.setattr(module, "_ELEMENTS_PER_BATCH", 7 * 3 * 4)  # batches of 4 resamples
    pieces = list(permutation_batches(np.random.default_rng(1), 50, 7, 3))
    assert len(pieces) == 13 and np.array_equal(np.concatenate(pieces), whole)
    assert all(sorted(row) == [0, 1, 2] for row in whole.reshape(-1, 3).tolist())  # each row a permutation


def test_clearly_different_systems_are_significant_and_twins_are_not():
    rng = np.random.default_rng(3)
    good = rng.uniform(0.6, 1.0, 50)
    scores = np.column_stack([good, good, rng.uniform(0.0, 0.4, 50)])
    p = randomized_tukey_hsd(scores, np.random.default_rng(0), 2000)
    assert p[0, 1] == 1.0  # an exact copy
    assert p[0, 2] == p[1, 2] == pytest.approx(1 / 2001)  # no permutation reaches a gap that large


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 5).flatmap(lambda m: st.lists(
    st.lists(st.sampled_from([0.0, 0.2, 0.5, 0.61, 0.9, 1.0]), min_size=m, max_size=m), min_size=2, max_size=12)),
    st.integers(0, 2**31), st.data())
def test_properties(rows, seed, data):
    scores = np.array(rows)
    copied = data.draw(st.integers(0, scores.shape[1] - 1))
    scores = np.column_stack([scores, scores[:, copied]])  # the last system is an exact copy of another
    p = randomized_tukey_hsd(scores, np.random.default_rng(seed), 200)
    m = scores.shape[1]
    assert np.array_equal(p, p.T)
    assert np.all(np.diag(p) == 1.0)
    assert np.all((p > 0) & (p <= 1))
    assert p[copied, m - 1] == 1.0  # a system against an exact copy of itself is never significant
    gaps = np.abs(scores.mean(axis=0)[:, None] - scores.mean(axis=0)[None, :])
    for (a, b), (c, d) in itertools.product(itertools.combinations(range(m), 2), repeat=2):
        if gaps[a, b] > gaps[c, d] + 1e-9:
            assert p[a, b] <= p[c, d]  # a larger gap never gets a larger p-value


def test_letters_of_a_known_matrix():
    means = np.array([0.9, 0.8, 0.7, 0.5])
    p = np.ones((4, 4))
    for (a, b), value in {(0, 1): 0.3, (0, 2): 0.01, (0, 3): 0.001, (1, 2): 0.2, (1, 3): 0.01, (2, 3): 0.04}.items():
        p[a, b] = p[b, a] = value
    assert compact_letters(means, p, 0.05) == ["a", "ab", "b", "c"]
    assert compact_letters(means, p, 0.001) == ["a", "a", "a", "a"]  # nothing below 0.001: one group
    assert compact_letters(means, np.full((4, 4), 1e-6), 0.05) == ["a", "b", "c", "d"]


def test_letters_start_with_the_best_system_whatever_the_order():
    means = np.array([0.5, 0.9, 0.7])
    p = np.full((3, 3), 0.001)
    np.fill_diagonal(p, 1.0)
    assert compact_letters(means, p) == ["c", "a", "b"]


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 7).flatmap(lambda m: st.tuples(
    st.lists(st.floats(0, 1), min_size=m, max_size=m),
    st.lists(st.sampled_from([0.001, 0.01, 0.049, 0.05, 0.2, 0.9]), min_size=m * m, max_size=m * m))))
def test_two_systems_share_a_letter_exactly_when_they_do_not_differ(case):
    means, values = case
    m = len(means)
    p = np.array(values).reshape(m, m)
    p = np.triu(p, 1) + np.triu(p, 1).T + np.eye(m)
    letters = compact_letters(np.array(means), p, 0.05)
    assert all(letters)
    for a, b in itertools.combinations(range(m), 2):
        assert bool(set(letters[a]) & set(letters[b])) == (p[a, b] >= 0.05)
