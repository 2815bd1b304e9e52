"""YAML as a small tree of values that remember their line.

PyYAML's constructor throws positions away, yet every config message must name a line, so the loader
composes the node graph and converts it here. This is also where the hazards of YAML itself are
met: duplicate keys (PyYAML silently keeps the last), aliases that expand without bound or refer to
themselves, explicit tags, keys that are not text, control characters.

Importing this module does not import yaml; `parse` does, and the loader calls it only when a file
is actually read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from yaml.nodes import Node

# A real config holds a few hundred values. The cap bounds what aliases can expand to ("billion
# laughs") long before memory or time suffer; the depth cap keeps our own recursion shallow.
MAX_VALUES = 10_000
MAX_DEPTH = 64

_TAG = "tag:yaml.org,2002:"
_MERGE_TAG = _TAG + "merge"
# YAML 1.1 resolves a bare `=` to the "value" tag, which SafeConstructor cannot build; it is text.
_TEXT_TAGS = frozenset({_TAG + "str", _MERGE_TAG, _TAG + "value"})

# What the YAML reader refuses (the complement of its printable set). Found here first so that the
# line is right for both parsers: libyaml reports a byte offset, PyYAML a character offset.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")
# The line breaks of YAML 1.1, which both parsers count when they number lines.
_LINE_BREAK = re.compile("\r\n|[\n\r\x85\u2028\u2029]")


class Problem(Exception):
    """Something wrong at a place in the document; the loader adds the file name."""

    def __init__(self, line: int | None, path: str, what: str, hint: str | None = None) -> None:
        super().__init__(what)
        self.line = line
        self.path = path
        self.what = what
        self.hint = hint


# Plain dataclasses without eq, repr or frozen: generated methods cost import time on the CLI's
# fast path, and nothing compares these or prints them.
@dataclass(eq=False, repr=False)
class ScalarAt:
    """A plain value: None, bool, int, float, str or a date. `raw` is the text as written."""

    value: object
    raw: str
    line: int


@dataclass(eq=False, repr=False)
class ListAt:
    """A sequence."""

    items: tuple[Located, ...]
    line: int


@dataclass(eq=False, repr=False)
class Entry:
    """One key of a mapping, the line of the key, and its value."""

    key: str
    key_line: int
    value: Located


@dataclass(eq=False, repr=False)
class MapAt:
    """A mapping with text keys, in document order, merge keys (`<<`) already applied."""

    entries: tuple[Entry, ...]
    line: int


Located: TypeAlias = ScalarAt | ListAt | MapAt


def is_null(node: Located) -> bool:
    return isinstance(node, ScalarAt) and node.value is None


def describe(node: Located) -> str:
    """What was found, for "expected X, found Y". Long text is cut: a message stays one line."""
    if isinstance(node, ListAt):
        return "a list"
    if isinstance(node, MapAt):
        return "a mapping"
    value = node.value
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"integer {_cut(node.raw)}"
    if isinstance(value, float):
        return f"number {_cut(node.raw)}"
    if isinstance(value, str):
        return "empty string" if not value else f"string {quote(value)}"
    if isinstance(value, date):
        return f"date {_cut(node.raw)}"
    return f"value {_cut(node.raw)}"


def quote(text: str) -> str:
    return '"' + _cut(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _cut(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def line_of_offset(text: str, offset: int) -> int:
    return len(_LINE_BREAK.findall(text, 0, offset)) + 1


def parse(text: str) -> Located | None:
    """Parse one YAML document. None for an empty document; raises Problem for anything wrong."""
    import yaml

    bad = _UNPRINTABLE.search(text)
    if bad:
        raise Problem(
            line_of_offset(text, bad.start()),
            "",
            f"invalid YAML: control character U+{ord(bad.group()):04X} is not allowed",
            "delete it (a stray character from a copy and paste?)",
        )
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(text, Loader=loader)
    except yaml.MarkedYAMLError as exc:
        raise _syntax_problem(exc, text) from None
    except yaml.YAMLError as exc:
        raise Problem(None, "", f"invalid YAML: {exc}", "check the file's syntax") from None
    except RecursionError:
        raise Problem(None, "", "invalid YAML: nested too deeply", _DEPTH_HINT) from None
    if root is None:
        return None
    return _Converter(yaml).convert(root, "", 0)


_DEPTH_HINT = f"a config nests a few levels; at most {MAX_DEPTH} are accepted"


def _syntax_problem(exc: Any, text: str) -> Problem:
    """One line out of PyYAML's multi-line report: its problem, where, and a hint."""
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark is not None else None
    what = exc.problem or exc.context or "not valid YAML"
    if exc.context and exc.problem:
        # "while scanning a quoted scalar, found unexpected end of stream": where it began helps
        began = exc.context_mark.line + 1 if exc.context_mark is not None else line
        where = f" (line {began})" if began != line else ""
        what = f"{exc.context}{where}, {exc.problem}"
    lines = _LINE_BREAK.split(text)
    at = lines[line - 1] if line is not None and line <= len(lines) else ""
    if "\t" in at or "'\\t'" in what:  # PyYAML names the tab; libyaml leaves it to the line
        hint = "YAML indents with spaces, not tabs: replace the tab with spaces"
    elif "another document" in what:
        hint = "a config file is one YAML document: remove the extra '---'"
    elif "quoted scalar" in what:
        hint = "a quote is opened but never closed: add the closing quote"
    elif ("alias" in what or "undefined alias" in what) and re.search(r":\s+\*", at):
        # `schedule: */30 * * * *`: a value starting with * is a YAML alias (*name)
        value = at.split(":", 1)[1].strip()
        hint = (f"a value starting with * reads as a YAML alias: quote it, e.g. "
                f"{at.split(':', 1)[0].strip()}: \"{value[:40]}\"")
    else:
        hint = "check the indentation, colons and quotes on this line and the one before"
    return Problem(line, "", f"invalid YAML: {what}", hint)


class _Converter:
    """Node graph to Located tree, counting every value it visits to bound alias expansion."""

    def __init__(self, yaml: Any) -> None:
        self._yaml = yaml
        self._constructor = yaml.constructor.SafeConstructor()
        self._resolver = yaml.resolver.Resolver()
        self._visited = 0
        self._open: set[int] = set()  # ids of the collections being converted: an alias loop

    def convert(self, node: Node, path: str, depth: int) -> Located:
        line = node.start_mark.line + 1
        self._visited += 1
        if self._visited > MAX_VALUES:
            raise Problem(
                line,
                path,
                f"the document expands to more than {MAX_VALUES} values",
                "aliases (*name) repeat what their anchor holds; use fewer of them",
            )
        if depth > MAX_DEPTH:
            raise Problem(line, path, "nested too deeply", _DEPTH_HINT)
        if isinstance(node, self._yaml.ScalarNode):
            return self._scalar(node, path, line)
        if id(node) in self._open:
            raise Problem(
                line, path, "an alias refers to the value that contains it", "break the loop"
            )
        self._open.add(id(node))
        try:
            if isinstance(node, self._yaml.SequenceNode):
                self._plain_tag(node, _TAG + "seq", path, line)
                items = tuple(
                    self.convert(item, f"{path}[{i}]", depth + 1)
                    for i, item in enumerate(node.value)
                )
                return ListAt(items, line)
            return self._mapping(node, path, depth, line)
        finally:
            self._open.discard(id(node))

    def _scalar(self, node: Node, path: str, line: int) -> ScalarAt:
        # The composer does not record whether a tag was written; a tag that differs from the one
        # the text itself resolves to was written. Tags are refused: they only invite surprises.
        plain = not getattr(node, "style", None)
        implied = self._resolver.resolve(self._yaml.ScalarNode, node.value, (plain, True))
        self._plain_tag(node, implied, path, line)
        if node.tag in _TEXT_TAGS:
            return ScalarAt(node.value, node.value, line)
        try:
            value = self._constructor.construct_object(node, deep=True)
        except (ValueError, OverflowError, self._yaml.YAMLError):
            # e.g. 2024-02-30 looks like a date, 0b_ like a number; neither is one
            raise Problem(
                line,
                path,
                f"cannot read {quote(node.value)}: it looks like a {node.tag[len(_TAG):]} "
                "but is not a valid one",
                "fix the value, or quote it if it is meant as text",
            ) from None
        return ScalarAt(value, node.value, line)

    def _plain_tag(self, node: Node, implied: str, path: str, line: int) -> None:
        if node.tag != implied:
            shown = "!!" + node.tag[len(_TAG) :] if node.tag.startswith(_TAG) else node.tag
            raise Problem(
                line,
                path,
                f"YAML tags are not supported here, found {_cut(shown)}",
                "remove the tag; quote the value if it is meant as text",
            )

    def _mapping(self, node: Node, path: str, depth: int, line: int) -> MapAt:
        self._plain_tag(node, _TAG + "map", path, line)
        written: dict[str, Entry] = {}
        merged: dict[str, Entry] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG and isinstance(key_node, self._yaml.ScalarNode):
                for entry in self._merge_sources(value_node, path, depth):
                    merged.setdefault(entry.key, entry)  # the first source named wins (YAML 1.1)
                continue
            key = self._key(key_node, path)
            key_path = f"{path}.{key}" if path else key
            key_line = key_node.start_mark.line + 1
            if key in written:
                raise Problem(
                    key_line,
                    key_path,
                    f"duplicate key (first at line {written[key].key_line})",
                    "keep only one of them",
                )
            written[key] = Entry(key, key_line, self.convert(value_node, key_path, depth + 1))
        kept = [entry for key, entry in merged.items() if key not in written]
        return MapAt((*kept, *written.values()), line)

    def _merge_sources(self, node: Node, path: str, depth: int) -> list[Entry]:
        sources = node.value if isinstance(node, self._yaml.SequenceNode) else [node]
        entries: list[Entry] = []
        for source in sources:
            if not isinstance(source, self._yaml.MappingNode):
                raise Problem(
                    source.start_mark.line + 1,
                    path,
                    "expected a mapping (or a list of mappings) after <<, found something else",
                    "point << at an anchored mapping, e.g. <<: *defaults",
                )
            merged = self.convert(source, path, depth + 1)
            assert isinstance(merged, MapAt)
            entries.extend(merged.entries)
        return entries

    def _key(self, node: Node, path: str) -> str:
        line = node.start_mark.line + 1
        if isinstance(node, self._yaml.ScalarNode):
            found = self._scalar(node, path, line)
            if isinstance(found.value, str):
                return found.value
            problem = f"expected a key name (text), found {describe(found)}"
            hint = f'quote the key if it is meant as a name: "{_cut(found.raw)}":'
        else:
            problem = "expected a key name (text), found a list or mapping"
            hint = "use a plain name"
        raise Problem(line, path or "top level", problem, hint)
