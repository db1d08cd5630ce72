"""The report's SVG files drawn beside the kernel: each figure's SVG in a child forked once its PNG is drawn.

The SVG is about half of what a figure costs, and no output of the notebook waits for it (only the files
written at its end), so the build's first execution forks a child per figure, holding that figure as it is
laid out, which writes the SVG (figure_style.laid_out_svg: the same bytes) into a private temporary folder
and exits; meanwhile the kernel goes on, and the other core (where the re-execution draws no pixels) does
the work. A figure is held only until its child has ended (looked at as each figure is added); files()
waits for the rest. A child that failed has its figure drawn again in the kernel.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from ndcg_report.analysis.figure_style import FigureFiles

if TYPE_CHECKING:
    from matplotlib.figure import Figure


class ForkedFigureFiles(FigureFiles):
    """FigureFiles whose SVGs are drawn by forked children; on a system without fork, as FigureFiles."""

    def __init__(self) -> None:
        super().__init__()
        self._children: list[tuple[str, int, Path, "Figure"]] = []  # running: (name, pid, its file, the figure)
        self._order: list[str] = []
        self._folder: Path | None = None

    def add(self, name: str, figure: "Figure") -> None:
        """Fork a child that writes this figure's SVG (the figure is held until the child has ended)."""
        self._order.append(name)
        if not hasattr(os, "fork"):
            super().add(name, figure)
            return
        self._collect(block=False)  # the figures of the children that have ended are let go
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="ndcg-report-svg-"))
        target = self._folder / f"{len(self._order)}.svg"
        with warnings.catch_warnings():  # Python 3.12 warns of a fork in a threaded process: the child only draws
            warnings.simplefilter("ignore")
            pid = os.fork()
        if pid == 0:  # the child: draw, write, leave at once (no exit handler, no buffer of the kernel's flushed)
            code = 1
            try:
                from ndcg_report.analysis.figure_style import laid_out_svg

                target.write_bytes(laid_out_svg(figure).encode("utf-8"))
                code = 0
            finally:
                os._exit(code)
        self._children.append((name, pid, target, figure))

    def files(self) -> dict[str, bytes]:
        """{name: SVG bytes} of every figure added, in the order added, once every child has ended."""
        self._collect(block=True)
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
        return {name: self._files[name] for name in self._order}

    def _collect(self, block: bool) -> None:
        """Take the SVG of each child that has ended (all of them, waiting, with block), and let its figure go;
        a child killed or failed has its figure drawn here instead."""
        from ndcg_report.analysis.figure_style import laid_out_svg

        running = []
        for name, pid, target, figure in self._children:
            ended, status = os.waitpid(pid, 0 if block else os.WNOHANG)
            if not ended:
                running.append((name, pid, target, figure))
                continue
            if os.waitstatus_to_exitcode(status) == 0 and target.is_file():
                self._files[name] = target.read_bytes()
                target.unlink()
            else:
                self._files[name] = laid_out_svg(figure).encode("utf-8")
        self._children = running
