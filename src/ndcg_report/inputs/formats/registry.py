"""The input formats: each module of inputs.formats registers its Format here; reading and detection look them up.

A Format names itself, its extensions and the kinds of input it holds (run, qrels, topics), how it is
told by its first bytes, and its reader. The package's __init__ imports the built-in formats'
modules, so they are always registered; a format registered later (FORMATS.register, or
FORMATS.registered as a context manager) is read by every command and the API alike, in this process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Union

from ndcg_report.errors import InputError
from ndcg_report.inputs.duplicates import duplicate_line_error
from ndcg_report.inputs.ids import ID_FIX, BadId

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

KINDS = ("run", "qrels", "topics")  # the inputs read by format, in the order the docs list them
RunPiece = tuple["pa.Table", int, bool]  # (table, data rows before it, whether its last row ends its query's rows)


@dataclass(frozen=True)
class Parsed:
    """A run or qrels as its format's reader gives it: the table (qid, docid, score or rel) and the errors
    naming where a bad id or the second of a repeated (qid, docid) pair (rows first, second) is."""

    table: "pa.Table"
    bad_id: Callable[[BadId], InputError]
    duplicate: Callable[[int, int], InputError]


def parsed_by_lines(path: Path, kind: str, table: "pa.Table", line_of_row: Callable[[int], int | None],
                    line_of_id: Callable[[int, str], int | None] | None = None) -> Parsed:
    """Parsed for a text format whose errors name lines: a row's (line_of_row), an id's (line_of_id,
    by row and column; default its row's)."""
    at_id = line_of_id or (lambda row, column: line_of_row(row))
    return Parsed(table, lambda bad: InputError(path, at_id(bad.row, bad.column), bad.problem, ID_FIX),
                  lambda first, second: duplicate_line_error(path, line_of_row, table, kind, first, second))


Read = Callable[[Path, str], Union[Parsed, "pd.Series"]]
Chunks = Callable[[Path, str, Union[int, None]], Iterator[tuple["pa.Table", int]]]


@dataclass(frozen=True)
class Format:
    """An input format. A text format is told by its first bytes (`sniff`, given up to 1 MiB of them;
    None: the format taken when no other of its kind opening alike matches), a binary one by its
    structure (`structure`, checked before any text is read)."""

    name: str  # as detect_format returns it
    label: str  # as the report's file table shows it
    suffixes: tuple[str, ...]  # lower case, with the dot; after any .gz
    kinds: tuple[str, ...]  # of KINDS (or others registered)
    sniff: Callable[[bytes], bool] | None
    read: Read  # Parsed for a run or qrels (checked by the caller for bad ids and repeats); a Series for topics
    chunks: Chunks | None = None  # a run in pieces of about the bytes given, (table, rows before it); None: read whole
    line_of_row: Callable[[Path, str, int], int | None] | None = None  # the 1-based line of a data row
    opens: str = ""  # the first characters its text starts with ("{[" for JSON); "": any others
    expected: str = "text lines"  # what a file named with one of its suffixes holds, as a mismatch says it
    structure: Callable[[Path], bool] | None = None  # a binary format: whether a file has its structure
    folder: Callable[[Path], str | None] | None = None  # read from a folder too: the problem with one, or None
    row_error: Callable[[Path, int, str, str], InputError] | None = None  # (path, row, problem, fix); default: at the row's line
    query_pieces: Callable[[Path, int], Iterator[RunPiece]] | None = None  # a run cut where a query's rows begin
    tag: Callable[[Path], str] | None = None  # a run's tag (TREC text's last column)
    accepted: str = ""  # as an error lists the formats taken ({kind} filled in); default: label (first suffix)
    help: Mapping[str, str] = field(default_factory=dict)  # as the CLI's help lists it, by kind; default: label
    examples: tuple[tuple[str, str, str], ...] = ()  # rows of the docs' format table: (kind, format, one line of it)

    def accepted_as(self, kind: str) -> str:
        return self.accepted.format(kind=kind) if self.accepted else f"{self.label} ({self.suffixes[0]})"

    def error_at(self, path: Path, kind: str, row: int, problem: str, fix: str) -> InputError:
        """The error for a problem at a data row: row_error's, else at the row's line."""
        if self.row_error is not None:
            return self.row_error(path, row, problem, fix)
        return InputError(path, self.line_of_row(path, kind, row) if self.line_of_row else None, problem, fix)


class Registry:
    """The registered formats by name, in registration order (the order lists and sniffing follow)."""

    def __init__(self) -> None:
        self._formats: dict[str, Format] = {}

    def register(self, form: Format) -> Format:
        """Add a format; ValueError if its name is taken."""
        if form.name in self._formats:
            raise ValueError(f"an input format named {form.name!r} is already registered")
        self._formats[form.name] = form
        return form

    def unregister(self, name: str) -> None:
        del self._formats[name]

    @contextmanager
    def registered(self, form: Format) -> Iterator[Format]:
        """The format registered for the block's length (a test's, or a plug-in's for one call)."""
        self.register(form)
        try:
            yield form
        finally:
            self.unregister(form.name)

    def __getitem__(self, name: str) -> Format:
        return self._formats[name]

    def get(self, name: str) -> Format | None:
        return self._formats.get(name)

    def __iter__(self) -> Iterator[Format]:
        return iter(list(self._formats.values()))

    def kinds(self) -> tuple[str, ...]:
        """Every kind some format reads: KINDS first."""
        return tuple(dict.fromkeys((*KINDS, *(kind for form in self for kind in form.kinds))))

    def for_kind(self, kind: str) -> list[Format]:
        return [form for form in self if kind in form.kinds]

    def by_suffix(self, suffix: str) -> list[Format]:
        """The formats (of any kind) claiming an extension."""
        return [form for form in self if suffix and suffix in form.suffixes]

    def sniffed(self, candidates: list[Format], prefix: bytes) -> Format:
        """The first candidate whose sniff takes the first bytes, else the first without a sniff (or the first)."""
        for form in candidates:
            if form.sniff is not None and form.sniff(prefix):
                return form
        return next((form for form in candidates if form.sniff is None), candidates[0])

    def accepted(self, kind: str) -> str:
        """The formats a kind takes, as errors list them: 'TREC text (.txt, .run), JSON (.json) or ...'."""
        return _listed([form.accepted_as(kind) for form in self.for_kind(kind)])

    def help(self, kind: str) -> str:
        """The formats a kind takes, as the CLI's help lists them ('(plain or .gz)' after the text ones
        when binary ones follow)."""
        names = []
        for form, after in zip(self.for_kind(kind), self.for_kind(kind)[1:] + [None]):
            note = " (plain or .gz)" if form.structure is None and after is not None and after.structure else ""
            names.append(form.help.get(kind, form.label) + note)
        return _listed(names)


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


FORMATS = Registry()
