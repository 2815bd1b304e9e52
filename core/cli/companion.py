"""`tactful companion stats`: what the operator may see of the companion — counts, health and
the memory pass's neutral summaries, never a chat (docs/companion.md). `tactful companion pass`:
run the memory pass now, for every bot in the home (or one), without waiting for its timer.
`tactful companion poll` and `tactful companion worker`: the companion on many workers that share
PostgreSQL (docs/companion.md, "Running on many workers"); the platform's plugin does the work."""

from __future__ import annotations

import argparse
import signal
import threading
from typing import TYPE_CHECKING

from tactful.core.cli.context import Context

if TYPE_CHECKING:
    from tactful.core.companion.store import CompanionStore


def _bots(context: Context) -> list[str]:
    if context.config.companion.database:
        # Many workers: the bots are the schemas of the shared database (docs/companion.md).
        from tactful.core.companion.postgres import bots
        from tactful.core.memory.postgres import check_dsn

        return bots(check_dsn(context.config.companion.database))
    root = context.home.root / "companion"
    # Only folders that hold a companion database: a stray folder is not a bot.
    return sorted(p.name for p in root.iterdir()
                  if (p / "companion.sqlite").is_file()) if root.is_dir() else []


def _store(context: Context, bot: str) -> CompanionStore:
    """The bot's store: the shared PostgreSQL one when `companion.database` is set."""
    from tactful.core.companion.store import CompanionStore

    dsn = context.config.companion.database
    if dsn:
        from tactful.core.companion.postgres import PostgresStore

        return PostgresStore(context.home.root, bot, dsn, check=False)
    return CompanionStore(context.home.root, bot)


def stats(context: Context, args: argparse.Namespace) -> int:

    context.home.require_readable()
    bots = _bots(context)
    if not bots:
        print("companion: no bot has run in this home yet")
        return 0
    for bot in bots:
        store = _store(context, bot)
        try:
            counts = store.stats(context.now())
            summaries = store.summaries(args.summaries)
        finally:
            store.close()
        print(f"{bot}: " + ", ".join(f"{key.replace('_', ' ')} {value}"
                                     for key, value in counts.items()))
        for summary in summaries:
            print(f"  {summary.at:%Y-%m-%d %H:%M} {summary.text}")
    return 0


def memory_pass(context: Context, args: argparse.Namespace) -> int:
    """Rewrite the notes of every quiet chat now, as the timer would; prints counts only. The
    schedule of the timed pass is left as it is."""
    from tactful.core.companion.notes import run_pass
    from tactful.core.errors import BadInput
    from tactful.core.responders.choose import responder_for

    context.home.require_readable()
    bots = _bots(context)
    if args.bot is not None:
        if args.bot not in bots:
            raise BadInput(f"companion pass: no bot {args.bot!r} has run in this home "
                           f"(bots: {', '.join(bots) or 'none'}); check --bot")
        bots = [args.bot]
    if not bots:
        print("companion: no bot has run in this home yet")
        return 0
    companion = context.config.companion
    responder = responder_for(companion.responder, context.config, context.plugins,
                              where="companion.responder")
    for bot in bots:
        store = _store(context, bot)
        try:
            report = run_pass(store, context.home.root, bot, responder, context.now(),
                              quiet_minutes=companion.quiet_minutes,
                              pass_messages=companion.pass_messages)
        finally:
            store.close()
        print(f"{bot}: " + ", ".join(f"{key.replace('_', ' ')} {value}"
                                     for key, value in vars(report).items()))
    return 0


def poll(context: Context, args: argparse.Namespace) -> int:
    """The one poller: the chat platform's updates into the shared queue, until SIGTERM."""
    return _serve(context, "poll")


def worker(context: Context, args: argparse.Namespace) -> int:
    """One of the workers that answer from the shared queue, until SIGTERM."""
    return _serve(context, "work")


def _serve(context: Context, role: str) -> int:
    from tactful.core.cli.sending import warn_plugins
    from tactful.core.errors import BadInput
    from tactful.core.schedule.events import EventLog

    warn_plugins(context.plugins)
    offered = context.plugins.collect("register_services")
    services = [service for _, (_, service) in sorted(offered.items())
                if callable(getattr(service, role, None))]
    if not services:
        raise BadInput("companion: no installed chat platform runs its companion on many "
                       "workers (docs/companion.md, \"Running on many workers\")")
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set())
                for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        getattr(services[0], role)(context, EventLog(clock=context.now), stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
