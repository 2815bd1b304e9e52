"""`tactful config check`: load the configuration, check what it names is installed and there,
and say which file it came from, or why not.

Loading alone checks the file (keys, types, values). This also checks what needs the plugins,
which plain loading never touches (so `tactful check` stays fast): every configured platform has
an adapter, every routine's kind and responder exist, every responder's kind is installed, and
the companion's prompt file can be read.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tactful.core.cli.context import Context
from tactful.core.cli.output import emit
from tactful.core.config.values import Config
from tactful.core.errors import ConfigError

if TYPE_CHECKING:
    from tactful.core.plugins import Host


def check(context: Context, args: argparse.Namespace) -> int:
    config = context.config
    references(config, context.plugins)
    if any(settings.mode == "companion" for settings in config.platforms.values()):
        # The timers' production minimums, as `tactful run` will judge them (docs/companion.md).
        from tactful.core.companion.timers import check as check_timers

        check_timers(config.companion)
    if args.json:
        emit({"ok": True, "source": str(config.source) if config.source else None,
              "persona": config.persona.name, "timezone": config.persona.timezone,
              "platforms": sorted(config.platforms), "responders": sorted(config.responders),
              "routines": sorted(config.routines)})
        return 0
    source = config.source or "built-in defaults (no config file found)"
    platforms = ", ".join(sorted(config.platforms)) or "none configured"
    print(f"config ok: {source} — persona {config.persona.name!r}, "
          f"time zone {config.persona.timezone}{_zone_note(config)}, platforms: {platforms}")
    return 0


def _zone_note(config: Config) -> str:
    """An omitted zone is the documented default: said, so the operator sees and can choose."""
    if "persona.timezone" in config.lines:
        return ""
    return (" (persona.timezone not set: the default America/New_York; set it to the persona's "
            "zone, e.g. Europe/Amsterdam)")


def references(config: Config, plugins: Host, *, warn: bool = True) -> None:
    """What the config names that no loaded plugin provides (plugins.disabled applied)."""
    from tactful.core.cli.sending import warn_plugins
    from tactful.core.memory import platforms

    adapters = set(plugins.collect("register_adapters"))
    routine_kinds = set(plugins.collect("register_routines"))
    responder_kinds = set(plugins.collect("register_responders"))
    if warn:
        warn_plugins(plugins)

    def problem(key: str, what: str) -> ConfigError:
        return ConfigError(f"{config.where(key)}: {what}")  # file:line: key: what

    for platform in sorted(config.platforms):
        if platform not in adapters:
            # A platform the static table declares came with an installed distribution, which
            # lost its adapter plugin (or had it disabled).
            declared = platforms.source(platform) or ""
            fix = (f"reinstall {declared.removeprefix('distribution ')}"
                   if declared.startswith("distribution ")
                   else "install the plugin that provides it, or remove the section")
            raise problem(f"platforms.{platform}", f"no adapter is installed for {platform!r} "
                          f"(installed: {', '.join(sorted(adapters))}); {fix}")
    for name, responder in sorted(config.responders.items()):
        if responder.kind not in responder_kinds:
            raise problem(f"responders.{name}.kind", f"no responder kind {responder.kind!r} "
                          f"is installed (installed: {', '.join(sorted(responder_kinds))})")
    named = {"template", *config.responders}
    for name, routine in sorted(config.routines.items()):
        if routine.kind not in routine_kinds:
            raise problem(f"routines.{name}.kind", f"no routine kind {routine.kind!r} is "
                          f"installed (installed: {', '.join(sorted(routine_kinds))})")
        if routine.responder is not None and routine.responder not in named:
            raise problem(f"routines.{name}.responder", f"no responder {routine.responder!r} "
                          "under responders")
        if routine.platform is not None and \
                routine.platform.strip().lower() not in adapters:  # read as the run reads it
            raise problem(f"routines.{name}.platform", f"no adapter is installed for "
                          f"{routine.platform!r}")
    companion = config.companion
    if companion.responder is not None and companion.responder not in named:
        raise problem("companion.responder", f"no responder {companion.responder!r} under "
                      "responders")
    if any(p.mode == "companion" for p in config.platforms.values()) and \
            companion.prompt is not None:
        from tactful.core.memory.atomic import NotRegularFile, read_regular

        try:
            read_regular(companion.prompt).decode("utf-8")  # a FIFO there: refused, not a hang
        except (OSError, UnicodeDecodeError, NotRegularFile) as exc:
            raise problem("companion.prompt", f"cannot read {companion.prompt} "
                          f"({type(exc).__name__}); fix the path or remove the key") from None
