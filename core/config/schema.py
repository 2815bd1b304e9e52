"""The shape of tactful.yaml, declared once: typed values for the program, a schema for the file.

Each section is a frozen dataclass (what the rest of tactful reads) and a `Section` that lists its
keys and their kinds (what the loader checks, with file, line and key in every message). Adding a
section such as `responders` takes a dataclass, a `Section`, one `Field` in `CONFIG_SCHEMA` and one
attribute on `Config`; no parsing code.

Choices made here:
- Text is text: `name: 42` or `account: 1e3` is refused with a hint to quote it, because YAML turns
  such words into numbers the user never meant. Booleans are not integers, nor integers booleans.
- A key written with no value (`timezone:`) is an error unless null means something: "not set" for
  an optional key, "all defaults" for a section. A half-deleted line never passes as a default.
- `Config.platforms` holds only the platforms the file names; `Config.platform(name)` gives the
  defaults for the others. The platforms and their `mode` values come from memory's registry
  of platform facts (`core/memory/platforms.py`, the static table the adapter plugins own,
  read without loading them): a platform whose plugin declares modes has the key `mode`
  (None means its first mode, e.g. "persona" on Telegram); the others do not.
- Owners are normalized like every handle (docs/memory.md): leading @ dropped, lower case.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from tactful.core.errors import BadInput
from tactful.core.memory import platforms
from tactful.core.memory.handles import PLATFORM_NAME, normalize_handle

from .values import (
    RESPONDER_KINDS,
    CompanionConfig,
    Config,
    EngagementConfig,
    MemoryConfig,
    PersonaConfig,
    PlatformConfig,
    PluginsConfig,
    ResponderConfig,
    RoutineConfig,
)
from .yamlpos import Entry, ListAt, Located, MapAt, Problem, ScalarAt, describe, is_null

# The platforms installed plugins declare in the static table; a platform only a plugin's hook
# knows is read with the plain section (`MapOf.other`) and checked where it is used.
PLATFORMS = platforms.names()


# ---- how a schema is declared and read -------------------------------------------------------
# These dataclasses skip eq, repr and frozen: each generated method costs import time, and this
# module is imported by every command, `tactful check` included.

T = TypeVar("T")


class Invalid(Exception):
    """Raised by a value check. `found` replaces the echo of the value when it must stay unshown."""

    def __init__(self, expected: str, hint: str | None = None, found: str | None = None) -> None:
        super().__init__(expected)
        self.expected = expected
        self.hint = hint
        self.found = found


@dataclass(eq=False, repr=False)
class Issue:
    """A rule across keys of one section broken; reported at the line of `key`."""

    key: str
    expected: str
    hint: str | None = None


@dataclass(eq=False, repr=False)
class Context:
    """What reading a value may need beyond the value itself."""

    folder: Path  # relative paths in the file start here: the file's own folder
    root: Section[Any]  # to point a misplaced key at the section it belongs to
    # key path -> line of every key read, so that a check made later (against the plugins)
    # can still name the line: `Config.where`
    lines: dict[str, int] = field(default_factory=dict)


def _wrong(node: Located, path: str, expected: str, hint: str | None = None) -> Problem:
    what = f"expected {expected}, found {describe(node)}"
    return Problem(node.line, path or "top level", what, hint)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class Kind(ABC):
    """How one value is read: what it expects, and how YAML becomes a Python value."""

    null_is_empty: ClassVar[bool] = False  # a section written with nothing under it is all defaults

    @abstractmethod
    def expects(self) -> str: ...

    @abstractmethod
    def read(self, node: Located, path: str, ctx: Context) -> object: ...


@dataclass(eq=False, repr=False)
class Field:
    """One key of a section and the kind of its value."""

    name: str
    kind: Kind
    optional: bool = False  # null means "not set": the dataclass default must be None

    def read(self, entry: Entry, path: str, ctx: Context) -> object:
        if is_null(entry.value) and not self.kind.null_is_empty:
            if self.optional:
                return None
            hint = "give a value, or delete the line to use the default"
            raise _wrong(entry.value, path, self.kind.expects(), hint)
        return self.kind.read(entry.value, path, ctx)


@dataclass(eq=False, repr=False)
class Text(Kind):
    """Non-blank text. `check` may refuse it (raising Invalid) or return it normalized."""

    expected: str = "a non-empty string"
    check: Callable[[str], str] | None = None
    choices: tuple[str, ...] = ()

    def expects(self) -> str:
        return f"one of: {', '.join(self.choices)}" if self.choices else self.expected

    def read(self, node: Located, path: str, ctx: Context) -> str:
        if not isinstance(node, ScalarAt) or not isinstance(node.value, str):
            hint = None
            if isinstance(node, ScalarAt) and node.value is not None:
                hint = f'quote it if it is meant as text: "{node.raw}"'
            raise _wrong(node, path, self.expects(), hint)
        if not node.value.strip():
            raise _wrong(node, path, self.expects())
        if self.choices and node.value not in self.choices:
            raise _wrong(node, path, self.expects(), did_you_mean(node.value, self.choices))
        if self.check is None:
            return node.value
        try:
            return self.check(node.value)
        except Invalid as exc:
            what = f"expected {exc.expected}, found {exc.found or describe(node)}"
            raise Problem(node.line, path, what, exc.hint) from None


@dataclass(eq=False, repr=False)
class Integer(Kind):
    """An integer, never a boolean; optionally at least `minimum`."""

    minimum: int | None = None

    def expects(self) -> str:
        return "an integer" if self.minimum is None else f"an integer of at least {self.minimum}"

    def read(self, node: Located, path: str, ctx: Context) -> int:
        value = node.value if isinstance(node, ScalarAt) else None
        # a wrong type says only "an integer"; the minimum is news only for an integer below it
        if isinstance(value, bool):
            raise _wrong(node, path, "an integer", "true and false are not numbers")
        if not isinstance(value, int):
            digits = isinstance(value, str) and value.strip().isdigit()
            raise _wrong(node, path, "an integer", "remove the quotes" if digits else None)
        if self.minimum is not None and value < self.minimum:
            raise _wrong(node, path, self.expects())
        return value


@dataclass(eq=False, repr=False)
class Number(Kind):
    """A number (an integer too, never a boolean, never infinite): at least `at_least`, more
    than `above`, at most `at_most`."""

    above: float | None = None
    at_most: float | None = None
    at_least: float | None = None
    meaning: str = ""  # what it counts, e.g. "seconds per request"

    def expects(self) -> str:
        bounds = [f"at least {self.at_least:g}" if self.at_least is not None else "",
                  f"more than {self.above:g}" if self.above is not None else "",
                  f"at most {self.at_most:g}" if self.at_most is not None else ""]
        said = " and ".join(b for b in bounds if b)
        what = f" ({self.meaning})" if self.meaning else ""
        return f"a number{what}" + (f" {said}" if said else "")

    def read(self, node: Located, path: str, ctx: Context) -> float:
        value = node.value if isinstance(node, ScalarAt) else None
        if isinstance(value, bool):
            raise _wrong(node, path, self.expects(), "true and false are not numbers")
        if not isinstance(value, int | float):
            number = isinstance(value, str) and re.fullmatch(r"\s*\d+(\.\d*)?\s*", value)
            raise _wrong(node, path, self.expects(), "remove the quotes" if number else None)
        if (self.above is not None and not value > self.above) or \
                (self.at_least is not None and not value >= self.at_least) or \
                (self.at_most is not None and not value <= self.at_most) or value != value \
                or value in (float("inf"), float("-inf")):
            raise _wrong(node, path, self.expects())
        return float(value)


@dataclass(eq=False, repr=False)
class Boolean(Kind):
    """true or false, never a quoted word or a number."""

    def expects(self) -> str:
        return "true or false"

    def read(self, node: Located, path: str, ctx: Context) -> bool:
        value = node.value if isinstance(node, ScalarAt) else None
        if not isinstance(value, bool):
            quoted = isinstance(value, str) and value.lower() in ("true", "false")
            raise _wrong(node, path, self.expects(), "remove the quotes" if quoted else None)
        return value


@dataclass(eq=False, repr=False)
class FolderPath(Kind):
    """A path: `~` expanded, a relative one taken from the config file's folder."""

    def expects(self) -> str:
        return "a path"

    def read(self, node: Located, path: str, ctx: Context) -> Path:
        text = Text(expected=self.expects()).read(node, path, ctx)
        if "\x00" in text:
            raise _wrong(node, path, "a path without NUL characters")
        try:
            expanded = Path(text).expanduser()
        except RuntimeError:  # ~name of a user who does not exist
            raise _wrong(node, path, "a path", "~ works only for users of this machine") from None
        return (ctx.folder / expanded).resolve()


@dataclass(eq=False, repr=False)
class TextList(Kind):
    """A list of text values, each read by `item`."""

    item: Text

    def expects(self) -> str:
        return f"a list of {self.item.expects().removeprefix('a ').removeprefix('an ')}"

    def read(self, node: Located, path: str, ctx: Context) -> tuple[str, ...]:
        if not isinstance(node, ListAt):
            hint = f"write a list, e.g. [{node.raw}]" if isinstance(node, ScalarAt) else None
            raise _wrong(node, path, self.expects(), hint)
        return tuple(self.item.read(item, f"{path}[{i}]", ctx) for i, item in enumerate(node.items))


@dataclass(eq=False, repr=False)
class Section(Kind, Generic[T]):
    """A mapping with known keys, built into the dataclass `build`."""

    build: Callable[..., T]
    fields: tuple[Field, ...]
    check: Callable[[T, frozenset[str]], Issue | None] | None = None
    notes: Mapping[str, str] = field(default_factory=dict)  # hints for keys that live elsewhere
    null_is_empty: ClassVar[bool] = True

    def expects(self) -> str:
        return f"a mapping with keys {', '.join(f.name for f in self.fields)}"

    def read(self, node: Located, path: str, ctx: Context) -> T:
        if is_null(node):
            return self.build()
        if not isinstance(node, MapAt):
            raise _wrong(node, path, self.expects())
        by_name = {f.name: f for f in self.fields}
        values: dict[str, object] = {}
        for entry in node.entries:
            key_path = _join(path, entry.key)
            ctx.lines[key_path] = entry.key_line
            known = by_name.get(entry.key)
            if known is None:
                raise _unknown_key(entry, key_path, tuple(by_name), ctx, self.notes.get(entry.key))
            values[entry.key] = known.read(entry, key_path, ctx)
        built = self.build(**values)
        issue = self.check(built, frozenset(values)) if self.check else None
        if issue is not None:
            raise self._broken(issue, node, path)
        return built

    def _broken(self, issue: Issue, node: MapAt, path: str) -> Problem:
        written = next((e for e in node.entries if e.key == issue.key), None)
        if written is None:
            what = f"expected {issue.expected}, found the default"
            return Problem(node.line, _join(path, issue.key), what, issue.hint)
        what = f"expected {issue.expected}, found {describe(written.value)}"
        return Problem(written.key_line, _join(path, issue.key), what, issue.hint)

    def key_paths(self, prefix: str = "") -> Iterator[str]:
        """Every key path below this section (not into MapOf, whose keys are names)."""
        for f in self.fields:
            yield _join(prefix, f.name)
            if isinstance(f.kind, Section):
                yield from f.kind.key_paths(_join(prefix, f.name))


@dataclass(eq=False, repr=False)
class MapOf(Kind):
    """A mapping from names of a fixed set (platforms) to sections, one schema per name."""

    items: Mapping[str, Section[Any]]
    # Names beyond `items` that are plausible (`other_name`) and not a typo of one of them get
    # this section: a platform that a plugin adds. Whether it is installed is checked where it
    # is used (`tactful send`, `tactful config check`), since reading config loads no plugin.
    other: Section[Any] | None = None
    other_name: re.Pattern[str] | None = None
    # names that may not be keys here, with why and the fix (a memory-only platform)
    refused: Mapping[str, str] = field(default_factory=dict)
    null_is_empty: ClassVar[bool] = True

    def expects(self) -> str:
        return f"a mapping with keys among {', '.join(self.items)}"

    def read(self, node: Located, path: str, ctx: Context) -> dict[str, object]:
        if is_null(node):
            return {}
        if not isinstance(node, MapAt):
            raise _wrong(node, path, self.expects())
        read: dict[str, object] = {}
        for entry in node.entries:
            key_path = _join(path, entry.key)
            ctx.lines[key_path] = entry.key_line
            if entry.key in self.refused:
                raise Problem(entry.key_line, key_path, "expected no section for this name",
                              self.refused[entry.key])
            section = self.items.get(entry.key)
            if section is None and self.other is not None and self.other_name is not None \
                    and self.other_name.fullmatch(entry.key) \
                    and did_you_mean(entry.key, tuple(self.items)) is None:
                section = self.other
            if section is None and not self.items:
                raise Problem(entry.key_line, key_path,
                              f"expected a name of lower-case letters, digits, - and _ "
                              f"(starting with a letter), found {entry.key[:40]!r}")
            if section is None:
                raise _unknown_key(entry, key_path, tuple(self.items), ctx, None)
            read[entry.key] = section.read(entry.value, key_path, ctx)
        return read


def _unknown_key(
    entry: Entry, key_path: str, names: tuple[str, ...], ctx: Context, note: str | None
) -> Problem:
    hint = note or did_you_mean(entry.key, names)
    if hint is None:
        # a key that exists, but in another section, e.g. `timezone` at the top level
        homes = [p for p in ctx.root.key_paths() if p.rsplit(".", 1)[-1] == entry.key.lower()]
        homes = [p for p in homes if p != key_path]
        hint = f"did you mean '{homes[0]}'?" if homes else None
    expected = f"unknown key (expected one of: {', '.join(names)})"
    return Problem(entry.key_line, key_path, expected, hint)


def did_you_mean(word: str, choices: tuple[str, ...] | list[str]) -> str | None:
    import difflib

    by_folded = {c.lower(): c for c in choices}
    folded = word.strip().lower().replace("-", "_")
    close = difflib.get_close_matches(folded, list(by_folded), n=1, cutoff=0.6)
    return f"did you mean '{by_folded[close[0]]}'?" if close else None


# ---- value checks ----------------------------------------------------------------------------

_ZONE_EXPECTED = "an IANA time zone of a place, such as America/New_York, or UTC"
_ZONE_CHARS = re.compile(r"[A-Za-z0-9_+\-]+(/[A-Za-z0-9_+\-]+)*")


# Abbreviations and the legacy zones named after them: "EST" is a fixed UTC-5 all year (no
# daylight saving), which is not what someone in New York means by it; the others are not
# zones at all. Each is refused, naming the zone of a place that keeps the clock people mean.
_ABBREVIATIONS = {
    "EST": "America/New_York", "EDT": "America/New_York", "EST5EDT": "America/New_York",
    "CST": "America/Chicago", "CDT": "America/Chicago", "CST6CDT": "America/Chicago",
    "MST": "America/Denver", "MDT": "America/Denver", "MST7MDT": "America/Denver",
    "PST": "America/Los_Angeles", "PDT": "America/Los_Angeles",
    "PST8PDT": "America/Los_Angeles", "HST": "Pacific/Honolulu", "AKST": "America/Anchorage",
    "CET": "Europe/Paris", "CEST": "Europe/Paris", "MET": "Europe/Paris",
    "EET": "Europe/Athens", "EEST": "Europe/Athens", "WET": "Europe/Lisbon",
    "BST": "Europe/London", "IST": "Asia/Kolkata", "JST": "Asia/Tokyo",
    "AEST": "Australia/Sydney", "AEDT": "Australia/Sydney",
}


def _time_zone(text: str) -> str:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

    place = _ABBREVIATIONS.get(text.strip().upper())
    if place is not None:
        raise Invalid(_ZONE_EXPECTED,
                      f"{text.strip()} is an abbreviation or a fixed offset that ignores "
                      f"daylight saving; write the zone of the place, e.g. {place}")
    if _ZONE_CHARS.fullmatch(text):
        try:
            ZoneInfo(text)
            return text
        except (ZoneInfoNotFoundError, ValueError, OSError):
            pass
    hint = did_you_mean(text, sorted(available_timezones())) or "e.g. Europe/Amsterdam or UTC"
    raise Invalid(_ZONE_EXPECTED, hint)


_OWNER_EXPECTED = f'"platform:handle" with platform one of {", ".join(PLATFORMS)}'


def _owner(text: str) -> str:
    platform, colon, handle = text.partition(":")
    platform = platform.strip().lower()
    handle = handle.strip().removeprefix("@").lower()
    if not colon:
        handle = platform.removeprefix("@") or "handle"  # no colon: what was written is a handle
        raise Invalid(_OWNER_EXPECTED, f'write it with its platform, e.g. "x:{handle}"')
    if platform not in PLATFORMS:
        raise Invalid(_OWNER_EXPECTED, did_you_mean(platform, PLATFORMS))
    try:
        handle = normalize_handle(handle, platform)
    except BadInput as exc:
        raise Invalid(_OWNER_EXPECTED, str(exc)) from None
    return f"{platform}:{handle}"


_ACCOUNT = re.compile(r"[^\s/]+")


def _account(text: str) -> str:
    if not _ACCOUNT.fullmatch(text):
        # the account names a keyring entry, <platform>/<account>/<field> (docs/sending.md)
        raise Invalid("an account name without spaces or slashes")
    return text


_URL_EXPECTED = "an http(s) URL such as http://127.0.0.1:8080"


def _http_url(text: str) -> str:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 -- reading it validates the port
    except ValueError:
        raise Invalid(_URL_EXPECTED) from None
    if parts.username is not None or parts.password is not None:
        raise Invalid(
            "a URL without a user name or password",
            "credentials live in the keyring: tactful credentials set PLATFORM FIELD",
            found="a URL with credentials in it (not shown)",
        )
    if parts.query or parts.fragment or text.rstrip().endswith(("?", "#")):
        # `doctor --reach` and error messages show a base URL: a key in it would be shown too.
        raise Invalid(
            "a URL without a query or fragment",
            "a key belongs in the keyring: tactful credentials set PLATFORM FIELD",
            found="a URL with a query or fragment (not shown)",
        )
    if parts.scheme not in ("http", "https") or not parts.hostname or re.search(r"\s", text):
        raise Invalid(_URL_EXPECTED, "start it with http:// or https://")
    return text


def _cron(text: str) -> str:
    from tactful.core.schedule.cron import validate  # only when a schedule is written

    try:
        return validate(text)
    except ValueError as exc:
        raise Invalid("a valid cron schedule (minute hour day month weekday)",
                      f"{exc}; e.g. \"*/30 9-22 * * *\"") from None


_NAME_EXPECTED = "a name of lower-case letters, digits, - and _"
NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")


def _responder(config: ResponderConfig, written: frozenset[str]) -> Issue | None:
    if config.kind == "command" and not config.command:
        return Issue("command", "the program to run, as a list: [program, arg, ...]",
                     "a command responder needs a command")
    if config.kind == "openai" and not config.base_url:
        return Issue("base_url", "the endpoint's base URL, e.g. http://127.0.0.1:8080/v1",
                     "an openai responder needs base_url")
    if config.kind == "openai" and not config.model:
        return Issue("model", "the model name", "an openai responder needs model")
    return None


def _routine(config: RoutineConfig, written: frozenset[str]) -> Issue | None:
    if "kind" not in written:
        return Issue("kind", "the routine's kind, e.g. batch-reply or sync-log",
                     "every routine names its kind")
    if config.kind == "batch-reply" and config.platform is None:
        return Issue("platform", "the platform this batch replies on",
                     "a batch-reply routine needs a platform")
    if config.kind == "batch-reply" and config.responder is None:
        return Issue("responder", "the responder that drafts the replies",
                     "`template` is the offline one, for trying things out")
    return None


def _compaction(memory: MemoryConfig, written: frozenset[str]) -> Issue | None:
    if memory.compact_after > memory.keep_full:
        return None
    why = "the latest keep_full entries stay in full once a file passes compact_after"
    if "compact_after" in written:
        expected = f"an integer greater than keep_full ({memory.keep_full})"
        return Issue("compact_after", expected, why)
    return Issue("keep_full", f"an integer less than compact_after ({memory.compact_after})", why)


# ---- the schema ------------------------------------------------------------------------------

SENDING_ACTIONS = ("reply", "post", "mention", "quote", "dm")


def _limits(**values: int | None) -> dict[str, int]:
    return {action: cap for action, cap in values.items() if cap is not None}


_LIMITS: Section[dict[str, int]] = Section(
    _limits, tuple(Field(action, Integer(minimum=0), optional=True) for action in SENDING_ACTIONS))
_PLATFORM_FIELDS = (
    Field("account", Text(check=_account), optional=True),
    Field("dry_run", Boolean()),
    Field("base_url", Text(expected=_URL_EXPECTED, check=_http_url), optional=True),
    Field("limits", _LIMITS),
    Field("allow_private", Boolean()),
)


def _platform_section(name: str) -> Section[PlatformConfig]:
    """A platform's section: the common keys, with `mode` where its plugin declares modes, the
    options it declares (`Platform.options`) and its own rule for `account`."""
    facts = platforms.facts(name)
    if not (facts.modes or facts.options or facts.account_pattern):
        return _PLATFORM
    fields = [f for f in _PLATFORM_FIELDS if f.name != "account"]
    fields.insert(0, Field("account", Text(check=_account_of(facts)), optional=True))
    if facts.modes:
        fields.append(Field("mode", Text(choices=facts.modes), optional=True))
    fields.extend(Field(o.name, _option_kind(o)) for o in facts.options)
    option_names = frozenset(o.name for o in facts.options)

    def build(**values: Any) -> PlatformConfig:
        options = {key: values.pop(key) for key in list(values) if key in option_names}
        return PlatformConfig(**values, options=options)

    return Section(build, tuple(fields), notes=_mode_note() if not facts.modes else {})


def _option_kind(option: platforms.Option) -> Kind:
    """How an option's value is read: the kind of its default (`Platform.options`)."""
    if isinstance(option.default, bool):
        return Boolean()
    if isinstance(option.default, float | int):
        integer = not isinstance(option.default, float)
        kind = Number(above=option.above, at_most=option.at_most, meaning=option.help)
        return _Whole(kind) if integer else kind
    return Text(expected=f"text ({option.help})" if option.help else "a non-empty string")


@dataclass(eq=False, repr=False)
class _Whole(Kind):
    """A number option whose default is an integer: an integer within the bounds."""

    number: Number

    def expects(self) -> str:
        return self.number.expects().replace("a number", "an integer", 1)

    def read(self, node: Located, path: str, ctx: Context) -> int:
        value = self.number.read(node, path, ctx)
        if not isinstance(node, ScalarAt) or not isinstance(node.value, int):
            raise _wrong(node, path, self.expects())
        return int(value)


def _account_of(facts: platforms.Platform) -> Callable[[str], str]:
    """`platforms.<name>.account`: a keyring name, in the shape the platform needs."""
    pattern = re.compile(facts.account_pattern) if facts.account_pattern else None

    def check(text: str) -> str:
        _account(text)
        if pattern is not None and not pattern.fullmatch(text):
            raise Invalid(f"an account as {facts.name} needs it",
                          facts.account_hint or None)
        return text

    return check


def _mode_note() -> dict[str, str]:
    having = [p for p in PLATFORMS if platforms.facts(p).modes]
    if not having:
        return {}
    verb = "has" if len(having) == 1 else "have"
    return {"mode": f"only {' and '.join(having)} {verb} a mode"}


_PLATFORM = Section(PlatformConfig, _PLATFORM_FIELDS, notes=_mode_note())

PERSONA = Section(
    PersonaConfig,
    (
        Field("name", Text()),
        Field("timezone", Text(expected=_ZONE_EXPECTED, check=_time_zone)),
        Field("owners", TextList(Text(expected=_OWNER_EXPECTED, check=_owner))),
    ),
)
MEMORY = Section(
    MemoryConfig,
    (
        Field("home", FolderPath(), optional=True),
        Field("compact_after", Integer(minimum=2)),
        Field("keep_full", Integer(minimum=1)),
    ),
    check=_compaction,
)
_MEMORY_ONLY = tuple(p for p in PLATFORMS if platforms.facts(p).memory_only)
PLATFORMS_SCHEMA = MapOf({p: _platform_section(p) for p in PLATFORMS if p not in _MEMORY_ONLY},
                         other=_PLATFORM, other_name=PLATFORM_NAME,
                         refused={p: f"{p} is a memory-only platform: tactful never sends there, "
                                     "so it has no account, base_url or limits; delete the section"
                                  for p in _MEMORY_ONLY})
_COMMAND_ITEM = Text(expected="a non-empty string")
RESPONDER = Section(
    ResponderConfig,
    (
        # any kind a plugin registers: checked against them once the file is read (reading.py)
        Field("kind", Text(expected=f"a responder kind, e.g. {', '.join(RESPONDER_KINDS)}")),
        Field("command", TextList(_COMMAND_ITEM)),
        Field("timeout", Integer(minimum=1)),
        Field("base_url", Text(expected=_URL_EXPECTED, check=_http_url), optional=True),
        Field("model", Text(), optional=True),
    ),
    check=_responder,
)
ROUTINE = Section(
    RoutineConfig,
    (
        Field("kind", Text(expected="a routine kind, e.g. batch-reply or sync-log")),
        Field("schedule", Text(expected="a cron schedule", check=_cron), optional=True),
        Field("timezone", Text(expected=_ZONE_EXPECTED, check=_time_zone), optional=True),
        Field("platform", Text(expected="a platform name"), optional=True),
        Field("responder", Text(expected=_NAME_EXPECTED), optional=True),
        Field("max_per_run", Integer(minimum=1)),
        Field("pause", Integer(minimum=0)),
        Field("dry_run", Boolean()),
        Field("enabled", Boolean()),
    ),
    check=_routine,
)
_PHRASES = TextList(Text(expected="a phrase"))
ENGAGEMENT = Section(
    EngagementConfig,
    tuple(Field(name, _PHRASES) for name in ("leave_alone", "spam", "engagement_farm",
                                              "crypto_shill", "ragebait")),
)
_QUIET = re.compile(r"([01]?\d|2[0-3])-([01]?\d|2[0-3])")


def _quiet_hours(text: str) -> str:
    match = _QUIET.fullmatch(text.strip())
    if match is None or match.group(1) == match.group(2):
        raise Invalid("hours as START-END on a 24-hour clock, e.g. 22-8",
                      "check-ins are held from START:00 until END:00 in the user's time zone")
    return f"{int(match.group(1))}-{int(match.group(2))}"


def _database(text: str) -> str:
    # Parsed by libpq's rules only when the companion connects (psycopg is not imported to
    # read a config); a password is refused here: secrets never live in the YAML.
    lowered = text.lower()
    if "password=" in lowered or re.match(r"postgres(ql)?://[^/@]*:[^/@]*@", lowered):
        raise Invalid("a connection string without a password",
                      "put the password in ~/.pgpass or a libpq service file",
                      found="one with a password (not shown)")
    return text.strip()


COMPANION = Section(
    CompanionConfig,
    (
        Field("responder", Text(expected=_NAME_EXPECTED), optional=True),
        Field("prompt", FolderPath(), optional=True),
        Field("window_messages", Integer(minimum=1)),
        # Minutes and hours may be decimal: the timers' minimums are the companion's
        # (docs/companion.md, "Timers"), so a test may shorten them.
        Field("window_minutes", Number(at_least=0.001)),
        Field("daily_cap", Integer(minimum=1)),
        Field("join_seconds", Integer(minimum=0)),
        Field("parallel_turns", Integer(minimum=1)),
        Field("turn_timeout", Integer(minimum=1)),
        Field("history_days", Integer(minimum=1)),
        Field("memory_pass_hours", Number(at_least=0.0001)),
        Field("first_pass_minutes", Number(at_least=0), optional=True),
        Field("typing_pace", Number(at_least=0)),
        Field("release_tick_seconds", Number(at_least=0.01)),
        Field("release_jitter_min_seconds", Number(at_least=0)),
        Field("release_jitter_max_seconds", Number(at_least=0)),
        Field("quiet_minutes", Integer(minimum=0)),
        Field("pass_messages", Integer(minimum=1)),
        Field("default_timezone", Text(expected=_ZONE_EXPECTED, check=_time_zone),
              optional=True),
        Field("checkins", Boolean()),
        Field("quiet_hours", Text(expected="hours as START-END, e.g. 22-8", check=_quiet_hours)),
        Field("checkins_per_week", Integer(minimum=0)),
        Field("unanswered_before_backoff", Integer(minimum=1)),
        Field("groups", Boolean()),
        Field("database", Text(expected="a PostgreSQL connection string without a password, "
                               "e.g. postgresql://tactful@db.internal/tactful",
                               check=_database), optional=True),
    ),
)
_PLUGIN_EXPECTED = "a plugin name (an entry-point name of the group tactful, e.g. x or routines)"


def _plugin_name(text: str) -> str:
    # what an entry point's name may be: anything but =, no space at either end, no leading [
    if text != text.strip() or "=" in text or text.startswith("["):
        raise Invalid(_PLUGIN_EXPECTED,
                      "write the name left of = in the plugin's [project.entry-points.tactful]")
    return text


PLUGINS = Section(
    PluginsConfig,
    (Field("disabled", TextList(Text(expected=_PLUGIN_EXPECTED, check=_plugin_name))),),
)
CONFIG_SCHEMA: Section[Config] = Section(
    Config,
    (
        Field("persona", PERSONA),
        Field("memory", MEMORY),
        Field("platforms", PLATFORMS_SCHEMA),
        Field("responders", MapOf({}, other=RESPONDER, other_name=NAME)),
        Field("routines", MapOf({}, other=ROUTINE, other_name=NAME)),
        Field("engagement", ENGAGEMENT),
        Field("companion", COMPANION),
        Field("plugins", PLUGINS),
    ),
)


def read_config(tree: Located, folder: Path) -> Config:
    """Check a parsed document against the schema; raises Problem at the first thing wrong."""
    from dataclasses import replace

    ctx = Context(folder, CONFIG_SCHEMA)
    config = CONFIG_SCHEMA.read(tree, "", ctx)
    return replace(config, lines=ctx.lines)

