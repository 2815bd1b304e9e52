"""Arguments several commands read the same way: the person named, and `--at`."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from tactful.core.errors import BadInput
from tactful.core.memory.clock import parse_timestamp
from tactful.core.memory.handles import normalize_handle, normalize_platform

if TYPE_CHECKING:
    import argparse

    from tactful.core.cli.context import Context


def target(args: argparse.Namespace) -> tuple[str, str]:
    platform = normalize_platform(args.platform)
    return platform, normalize_handle(args.handle, platform)


def when(context: Context, raw: str | None) -> datetime:
    """`--at`, or now. An empty value is an error, not "now"; a day ahead is the limit."""
    now = context.now()
    if raw is None:
        return now
    at = parse_timestamp(raw, context.settings.tz, what="--at")
    if at > now + timedelta(days=1):
        # A typo'd year would keep someone "active now" and "mid-conversation" for decades.
        raise BadInput(f"--at {raw!r} is more than a day in the future; check the date")
    return at
