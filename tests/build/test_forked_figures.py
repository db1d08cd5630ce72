"""A report's figures made and drawn by forked children (build/kernels/forked_figures.py): the PNG and SVG
bytes the kernel would draw itself, in the order added, none without pixels or files; a child that fails is
drawn again in the kernel, and a figure whose code raises raises there; without pixels or files nothing is made."""

from __future__ import annotations

import os

import pytest

from ndcg_report.analysis import figure_style
from ndcg_report.analysis.figure_style import FigureFiles
from ndcg_report.build.kernels.forked_figures import ForkedFigureFiles


def _figures():
    found = []
    for title in ("one", "two", "检索"):
        figure, ax = figure_style.new_figure()
        ax.plot([0, 1], [1, 0], label=title)
        ax.set_title(title)
        ax.legend()
        found.append(figure)
    return found


def _drawn(files: FigureFiles) -> tuple[list, dict]:
    pending = [files.add(f"figures/{number:02d}.svg", lambda figure=figure: figure)
               for number, figure in enumerate(_figures())]
    return [png() for png in pending], files.files()


@pytest.mark.parametrize("pixels, svg", [(True, True), (True, False), (False, False)])
def test_the_children_draw_the_bytes_the_kernel_would_in_the_order_added(pixels, svg):
    forked, inline = _drawn(ForkedFigureFiles(pixels, svg)), _drawn(FigureFiles(pixels, svg))
    assert forked == inline
    pngs, svgs = forked
    assert all(png.startswith(b"\x89PNG") for png in pngs) if pixels else pngs == [None, None, None]
    assert list(svgs) == (["figures/00.svg", "figures/01.svg", "figures/02.svg"] if svg else [])
    assert all(text.startswith(b"<?xml") for text in svgs.values())


def test_a_child_that_fails_is_drawn_again_in_the_kernel(monkeypatch):
    expected = _drawn(FigureFiles(True, True))
    real_fork = os.fork

    def failing_fork():
        pid = real_fork()
        if pid == 0:
            os._exit(3)  # as a child killed before it wrote anything
        return pid

    monkeypatch.setattr(os, "fork", failing_fork)
    assert _drawn(ForkedFigureFiles(True, True)) == expected


def test_a_figure_whose_code_raises_raises_in_the_kernel():
    def broken():
        raise ValueError("no data to draw")

    files = ForkedFigureFiles(True, True)
    png = files.add("figures/01.svg", broken)
    with pytest.raises(ValueError, match="no data to draw"):
        png()


@pytest.mark.parametrize("files", [FigureFiles(False, False), ForkedFigureFiles(False, False)])
def test_without_pixels_or_files_a_figures_code_is_not_run(files):
    """The build's re-execution: nothing a figure makes is compared by nbval or kept, so it is not made."""
    made = []
    png = files.add("figures/01.svg", lambda: made.append(1) or figure_style.new_figure()[0])
    assert png() is None and made == [] and files.files() == {}


def test_the_figures_around_one_whose_code_raises_are_still_drawn_by_the_children(tmp_path):
    figures, makers = _figures(), tmp_path / "made-by"

    def made(number):
        with open(makers, "a") as out:
            out.write(f"{os.getpid()}\n")
        return figures[number]

    def broken():
        raise ValueError("no data to draw")

    files = ForkedFigureFiles(True, True)
    pending = [files.add("figures/00.svg", lambda: made(0)), files.add("figures/01.svg", broken),
               files.add("figures/02.svg", lambda: made(2))]
    expected_pngs, expected_svgs = _drawn(FigureFiles(True, True))
    assert pending[0]() == expected_pngs[0]
    with pytest.raises(ValueError, match="no data to draw"):
        pending[1]()
    assert pending[2]() == expected_pngs[2]
    assert list(files.files()) == ["figures/00.svg", "figures/02.svg"]
    makers = makers.read_text().split()
    assert len(makers) == 2 and str(os.getpid()) not in makers  # made in the children, each once


def test_no_folder_is_left_once_every_png_is_taken(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    files = ForkedFigureFiles(True, False)  # pixels only: a notebook run with no folder for the report's files
    pending = [files.add(f"figures/{n:02d}.svg", lambda figure=figure: figure) for n, figure in enumerate(_figures())]
    assert all(png().startswith(b"\x89PNG") for png in pending)
    assert list(tmp_path.iterdir()) == []
