"""The plugin host: one plugin manager, entry points loaded lazily and once (docs/hooks.md).

A plugin that fails to load is named and skipped; the others still load. What plugins register
is collected per hook through a `register` function that refuses a second registration of the
same name and says which two plugins collided.

Plugins named in the config's `plugins.disabled` are handed to the host before it loads
(`Host.disable(names)` or `Host.load(disabled=names)`) and their entry points are never loaded,
so their modules are never imported. A disabled name that no installed entry point has is a
warning (`Host.load_warnings`), not an error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

import pluggy

from tactful.core import hookspecs
from tactful.core.errors import ConfigError
from tactful.core.memory import platforms as memory_platforms
from tactful.core.memory.platforms import PLATFORM_NAME, Platform

GROUP = "tactful"


@dataclass
class Host:
    manager: pluggy.PluginManager = field(default_factory=lambda: _new_manager())
    # One line per plugin that failed to load, each ending with how to fix or disable it.
    load_errors: list[str] = field(default_factory=list)
    # One line per disabled name that matches no installed entry point, or came too late.
    load_warnings: list[str] = field(default_factory=list)
    loaded: bool = False
    disabled: frozenset[str] = frozenset()  # entry-point names never loaded
    # entry-point name -> value, of every entry point of the group seen by load()
    installed: dict[str, str] = field(default_factory=dict)

    def disable(self, names: Iterable[str]) -> None:
        """Never load the entry points with these names (`plugins.disabled` in the config).

        Call it before `load` or `collect`: then a disabled plugin is never imported. Called
        after loading, a plugin already loaded is unregistered and its load error dropped, so it
        registers nothing from then on, but its module was imported: `load_warnings` says so.
        """
        new = frozenset(names) - self.disabled
        if not new:
            return
        self.disabled |= new
        for name in sorted(new):
            self.manager.set_blocked(name)  # unregisters it, and nothing may register this name
            if self.loaded and name in self.installed:
                self.load_errors[:] = [e for e in self.load_errors
                                       if not e.startswith(f"plugin {name!r} (")]
                self.load_warnings.append(
                    f"plugin {name!r} was loaded before plugins.disabled named it: it registers "
                    "nothing now, but its module had been imported")
        if self.loaded:
            self._warn_unknown(new)

    def load(self, disabled: Iterable[str] = ()) -> None:
        """Load every entry point of the group once, except the disabled ones, which are never
        imported. Never raises for a broken plugin: it goes to `load_errors`."""
        self.disable(disabled)
        if self.loaded:
            return
        self.loaded = True
        for point in sorted(entry_points(group=GROUP), key=lambda p: p.name):
            self.installed.setdefault(point.name, point.value)
            if point.name in self.disabled or self.manager.has_plugin(point.name):
                continue
            try:
                self.manager.register(point.load(), name=point.name)
            except Exception as exc:  # noqa: BLE001 — any failure of a plugin is its own
                self.load_errors.append(
                    f"plugin {point.name!r} ({point.value}) failed to load: "
                    f"{type(exc).__name__}: {_one_line(str(exc))}; "
                    f"fix or uninstall it, or disable it with {disable_hint(point.name)} "
                    "in the config")
        self._warn_unknown(self.disabled)

    def _warn_unknown(self, names: Iterable[str]) -> None:
        import difflib

        for name in sorted(set(names) - set(self.installed)):
            close = difflib.get_close_matches(name, list(self.installed), n=1, cutoff=0.6)
            maybe = f"did you mean {close[0]!r}? " if close else ""
            known = ", ".join(sorted(self.installed)) or "none"
            self.load_warnings.append(
                f"plugins.disabled names {name!r}, but no installed plugin has that name; "
                f"{maybe}installed: {known}")

    def collect(self, hook: str) -> dict[str, tuple[str, Any]]:
        """Call one `register_*` hook of every plugin: {name: (plugin, value)}."""
        self.load()
        found: dict[str, tuple[str, Any]] = {}
        caller = getattr(self.manager.hook, hook)
        plugins = [impl.plugin for impl in caller.get_hookimpls()]
        for plugin_object in plugins:
            plugin = self.manager.get_name(plugin_object) or repr(plugin_object)

            def register(name: str, *value: Any, plugin: str = plugin) -> None:
                if name in found:
                    raise ConfigError(f"{hook}: {name!r} is registered by both plugin "
                                      f"{found[name][0]!r} and plugin {plugin!r}; "
                                      "uninstall one of them, or disable it in the config, "
                                      f"e.g. {disable_hint(plugin)}")
                found[name] = (plugin, value[0] if len(value) == 1 else value)

            # Through pluggy's hook caller, one plugin at a time (so a collision names both):
            # hook wrappers and tracing (`manager.trace`) see every call.
            others = [p for p in plugins if p is not plugin_object]
            self.manager.subset_hook_caller(hook, remove_plugins=others)(register=register)
        return found

    def platforms(self) -> list[tuple[Platform, str]]:
        """Every platform the plugins declare, with the plugin that declares it: the facts
        they register (`register_platforms`), and plain facts for an adapter's platform they
        do not describe (valid names only). A collision is reported where it is used."""
        found: dict[str, tuple[Platform, str]] = {}
        try:
            declared = self.collect("register_platforms")
        except ConfigError:
            declared = {}
        for name, (plugin, facts) in declared.items():
            if isinstance(facts, Platform) and facts.name == name:
                found[name] = (facts, f"plugin {plugin!r}")
        try:
            adapters = self.collect("register_adapters")
        except ConfigError:
            adapters = {}
        for name, (plugin, _) in adapters.items():
            if name not in found and PLATFORM_NAME.fullmatch(name):
                # an adapter whose plugin declares nothing: the static table's facts, if it
                # has an entry (never plain facts that would contradict it), else plain ones
                facts = memory_platforms.get(name) or Platform(name)
                found[name] = (facts, f"plugin {plugin!r}")
        return [found[name] for name in sorted(found)]


# words YAML reads as something other than text when written bare (`[off]` is [false])
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})


def disable_hint(name: str) -> str:
    """The config line that disables one plugin, as written in the YAML's flow style."""
    plain = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", name) and name.lower() not in _YAML_WORDS
    shown = name if plain else _quoted(name)
    return f"`plugins: {{disabled: [{shown}]}}`"


def _quoted(text: str) -> str:
    import json

    return json.dumps(text)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _new_manager() -> pluggy.PluginManager:
    manager = pluggy.PluginManager(GROUP)
    manager.add_hookspecs(hookspecs)
    return manager


_host: Host | None = None


def host() -> Host:
    """The one host of this process, made on first use: `check` and `card` never make it."""
    global _host
    if _host is None:
        _host = Host()
    return _host


@contextmanager
def using(new: Host | None = None) -> Iterator[Host]:
    """Make `new` (a fresh, unloaded `Host` when not given) the one host of this process for the
    length of the block, and put the one before back afterwards.

    This is the supported way for test suites to isolate plugins: give each test its own host
    (``with plugins.using() as host: ...``, e.g. in an autouse fixture), register a test plugin
    with ``host.manager.register(plugin, name=...)`` and unregister it by name; never reset the
    module's private state. The entry points are loaded lazily, when the block first needs them.
    """
    global _host
    previous, _host = _host, new if new is not None else Host()
    try:
        yield _host
    finally:
        _host = previous


def found_platforms() -> list[Platform]:
    """What memory asks about a platform name it does not know (its finder): the platforms of
    this process's host, which is loaded for it."""
    return [facts for facts, _ in host().platforms()]


memory_platforms.use_finder(found_platforms)


def hook_names() -> list[str]:
    return [hook.__name__ for hook in hookspecs.HOOKS]

