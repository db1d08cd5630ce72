"""A report's figures drawn beside the kernel: made, laid out and drawn by two children forked for them.

Making a figure, laying it out and drawing its PNG and SVG is what a figure costs, and the kernel need not
do it figure by figure: the build's first execution hands every figure of a cell over, and when the first
PNG is asked for, forks WORKERS children on the kernel's state as it stands (the same figures). Each child
takes the next figure no other has taken (an exclusive claim file), makes it, lays it out once and writes
its PNG and SVG (figure_style.made_and_rendered: the bytes the kernel would draw) into a private temporary
folder, and so on until none is left; then it exits. Two children share out the figures as they come
(the costly ones do not queue behind each other) and each pays the fork, the pages it copies and its
font and text caches once for several figures, not once a figure. Meanwhile the other core has the
re-execution's kernel, which makes no figure, and the kernel waits, writing next to nothing (each page
it writes would be copied). A figure no child wrote (its code raised, or a child was killed) is made and
drawn again in the kernel, with the error its code raises.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ndcg_report.analysis.figure_style import FigureFiles, made_and_rendered

if TYPE_CHECKING:
    from matplotlib.figure import Figure

WORKERS = 2  # the children that draw a cell's figures: one a core of the machine the build is made for


@dataclass
class _Figure:
    name: str
    stem: Path  # its files: stem.png, stem.svg; stem.claim once a child has taken it
    draw: Callable[[], "Figure"]


@dataclass
class _Batch:
    """The figures handed over before a PNG was asked for, and the children drawing them (none: not started)."""
    figures: list[_Figure]
    children: list[int] = field(default_factory=list)


class ForkedFigureFiles(FigureFiles):
    """FigureFiles whose figures are drawn by forked children; on a system without fork, as FigureFiles."""

    def __init__(self, pixels: bool = True, svg: bool = False) -> None:
        super().__init__(pixels, svg)
        self._batches: list[_Batch] = []
        self._pngs: dict[str, bytes | None] = {}
        self._errors: dict[str, Exception] = {}
        self._order: list[str] = []
        self._folder: Path | None = None

    def add(self, name: str, draw: Callable[[], "Figure"]) -> Callable[[], bytes | None]:
        """Hand a figure over (draw makes it), to be drawn by the children once a PNG is asked for; a function
        waiting for its PNG (None without pixels)."""
        if not hasattr(os, "fork") or not (self.pixels or self.svg):
            return super().add(name, draw)
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="ndcg-report-figures-"))
        self._order.append(name)
        if not self._batches or self._batches[-1].children:
            self._batches.append(_Batch([]))
        self._batches[-1].figures.append(_Figure(name, self._folder / str(len(self._order)), draw))
        return lambda: self._png(name)

    def files(self) -> dict[str, bytes]:
        """{name: SVG bytes} of every figure added, in the order added, once every child has ended."""
        for batch in list(self._batches):
            self._collect(batch)
        for error in self._errors.values():
            raise error
        return {name: self._files[name] for name in self._order if name in self._files}

    def _png(self, name: str) -> bytes | None:
        for batch in list(self._batches):
            if any(figure.name == name for figure in batch.figures):
                self._collect(batch)
        if name in self._errors:
            raise self._errors.pop(name)
        return self._pngs.pop(name, None)

    def _start(self, batch: _Batch) -> None:
        """Fork the children that draw the batch's figures."""
        for _ in range(min(WORKERS, len(batch.figures))):
            with warnings.catch_warnings():  # Python 3.12 warns of a fork in a threaded process: the child only draws
                warnings.simplefilter("ignore")
                pid = os.fork()
            if pid == 0:  # the child: draw, write, leave at once (no exit handler, no buffer of the kernel's flushed)
                try:
                    sys.stdout = sys.stderr = open(os.devnull, "w")  # the kernel's streams are its own, not the child's
                    self._draw_claimed(batch.figures)
                finally:
                    os._exit(0)
            batch.children.append(pid)

    def _draw_claimed(self, figures: list[_Figure]) -> None:
        """In a child: make and draw each figure no other child has claimed, in order; one whose code raises
        is left unwritten (the kernel draws it again, and raises)."""
        for figure in figures:
            try:
                os.close(os.open(figure.stem.with_suffix(".claim"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            except FileExistsError:
                continue
            try:
                png, svg = made_and_rendered(figure.draw, svg=self.svg, png=self.pixels)
            except Exception:
                continue
            for suffix, data in ((".svg", svg.encode("utf-8") if svg is not None else None), (".png", png)):
                if data is not None:  # written whole, then renamed: a child killed meanwhile leaves no half file
                    part = figure.stem.with_suffix(suffix + ".part")
                    part.write_bytes(data)
                    os.replace(part, figure.stem.with_suffix(suffix))

    def _collect(self, batch: _Batch) -> None:
        """Start the batch's children if they are not, wait for them, and take what they wrote; a figure they
        did not write is made and drawn here instead."""
        if not batch.children:
            self._start(batch)
        for pid in batch.children:
            os.waitpid(pid, 0)
        self._batches.remove(batch)
        for figure in batch.figures:
            png_file, svg_file = figure.stem.with_suffix(".png"), figure.stem.with_suffix(".svg")
            try:
                if (png_file.is_file() or not self.pixels) and (svg_file.is_file() or not self.svg):
                    png = png_file.read_bytes() if self.pixels else None
                    svg = svg_file.read_bytes() if self.svg else None
                else:
                    drawn, text = made_and_rendered(figure.draw, svg=self.svg, png=self.pixels)
                    png, svg = drawn, (text.encode("utf-8") if text is not None else None)
            except Exception as error:  # the figure's own error: raised where its PNG is asked for
                self._errors[figure.name] = error
                continue
            finally:
                for leftover in figure.stem.parent.glob(figure.stem.name + ".*"):
                    leftover.unlink(missing_ok=True)
            self._pngs[figure.name] = png
            if svg is not None:
                self._files[figure.name] = svg
        if not self._batches and self._folder is not None:  # nothing left to draw: no folder left behind
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
