"""How every report figure looks and is written out: colours, markers, labels, titles, panels, PNG and SVG.

Text taken from the data (qids, system names) is drawn literally: usetex is off and `$` is escaped,
so no math text is parsed. The bytes written are deterministic (no date or software metadata).
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import LinearSegmentedColormap
from matplotlib.figure import Figure

BASELINE_COLOUR = "#D55E00"  # Okabe-Ito vermillion
RUN_COLOUR = "#0072B2"  # Okabe-Ito blue: the first (or only) system
SYSTEM_COLOURS = (  # Okabe-Ito without vermillion and yellow, then Paul Tol's
    RUN_COLOUR, "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#882255", "#332288", "#999933", "#44AA99",
)
MARKERS = ("o", "^", "v", "D", "P", "X", "*", "h", "<", ">")
WIN_COLOUR = "#009E73"  # Okabe-Ito bluish green
LOSS_COLOUR = "#D55E00"
TIE_COLOUR = "#999999"
FIGSIZE = (7.0, 4.0)
DPI = 100
PANEL_COLUMNS = 4
RC = {"text.usetex": False, "svg.hashsalt": "ndcg-report", "svg.fonttype": "path"}
# One meaning for one colour in every figure: green where a system beats the baseline, vermillion where it loses
DELTA_COLOURS = LinearSegmentedColormap.from_list("loss-none-win", [LOSS_COLOUR, "#ffffff", WIN_COLOUR])
MAX_LABEL = 32  # characters of a system name in a tick label or legend (names may have 80)
MAX_QID_LABEL = 24  # characters of a query id in a tick label: a longer id (a sha256 has 64) would take the axes' room

def rc() -> dict:
    """Every rc parameter a figure reads: matplotlib's own defaults, whatever matplotlibrc the working
    folder, MATPLOTLIBRC or the user's config holds (the report's look is the package's alone), then RC.
    The default face colour of patches is resolved: it is "C0", the first colour of the property
    cycle, which matplotlib looks up again for every patch and spine it makes (1.3 ms each, a tenth of
    the figures' time); the colour drawn is the same."""
    return {**_defaults(), **RC, "patch.facecolor": _default_face()}


# rc parameters that are no style's to set (matplotlib's own list, private to it since 3.11)
NOT_STYLE = frozenset({"interactive", "backend", "backend_fallback", "toolbar", "timezone", "figure.max_open_warning",
                       "figure.raise_window", "savefig.directory", "docstring.hardcopy", "date.epoch"})


@lru_cache(maxsize=1)
def _defaults() -> dict:
    """matplotlib's default rc parameters (its own matplotlibrc, no file of the user's), less those a
    style may not set (the backend, interactive mode, ...)."""
    return {key: value for key, value in matplotlib.rcParamsDefault.items()
            if key not in NOT_STYLE and not key.startswith(("webagg.", "tk."))}


@lru_cache(maxsize=1)
def _default_face() -> tuple[float, float, float, float]:
    """The default patch face colour as RGBA ("C0": the default property cycle's first colour)."""
    with matplotlib.rc_context(_defaults()):  # "C0" read from the default cycle, not the user's
        return matplotlib.colors.to_rgba(matplotlib.rcParams["patch.facecolor"])


def literal(text: object) -> str:
    """`text` as a string matplotlib draws verbatim: every `$` escaped, so no math text."""
    return str(text).replace("$", r"\$")


def label(name: object, limit: int = MAX_LABEL) -> str:
    """A system name for a tick label or a legend: literal, shortened to `limit` characters with '…'."""
    text = str(name)
    return literal(text if len(text) <= limit else text[: limit - 1] + "…")


def qid_label(qid: object, limit: int = MAX_QID_LABEL) -> str:
    """A query id for a tick label: literal, shortened to `limit` characters by a '…' in its middle (ids
    that share a prefix, or a suffix, keep both ends)."""
    text = str(qid)
    if len(text) <= limit:
        return literal(text)
    tail = (limit - 1) // 2
    return literal(text[: limit - 1 - tail] + "…" + text[len(text) - tail:])


TITLE_SHARE = 0.8  # a title line wider than this share of its figure is broken in two


def set_title(ax: Axes, text: str, fontsize: float | None = None) -> None:
    """ax's title; a line wider than TITLE_SHARE of the figure is broken in two, before its ' (' or at the
    space nearest its middle: a centred title that wide is cut at the figure's edge once the axes move
    aside for long tick labels."""
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    figure = ax.get_figure()
    font = FontProperties(size=fontsize or matplotlib.rcParams["axes.titlesize"])
    measure = RendererAgg(1, 1, figure.dpi).get_text_width_height_descent
    limit = TITLE_SHARE * figure.get_figwidth() * figure.dpi
    lines = []
    for line in text.split("\n"):
        lines += _halves(line) if measure(line, font, ismath=False)[0] > limit else [line]
    ax.set_title("\n".join(lines), **({"fontsize": fontsize} if fontsize else {}))  # None would mean font.size


def _halves(line: str) -> list[str]:
    """line in two: before its first ' (' if that leaves neither part under a third, else at the space
    nearest its middle (unbroken if it has none)."""
    bracket = line.find(" (")
    if len(line) / 3 <= bracket <= 2 * len(line) / 3:
        return [line[:bracket], line[bracket + 1:]]
    spaces = [i for i, char in enumerate(line) if char == " "]
    if not spaces:
        return [line]
    middle = min(spaces, key=lambda i: abs(i - len(line) / 2))
    return [line[:middle], line[middle + 1:]]


def system_colour(position: int) -> str:
    """Colour of the system at position (0-based, in the order given; the baseline has its own)."""
    return SYSTEM_COLOURS[position % len(SYSTEM_COLOURS)]


def system_styles(systems: Sequence[str], baseline_name: str) -> dict[str, tuple[str, str, str]]:
    """(colour, marker, line style) per system; the baseline vermillion, squares, dashed."""
    style = {}
    for position, name in enumerate(name for name in systems if name != baseline_name):
        dashes = "-" if position < len(SYSTEM_COLOURS) else ":"
        style[name] = (system_colour(position), MARKERS[position % len(MARKERS)], dashes)
    style[baseline_name] = (BASELINE_COLOUR, "s", "--")
    return style


def figure_to_png_bytes(figure: Figure) -> bytes:
    """PNG of `figure` at its dpi, with no Software/date metadata: identical bytes for identical figures.
    It warns nothing (rendered): a layout that cannot be fitted is drawn all the same, and a glyph missing
    from the font is said by the report's data checks (missing_glyphs).

    The bytes are savefig's, drawn once instead of twice: savefig first draws the whole figure without
    output to run the layout engine, then draws it again; here the engine runs by itself (what that first
    draw is for) and savefig draws once, which takes about a third off (tests/analysis/test_plots.py checks the
    bytes against savefig's own)."""
    return rendered(figure, svg=False)[0]  # type: ignore[return-value]


def rendered(figure: Figure, svg: bool = True, png: bool = True) -> tuple[bytes | None, str | None]:
    """(figure_to_png_bytes's PNG, or None without png; the SVG of the same laid-out figure, or None
    without svg): the layout engine runs once for both (after the drawing itself it is most of a figure's
    cost), then each is drawn once; the SVG has text as paths, a fixed hash salt and no date (figure_to_svg).
    Nothing here warns (a glyph missing from the font: the data checks name it, missing_glyphs), so a
    figure warns nothing whether it is drawn or not; with neither png nor svg it is not even laid out (the
    build's re-execution, whose image/png nbval does not compare)."""
    import warnings

    if not png and not svg:
        return None, None
    buffer = io.BytesIO()
    text = None
    with matplotlib.rc_context({**rc(), "figure.autolayout": False, "figure.constrained_layout.use": False}), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        engine = figure.get_layout_engine()
        if engine is not None:
            try:
                engine.execute(figure)
            except ValueError:  # as Figure.draw does
                pass
            figure.set_layout_engine(None)
        try:
            if png:
                figure.savefig(buffer, format="png", dpi=figure.dpi, metadata={"Software": None})
            text = figure_to_svg(figure) if svg else None
        finally:
            if engine is not None:
                figure.set_layout_engine(engine)
    return (buffer.getvalue() if png else None), text


def missing_glyphs(texts: Iterable[str]) -> dict[str, str]:
    """{text: its characters the figures' font has no glyph for, each once, in order} of the texts that have
    any (drawn as empty boxes): what matplotlib would warn while drawing them, found by measuring each
    character not in ASCII once in the figures' font, not by drawing a figure."""
    import warnings

    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    measure, font, lacking = RendererAgg(1, 1, DPI).get_text_width_height_descent, FontProperties(), {}
    found: dict[str, str] = {}
    with matplotlib.rc_context(rc()):
        for text in texts:
            missing = ""
            for char in dict.fromkeys(str(text)):
                if char.isascii() or not char.isprintable():
                    continue
                if char not in lacking:
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        measure(char, font, ismath=False)
                    lacking[char] = any("missing from" in str(warning.message) for warning in caught)
                missing += char if lacking[char] else ""
            if missing:
                found[str(text)] = missing
    return found


def figure_to_data_uri(figure: Figure) -> str:
    """'data:image/png;base64,...' of figure_to_png_bytes(figure), for embedding in HTML."""
    return "data:image/png;base64," + base64.b64encode(figure_to_png_bytes(figure)).decode("ascii")


def figure_to_svg(figure: Figure) -> str:
    """SVG text of `figure` (as it is laid out now, if its layout engine is off: rendered) with text as paths,
    fixed hash salt and no date: deterministic. It warns nothing, as no figure of the report does: a warning
    printed by one of the two executions nbval compares would fail the build (a glyph missing from the font:
    the data checks, missing_glyphs)."""
    import warnings

    buffer = io.StringIO()
    with matplotlib.rc_context(rc()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def new_figure(size: tuple[float, float] = FIGSIZE) -> tuple[Figure, Axes]:
    """A fresh Figure (100 dpi, constrained layout) with one Axes, outside pyplot's registry."""
    figure = Figure(figsize=size, dpi=DPI, layout="constrained")
    return figure, figure.add_subplot()


def panels(count: int, square: bool) -> tuple[Figure, list[Axes]]:
    """A grid of `count` panels, PANEL_COLUMNS wide at most; unused cells hidden."""
    columns = min(count, PANEL_COLUMNS)
    rows = math.ceil(count / columns)
    width = 10.0 if columns >= 3 else 3.6 * columns + 0.8
    height = rows * (width / columns + 0.5 if square else 2.8) + 0.7
    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    grid = figure.subplots(rows, columns, squeeze=False)
    axes = list(grid.ravel())
    for ax in axes[count:]:
        ax.set_visible(False)
    return figure, axes[:count]


def outer_labels(axes: Sequence[Axes]) -> None:
    """Small multiples on common scales (panels' order and PANEL_COLUMNS): tick labels and axis labels only on
    the outer panels, x on a panel with none below it, y on the first column; the text to lay out and draw
    then grows with the rows and columns, not with the panels."""
    columns = min(len(axes), PANEL_COLUMNS)
    for position, ax in enumerate(axes):
        if position + columns < len(axes):  # a panel below this one shows the x axis
            ax.tick_params(labelbottom=False)
            ax.set_xlabel("")
        if position % columns:
            ax.tick_params(labelleft=False)
            ax.set_ylabel("")


def panel_title(ax: Axes, name: str, detail: str) -> None:
    """A small-multiple's title: the system's name (shortened to fit) over the detail, on two
    lines (broken at its last ', ') when it is longer than a narrow panel holds."""
    shown = str(name) if len(str(name)) <= 34 else str(name)[:33] + "…"
    if len(detail) > 34 and ", " in detail:
        head, tail = detail.rsplit(", ", 1)
        detail = f"{head},\n{tail}"
    ax.set_title(f"{literal(shown)}\n{detail}", fontsize=8.5)


def name_ticks(ax: Axes, positions: np.ndarray, names: Sequence[str]) -> None:
    """System names under the positions, slanted when there are many or long names."""
    long = len(names) > 4 or max(len(str(name)) for name in names) > 14
    ax.set_xticks(positions, [label(name) for name in names], rotation=25 if long else 0,
                  ha="right" if long else "center", fontsize=8 if long else 10)


def legend(ax: Axes, handles: list, labels: list[str], inside: str = "best") -> None:
    """A legend inside the axes for up to 4 entries, else outside on the right. Handles and labels
    are given explicitly: matplotlib leaves out an artist whose label starts with '_' otherwise."""
    if len(handles) <= 4:
        ax.legend(handles, labels, loc=inside, fontsize=9)
    else:
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=8)


def made_and_rendered(draw: Callable[[], Figure], svg: bool, png: bool) -> tuple[bytes | None, str | None]:
    """rendered() of the figure draw makes, warning nothing (a figure's code may run where no one sees its
    warnings, beside the kernel, so neither execution shows them), with Python's cyclic garbage collector
    paused meanwhile: a figure is thousands of small objects made at once, and each collection they set off
    would walk the whole heap of the process (a kernel's report), a sixth of a figure's cost; what they
    leave is collected once it runs again."""
    import gc
    import warnings

    paused = gc.isenabled()
    gc.disable()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            figure = draw()
        return rendered(figure, svg=svg, png=png)
    finally:
        if paused:
            gc.enable()


class FigureFiles:
    """Each figure a report shows, drawn: its PNG (unless pixels is false: the build's re-execution, whose
    image/png nbval does not compare) and, with svg (the report's files are written), its SVG by name,
    both of one layout (rendered). Here each is drawn as it is added; build.kernels.forked_figures draws them
    in forked children. With neither, a figure's code is not run: nothing it makes would be shown or kept."""

    def __init__(self, pixels: bool = True, svg: bool = False) -> None:
        self.pixels, self.svg = pixels, svg
        self._files: dict[str, bytes] = {}

    def add(self, name: str, draw: Callable[[], Figure]) -> Callable[[], bytes | None]:
        """Draw a figure (draw makes it); a function giving its PNG (None without pixels), once drawn."""
        if not (self.pixels or self.svg):
            return lambda: None
        png, svg = made_and_rendered(draw, svg=self.svg, png=self.pixels)
        if svg is not None:
            self._files[name] = svg.encode("utf-8")
        return lambda: png

    def files(self) -> dict[str, bytes]:
        """{name: SVG bytes} of every figure added (with svg), in order."""
        return dict(self._files)


# The PNG a figure shows where it is not drawn (FigureFiles without pixels: the build's
# re-execution, whose image/png nbval does not compare): a valid 1 x 1 transparent PNG.
NOT_DRAWN = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
                          "0000000d49444154789c6360606060000000050001a5f645400000000049454e44ae426082")
