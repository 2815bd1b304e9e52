"""`tactful forget PLATFORM HANDLE [--keep-dne]`: erase a person and keep them forgotten."""

from __future__ import annotations

import argparse
import sys

from tactful.core.cli.context import Context
from tactful.core.cli.output import plural
from tactful.core.memory import forgetting
from tactful.core.memory.handles import normalize_handle, normalize_platform


def forget(context: Context, args: argparse.Namespace) -> int:
    platform = normalize_platform(args.platform)
    handle = normalize_handle(args.handle, platform)
    # The ledger, the inbox and each companion's store register with memory's forget now.
    for warning in context.register_stores():
        print(f"tactful: warning: {warning}", file=sys.stderr)
    done = forgetting.forget(context.home, context.settings, platform, handle,
                             keep_dne=args.keep_dne, now=context.now())
    kept = "; kept a do-not-engage stub" if args.keep_dne else ""
    stores = "".join(f"{count} {what}, " for what, count in done.stores.items())
    print(f"forgot {platform}/@{handle}: file {'removed' if done.file else 'absent'}, "
          f"{plural(done.log_events, 'log event')}, {plural(done.outbox_lines, 'outbox line')}, "
          f"{stores}{plural(done.archive_lines, 'desk-archive line')}, "
          f"{plural(len(done.links), 'link')} from other accounts; tombstone written{kept}")
    return 0
