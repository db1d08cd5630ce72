"""The figures' style (analysis/figure_style.py): a matplotlibrc in the working folder changes no figure."""

from __future__ import annotations

from tests.helpers import build_from, figures


def test_a_matplotlibrc_in_the_working_folder_changes_no_figure(tmp_path):
    clean, planted = tmp_path / "clean", tmp_path / "planted"
    clean.mkdir()
    planted.mkdir()
    (planted / "matplotlibrc").write_text("figure.facecolor: red\naxes.facecolor: red\nlegend.frameon: False\n"
                                          "lines.linewidth: 9\nfont.size: 30\n")
    assert build_from(clean, tmp_path / "a").returncode == 0
    result = build_from(planted, tmp_path / "b")
    assert result.returncode == 0, result.stderr
    assert figures(tmp_path / "a") and figures(tmp_path / "a") == figures(tmp_path / "b")
