"""One JSON record read as strictly as a TREC line: its ids, its score or grade, what is wrong.

A record is a line of JSON lines or a value of a JSON document: what a query or document id may
be, what a score or grade may be, and the one-line description of what is wrong otherwise. Shared
by the JSON readers and by Python dicts given to the API.
"""

from __future__ import annotations

import difflib
import json
import math
import sys
from collections.abc import Mapping, Sequence
from numbers import Integral, Real

QID_KEYS = ("qid", "query_id", "query-id")
DOCID_KEYS = ("docid", "doc_id", "corpus-id", "docno")
VALUE_KEYS = {"run": ("score",), "qrels": ("rel", "relevance", "score", "label")}
VALUE_NAME = {"run": "score", "qrels": "relevance label"}


class RecordProblem(ValueError):
    """What is wrong with a value of a record (the caller adds where it is: file and line, or query)."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(f"{problem}; {fix}")
        self.problem = problem
        self.fix = fix


def shown(value: object) -> str:
    """A value as its JSON text, cut at 40 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."


def kind_of(value: object) -> str:
    """A value's JSON kind, for messages: 'null', 'a string', 'a list', 'an object', ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Real):
        return "a number"
    return f"a {type(value).__name__}"


def identifier(value: object, name: str) -> str:
    """An id as text: a string, or a whole number written in decimal; RecordProblem otherwise."""
    if isinstance(value, str):
        if not value:
            raise RecordProblem(f"{name} is empty", f"give every record a non-empty {name}")
        if not _encodable(value):
            raise RecordProblem(f"{name} {shown(value)} holds a lone surrogate (not text)", "write it as UTF-8 text")
        return value
    if isinstance(value, Integral) and not isinstance(value, bool):
        return str(int(value))
    what = kind_of(value) if value is None or isinstance(value, (Mapping, list, tuple)) else f"{kind_of(value)} ({shown(value)})"
    raise RecordProblem(f"{name} is {what}, not a string", f"give {name} as a string")


def number(value: object, kind: str) -> float:
    """A score (run) or grade (qrels) as a finite float; RecordProblem otherwise."""
    name = VALUE_NAME[kind]
    if isinstance(value, bool) or not isinstance(value, Real):
        what = kind_of(value) if value is None or isinstance(value, (Mapping, list, tuple)) else f"{kind_of(value)} ({shown(value)})"
        raise RecordProblem(f"{name} is {what}, not a number", f"give every {name} as a number")
    try:
        result = float(value)
    except OverflowError:  # an integer past the largest float (JSON and Python ints have no bound)
        raise RecordProblem(f"{name} is an integer too large for a float (over 1e308)",
                            f"give every {name} as a finite number") from None
    if not math.isfinite(result):
        raise RecordProblem(f"{name} is {result} (NaN or infinite)", f"give every {name} as a finite number")
    return result


def one_key(record: Mapping, keys: tuple[str, ...], what: str, groups: Sequence[tuple[str, ...]] = ()) -> object:
    """The value under the one key of `keys` the record has; RecordProblem if none or several. groups:
    every key the record may have, by role, to name a key close to one of them (key_hint)."""
    present = [key for key in keys if key in record]
    if len(present) == 1:
        return record[present[0]]
    if present:
        raise RecordProblem(f"has both {' and '.join(map(repr, present))}", f"give the {what} once")
    names = ", ".join(map(repr, record)) or "none"
    raise RecordProblem(f"has no {what} ({' or '.join(keys)}; its keys: {names[:200]})",
                        key_hint(record, groups) or f"give every record its {what}")


def key_hint(record: Mapping, groups: Sequence[tuple[str, ...]]) -> str | None:
    """A fix for a record that lacks a key: its keys close to an accepted one of a role it does not
    fill yet (difflib, ignoring case), and every accepted key by role; None if no key is close."""
    open_keys = [key for group in groups if not any(key in record for key in group) for key in group]
    close = []
    for key in record:
        if not isinstance(key, str) or any(key in group for group in groups):
            continue
        matches = difflib.get_close_matches(key.lower(), open_keys, n=3, cutoff=0.75)
        if matches:
            close.append(f"{key[:40]!r} is not an accepted key (did you mean {' or '.join(map(repr, matches))}?)")
    if not close:
        return None
    accepted = "; ".join(" or ".join(group) for group in groups)
    return f"{', '.join(close)}; the accepted keys: {accepted}"


def json_value(text: str | bytes, check_keys: bool = True) -> object:
    """json.loads, with a repeated key refused (no_repeated_keys); a value nested past Python's recursion
    limit or an integer of more digits than Python converts is a json.JSONDecodeError like any other
    bad JSON."""
    try:
        return json.loads(text, object_pairs_hook=no_repeated_keys if check_keys else None)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text if isinstance(text, str) else "", 0) from None
    except (json.JSONDecodeError, RecordProblem):
        raise
    except ValueError:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
        raise json.JSONDecodeError(f"a number of more than {sys.get_int_max_str_digits():,} digits",
                                   text if isinstance(text, str) else "", 0) from None


class RepeatedKey(RecordProblem):
    """A key given twice in one JSON object (`key`: which)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key {shown(key)} given twice in one object", "give each key once")
        self.key = key


def no_repeated_keys(pairs: list[tuple[str, object]]) -> dict:
    """json's object_pairs_hook: the object as a dict; RepeatedKey if a key repeats (json would keep
    the last silently: a repeated document would vanish)."""
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise RepeatedKey(key)
            seen.add(key)
    return result


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
