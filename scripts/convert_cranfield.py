"""Convert the raw SMART-format Cranfield files into the package's corpus, topics and qrels.

Reads cran.all.1400, cran.qry and cranqrel (CRLF line ends) from --src and writes corpus.jsonl
(BEIR: _id, title, text), topics.tsv (qid = the query's position 1..225 in cran.qry, because the
qrels use positions, not .I numbers) and qrels.txt (label = 5 - code, code -1 -> 0) into --out.
Prints what it found in the raw data that needed a decision. Usage:

    .venv/bin/python scripts/convert_cranfield.py [--src DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SRC = Path("/work/shared/data/cranfield")
DEFAULT_OUT = ROOT / "src" / "ndcg_report" / "data" / "cranfield"
FIELD_MARKER = re.compile(r"^\.([TABW])\s*$")
ID_MARKER = re.compile(r"^\.I\s+(\S+)\s*$")


@dataclass
class Record:
    """One SMART record: its .I number and the lines of each field, in order."""

    number: str
    line: int
    fields: dict[str, list[str]] = field(default_factory=dict)
    stray_markers: list[str] = field(default_factory=list)


def read_lines(path: Path) -> list[str]:
    """The file's lines as text, CRLF or LF, ASCII/UTF-8."""
    return path.read_bytes().decode("utf-8").splitlines()


def parse_smart(lines: list[str], path: Path) -> list[Record]:
    """Split SMART text into records. Once `.W` starts, everything up to the next `.I` is text:
    later `.T/.A/.B/.W` marker lines are dropped (they are stray, see README), their lines kept."""
    records: list[Record] = []
    current: Record | None = None
    field_name: str | None = None
    for number, line in enumerate(lines, start=1):
        id_match = ID_MARKER.match(line)
        if id_match:
            current = Record(number=id_match.group(1), line=number)
            records.append(current)
            field_name = None
            continue
        if current is None:
            if line.strip():
                raise SystemExit(f"{path}:{number}: text before the first .I line")
            continue
        marker = FIELD_MARKER.match(line)
        if marker:
            if field_name == "W":
                current.stray_markers.append(f".{marker.group(1)} on line {number}")
                continue
            field_name = marker.group(1)
            current.fields.setdefault(field_name, [])
            continue
        if field_name is None:
            if line.strip():
                raise SystemExit(f"{path}:{number}: text before the first field marker of .I {current.number}")
            continue
        current.fields[field_name].append(line)
    return records


def collapse(lines: list[str]) -> str:
    """Join lines with single spaces; no leading or trailing white space."""
    return " ".join(" ".join(lines).split())


def convert_documents(src: Path) -> tuple[list[dict[str, str]], list[str]]:
    path = src / "cran.all.1400"
    records = parse_smart(read_lines(path), path)
    notes: list[str] = []
    documents = []
    seen: dict[str, int] = {}
    for record in records:
        doc_id = str(int(record.number))
        if doc_id in seen:
            raise SystemExit(f"{path}:{record.line}: document .I {record.number} repeats line {seen[doc_id]}")
        seen[doc_id] = record.line
        title = collapse(record.fields.get("T", []))
        text = collapse(record.fields.get("W", []))
        if record.stray_markers:
            notes.append(f"document {doc_id}: marker lines inside .W dropped, their text kept: {', '.join(record.stray_markers)}")
        if not text:
            notes.append(f"document {doc_id}: empty .W (and title {title!r}); kept as an empty document")
        documents.append({"_id": doc_id, "title": title, "text": text})
    return documents, notes


def convert_queries(src: Path) -> tuple[list[tuple[str, str, str]], list[str]]:
    """(position qid, raw .I number, text) per query, in file order."""
    path = src / "cran.qry"
    records = parse_smart(read_lines(path), path)
    notes: list[str] = []
    queries = []
    for position, record in enumerate(records, start=1):
        text = collapse(record.fields.get("W", []))
        if not text:
            notes.append(f"query {position} (.I {record.number}): empty text")
        if set(record.fields) - {"W"}:
            notes.append(f"query {position} (.I {record.number}): unexpected fields {sorted(set(record.fields) - {'W'})}")
        queries.append((str(position), record.number, text))
    renumbered = sum(1 for qid, number, _ in queries if int(qid) != int(number))
    notes.append(
        f"{len(queries)} queries; .I numbers run {queries[0][1]}..{queries[-1][1]} with leading zeros and gaps; "
        f"{renumbered} differ from their position, which is the qid used"
    )
    return queries, notes


def convert_qrels(src: Path, n_queries: int, doc_ids: set[str]) -> tuple[list[tuple[str, str, int]], list[str]]:
    """(qid, docid, label) per judged pair, first-seen order; duplicates keep the max label."""
    path = src / "cranqrel"
    notes: list[str] = []
    labels: dict[tuple[str, str], int] = {}
    first_line: dict[tuple[str, str], int] = {}
    codes: dict[int, int] = {}
    duplicates = []
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 3:
            raise SystemExit(f"{path}:{number}: expected `query doc code`, got {line!r}")
        qid, docid, code = str(int(fields[0])), str(int(fields[1])), int(fields[2])
        if not 1 <= int(qid) <= n_queries:
            raise SystemExit(f"{path}:{number}: query {qid} is not a position 1..{n_queries}")
        if docid not in doc_ids:
            raise SystemExit(f"{path}:{number}: document {docid} is not in the corpus")
        if code not in (-1, 1, 2, 3, 4):
            raise SystemExit(f"{path}:{number}: relevance code {code} is not -1 or 1..4")
        codes[code] = codes.get(code, 0) + 1
        label = 0 if code == -1 else 5 - code
        pair = (qid, docid)
        if pair in labels:
            duplicates.append(f"{qid} {docid} (lines {first_line[pair]} and {number})")
            labels[pair] = max(labels[pair], label)
        else:
            labels[pair] = label
            first_line[pair] = number
    notes.append(f"{sum(codes.values())} qrels lines; codes {dict(sorted(codes.items()))}")
    notes.append(
        f"duplicate (query, document) pairs: {len(duplicates)}" + (f" (kept the max label): {'; '.join(duplicates)}" if duplicates else "")
    )
    judged_queries = {qid for qid, _ in labels}
    if len(judged_queries) != n_queries:
        notes.append(f"queries without judgements: {sorted(set(map(str, range(1, n_queries + 1))) - judged_queries, key=int)}")
    return [(qid, docid, label) for (qid, docid), label in labels.items()], notes


def write_text(path: Path, lines: list[str]) -> None:
    path.write_text("".join(lines), encoding="utf-8", newline="\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", type=Path, default=DEFAULT_SRC, help="folder with cran.all.1400, cran.qry, cranqrel")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    documents, doc_notes = convert_documents(args.src)
    queries, query_notes = convert_queries(args.src)
    qrels, qrels_notes = convert_qrels(args.src, len(queries), {doc["_id"] for doc in documents})
    empty_docs = {doc["_id"] for doc in documents if not doc["text"]}
    judged_empty = [f"query {qid} judges empty document {docid} (label {label})" for qid, docid, label in qrels if docid in empty_docs and label > 0]

    write_text(args.out / "corpus.jsonl", [json.dumps(doc, ensure_ascii=False) + "\n" for doc in documents])
    write_text(args.out / "topics.tsv", [f"{qid}\t{text}\n" for qid, _, text in queries])
    write_text(args.out / "qrels.txt", [f"{qid} 0 {docid} {label}\n" for qid, docid, label in qrels])

    print(f"wrote {len(documents)} documents, {len(queries)} topics, {len(qrels)} qrels lines to {args.out}")
    for note in doc_notes + query_notes + qrels_notes + judged_empty:
        print(f"  - {note}")


if __name__ == "__main__":
    main()
