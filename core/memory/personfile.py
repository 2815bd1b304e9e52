"""Reading and writing a person file: Markdown with a YAML header (docs/memory.md).

The grammar of the body is tactful's own and parsed strictly: a line that fits nowhere is an
error naming the file and line, and the file is then never overwritten. Header keys written by
hand that tactful does not know are kept as they are.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tactful.core.errors import PersonFileCorrupt
from tactful.core.memory.atomic import read_regular
from tactful.core.memory.clock import read_time, to_file
from tactful.core.memory.person import (
    ACCOUNT_KINDS,
    DIRECTIONS,
    ENTRY_KINDS,
    LADDER,
    Aka,
    CompactEntry,
    Entry,
    Flag,
    OpenItem,
    Person,
    Pin,
)
from tactful.core.memory.text import one_line

if TYPE_CHECKING:
    import yaml

def yaml_loader() -> type[yaml.SafeLoader]:
    """The YAML loader for headers the fast path (`fast_header`) leaves to YAML. Made at the
    first such header, not at import: `check` and `card` of a file tactful wrote never need
    PyYAML, whose import costs them about a tenth of their time."""
    global _LOADER
    if _LOADER is None:
        import yaml

        base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

        class Loader(base):  # type: ignore[valid-type, misc]
            """Safe YAML that refuses a key written twice: `do_not_engage: true` then `false`
            must not quietly mean false. An ambiguous file is a corrupt file, and corrupt fails
            closed."""

            def construct_mapping(self, node: yaml.MappingNode,
                                  deep: bool = False) -> dict[Any, Any]:
                seen: set[Any] = set()
                for key_node, _ in node.value:
                    key = self.construct_object(key_node, deep=deep)
                    if key in seen:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"the key {key!r} is written twice", key_node.start_mark)
                    seen.add(key)
                mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
                return mapping

        _LOADER = Loader
    return _LOADER


_LOADER: type[yaml.SafeLoader] | None = None


SEP = " · "
PINNED = "## Pinned"
EARLIER = "## Earlier, compacted"
ENTRIES = "## Entries"

_PIN = re.compile(r"^\d+\. (?P<text>.*) — (?P<by>they|I) said, (?P<on>\d{4}-\d{2}-\d{2})$")
_RESOLVED = re.compile(r"^resolved (?P<at>\S+): (?P<text>.*)$")
_HEADER_KEYS = (
    "platform", "handle", "id", "display_name", "first_seen", "last_seen", "relationship",
    "kind", "collaborator", "tone_notes", "tone_basis", "do_not_engage", "dne_reason", "flags",
    "aka",
)


# --------------------------------------------------------------------------- writing

def dumps(person: Person, tz: tzinfo) -> str:
    header: dict[str, Any] = {"platform": person.platform, "handle": person.handle}
    if person.id is not None:
        header["id"] = person.id
    if person.display_name is not None:
        header["display_name"] = one_line(person.display_name)
    if person.first_seen is not None:
        header["first_seen"] = to_file(person.first_seen, tz)
    if person.last_seen is not None:
        header["last_seen"] = to_file(person.last_seen, tz)
    header["relationship"] = person.relationship
    header["kind"] = person.kind
    if person.collaborator:
        header["collaborator"] = True
    header["tone_notes"] = one_line(person.tone_notes)
    if person.tone_basis:
        header["tone_basis"] = person.tone_basis
    header["do_not_engage"] = person.do_not_engage
    if person.dne_reason is not None:
        header["dne_reason"] = one_line(person.dne_reason)
    header["flags"] = [_flag_out(f, tz) for f in person.flags]
    header["aka"] = [_aka_out(a, tz) for a in person.aka]
    for key, value in person.extra.items():
        if key not in header:
            header[key] = value
    text = fast_header_text(header)
    out = ["---", text if text is not None else yaml_header_text(header), "---"]
    out.append(PINNED)
    for number, pin in enumerate(person.pins, 1):
        who = "they" if pin.by == "them" else "I"
        out.append(f"{number}. {one_line(pin.text)} — {who} said, {pin.on}")
    if person.compacted:
        out += ["", EARLIER]
        for older in person.compacted:
            out.append(f"- {to_file(older.at, tz)}{SEP}{older.kind}{SEP}{older.direction}"
                       f"{SEP}{one_line(older.summary)}")
            out += ["  " + line for line in _tail_lines(older.link, older.thread, older.open, tz)]
    out += ["", ENTRIES]
    for entry in person.entries:
        out += ["", f"### {to_file(entry.at, tz)}{SEP}{entry.kind}{SEP}{entry.direction}"]
        if entry.they is not None:
            out.append("they: " + json.dumps(one_line(entry.they), ensure_ascii=False))
        if entry.me is not None:
            out.append("me: " + one_line(entry.me))
        out += _tail_lines(entry.link, entry.thread, entry.open, tz, entry.topics)
        if entry.redacted:
            out.append("redacted: " + ", ".join(entry.redacted))
        if entry.withheld is not None:
            out.append("withheld: " + one_line(entry.withheld))
    return "\n".join(out) + "\n"


def yaml_header_text(header: dict[str, Any]) -> str:
    """The header as YAML writes it: the reference `fast_header_text` must match byte for byte."""
    import yaml  # writers only, and only for a header fast_header_text is unsure of

    dumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return str(yaml.dump(header, Dumper=dumper, sort_keys=False, allow_unicode=True,
                         width=10_000, default_flow_style=False)).rstrip("\n")


# The header written without PyYAML (its import is most of what a `remember` costs beyond the
# interpreter's start; docs/memory.md): the mirror of `fast_header`, for the shapes tactful
# writes. Each value is written plain or single-quoted only where YAML's emitter is sure to
# write it so; any value not plainly one of those shapes (a line break, a character outside the
# Basic Multilingual Plane, which libyaml escapes and pure-Python YAML does not, a value so long
# YAML would wrap it, a list or a date from a hand edit) sends the whole header to YAML, so the
# file is byte for byte what YAML writes (tests/test_personfile_header_writer.py proves it).
_WRITE_MAX = 2_000  # far below the width (10,000) at which YAML would wrap a line
# Words YAML 1.1 reads as a bool or a null: written quoted.
_NOT_PLAIN_WORDS = frozenset({
    "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE",
    "on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL", "~"})
# Text YAML reads as a number or a time, so it quotes it: a subset of YAML's own patterns for
# int (decimal, octal) and timestamp (what clock.to_file writes, or a date).
_QUOTED_LOOKS = re.compile(r"0|[1-9][0-9]*|0[0-7]+|[0-9]{4}-[0-9]{2}-[0-9]{2}"
                           r"(?:T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[-+][0-9]{2}:[0-9]{2}))?")
# First characters that always make YAML quote a value (indicators).
_QUOTED_FIRST = frozenset("#,[]{}&*!|>'\"%@`")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def _sure_printable(text: str) -> bool:
    # Printable to Python (no control, break, separator, format or private character) and in
    # the Basic Multilingual Plane: printable to both of YAML's emitters, with allow_unicode.
    return text.isprintable() and (text.isascii() or max(text) < "\U00010000")


def _scalar_text(value: Any) -> str | None:
    """`value` as YAML writes it in a block mapping, or None when not sure."""
    kind = type(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if value is None:
        return "null"
    if kind is not str:
        return None
    text: str = value
    if len(text) > _WRITE_MAX or not _sure_printable(text):
        return None
    if not text:
        return "''"
    if (text[0].isalpha() and text not in _NOT_PLAIN_WORDS and text[-1] != " "
            and text[-1] != ":" and ": " not in text and "#" not in text):
        return text  # a letter first: no indicator, no number, no time; nothing to escape
    if (text[0] in _QUOTED_FIRST or text[0] == " " or text[-1] == " "
            or text in _NOT_PLAIN_WORDS or _QUOTED_LOOKS.fullmatch(text)
            or (text[0].isalpha() and (": " in text or " #" in text or text[-1] == ":"))):
        return "'" + text.replace("'", "''") + "'"
    return None


def _entries_text(key: str, items: list[dict[str, Any]], out: list[str]) -> bool:
    if not items:
        out.append(f"{key}: []")
        return True
    out.append(f"{key}:")
    for item in items:
        if type(item) is not dict or not item:
            return False
        lead = "- "
        for name, value in item.items():
            text = _scalar_text(value)
            if text is None or name not in ("name", "at", "reason", "ref", "proof"):
                return False
            out.append(f"{lead}{name}: {text}")
            lead = "  "
    return True


def fast_header_text(header: dict[str, Any]) -> str | None:
    """The header as `yaml_header_text` writes it, without YAML; None when not sure."""
    out: list[str] = []
    for key, value in header.items():  # an empty header is "{}" to YAML: never fast
        if type(key) is not str or not _KEY.fullmatch(key) or key in _NOT_PLAIN_WORDS:
            return None
        if key in ("flags", "aka") and type(value) is list:
            if not _entries_text(key, value, out):
                return None
            continue
        text = _scalar_text(value)
        if text is None:
            return None
        out.append(f"{key}: {text}")
    return "\n".join(out) if out else None


def _tail_lines(link: str | None, thread: str | None, items: list[OpenItem],
                tz: tzinfo, topics: list[str] | None = None) -> list[str]:
    lines = []
    if link is not None:
        lines.append("link: " + one_line(link))
    if thread is not None:
        lines.append("thread: " + one_line(thread))
    if topics:
        lines.append("topics: " + ", ".join(one_line(t) for t in topics))
    for item in items:
        if item.resolved_at is None:
            lines.append("open: " + one_line(item.text))
        else:
            lines.append(f"resolved {to_file(item.resolved_at, tz)}: {one_line(item.text)}")
    return lines


def _flag_out(flag: Flag, tz: tzinfo) -> dict[str, Any]:
    out: dict[str, Any] = {"name": flag.name, "at": to_file(flag.at, tz)}
    if flag.reason is not None:
        out["reason"] = one_line(flag.reason)
    return out


def _aka_out(aka: Aka, tz: tzinfo) -> dict[str, Any]:
    out: dict[str, Any] = {"ref": aka.ref, "reason": one_line(aka.reason),
                           "at": to_file(aka.at, tz)}
    if aka.proof is not None:
        out["proof"] = aka.proof
    return out


# --------------------------------------------------------------------------- reading

# The header as `dumps` writes it for most people, read without YAML (a full reindex parses
# thousands; docs/memory.md): one `key: value` line per known key, each key once, every value
# one of the few shapes below, which YAML reads the same way. Any other line (an unknown key, a
# list written out, double quotes, a comment, odd spacing, a tab, non-ASCII text) sends the
# whole header to the YAML loader, so an id, an aka link or do_not_engage is never read
# differently (tests/test_personfile_header_fast_path.py proves it for both kinds of header).
_FAST_KEYS = frozenset(_HEADER_KEYS)
# Plain words that YAML reads as something other than text: left to it.
_NOT_TEXT = frozenset({"yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false",
                       "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "null", "Null",
                       "NULL"})
# Unquoted text: a letter first (a digit, sign, dot or symbol first could be a number, a date
# or YAML syntax), then words of letters, digits and _ . @ / - with single spaces between, a
# word maybe ending in a comma before the space: the tone tactful writes ("asks questions,
# warm, replies back"), which YAML reads as the same text (a comma means something only inside
# [ ] or { }), and which would otherwise send most headers to the YAML loader.
_FAST_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_.@/-]*(?:,? [A-Za-z0-9_.@/-]+)*")
# Single-quoted printable ASCII without a quote inside (so no '' escape to undo).
_FAST_QUOTED = re.compile(r"'([ -&(-~]*)'")
_FAST_NUMBER = re.compile(r"0|[1-9][0-9]{0,17}")  # a leading 0 is octal to YAML 1.1: left to it
_UNSURE = object()


def _fast_value(text: str) -> Any:
    if text == "false":
        return False
    if text == "true":
        return True
    if text == "[]":
        return []
    if text[0] == "'":
        quoted = _FAST_QUOTED.fullmatch(text)
        return quoted[1] if quoted is not None else _UNSURE
    if _FAST_NUMBER.fullmatch(text):
        return int(text)
    if text not in _NOT_TEXT and _FAST_PLAIN.fullmatch(text):
        return text
    return _UNSURE


def fast_header(lines: list[str]) -> dict[str, Any] | None:
    """The header read without YAML when it has the shape `dumps` writes; None when not sure."""
    header: dict[str, Any] = {}
    for line in lines:
        key, sep, text = line.partition(": ")
        if not sep or not text or key not in _FAST_KEYS or key in header:
            return None
        value = _fast_value(text)
        if value is _UNSURE:
            return None
        header[key] = value
    return header or None


def split_lines(content: str) -> list[str]:
    """A file's lines as the reader sees them: split on "\n" only (a lone "\r" ends no line
    here, whatever a text-mode reader thinks), one "\r" before each "\n" dropped."""
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "\r" in content:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    return lines


def header_lines(content: str) -> list[str] | None:
    """The lines between the opening and the closing `---`, split as the reader splits them;
    None when the file has no closed header. Whoever else reads a header (the id map) must
    see exactly the lines the reader sees, or a file could say one thing to each."""
    lines = split_lines(content)
    if not lines or lines[0] != "---":
        return None
    try:
        return lines[1:lines.index("---", 1)]
    except ValueError:
        return None


def id_number_misread(header: dict[Any, Any], lines: list[str]) -> str | None:
    """What is wrong when YAML read the id as a number other than the one written (`0042` is
    octal 34 to YAML 1.1, `1_000` is 1000, `12:30` is 750), else None. A hand-written id must
    mean what it says, or a flagged person's id would be looked up under a number nobody
    meant: both readers refuse such a file (docs/memory.md)."""
    value = header.get("id")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float):
        # `42.0` (as a spreadsheet exports 42) reads as written, yet is no id the platform
        # gives: the map could not key it, the reader would keep "42.0", and id 42 would pass.
        return f"YAML reads the id as the fraction {value}, which is no platform id; " \
               f"write the id as the platform gives it, quoted: id: '{value:.0f}'" \
               if value.is_integer() else f"YAML reads the id as the fraction {value}"
    for line in lines:
        key, sep, rest = line.partition(":")
        if key == "id" and sep:
            written = rest.split(" #", 1)[0].strip()
            if written == str(value):
                return None
            return (f"YAML reads {written} as the number {value}, not as written; "
                    f"quote it: id: '{written}'")
    # The key spelled otherwise (quoted, a space before the colon): what was meant is unsure.
    return f"YAML reads the id as the number {value}; write it as id: '{value}'"


def header_fields(lines: list[str]) -> dict[str, Any]:
    """The header's YAML as this module reads it (duplicates and near-miss keys refused);
    ValueError if bad."""
    fast = fast_header(lines)
    if fast is not None:
        return fast
    import yaml

    try:
        header = yaml.load("\n".join(lines), Loader=yaml_loader())  # noqa: S506 — a safe loader
    except yaml.YAMLError as exc:
        raise ValueError("header is not valid YAML") from exc
    if not isinstance(header, dict):
        raise ValueError("header is not a mapping")
    if near_miss(header) is not None:
        raise ValueError("header has a key that looks like one tactful reads but is not it")
    if id_number_misread(header, lines) is not None:
        raise ValueError("header has an id that YAML reads as another number")
    return header


# Letters of other scripts that look like the Latin ones of the keys tactful reads.
_LOOK_ALIKES = str.maketrans({
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i",
    "ј": "j", "ԁ": "d", "һ": "h", "ѕ": "s", "к": "k", "м": "m", "т": "t", "н": "h",
    "α": "a", "ε": "e", "ο": "o", "ρ": "p", "ι": "i", "κ": "k", "ν": "v", "τ": "t",
    "-": "_", " ": "_",
})


def near_miss(header: dict[Any, Any]) -> tuple[str, str] | None:
    """(key as written, the key it looks like) for an unknown key that a person would read as
    one tactful reads (`DO_NOT_ENGAGE`, `do-not-engage`, a look-alike letter, a zero-width
    character): kept as an unknown key, `do_not_engage` written so by hand would silently
    not count. Such a file is refused instead, with the key to fix."""
    import unicodedata

    for key in header:
        if not isinstance(key, str) or key in _HEADER_KEYS:
            continue
        folded = "".join(ch for ch in unicodedata.normalize("NFKC", key)
                         if unicodedata.category(ch) != "Cf")
        folded = folded.strip().casefold().translate(_LOOK_ALIKES)
        if folded in _HEADER_KEYS:
            return key, folded
    return None


class _Reader:
    """Parses one file; every problem raises PersonFileCorrupt with the file and line."""

    def __init__(self, path: Path | str, tz: tzinfo) -> None:
        self.path = path
        self.tz = tz
        self.header_lines: list[str] = []
        self.header_start = 2

    def fail(self, line: int, problem: str) -> PersonFileCorrupt:
        return PersonFileCorrupt(self.path, line, problem)

    def key_line(self, key: str) -> int:
        for offset, line in enumerate(self.header_lines):
            if line.startswith(f"{key}:"):
                return self.header_start + offset
        return self.header_start

    def time(self, value: Any, line: int, what: str) -> datetime:
        quick = _quick_time(value)  # every entry has one: read_time's full check only when needed
        if quick is not None:
            return quick
        parsed = read_time(value, self.tz)
        if parsed is None:
            raise self.fail(line, f"{what}: expected an ISO 8601 time from 1970 to 2200, "
                                  "e.g. 2026-10-29T09:05:00-04:00")
        return parsed

    def text(self, header: dict[str, Any], key: str, default: str | None) -> str | None:
        value = header.get(key, default)
        if value is None:
            return None
        if isinstance(value, str):
            return one_line(value)  # hand-written YAML can hold newlines; a card line cannot
        if isinstance(value, int | float) and not isinstance(value, bool) and key == "id":
            misread = id_number_misread(header, self.header_lines)
            if misread is not None:
                raise self.fail(self.key_line(key), f"id: {misread}")
            return str(value)
        raise self.fail(self.key_line(key), f"{key}: expected text, found {type(value).__name__}")

    def choice(self, header: dict[str, Any], key: str, allowed: tuple[str, ...],
               default: str) -> str:
        value = header.get(key, default)
        if value not in allowed:
            raise self.fail(self.key_line(key),
                            f"{key}: expected one of {', '.join(allowed)}, found {value!r}")
        return str(value)

    def flag(self, header: dict[str, Any], key: str, default: bool) -> bool:
        value = header.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(self.key_line(key), f"{key}: expected true or false, found {value!r}")
        return value

    def items(self, header: dict[str, Any], key: str) -> list[dict[str, Any]]:
        value = header.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.fail(self.key_line(key), f"{key}: expected a list of mappings")
        return value

    def parse(self, content: str, platform: str | None, handle: str | None) -> Person:
        lines = split_lines(content)
        if not lines or lines[0] != "---":
            raise self.fail(1, "the file must start with a '---' line opening the YAML header")
        try:
            close = lines.index("---", 1)
        except ValueError:
            raise self.fail(1, "the YAML header opened by '---' is never closed") from None
        self.header_lines = lines[1:close]
        person = self.header(platform, handle)
        self.body(person, lines, close + 1)
        return person

    def header(self, platform: str | None, handle: str | None) -> Person:
        header = fast_header(self.header_lines)
        if header is None:
            header = self.yaml_header()
        found_platform = self.text(header, "platform", None)
        found_handle = self.text(header, "handle", None)
        if not found_platform or not found_handle:
            raise self.fail(self.header_start, "the header needs 'platform' and 'handle'")
        if platform is not None and found_platform != platform:
            raise self.fail(self.key_line("platform"),
                            f"platform: says {found_platform!r} but the file is under {platform}/")
        if handle is not None and found_handle != handle:
            raise self.fail(self.key_line("handle"),
                            f"handle: says {found_handle!r} but the file is named {handle}.md")
        basis = header.get("tone_basis", 0)
        if not isinstance(basis, int) or isinstance(basis, bool) or basis < 0:
            raise self.fail(self.key_line("tone_basis"), "tone_basis: expected a whole number")
        person = Person(
            platform=found_platform,
            handle=found_handle,
            id=self.text(header, "id", None),
            display_name=self.text(header, "display_name", None),
            relationship=self.choice(header, "relationship", LADDER, "stranger"),
            kind=self.choice(header, "kind", ACCOUNT_KINDS, "person"),
            collaborator=self.flag(header, "collaborator", False),
            tone_notes=self.text(header, "tone_notes", "") or "",
            tone_basis=basis,
            do_not_engage=self.flag(header, "do_not_engage", False),
            dne_reason=self.text(header, "dne_reason", None),
        )
        for key in ("first_seen", "last_seen"):
            value = header.get(key)
            if value is not None:
                # The line is looked up only for the error: a reindex reads thousands of these.
                quick = _quick_time(value)
                setattr(person, key, quick if quick is not None
                        else self.time(value, self.key_line(key), key))
        for raw in self.items(header, "flags"):
            line = self.key_line("flags")
            if not isinstance(raw.get("name"), str):
                raise self.fail(line, "flags: every flag needs a name")
            person.flags.append(Flag(name=one_line(raw["name"]),
                                     at=self.time(raw.get("at"), line, "at"),
                                     reason=_opt_str(raw.get("reason"))))
        for raw in self.items(header, "aka"):
            line = self.key_line("aka")
            if not isinstance(raw.get("ref"), str) or not isinstance(raw.get("reason"), str):
                raise self.fail(line, "aka: every link needs a ref and a reason")
            person.aka.append(Aka(ref=one_line(raw["ref"]), reason=one_line(raw["reason"]),
                                  at=self.time(raw.get("at"), line, "at"),
                                  proof=_opt_str(raw.get("proof"))))
        missed = near_miss(header)
        if missed is not None:
            raise self.fail(self.key_line(missed[0]),
                            f"{missed[0]!r} looks like {missed[1]} but is not it, so tactful "
                            f"would not read it; write it as {missed[1]}")
        person.extra = {k: v for k, v in header.items() if k not in _HEADER_KEYS}
        return person

    def yaml_header(self) -> dict[str, Any]:
        import yaml

        try:
            header = yaml.load("\n".join(self.header_lines), Loader=yaml_loader())  # noqa: S506
        except yaml.YAMLError as exc:
            # The context mark is where the broken construct began: where a person looks first.
            mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
            line = self.header_start + (mark.line if mark is not None else 0)
            problem = getattr(exc, "problem", None) or "invalid YAML"
            raise self.fail(line, f"header is not valid YAML ({problem})") from None
        if not isinstance(header, dict):
            raise self.fail(self.header_start, "the header must be YAML key: value lines")
        return header

    def body(self, person: Person, lines: list[str], start: int) -> None:
        # The hot loop of every read (and of a full reindex): entry lines are by far the most
        # common, so they are tested first and with the cheapest checks, and the commonest of
        # them (a heading, they, me, link, one topic) are read here without a call; anything
        # else goes to the methods below, which hold every rule.
        section: str | None = None
        current: Entry | CompactEntry | None = None
        entry: Entry | None = None
        entries = person.entries
        number = start
        for line in lines[start:]:
            number += 1
            if not line or line.isspace():
                continue
            if section == ENTRIES:
                if line[0] != "#":
                    if entry is None:
                        raise self.fail(number,
                                        "expected an entry heading '### TIME · kind · direction'")
                    key, sep, value = line.partition(": ")
                    if not sep:
                        self.entry_field(entry, line, number)
                    elif key == "me" and entry.me is None:
                        entry.me = value
                    elif key == "link" and entry.link is None:
                        entry.link = value
                    elif (key == "they" and entry.they is None and len(value) > 1
                          and value[0] == '"' and value[-1] == '"'):
                        inner = value[1:-1]
                        if '"' not in inner and "\\" not in inner and inner.isprintable():
                            # What json.loads makes of it: no escape, no control character;
                            # and one_line's answer for printable text without a double space.
                            entry.they = inner.strip() if "  " not in inner else one_line(inner)
                        else:
                            self.entry_field(entry, line, number)
                    elif key == "topics" and not entry.topics and "," not in value:
                        topic = value.strip()
                        entry.topics = [topic] if topic else []
                    else:
                        self.entry_field(entry, line, number)
                    continue
                if line.startswith("### "):
                    pieces = line[4:].split(SEP, 2)
                    if len(pieces) == 3 and pieces[1] in ENTRY_KINDS and pieces[2] in DIRECTIONS:
                        try:
                            at: datetime | None = datetime.fromisoformat(pieces[0])
                        except ValueError:
                            at = None
                        # As time() judges it: an aware time strictly inside 1970-2200 is sane.
                        if at is None or at.tzinfo is None or not 1970 < at.year < 2200:
                            at = self.time(pieces[0], number, "entry time")
                        entry = Entry(at, pieces[1], pieces[2])  # by position: cheaper
                    else:  # heading() says what is wrong with it
                        entry = self.entry_head(line[4:], number)
                    entries.append(entry)
                    continue
            if line in (PINNED, EARLIER, ENTRIES):
                section, current, entry = line, None, None
                continue
            if line.startswith("## "):
                raise self.fail(number, "unknown section heading; sections are "
                                        f"{PINNED!r}, {EARLIER!r}, {ENTRIES!r}")
            if section == ENTRIES:
                raise self.fail(number, "unexpected line in the entries; an entry starts "
                                        "with '### TIME · kind · direction'")
            if section == PINNED:
                person.pins.append(self.pin(line, number))
            elif section == EARLIER:
                if line.startswith("- "):
                    current = self.compact(line, number)
                    person.compacted.append(current)
                elif line.startswith("  ") and current is not None:
                    self.field(current, line[2:], number)
                else:
                    raise self.fail(number, "expected '- TIME · kind · direction · summary'")
            else:
                raise self.fail(number, "unexpected line outside a section; "
                                        f"sections are {PINNED!r}, {EARLIER!r}, {ENTRIES!r}")

    def entry_field(self, entry: Entry, line: str, number: int) -> None:
        key, sep, value = line.partition(": ")
        if key == "they" and sep and entry.they is None:
            inner = value[1:-1]
            if (len(value) > 1 and value[0] == '"' and value[-1] == '"' and '"' not in inner
                    and "\\" not in inner and inner.isprintable()):
                they: Any = inner  # what json.loads makes of it: no escape, no control character
            else:
                try:
                    they = json.loads(value)
                except ValueError:
                    they = None
            if not isinstance(they, str):
                raise self.fail(number, 'they: must be one quoted string, e.g. they: "..."')
            entry.they = one_line(they)  # a hand-written "\n" must not forge a card line
        elif key == "me" and entry.me is None:
            entry.me = value
        elif key == "link" and sep and entry.link is None:  # as field() would, one call sooner
            entry.link = value
        elif key == "topics" and not entry.topics:
            entry.topics = [t.strip() for t in value.split(",") if t.strip()]
        elif key == "redacted" and not entry.redacted:
            entry.redacted = [t.strip() for t in value.split(",") if t.strip()]
        elif key == "withheld" and entry.withheld is None:
            entry.withheld = value
        else:
            self.field(entry, line, number)

    def pin(self, line: str, number: int) -> Pin:
        match = _PIN.match(line)
        if not match:
            raise self.fail(number, "a pin reads 'N. text — they said, YYYY-MM-DD' "
                                    "(or 'I said')")
        return Pin(text=match["text"], by="them" if match["by"] == "they" else "me",
                   on=match["on"])

    def heading(self, text: str, number: int, parts: int) -> list[str]:
        pieces = text.split(SEP, parts - 1)
        if len(pieces) < 3:
            raise self.fail(number, "a heading reads 'TIME · kind · direction'")
        if pieces[1] not in ENTRY_KINDS:
            raise self.fail(number, f"unknown kind {pieces[1]!r}; kinds: {', '.join(ENTRY_KINDS)}")
        if pieces[2] not in DIRECTIONS:
            raise self.fail(number, f"direction must be inbound or outbound, found {pieces[2]!r}")
        return pieces

    def entry_head(self, text: str, number: int) -> Entry:
        pieces = self.heading(text, number, 3)
        return Entry(at=self.time(pieces[0], number, "entry time"), kind=pieces[1],
                     direction=pieces[2])

    def compact(self, line: str, number: int) -> CompactEntry:
        pieces = self.heading(line[2:], number, 4)
        return CompactEntry(at=self.time(pieces[0], number, "entry time"), kind=pieces[1],
                            direction=pieces[2], summary=pieces[3] if len(pieces) > 3 else "")

    def field(self, target: Entry | CompactEntry, line: str, number: int) -> None:
        """The lines an entry and a compacted line share: link, thread, open, resolved."""
        key, sep, value = line.partition(": ")
        if not sep:
            key, value = line.rstrip(":"), ""
            if key == "me" and isinstance(target, Entry) and target.me is None:
                target.me = ""  # "me: " whose trailing space an editor trimmed
                return
        if key == "link" and target.link is None:
            target.link = value
        elif key == "thread" and target.thread is None:
            target.thread = value
        elif key == "open":
            target.open.append(OpenItem(value))
        elif key.startswith("resolved "):
            match = _RESOLVED.match(line)
            if match is None:
                raise self.fail(number, "a resolved item reads 'resolved TIME: text'")
            target.open.append(OpenItem(match["text"],
                                        self.time(match["at"], number, "resolved time")))
        else:
            raise self.fail(number, f"unexpected or repeated field {_field_name(line)!r} in an "
                                    "entry; "
                                    "fields are they, me, link, thread, topics, open, resolved, "
                                    "redacted, withheld")


def _quick_time(value: Any) -> datetime | None:
    """The time read_time would make of `value` when it is plainly a sane one; else None (ask
    read_time). An offset is under a day, so a year strictly inside 1970-2200 is inside it in
    every zone: what read_time would accept, without moving the time to UTC."""
    if not isinstance(value, str):
        return None
    try:
        quick = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if quick.tzinfo is not None and 1970 < quick.year < 2200:
        return quick
    return None


def _field_name(line: str) -> str:
    """The key of a line, for an error message: never the value, which may be someone's words."""
    key = line.partition(":")[0]
    return key if len(key) <= 20 and key.replace("_", "").isalpha() else "?"


def _opt_str(value: Any) -> str | None:
    return None if value is None else one_line(str(value))


def loads(content: str, tz: tzinfo, *, path: Path | str = "<text>",
          platform: str | None = None, handle: str | None = None) -> Person:
    return _Reader(path, tz).parse(content, platform, handle)


def read(path: Path, tz: tzinfo, platform: str, handle: str) -> Person:
    """Parse the file at `path`; OSError propagates, a bad file raises PersonFileCorrupt, and
    a FIFO, device or folder there raises NotRegularFile (never read: it could block)."""
    data = read_regular(path)
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise PersonFileCorrupt(path, line, "not valid UTF-8") from None
    return loads(content, tz, path=path, platform=platform, handle=handle)
