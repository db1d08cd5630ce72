"""Qrels as BEIR writes them (`qrels/test.tsv`): a header line, then tab-separated judgments.

The header is `query-id corpus-id score`, then one `qid<TAB>docid<TAB>grade` line per judgment.
pyarrow reads a clean piece; any other piece is read again line by line (fields split on ASCII white
space, as TREC text is), which names the first bad line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ndcg_report.errors import InputError
from ndcg_report.files import open_maybe_gzip
from ndcg_report.inputs.columns import from_numpy, strings
from ndcg_report.inputs.access.text_files import (
    GZIP_ERRORS, PREFIX_BYTES, check_encoding, check_first_line, line_pieces, read_prefix,
)
from ndcg_report.inputs.formats.registry import FORMATS, Format, parsed_by_lines
from ndcg_report.inputs.formats.trec import TEXT_SUFFIXES

NUMBER = re.compile(  # ASCII digits only, as the TREC reader takes them
    r"^[+-]?([0-9]+\.?[0-9]*([eE][+-]?[0-9]+)?|\.[0-9]+([eE][+-]?[0-9]+)?|nan|inf|infinity)$", re.IGNORECASE
)
PIECE_BYTES = 16 << 20
BEIR_HEADER = ("query-id", "corpus-id", "score")
_FORMAT = "`query-id<TAB>corpus-id<TAB>score` lines after that header"


def read_beir_qrels(path: Path) -> tuple[pa.Table, Callable[[int], int]]:
    """BEIR TSV qrels as a table (qid dictionary, docid, rel) and a map from row to line."""
    prefix = read_prefix(path, PREFIX_BYTES)
    check_first_line(path, prefix, "qrels")
    check_encoding(path, prefix)
    tables = []
    try:
        with open_maybe_gzip(path) as handle:
            for piece, lines_before in line_pieces(handle, PIECE_BYTES):
                if lines_before == 0:  # the header: has_beir_header found it on the first line
                    header, _, piece = piece.partition(b"\n")
                    lines_before = 1
                    if not header.strip():
                        raise InputError(path, 1, "no BEIR header", "start with `query-id<TAB>corpus-id<TAB>score`")
                table = _fast(piece)
                if table is None:
                    table, _ = _slow(path, piece, lines_before)
                tables.append(table)
    except GZIP_ERRORS as exc:
        raise InputError(path, None, f"corrupt gzip file ({exc})", "re-compress it or give the plain file") from None
    table = pa.concat_tables(tables).unify_dictionaries().combine_chunks()
    if table.num_rows == 0:
        raise InputError(path, None, "no judgments after the BEIR header", f"give {_FORMAT}")
    return table, lambda row: _line_of_row(path, row)


def _fast(piece: bytes) -> pa.Table | None:
    """pyarrow's reading of a clean piece (tab-separated, no blank line, finite grades), else None."""
    if not piece or b"\n\n" in piece or piece.startswith((b"\n", b"\r")) or b" " in piece:
        return None
    try:
        table = pacsv.read_csv(
            pa.BufferReader(piece),
            read_options=pacsv.ReadOptions(column_names=["qid", "docid", "rel"], block_size=4 << 20),
            parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False, escape_char=False,
                                             double_quote=False, newlines_in_values=False, ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(column_types={"qid": pa.string(), "docid": pa.string(),
                                                               "rel": pa.float64()},
                                                 null_values=[], strings_can_be_null=False),
        ).combine_chunks()
    except pa.ArrowInvalid:
        return None
    for name in ("qid", "docid"):
        if table.num_rows and pc.min(pc.binary_length(table[name])).as_py() == 0:
            return None
    if table.num_rows and not pc.all(pc.is_finite(table["rel"])).as_py():
        return None
    return table.set_column(0, "qid", table["qid"].dictionary_encode())


def _slow(path: Path, piece: bytes, lines_before: int) -> tuple[pa.Table, list[int]]:
    """The piece line by line: its table and the line of each row; InputError naming the first bad line."""
    qids: list[str] = []
    docids: list[str] = []
    grades: list[float] = []
    lines: list[int] = []
    check_encoding(path, piece, lines_before, at_start=False)
    for offset, raw in enumerate(piece.split(b"\n")):
        line = lines_before + offset + 1
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(path, line, "not valid UTF-8 text", "re-save the file as UTF-8") from None
        fields = [field.decode("utf-8") for field in raw.split()]  # split on ASCII white space, as TREC text is
        if not fields:
            continue
        if len(fields) != 3:
            raise InputError(path, line, f"expected 3 columns (query-id corpus-id score), found {len(fields)}",
                             "fix or remove the line")
        if not NUMBER.match(fields[2]):
            raise InputError(path, line, f"score {fields[2][:40]!r} is not a number", "fix or remove the line")
        grade = float(fields[2])
        if not np.isfinite(grade):
            raise InputError(path, line, f"relevance label is {grade}", "labels must be finite integers or decimals")
        qids.append(fields[0])
        docids.append(fields[1])
        grades.append(grade)
        lines.append(line)
    table = pa.table({"qid": strings(qids).dictionary_encode(), "docid": strings(docids),
                      "rel": from_numpy(np.array(grades, dtype=np.float64))})
    return table, lines


def _line_of_row(path: Path, row: int) -> int:
    """The line of data row `row` (0-based), the file read again in pieces."""
    seen = 0
    with open_maybe_gzip(path) as handle:
        for piece, lines_before in line_pieces(handle, PIECE_BYTES):
            if lines_before == 0:
                _, _, piece = piece.partition(b"\n")
                lines_before = 1
            _, lines = _slow(path, piece, lines_before)
            if seen + len(lines) > row:
                return lines[row - seen]
            seen += len(lines)
    raise AssertionError(f"row {row} not in {path}")


def has_beir_header(prefix: bytes) -> bool:
    """True if the first line is BEIR's header, `query-id corpus-id score`."""
    first = prefix.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0].strip()
    return tuple(first.decode("utf-8", "replace").split()) == BEIR_HEADER


BEIR_TSV = FORMATS.register(Format(
    "beir-tsv", "BEIR TSV", TEXT_SUFFIXES, ("qrels",), has_beir_header,
    lambda path, kind: parsed_by_lines(path, kind, *read_beir_qrels(path)),
    line_of_row=lambda path, kind, row: _line_of_row(path, row), accepted="BEIR TSV (.tsv with a query-id header)",
    examples=(("qrels", "BEIR TSV (`qrels/test.tsv`, with its header)",
               "`query-id<TAB>corpus-id<TAB>score`, then `q1<TAB>d7<TAB>2`"),),
))
