"""`tactful forget PLATFORM HANDLE [--keep-dne]`: erase a person and keep them forgotten."""

from __future__ import annotations

import argparse

from tactful.core.cli.context import Context
from tactful.core.memory import forgetting
from tactful.core.memory.handles import normalize_handle, normalize_platform


def forget(context: Context, args: argparse.Namespace) -> int:
    platform = normalize_platform(args.platform)
    handle = normalize_handle(args.handle, platform)
    done = forgetting.forget(context.home, context.settings, platform, handle,
                             keep_dne=args.keep_dne, now=context.now())
    kept = "; kept a do-not-engage stub" if args.keep_dne else ""
    print(f"forgot {platform}/@{handle}: file {'removed' if done.file else 'absent'}, "
          f"{done.log_events} log events, {done.outbox_lines} outbox lines, "
          f"{done.ledger_rows} ledger rows and {done.inbox_items} inbox items blanked, "
          f"{done.archive_lines} desk-archive lines, {len(done.links)} links from other "
          f"accounts; tombstone written{kept}")
    return 0
