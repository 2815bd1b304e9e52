"""`tactful config check`: load the configuration and say which file it came from, or why not."""

from __future__ import annotations

import argparse

from tactful.core.cli.context import Context


def check(context: Context, args: argparse.Namespace) -> int:
    config = context.config
    source = config.source or "built-in defaults (no config file found)"
    platforms = ", ".join(sorted(config.platforms)) or "none configured"
    print(f"config ok: {source} — persona {config.persona.name!r}, "
          f"time zone {config.persona.timezone}, platforms: {platforms}")
    return 0
