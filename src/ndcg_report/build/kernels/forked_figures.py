"""A report's figures drawn beside the kernel: each figure made, laid out and drawn by a child forked for it.

Making a figure, laying it out and drawing its PNG and SVG is what a figure costs, and the kernel need not
do it figure by figure: the build's first execution forks a child per figure, which runs the figure's code
on the kernel's state as it stands (the same figure), lays it out once and writes its PNG and SVG
(figure_style.rendered: the bytes the kernel would draw) into a private temporary folder, and exits. The
kernel hands every figure of a cell over, then waits for the PNGs (the SVGs: when the report's files are
written); meanwhile both cores draw (the re-execution's runs each figure's code but draws no pixel), and
the kernel itself writes next to nothing while its children run (each page it writes would be copied). A
child that failed has its figure made and drawn again in the kernel, with the error its code raises.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ndcg_report.analysis.figure_style import FigureFiles, made, rendered

if TYPE_CHECKING:
    from matplotlib.figure import Figure


class ForkedFigureFiles(FigureFiles):
    """FigureFiles whose figures are drawn by forked children; on a system without fork, as FigureFiles."""

    def __init__(self, pixels: bool = True, svg: bool = False) -> None:
        super().__init__(pixels, svg)
        self._running: dict[str, tuple[int, Path, Callable[[], "Figure"]]] = {}  # name: (pid, its files' stem, draw)
        self._pngs: dict[str, bytes | None] = {}
        self._order: list[str] = []
        self._folder: Path | None = None

    def add(self, name: str, draw: Callable[[], "Figure"]) -> Callable[[], bytes | None]:
        """Fork a child that makes (draw) and draws this figure; a function waiting for its PNG (None without
        pixels)."""
        if not hasattr(os, "fork") or not (self.pixels or self.svg):
            return super().add(name, draw)
        self._order.append(name)
        self._collect(block=False)  # the figures of the children that have ended are let go
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="ndcg-report-figures-"))
        stem = self._folder / str(len(self._order))
        with warnings.catch_warnings():  # Python 3.12 warns of a fork in a threaded process: the child only draws
            warnings.simplefilter("ignore")
            pid = os.fork()
        if pid == 0:  # the child: draw, write, leave at once (no exit handler, no buffer of the kernel's flushed)
            code = 1
            try:
                sys.stdout = sys.stderr = open(os.devnull, "w")  # the kernel's streams are its own, not the child's
                png, svg = rendered(made(draw), svg=self.svg, png=self.pixels)
                if svg is not None:
                    stem.with_suffix(".svg").write_bytes(svg.encode("utf-8"))
                if png is not None:
                    stem.with_suffix(".png").write_bytes(png)
                code = 0
            finally:
                os._exit(code)
        self._running[name] = (pid, stem, draw)
        return lambda: self._png(name)

    def files(self) -> dict[str, bytes]:
        """{name: SVG bytes} of every figure added, in the order added, once every child has ended."""
        self._collect(block=True)
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
        return {name: self._files[name] for name in self._order if name in self._files}

    def _png(self, name: str) -> bytes | None:
        if name in self._running:
            self._collect(block=True, only=name)
        return self._pngs.pop(name, None)

    def _collect(self, block: bool, only: str | None = None) -> None:
        """Take what each child that has ended wrote (waiting, with block; for one figure, with only); a child
        killed or failed has its figure made and drawn here instead."""
        for name in [only] if only is not None else list(self._running):
            pid, stem, draw = self._running[name]
            ended, status = os.waitpid(pid, 0 if block else os.WNOHANG)
            if not ended:
                continue
            del self._running[name]
            png_file, svg_file = stem.with_suffix(".png"), stem.with_suffix(".svg")
            done = os.waitstatus_to_exitcode(status) == 0 and (png_file.is_file() or not self.pixels) \
                and (svg_file.is_file() or not self.svg)
            if done:
                png, svg = (png_file.read_bytes() if self.pixels else None), (svg_file.read_bytes() if self.svg else None)
            else:
                drawn, text = rendered(made(draw), svg=self.svg, png=self.pixels)
                png, svg = drawn, (text.encode("utf-8") if text is not None else None)
            self._pngs[name] = png
            if svg is not None:
                self._files[name] = svg
            for leftover in (png_file, svg_file):
                leftover.unlink(missing_ok=True)
