"""The report's SVG files drawn by forked children (build/kernels/forked_svgs.py): the bytes the kernel would
draw itself, in the order added, and a child that fails is drawn again in the kernel."""

from __future__ import annotations

import os

from ndcg_report.analysis import figure_style
from ndcg_report.analysis.figure_style import FigureFiles
from ndcg_report.build.kernels.forked_svgs import ForkedFigureFiles


def _figures():
    found = []
    for title in ("one", "two", "检索"):
        figure, ax = figure_style.new_figure()
        ax.plot([0, 1], [1, 0], label=title)
        ax.set_title(title)
        ax.legend()
        figure_style.rendered(figure, svg=False)  # laid out and its PNG drawn, as the report does first
        found.append(figure)
    return found


def test_the_children_write_the_svg_the_kernel_would_draw_in_the_order_added():
    forked, inline = ForkedFigureFiles(), FigureFiles()
    for number, figure in enumerate(_figures()):
        forked.add(f"figures/{number:02d}.svg", figure)
        inline.add(f"figures/{number:02d}.svg", figure)
    assert forked.files() == inline.files()
    assert list(forked.files()) == ["figures/00.svg", "figures/01.svg", "figures/02.svg"]
    assert all(svg.startswith(b"<?xml") for svg in forked.files().values())


def test_a_child_that_fails_is_drawn_again_in_the_kernel(monkeypatch):
    figures = _figures()
    expected = FigureFiles()
    for number, figure in enumerate(figures):
        expected.add(str(number), figure)
    real_fork = os.fork

    def failing_fork():
        pid = real_fork()
        if pid == 0:
            os._exit(3)  # as a child killed before it wrote anything
        return pid

    monkeypatch.setattr(os, "fork", failing_fork)
    files = ForkedFigureFiles()
    for number, figure in enumerate(figures):
        files.add(str(number), figure)
    assert files.files() == expected.files()
