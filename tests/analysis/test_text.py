"""How p-values are written: a value at the randomization test's floor says only that the true p is at most it."""

from __future__ import annotations

from ndcg_report.analysis.text import format_p, p_pair, p_phrase
from ndcg_report.stats.resampling import pvalue_floor


def test_the_floor_is_one_over_the_resamples_plus_one_per_side_times_holm_s_multiplier():
    assert pvalue_floor(10_000) == 2 / 10_001 and pvalue_floor(10_000, sides=1) == 1 / 10_001
    assert f"{pvalue_floor(10_000, multiplier=18):.4f}" == "0.0036"


def test_a_p_value_at_its_floor_is_written_as_at_most_the_floor():
    floor = pvalue_floor(10_000, multiplier=18)
    holm = 18 * (2 / 10_001)  # as Holm's product gives it, not exactly floor
    assert p_phrase(holm, floor) == "≤ 0.0036" and format_p(holm, floor) == "≤0.0036"
    assert p_phrase(0.0072, floor) == "= 0.0072" and format_p(0.0072, floor) == "0.0072"
    assert p_phrase(holm) == "= 0.0036" and format_p(holm) == "0.0036"  # no floor given: a value
    assert p_pair(2 / 10_001, holm, pvalue_floor(10_000), floor) == "≤0.0002 (≤0.0036)"
    assert format_p(1 / 100_001, 1 / 100_001) == "<0.0001"  # below the digits shown, as before
