"""A config file read as YAML, safely: unique keys, bounded depth, size and alias expansion, one-line errors."""

from __future__ import annotations

import reprlib
from pathlib import Path

import yaml

from ndcg_report.errors import ParameterError


def read_config_yaml(config_path: Path, label: str) -> object:
    """The YAML document of config_path (absolute; label names it in messages); ParameterError (one
    line) if it is missing, too large, not UTF-8 or not valid YAML."""
    if not config_path.is_file():
        raise ParameterError(f"{label}: no such config file")
    if config_path.stat().st_size > MAX_CONFIG_BYTES:
        raise ParameterError(f"{label}: larger than {MAX_CONFIG_BYTES >> 20} MiB; a config lists reports, not data")
    try:
        return yaml.load(config_path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506 (safe loader)
    except UnicodeDecodeError:
        raise ParameterError(f"{label}: not UTF-8 text") from None
    except yaml.YAMLError as exc:
        raise ParameterError(f"{label}: not valid YAML: {_yaml_problem(exc)}") from None


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"line {mark.line + 1}: {problem}" if mark is not None else problem


MAX_DEPTH = 50  # nested lists and mappings; a config needs five


class _UniqueKeyLoader(yaml.SafeLoader):
    """yaml.SafeLoader that rejects a key repeated in one mapping (PyYAML keeps the last silently),
    also inside a merged mapping, two merge keys in one mapping, nesting past MAX_DEPTH and a
    document whose aliases expand past MAX_EXPANDED_NODES ("billion laughs"); merge keys (`<<`) work."""

    _depth = 0

    def compose_node(self, parent, index):  # type: ignore[override]
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(None, None, f"lists and mappings nested more than {MAX_DEPTH} deep",
                                                  self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_document(self):  # type: ignore[override]
        document = super().compose_document()
        if document is not None:
            _expanded_size(document, {}, set())
        return document

    def construct_mapping(self, node, deep=False):  # type: ignore[override]
        merges = [value for key_node, value in node.value if key_node.tag == "tag:yaml.org,2002:merge"]
        if len(merges) > 1:
            raise yaml.constructor.ConstructorError(
                None, None, "two merge keys ('<<') in one mapping; merge several as `<<: [*a, *b]`", node.start_mark)
        for merged in merges:  # PyYAML flattens these without constructing them: check their keys here
            for part in merged.value if isinstance(merged, yaml.SequenceNode) else [merged]:
                if isinstance(part, yaml.MappingNode):
                    self._check_unique_keys(part, deep)
        self._check_unique_keys(node, deep)
        return super().construct_mapping(node, deep=deep)

    def _check_unique_keys(self, node, deep: bool) -> None:
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *defaults`: flatten_mapping merges it; the mapping's own keys win
            key = self.construct_object(key_node, deep=deep)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, "a mapping key must be a plain name, not a list or mapping", key_node.start_mark
                ) from None
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {shown(key)} appears twice in one mapping", key_node.start_mark
                )
            seen.add(key)


MAX_EXPANDED_NODES = 100_000  # a config written out has some hundreds
MAX_CONFIG_BYTES = 10 << 20


def _expanded_size(node: yaml.Node, sizes: dict[int, int], open_nodes: set[int]) -> int:
    """How many nodes the document holds once every alias is written out; counted on the node graph
    (an alias is the same node object), so the count itself stays cheap."""
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_nodes:
        raise yaml.composer.ComposerError(None, None, "an alias refers to a node that contains it", node.start_mark)
    open_nodes.add(key)
    children = node.value if isinstance(node, yaml.SequenceNode) else (
        [part for pair in node.value for part in pair] if isinstance(node, yaml.MappingNode) else [])
    total = 1
    for child in children:
        total += _expanded_size(child, sizes, open_nodes)
        if total > MAX_EXPANDED_NODES:
            raise yaml.composer.ComposerError(
                None, None, f"the document expands to more than {MAX_EXPANDED_NODES:,} values (aliases of aliases?); "
                "write the config out without them", node.start_mark)
    open_nodes.discard(key)
    sizes[key] = total
    return total


def shown(value: object, limit: int = 60) -> str:
    """A short repr of a value from the config for a message: nested containers elided, cut at limit."""
    shorter = reprlib.Repr()
    shorter.maxlevel, shorter.maxlist, shorter.maxdict, shorter.maxstring, shorter.maxother = 2, 4, 4, limit, limit
    text = shorter.repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
