"""The figures' style (analysis/figure_style.py): a matplotlibrc in the working folder changes no figure; the SVG
warns nothing."""

from __future__ import annotations

import warnings

from ndcg_report.analysis import figure_style
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


def _warnings_of(draw) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        draw()
    return [str(warning.message) for warning in caught]


def test_the_svg_warns_nothing_and_the_png_what_its_drawing_warns():
    """Only the execution that writes the report's files draws the SVG: a warning of its own would be
    output that nbval's re-execution lacks. A glyph missing from the font is warned by the PNG (drawn by
    both); a layout that cannot be fitted by neither."""
    missing, _ = figure_style.new_figure()
    missing.axes[0].set_title("检索")
    assert _warnings_of(lambda: figure_style.figure_to_svg(missing)) == []
    assert any("missing from font" in text for text in _warnings_of(lambda: figure_style.figure_to_png_bytes(missing)))
    cramped, _ = figure_style.new_figure((1.0, 1.0))
    cramped.axes[0].set_xticks([0], ["x" * 200], rotation=90)
    assert _warnings_of(lambda: figure_style.figure_to_png_bytes(cramped)) == []
    assert _warnings_of(lambda: figure_style.figure_to_svg(cramped)) == []
    collapsed = _warnings_of(lambda: cramped.get_layout_engine().execute(cramped))
    assert any("collapsed" in text for text in collapsed)  # the case the two silence


def _titled(title: str):
    figure, _ = figure_style.new_figure()
    figure.axes[0].set_title(title)
    figure.axes[0].plot([0, 1], [0, 1], label=title)
    figure.axes[0].legend()
    return figure


def test_a_figure_laid_out_but_not_drawn_warns_what_the_drawn_one_warns_and_the_png_and_svg_share_a_layout():
    """The build's re-execution lays a figure out without drawing it (nbval compares no image/png): its
    warnings must be the drawing execution's, or nbval would fail the build on them; and one layout serves
    the PNG and the SVG, the PNG byte for byte figure_to_png_bytes's."""
    for title in ("检索 system", "plain"):
        drawn = _warnings_of(lambda: figure_style.rendered(_titled(title), svg=True, png=True))
        laid_out = _warnings_of(lambda: figure_style.rendered(_titled(title), svg=False, png=False))
        assert drawn == laid_out
        assert bool(drawn) == (title != "plain")
    assert figure_style.rendered(_titled("plain"), svg=False, png=False) == (None, None)
    png, svg = figure_style.rendered(_titled("plain"))
    assert png == figure_style.figure_to_png_bytes(_titled("plain")) and svg.startswith("<?xml")
    assert 'id="text_' in svg or "<path" in svg
    unlaid, _ = figure_style.new_figure()
    unlaid.set_layout_engine(None)
    unlaid.axes[0].set_title("检索")  # no layout to measure the text: it is drawn, to warn the same
    shown, _ = figure_style.rendered(unlaid, svg=False, png=False)
    assert shown is not None and shown.startswith(b"\x89PNG")
