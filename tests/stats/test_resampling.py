"""The resampling statistics against scipy.stats itself, to the bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ndcg_report.stats.resampling import _batch, bootstrap_mean_intervals, bootstrap_means, resampled_positions


def scipy_bootstrap(values: np.ndarray, seed: int, n_resamples: int, confidence: float):
    return stats.bootstrap((values,), np.mean, n_resamples=n_resamples, batch=_batch(len(values)), vectorized=True,
                           confidence_level=confidence, method="percentile", rng=np.random.default_rng(seed))


# one resample: scipy's standard error of a single value warns (ddof 1); the values are still compared
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning", "ignore:Degrees of freedom:RuntimeWarning")
@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 6_000), n_resamples=st.sampled_from([1, 99, 1_000, 10_000]), seed=st.integers(0, 2**32),
       digits=st.integers(1, 4), confidence=st.sampled_from([0.5, 0.9, 0.95, 0.99]))
def test_bootstrap_means_are_scipys_bootstrap_distribution_and_interval(n, n_resamples, seed, digits, confidence):
    """The same draws (int32 positions are the int64 ones), batches and means as scipy.stats.bootstrap, so the
    same interval; above 5,000 values scipy's batches split the resamples."""
    values = np.round(np.random.default_rng(seed).random(n), digits)
    expected = scipy_bootstrap(values, seed, n_resamples, confidence)
    means = bootstrap_means(values, np.random.default_rng(seed), n_resamples, _batch(n))
    np.testing.assert_array_equal(means, expected.bootstrap_distribution)
    if np.all(values == values[0]):
        return
    (low, high), = bootstrap_mean_intervals(values, np.random.default_rng(seed), n_resamples, (confidence,))
    assert (low, high) == (float(expected.confidence_interval.low), float(expected.confidence_interval.high))


def test_each_further_confidence_level_is_a_percentile_of_the_same_resamples():
    values = np.random.default_rng(4).random(43)
    distribution = scipy_bootstrap(values, 9, 10_000, 0.95).bootstrap_distribution
    found = bootstrap_mean_intervals(values, np.random.default_rng(9), 10_000, (0.95, 0.9))
    alpha = (1 - 0.9) / 2
    assert found[1] == tuple(np.percentile(distribution, [100 * alpha, 100 * (1 - alpha)]).tolist())
    assert found[0] != found[1]


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning", "ignore:Degrees of freedom:RuntimeWarning")
@pytest.mark.parametrize("n, n_resamples, batch", [(43, 10_000, None), (7, 1_000, 300), (5_000, 450, 419), (2, 1, None)])
def test_resampled_positions_are_the_ones_scipys_bootstrap_draws(n, n_resamples, batch):
    seen = []

    def statistic(positions, axis=-1):
        seen.append(positions.copy())
        return positions.mean(axis=axis)

    stats.bootstrap((np.arange(n),), statistic, n_resamples=n_resamples, batch=batch, vectorized=True,
                    method="percentile", rng=np.random.default_rng(11))
    ours = list(resampled_positions(n, np.random.default_rng(11), n_resamples, batch))
    assert [len(block) for block in ours] == [len(block) for block in seen]
    np.testing.assert_array_equal(np.concatenate(ours), np.concatenate(seen))
