"""The gate's one-sided randomization tests are scipy's permutation_test on the same stream, zeros or not."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ndcg_report.stats.one_sided import one_sided_pvalues
from ndcg_report.stats.streams import stream


def scipy_p(d, rng, alternative, n_resamples=10_000):
    return stats.permutation_test((d,), np.mean, permutation_type="samples", vectorized=True, n_resamples=n_resamples,
                                  alternative=alternative, rng=rng).pvalue


@pytest.mark.parametrize("mean", [-0.05, 0.05, 0.0])
def test_both_ps_equal_scipy_permutation_test_on_the_same_seed(mean):
    d = np.random.default_rng(5).normal(mean, 0.2, 40)  # 2**40 sign patterns: Monte Carlo in both
    worse, better = one_sided_pvalues(d, stream(42, "gate", "flips", "monoT5", "nDCG@10"), 2_000)
    assert worse == scipy_p(d, stream(42, "gate", "flips", "monoT5", "nDCG@10"), "less", 2_000)
    assert better == scipy_p(d, stream(42, "gate", "flips", "monoT5", "nDCG@10"), "greater", 2_000)
    assert (worse < 0.5) == (d.mean() < 0) and (better < 0.5) == (d.mean() > 0)


def test_zero_deltas_leave_the_exact_ps_as_they_are():
    d = np.array([-0.3, -0.2, 0.05, -0.1, 0.0, 0.0, -0.15, 0.02, 0.0, -0.4, 0.0, -0.08])  # 2**12 < 10,000: exact
    worse, better = one_sided_pvalues(d, np.random.default_rng(1), 10_000)
    assert worse == pytest.approx(scipy_p(d, np.random.default_rng(0), "less"), abs=1e-12)
    assert better == pytest.approx(scipy_p(d, np.random.default_rng(0), "greater"), abs=1e-12)
    assert worse == pytest.approx(4 / 256, abs=1e-12)  # 8 moved deltas: 4 of the 256 sign patterns go as low
    assert better == pytest.approx(253 / 256, abs=1e-12)  # all but the 3 patterns lower still go as high


def test_nothing_moved_is_p_one():
    assert one_sided_pvalues(np.zeros(30), np.random.default_rng(0), 1_000) == (1.0, 1.0)
