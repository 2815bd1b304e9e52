"""`tactful routine list` and `tactful routine run NAME [--dry-run]`."""

from __future__ import annotations

import argparse

from tactful.core.cli.context import Context
from tactful.core.cli.sending import defaults_notice, warn_plugins
from tactful.core.schedule import routine as routines
from tactful.core.schedule.cron import next_fire
from tactful.core.schedule.events import EventLog


def list_(context: Context, args: argparse.Namespace) -> int:
    plugins = context.plugins
    installed = routines.kinds(plugins)
    warn_plugins(plugins)
    now = context.now()
    for name, settings in routines.configured(context.config).items():
        zone = settings.timezone or context.config.persona.timezone
        if not settings.enabled:
            when = "disabled"
        elif settings.schedule is None:
            when = "by hand only"
        else:
            fire = next_fire(settings.schedule, zone, now)
            following = f"next {fire:%Y-%m-%d %H:%M %Z}" if fire else "never again"
            when = f"{settings.schedule} ({zone}), {following}"
        extra = [f"platform {settings.platform}"] if settings.platform else []
        if settings.kind not in installed:
            extra.append("KIND NOT INSTALLED")
        if settings.dry_run:
            extra.append("dry run")
        tail = f" — {', '.join(extra)}" if extra else ""
        print(f"{name}: {settings.kind}, {when}{tail}")
    return 0


def run_now(context: Context, args: argparse.Namespace) -> int:
    plugins = context.plugins
    warn_plugins(plugins)
    defaults_notice(context)
    result = routines.run_one(args.name, context, plugins, dry_run=args.dry_run,
                              log=EventLog(clock=context.now), preview=args.preview,
                              only=tuple(args.only or ()))
    print(f"{args.name}: {result.summary}")
    return result.exit_code
