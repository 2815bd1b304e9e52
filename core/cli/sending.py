"""`tactful send`: one post through the guarded pipeline (SPEC §10, §12).

The pipeline's modules are imported inside the command; if memory cannot even be imported, the
send refuses with exit 4 (fail closed) instead of failing as a bug.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from tactful.core.cli.context import Context
from tactful.core.errors import MemoryUnavailable

if TYPE_CHECKING:
    from tactful.core.app import App
    from tactful.core.send.gate import Gate


def warn_plugins(host: object) -> None:
    for problem in [*getattr(host, "load_errors", []), *getattr(host, "load_warnings", [])]:
        print(f"tactful: warning: {problem}", file=sys.stderr)


def defaults_notice(context: App) -> None:
    """Sending, previewing or running routines on built-in defaults is said out loud: nobody
    should act on an empty memory by mistake."""
    from tactful.core.send.gate import defaults_notice as notice

    line = notice(context.config)
    if line:
        print(line, file=sys.stderr)


def repaired(gate: Gate) -> None:
    for line in gate.repair():
        print(f"tactful: {line}", file=sys.stderr)


def send(context: Context, args: argparse.Namespace) -> int:
    try:
        from tactful.core.send.pipeline import Pipeline, SendRequest
    except ImportError as exc:
        raise MemoryUnavailable(f"refused: the memory module cannot be loaded ({exc}); "
                                "nothing was sent — reinstall tactful") from exc
    defaults_notice(context)
    gate = context.make_gate()
    warn_plugins(gate.host)
    request = SendRequest(platform=args.platform, text=args.text, to=args.to,
                          reply_to=args.reply_to, dry_run=args.dry_run, again=args.again,
                          preview=getattr(args, "preview", False),
                          image=getattr(args, "image", None))
    try:
        if not request.dry_run:
            repaired(gate)
        outcome = Pipeline(gate).send(request)
    finally:
        gate.close()
    print(outcome.summary())
    for warning in outcome.aftermath.warnings:
        print(f"tactful: warning: {warning}", file=sys.stderr)
    return 0
