"""The plugin host: one plugin manager, entry points loaded lazily and once (SPEC §14).

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
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

import pluggy

from tactful.core import hookspecs
from tactful.core.errors import ConfigError
from tactful.core.memory.handles import PLATFORM_NAME

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
        for impl in getattr(self.manager.hook, hook).get_hookimpls():
            plugin = impl.plugin_name

            def register(name: str, *value: Any, plugin: str = plugin) -> None:
                if name in found:
                    raise ConfigError(f"{hook}: {name!r} is registered by both plugin "
                                      f"{found[name][0]!r} and plugin {plugin!r}; "
                                      "uninstall one of them, or disable it in the config, "
                                      f"e.g. {disable_hint(plugin)}")
                found[name] = (plugin, value[0] if len(value) == 1 else value)

            impl.function(register=register)
        return found

    def adapter_platforms(self) -> list[str]:
        """Platforms that installed plugins add beyond the built-in ones (valid names only)."""
        from tactful.core.memory.handles import BUILTIN_PLATFORMS

        try:
            names = self.collect("register_adapters")
        except ConfigError:
            return []  # a collision is reported where an adapter is asked for
        return sorted(n for n in names if PLATFORM_NAME.fullmatch(n) and
                      n not in BUILTIN_PLATFORMS)


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


def hook_names() -> list[str]:
    return [hook.__name__ for hook in hookspecs.HOOKS]

