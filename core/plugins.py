"""The plugin host: one plugin manager, entry points loaded lazily and once (SPEC §14).

A plugin that fails to load is named and skipped; the others still load. What plugins register
is collected per hook through a `register` function that refuses a second registration of the
same name and says which two plugins collided.
"""

from __future__ import annotations

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
    load_errors: list[str] = field(default_factory=list)
    loaded: bool = False

    def load(self) -> None:
        """Load every entry point of the group once. Never raises for a broken plugin."""
        if self.loaded:
            return
        self.loaded = True
        for point in sorted(entry_points(group=GROUP), key=lambda p: p.name):
            if self.manager.has_plugin(point.name):
                continue
            try:
                self.manager.register(point.load(), name=point.name)
            except Exception as exc:  # noqa: BLE001 — any failure of a plugin is its own
                self.load_errors.append(
                    f"plugin {point.name!r} ({point.value}) failed to load: "
                    f"{type(exc).__name__}: {exc}; fix or uninstall it")

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
                                      "uninstall or disable one of them")
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

