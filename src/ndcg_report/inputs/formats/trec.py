"""TREC text runs and qrels as a registered input format: trec_text reads them, trec_blocks cuts a run at queries.

Whitespace-separated lines: a run's `qid Q0 docid rank score tag`, qrels' `qid iter docid rel`. The
format of any text of a run or qrels that no other format's first bytes claim.
"""

from __future__ import annotations

from pathlib import Path

from ndcg_report.inputs.formats.registry import FORMATS, Format, Parsed, parsed_by_lines
from ndcg_report.inputs.formats.trec_blocks import trec_run_pieces
from ndcg_report.inputs.formats.trec_text import first_tag, read_trec_qrels, read_trec_run, trec_line_of_row, trec_run_chunks

TEXT_SUFFIXES = (".txt", ".tsv", ".trec", ".run", ".res", ".qrels", ".qrel", ".topics", ".text")  # of every line format


def _read(path: Path, kind: str) -> Parsed:
    table, line_of_row = read_trec_run(path) if kind == "run" else read_trec_qrels(path)
    return parsed_by_lines(path, kind, table, line_of_row)


TREC = FORMATS.register(Format(
    "trec", "TREC text", TEXT_SUFFIXES, ("run", "qrels"), None, _read,
    chunks=lambda path, kind, chunk_bytes: trec_run_chunks(path, chunk_bytes),
    line_of_row=lambda path, kind, row: trec_line_of_row(path, row),
    query_pieces=trec_run_pieces, tag=first_tag, accepted="TREC text (.txt, .{kind})",
    help={"run": "TREC `qid Q0 docid rank score tag` lines", "qrels": "TREC `qid iter docid rel` lines"},
    examples=(("run", "TREC text (`.txt`, `.run`, any other name)", "`q1 Q0 d7 1 14.2 bm25`"),
              ("qrels", "TREC text", "`q1 0 d7 2`")),
))
