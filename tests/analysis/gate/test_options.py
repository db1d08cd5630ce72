"""The gate's options table: each surface's options, their checks and defaults, for flags and YAML keys alike."""

from __future__ import annotations

import pytest

from ndcg_report.analysis.gate.options import checked_gate_options, gate_options
from ndcg_report.errors import ParameterError


def test_the_command_takes_measures_margin_and_alpha_and_the_batch_two_keys_more():
    assert [option.cli_flag for option in gate_options("cli")] == ["--measure", "--margin", "--alpha"]
    assert [option.name for option in gate_options("yaml")] == ["measures", "margin", "alpha", "fail_on", "against"]


def test_yaml_keys_are_checked_and_defaulted():
    given = {"measures": ["nDCG@10", "RR"], "margin": 0.01, "fail_on": "warning"}
    assert checked_gate_options(given, "yaml") == {"measures": "nDCG@10 RR", "margin": 0.01, "alpha": 0.05,
                                                   "fail_on": "warning", "against": "last"}


@pytest.mark.parametrize("given, message", [
    ({"against": "yesterday"}, "against: 'yesterday' is not one of last, pinned"),
    ({"alpha": 1.5}, "alpha: 1.5 must be a number above 0 and below 1"),
    ({"margin": True}, "margin: True must be a number >= 0"),
    ({"measure": "RR"}, "measure: not a gate option (known: measures, margin, alpha, fail_on, against)"),
])
def test_a_bad_key_or_value_is_one_line_naming_it(given, message):
    with pytest.raises(ParameterError) as error:
        checked_gate_options(given, "yaml")
    assert str(error.value) == message
