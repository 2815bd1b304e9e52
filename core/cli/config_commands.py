"""`tactful config check`: load the configuration and say which file it came from, or why not."""

from __future__ import annotations

import argparse

from tactful.core.cli.context import Context
from tactful.core.config.values import Config
from tactful.core.errors import ConfigError


def check(context: Context, args: argparse.Namespace) -> int:
    config = context.config
    if config.platforms:
        _adapters_installed(config)
    source = config.source or "built-in defaults (no config file found)"
    platforms = ", ".join(sorted(config.platforms)) or "none configured"
    print(f"config ok: {source} — persona {config.persona.name!r}, "
          f"time zone {config.persona.timezone}, platforms: {platforms}")
    return 0


def _adapters_installed(config: Config) -> None:
    """Every platform the file configures has an adapter (a plugin may have gone missing)."""
    from tactful.core.cli.sending import warn_plugins
    from tactful.core.memory.handles import BUILTIN_PLATFORMS
    from tactful.core.plugins import host

    plugins = host()
    installed = set(plugins.collect("register_adapters"))
    warn_plugins(plugins)
    for platform in sorted(config.platforms):
        if platform not in installed:
            where = f"{config.source}: " if config.source else ""
            fix = ("reinstall tactful" if platform in BUILTIN_PLATFORMS
                   else "install the plugin that provides it, or remove the section")
            raise ConfigError(f"{where}platforms.{platform}: no adapter is installed for "
                              f"{platform!r} (installed: {', '.join(sorted(installed))}); {fix}")
