"""The figures' style (analysis/figure_style.py): a matplotlibrc in the working folder changes no figure; the SVG
warns nothing."""

from __future__ import annotations

import io
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


def test_no_figure_warns_and_the_glyphs_the_font_lacks_are_named_instead():
    """A warning printed by one of the two executions nbval compares would fail the build, and the
    re-execution does not draw the figures: so drawing warns nothing, neither a glyph missing from the font
    nor a layout that cannot be fitted, and missing_glyphs names the characters matplotlib would warn of."""
    missing, _ = figure_style.new_figure()
    missing.axes[0].set_title("检索")
    assert _warnings_of(lambda: figure_style.figure_to_svg(missing)) == []
    assert _warnings_of(lambda: figure_style.figure_to_png_bytes(missing)) == []
    drawn, _ = figure_style.new_figure()
    drawn.axes[0].set_title("检索")
    assert any("missing from font" in text for text in _warnings_of(lambda: drawn.savefig(io.BytesIO(), format="png")))
    assert figure_style.missing_glyphs(["monoT5", "检索 system", "été", "检"]) == {"检索 system": "检索", "检": "检"}
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


def test_the_png_and_svg_share_one_layout_and_a_figure_not_drawn_is_not_laid_out_either():
    """One layout serves the PNG and the SVG, the PNG byte for byte figure_to_png_bytes's; the build's
    re-execution asks for neither, and the figure is left as drawn (nbval compares no image/png)."""
    figure = _titled("plain")
    before = [ax.get_position().bounds for ax in figure.axes]
    assert figure_style.rendered(figure, svg=False, png=False) == (None, None)
    assert [ax.get_position().bounds for ax in figure.axes] == before  # not laid out
    png, svg = figure_style.rendered(_titled("plain"))
    assert png == figure_style.figure_to_png_bytes(_titled("plain")) and svg.startswith("<?xml")
