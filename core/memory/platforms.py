"""Which platforms memory knows, and the few facts of each it needs: a registry memory owns.

Memory names no platform. Each adapter plugin declares its platform's facts as a `Platform`,
and they reach this registry three ways, cheapest first:

1. The static table: the entry-point group `tactful.platforms`, one `Platform` object per name,
   in a tiny module of the adapter's package that imports nothing but this one. It is read the
   first time memory needs to know a platform, straight from the installed distributions'
   metadata folders (`entry_points.txt`), and only the entry of the platform asked about is
   imported (about 1.5 ms in all). No plugin is loaded and no SDK imported, so `check` and
   `card` stay as fast as when memory listed the four built-in names itself (importing
   importlib.metadata alone would cost about a bare interpreter start: see `_entry_points`).
2. Registration: when the plugins load, the application registers what each declares through
   the hook `register_platforms` (`register`). Facts that differ from the static table's are
   refused, naming both sources.
3. A finder, installed by the application and the plugin host (`use_finder`): asked only about a
   name found neither way (a third-party platform without the static entry), it loads the
   plugin host, as `check` always did for such a name.

Facts that change how a handle is written (`numeric_ids`) must be in the static table: `check`
loads no plugin, and must write a handle exactly as `send` does.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import import_module

from tactful.core.errors import ConfigError

# What a plugin may name a platform: the name becomes a folder under people/.
PLATFORM_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")
GROUP = "tactful.platforms"


# Keys every platform section of the config has: no option may take one of these names.
SECTION_KEYS = frozenset({"account", "dry_run", "base_url", "limits", "mode"})

OptionValue = bool | int | float | str


@dataclass(frozen=True)
class Option:
    """A key of `platforms.<name>` in the config that the platform's adapter reads (through
    `AdapterSettings.number` / `.option`), checked by the config loader with file:line.

    The kind of value is the default's: a float takes any number (an integer too), an int an
    integer, a bool true or false, a str text. Numbers may be bounded: more than `above`, at
    most `at_most`."""

    name: str
    default: OptionValue
    above: float | None = None
    at_most: float | None = None
    help: str = ""  # what it means, said in the message when a value is wrong

    def __post_init__(self) -> None:
        if not PLATFORM_NAME.fullmatch(self.name) or self.name in SECTION_KEYS:
            raise ConfigError(f"platform option {self.name[:40]!r}: expected a plain lower-case "
                              f"word other than {', '.join(sorted(SECTION_KEYS))}")


@dataclass(frozen=True)
class Platform:
    """What tactful's core must know of a platform without loading its plugin."""

    name: str
    # A handle of digits is the account's stable id (a user without a username is named by
    # their id): "0700" and "700" are one account, and the file named by the id is the
    # person's too.
    numeric_ids: bool = False
    # Only ids are handles: the platform names people by no username at all (Facebook gives a
    # commenter's id and a display name), so a handle that is not digits names nobody.
    handles_are_ids: bool = False
    # The platform's own domain in handles: "ada.bsky.social" is "ada" when automatic links
    # compare handles across platforms.
    short_handle_suffix: str = ""
    # The values `platforms.<name>.mode` may take in the config, the first the default; empty:
    # the platform has no mode key.
    modes: tuple[str, ...] = ()
    # Keys of `platforms.<name>` beyond the common ones (timeouts and the like), by name.
    options: tuple[Option, ...] = ()
    # What `platforms.<name>.account` must look like (a regular expression matched in full)
    # and how to fix one that does not (e.g. Bluesky logs in with a full handle); empty: any
    # account name.
    account_pattern: str = ""
    account_hint: str = ""
    # Memory only: people are remembered, checked and flagged on it, but tactful never sends
    # there and no adapter exists (e-mail contacts); `tactful send` refuses it.
    memory_only: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not PLATFORM_NAME.fullmatch(self.name):
            raise ConfigError(f"platform name {str(self.name)[:40]!r} is not a plain lower-case "
                              "word ([a-z][a-z0-9_-]*, at most 32 characters)")
        names = [o.name for o in self.options]
        if len(set(names)) != len(names):
            raise ConfigError(f"platform {self.name!r} declares an option twice: "
                              f"{', '.join(sorted(names))}")

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)


Finder = Callable[[], Iterable[Platform]]

_registered: dict[str, tuple[Platform, str]] = {}  # name -> (facts, who declared them)
_static: dict[str, tuple[str, str]] | None = None  # name -> (object reference, distribution)
_problems: list[str] = []  # static entries that could not be loaded, one line each
_finder: Finder | None = None


def get(name: str, *, ask_plugins: bool = False) -> Platform | None:
    """The facts of a platform, or None when no installed plugin declares it. The static table
    and registrations only, unless `ask_plugins` (which may load the plugin host)."""
    found = _registered.get(name)
    if found is not None:
        return found[0]
    declared = _load_static(name)
    if declared is not None:
        return declared
    if ask_plugins and _finder is not None:
        return next((p for p in _finder() if p.name == name), None)
    return None


def facts(name: str) -> Platform:
    """The facts memory writes handles by (static table and registrations: never a plugin
    loaded); a platform nothing declares has plain handles."""
    return get(name) or _PLAIN


def names(*, ask_plugins: bool = False) -> tuple[str, ...]:
    """Every platform declared (sorted); with `ask_plugins` those only the plugins know too."""
    found = set(_registered) | set(_static_entries())
    if ask_plugins and _finder is not None:
        found |= {p.name for p in _finder()}
    return tuple(sorted(found))


def register(platform: Platform, source: str) -> None:
    """A platform's facts, declared by `source` (a plugin). The same facts again are welcome;
    different ones for a declared name are refused, naming both."""
    known = _registered.get(platform.name)
    if known is None:
        declared = _load_static(platform.name)
        if declared is not None:
            known = _registered[platform.name]
    if known is not None and known[0] != platform:
        raise ConfigError(f"platform {platform.name!r} is declared by {known[1]} and, "
                          f"differently, by {source}; uninstall one of them, or disable it "
                          "in the config")
    if known is None:
        _registered[platform.name] = (platform, source)


def use_finder(finder: Finder | None) -> None:
    """What to ask about a name neither the static table nor a registration declares (the app
    installs one that loads the plugin host); None: nothing."""
    global _finder
    _finder = finder


def source(name: str) -> str | None:
    """Who declared a platform: "distribution <name>" for the static table, else the plugin."""
    if get(name) is None:
        return None
    return _registered[name][1]


def problems() -> list[str]:
    """Static entries that could not be loaded (a broken plugin), one line each."""
    return list(_problems)


# ---- the static table ---------------------------------------------------------------------

_PLAIN = Platform("plain")


def _load_static(name: str) -> Platform | None:
    entry = _static_entries().get(name)
    if entry is None:
        return None
    reference, distribution = entry
    module, _, attribute = reference.partition(":")
    try:
        value: object = import_module(module.strip())
        for part in attribute.split("[", 1)[0].strip().split("."):
            value = getattr(value, part) if part else value
    except Exception as exc:  # noqa: BLE001 — a broken plugin is named, never a crash
        _problems.append(f"{GROUP} entry {name!r} ({reference}) of {distribution} failed to "
                         f"load: {type(exc).__name__}: {exc}")
        _static_entries().pop(name)
        return None
    if not isinstance(value, Platform) or value.name != name:
        _problems.append(f"{GROUP} entry {name!r} ({reference}) of {distribution} is not the "
                         f"Platform named {name!r}")
        _static_entries().pop(name)
        return None
    _registered[name] = (value, f"distribution {distribution}")
    return value


def _static_entries() -> dict[str, tuple[str, str]]:
    global _static
    if _static is None:
        _static = dict(_entry_points(GROUP))
    return _static


_DIST_NAME = re.compile(r"[-_.]+")


def _entry_points(group: str) -> Iterable[tuple[str, tuple[str, str]]]:
    """(name, (object reference, distribution)) of every entry point of `group`, found as
    importlib.metadata finds them: the `*.dist-info` and `*.egg-info` folders on sys.path, the
    first distribution of a name winning. Read here with os and str only, because importing
    importlib.metadata (email, zipfile, csv ...) costs about as much as a bare interpreter start
    (measured: +59 ms against 46 ms), which alone would take `check` past its goal of 5x a bare
    start. Zipped distributions are not looked into: a platform in one is found through its
    plugin instead."""
    seen: set[str] = set()
    found: dict[str, tuple[str, str]] = {}
    for folder in sys.path:
        try:
            entries = sorted(os.listdir(folder or "."))
        except OSError:  # a zip file, a path hook, a folder that is gone
            continue
        for entry in entries:
            if not entry.endswith((".dist-info", ".egg-info")):
                continue
            distribution = entry.rsplit(".", 1)[0].split("-", 1)[0]
            key = _DIST_NAME.sub("_", distribution).lower()
            if key in seen:
                continue
            seen.add(key)
            try:
                with open(os.path.join(folder or ".", entry, "entry_points.txt"),  # noqa: PTH118
                          encoding="utf-8") as file:
                    text = file.read()
            except (OSError, UnicodeDecodeError):
                continue
            for name, reference in _section(text, group):
                found.setdefault(name, (reference, distribution))
    return found.items()


def _section(text: str, group: str) -> Iterable[tuple[str, str]]:
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
        elif current == group and "=" in line:
            name, _, reference = line.partition("=")
            yield name.strip(), reference.strip()
