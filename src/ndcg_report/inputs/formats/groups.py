"""Query groups: a TSV of `qid<TAB>group` lines or a JSON `{group: [qids]}` (DL-HARD's folds.json).

A query is in one group at most; qids are matched as text (a JSON number 915593 is "915593"). Every
problem is an InputError naming the file, the line where there is one, and the fix. Whether the
groups name any query of the collection is the caller's check (`check_groups_known`), made against
the qrels once they are read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ndcg_report.errors import InputError, ParameterError
from ndcg_report.inputs.access.sources import readable_path
from ndcg_report.inputs.records import RecordProblem, identifier, json_value, kind_of, shown
from ndcg_report.inputs.access.text_files import check_encoding, check_readable, io_errors_as_input_errors

if TYPE_CHECKING:
    import pandas as pd

MAX_GROUPS_FILE = 64 << 20  # a groups file is read whole: at most this much text
TSV_FORM = "`qid<TAB>group` lines"
JSON_FORM = '{"group": [qid, ...], ...} (as DL-HARD\'s folds.json)'


def read_groups(path: str | Path) -> "pd.Series":
    """Read a query groups file: the group of each query, as `group_table` and `build --groups` take it.

    Parameters
    ----------
    path
        A TSV of `qid<TAB>group` lines (blank and `#` lines skipped, an optional `qid<TAB>group`
        header), or a JSON object `{group: [qid, ...]}` as DL-HARD's folds.json, its qids strings or
        whole numbers (matched as text: 915593 is "915593").

    Returns
    -------
    pandas.Series
        The group of each query: index `qid` (text), values the group names, in the file's order.

    Raises
    ------
    InputError
        An unreadable file, a bad line or value, a query in two groups, no query at all: one line
        with the file, the line where there is one, and the fix.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folds = pathlib.Path(tempfile.mkdtemp()) / "folds.json"
    >>> _ = folds.write_text('{"1": [915593, "451602"], "2": [1037798]}')
    >>> read_groups(folds).to_dict()
    {'915593': '1', '451602': '1', '1037798': '2'}
    """
    import pandas as pd

    path = Path(path)
    with readable_path(path) as readable:  # in a build, the build's copy (inputs.access.sources)
        check_readable(readable)
        with io_errors_as_input_errors(path):
            if readable.stat().st_size > MAX_GROUPS_FILE:
                raise InputError(path, None, f"larger than {MAX_GROUPS_FILE >> 20} MB", "give one group per query, "
                                 f"as {TSV_FORM} or {JSON_FORM}")
            data = readable.read_bytes()
    check_encoding(path, data)
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputError(path, line, "not valid UTF-8 text", "re-save the file as UTF-8") from None
    pairs = _json_groups(path, text) if text.lstrip().startswith(("{", "[")) else _tsv_groups(path, text)
    qids: list[str] = []
    groups: list[str] = []
    seen: dict[str, tuple[str, int | None]] = {}
    for line, qid, group in pairs:
        if qid in seen:
            earlier, where = seen[qid]
            at = f" on line {where}" if where is not None else ""
            raise InputError(path, line, f"query {qid!r} is already in group {earlier!r}{at}",
                             "put each query in one group only")
        seen[qid] = (group, line)
        qids.append(qid)
        groups.append(group)
    if not qids:
        raise InputError(path, None, "no query in any group", f"give {TSV_FORM} or {JSON_FORM}")
    return pd.Series(groups, index=pd.Index(qids, name="qid", dtype=object), name="group", dtype=object)


def check_groups_known(groups: "pd.Series", qids: Iterable[str], source: str | Path | None = None) -> None:
    """Raise unless at least one query of `groups` (index: qid) is among `qids` (the collection's, e.g.
    the qrels'): an InputError naming the groups file `source`, else a ParameterError. A groups file
    that names no known query is almost always another collection's, or its qids are written
    differently."""
    known: Collection[str] = qids if isinstance(qids, (set, frozenset)) else set(map(str, qids))
    if any(str(qid) in known for qid in groups.index):
        return
    example = ", ".join(repr(str(qid)) for qid in list(groups.index)[:3])
    problem = f"names no query of the qrels ({len(groups):,} queries, e.g. {example})"
    fix = "give the groups of this collection's queries, with qids written as in the qrels"
    if source is not None:
        raise InputError(source, None, problem, fix)
    raise ParameterError(f"the groups {problem}; {fix}")


def _tsv_groups(path: Path, text: str) -> Iterator[tuple[int, str, str]]:
    """(line number, qid, group) of every data line of a TSV groups file."""
    for number, line in enumerate(re.split(r"\r\n?|\n", text), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        fields = [field.strip() for field in line.split("\t")]
        if len(fields) != 2:
            found = "no tab" if len(fields) == 1 else f"{len(fields)} tab-separated fields"
            raise InputError(path, number, f"expected `qid<TAB>group`, found {found}",
                             "write one query and its group per line, separated by one tab")
        qid, group = fields
        if number == 1 and (qid.lower(), group.lower()) == ("qid", "group"):
            continue  # a header
        if not qid or not group:
            raise InputError(path, number, f"the {'qid' if not qid else 'group'} is empty",
                             "write one query and its group per line, separated by one tab")
        if any(char.isspace() for char in qid):
            raise InputError(path, number, f"query id {qid!r} contains white space", "use the qids of the qrels")
        yield number, qid, group


def _json_groups(path: Path, text: str) -> Iterator[tuple[int | None, str, str]]:
    """(line of its group's key, qid, group) of every qid of a JSON groups file."""
    try:
        document = json_value(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, exc.lineno if exc.doc else None, f"not valid JSON ({exc.msg})", f"give {JSON_FORM}") from None
    except RecordProblem as exc:
        raise InputError(path, None, exc.problem, exc.fix) from None
    if not isinstance(document, dict):
        raise InputError(path, 1, f"the JSON value is {kind_of(document)}, not an object", f"give {JSON_FORM}")
    for group, members in document.items():
        line = _key_line(text, group)
        if not group.strip():
            raise InputError(path, line, "a group's name is empty", "name every group")
        if not isinstance(members, list):
            raise InputError(path, line, f"group {group!r} holds {kind_of(members)}, not a list of qids",
                             f"give {JSON_FORM}")
        if not members:
            raise InputError(path, line, f"group {group!r} lists no query", "give it at least one qid, or leave it out")
        for member in members:
            try:
                qid = identifier(member, "qid")
            except RecordProblem as exc:
                raise InputError(path, line, f"in group {group!r}: {exc.problem} ({shown(member)})",
                                 "write each qid as a string or a whole number") from None
            if any(char.isspace() for char in qid):
                raise InputError(path, line, f"in group {group!r}: query id {qid!r} contains white space",
                                 "use the qids of the qrels")
            yield line, qid, group.strip()


def _key_line(text: str, key: str) -> int | None:
    """The line on which `"key":` first appears in the JSON text (None if it is written with escapes)."""
    found = re.search(re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:", text)
    if found is None:
        found = re.search(re.escape(json.dumps(key)) + r"\s*:", text)
    return None if found is None else text.count("\n", 0, found.start()) + 1
