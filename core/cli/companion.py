"""`tactful companion stats`: what the operator may see of the companion — counts, health and
the memory pass's neutral summaries, never a chat (SPEC §15)."""

from __future__ import annotations

import argparse

from tactful.core.cli.context import Context


def stats(context: Context, args: argparse.Namespace) -> int:
    from tactful.core.companion.store import CompanionStore

    context.home.require_readable()
    root = context.home.root / "companion"
    # Only folders that hold a companion database: a stray folder is not a bot.
    bots = sorted(p.name for p in root.iterdir()
                  if (p / "companion.sqlite").is_file()) if root.is_dir() else []
    if not bots:
        print("companion: no bot has run in this home yet")
        return 0
    for bot in bots:
        store = CompanionStore(context.home.root, bot)
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
