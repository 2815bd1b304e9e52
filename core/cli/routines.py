"""`tactful routine list` and `tactful routine run NAME [--dry-run]`."""

from __future__ import annotations

import argparse
from typing import Any

from tactful.core.cli.context import Context
from tactful.core.cli.output import emit, iso
from tactful.core.cli.sending import defaults_notice, warn_plugins
from tactful.core.schedule import routine as routines
from tactful.core.schedule.cron import next_fire
from tactful.core.schedule.events import EventLog


def list_(context: Context, args: argparse.Namespace) -> int:
    plugins = context.plugins
    installed = routines.kinds(plugins)
    warn_plugins(plugins)
    now = context.now()
    tz = context.settings.tz
    found: list[dict[str, Any]] = []
    for name, settings in routines.configured(context.config).items():
        zone = settings.timezone or context.config.persona.timezone
        fire = (next_fire(settings.schedule, zone, now)
                if settings.enabled and settings.schedule is not None else None)
        found.append({"name": name, "kind": settings.kind, "enabled": settings.enabled,
                      "schedule": settings.schedule, "timezone": zone,
                      "next_run": iso(fire, tz), "platform": settings.platform,
                      "dry_run": settings.dry_run, "installed": settings.kind in installed})
        if args.json:
            continue
        if not settings.enabled:
            when = "disabled"
        elif settings.schedule is None:
            when = "by hand only"
        else:
            following = f"next {fire:%Y-%m-%d %H:%M %Z}" if fire else "never again"
            when = f"{settings.schedule} ({zone}), {following}"
        extra = [f"platform {settings.platform}"] if settings.platform else []
        if settings.kind not in installed:
            extra.append("KIND NOT INSTALLED")
        if settings.dry_run:
            extra.append("dry run")
        tail = f" — {', '.join(extra)}" if extra else ""
        print(f"{name}: {settings.kind}, {when}{tail}")
    if args.json:
        emit({"routines": found})
    return 0


def run_now(context: Context, args: argparse.Namespace) -> int:
    plugins = context.plugins
    warn_plugins(plugins)
    defaults_notice(context)
    started = context.now()
    result = routines.run_one(args.name, context, plugins, dry_run=args.dry_run,
                              log=EventLog(clock=context.now), preview=args.preview,
                              only=tuple(args.only or ()))
    if args.json:
        tz = context.settings.tz
        emit({"routine": args.name, "summary": result.summary, "exit_code": result.exit_code,
              "counts": dict(result.counts), "dry_run": args.dry_run, "preview": args.preview,
              "started_at": iso(started, tz), "finished_at": iso(context.now(), tz)})
    else:
        print(f"{args.name}: {result.summary}")
    return result.exit_code
