"""The report's SVG files drawn beside the kernel: each figure's SVG in a child forked once its PNG is drawn.

The SVG is about half of what a figure costs, and no output of the notebook waits for it (only the files
written at its end), so the build's first execution forks a child per figure, holding that figure as it is
laid out, which writes the SVG (figure_style.laid_out_svg: the same bytes) into a private temporary folder
and exits; meanwhile the kernel goes on, and the other core (where the re-execution draws no pixels) does
the work. files() waits for every child; a child that failed is drawn again in the kernel.
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
        self._children: list[tuple[str, int, Path, "Figure"]] = []
        self._folder: Path | None = None

    def add(self, name: str, figure: "Figure") -> None:
        """Fork a child that writes this figure's SVG (the figure is kept until files(), for a child that fails)."""
        if not hasattr(os, "fork"):
            super().add(name, figure)
            return
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="ndcg-report-svg-"))
        target = self._folder / f"{len(self._children)}.svg"
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
        """{name: SVG bytes} of every figure added, in order, once every child has ended."""
        from ndcg_report.analysis.figure_style import laid_out_svg

        found = super().files()
        for name, pid, target, figure in self._children:
            _, status = os.waitpid(pid, 0)
            if os.waitstatus_to_exitcode(status) == 0 and target.is_file():
                found[name] = target.read_bytes()
            else:  # killed, or failed: drawn here instead
                found[name] = laid_out_svg(figure).encode("utf-8")
        self._children = []
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
        self._files = found
        return dict(found)
