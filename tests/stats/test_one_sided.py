"""The gate's one-sided randomization test is scipy's permutation_test on the same stream, zeros or not."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ndcg_report.stats.one_sided import one_sided_pvalue
from ndcg_report.stats.streams import stream


def scipy_p(d, rng, alternative, n_resamples=10_000):
    return stats.permutation_test((d,), np.mean, permutation_type="samples", vectorized=True, n_resamples=n_resamples,
                                  alternative=alternative, rng=rng).pvalue


@pytest.mark.parametrize("alternative", ["less", "greater"])
def test_p_equals_scipy_permutation_test_on_the_same_seed(alternative):
    d = np.random.default_rng(5).normal(-0.03, 0.2, 40)  # 2**40 sign patterns: Monte Carlo in both
    ours = one_sided_pvalue(d, stream(42, "gate", "worse", "monoT5", "nDCG@10"), 2_000, alternative)
    theirs = scipy_p(d, stream(42, "gate", "worse", "monoT5", "nDCG@10"), alternative, 2_000)
    assert ours == theirs
    assert (ours < 0.5) == (alternative == "less")


def test_zero_deltas_leave_the_exact_p_as_it_is():
    d = np.array([-0.3, -0.2, 0.05, -0.1, 0.0, 0.0, -0.15, 0.02, 0.0, -0.4, 0.0, -0.08])  # 2**12 < 10,000: exact
    exact = scipy_p(d, np.random.default_rng(0), "less")
    assert one_sided_pvalue(d, np.random.default_rng(1), 10_000, "less") == pytest.approx(exact, abs=1e-12)
    assert exact == pytest.approx(4 / 256, abs=1e-12)  # 8 moved deltas: 4 of the 256 sign patterns go as low


def test_nothing_moved_is_p_one():
    assert one_sided_pvalue(np.zeros(30), np.random.default_rng(0), 1_000, "less") == 1.0
