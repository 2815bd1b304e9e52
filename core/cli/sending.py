"""`tactful send`: one post through the guarded pipeline (docs/sending.md, the README's commands).

The pipeline's modules are imported inside the command; if memory cannot even be imported, the
send refuses with exit 4 (fail closed) instead of failing as a bug.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from tactful.core.cli.context import Context
from tactful.core.cli.output import emit, iso
from tactful.core.errors import BadInput, MemoryUnavailable

if TYPE_CHECKING:
    from tactful.core.app import App
    from tactful.core.send.gate import Gate
    from tactful.core.send.pipeline import Outcome


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
    text = _text(args.text)
    defaults_notice(context)
    gate = context.make_gate()
    warn_plugins(gate.host)
    request = SendRequest(platform=args.platform, text=text, to=args.to,
                          reply_to=args.reply_to, dry_run=args.dry_run, again=args.again,
                          preview=getattr(args, "preview", False),
                          image=getattr(args, "image", None))
    try:
        if not request.dry_run:
            repaired(gate)
        outcome = Pipeline(gate).send(request)
    finally:
        gate.close()
    if args.json:
        emit(_document(outcome, context))
    else:
        print(outcome.summary())
    for warning in outcome.aftermath.warnings:
        print(f"tactful: warning: {warning}", file=sys.stderr)
    return 0


def _text(raw: str) -> str:
    """`--text -`: the text from standard input (all of it, one trailing newline dropped), so
    a draft never has to pass through a shell's quoting."""
    if raw != "-":
        return raw
    text = sys.stdin.read().removesuffix("\n").removesuffix("\r")
    if not text.strip():
        raise BadInput("--text -: standard input was empty; pipe the text in, e.g. "
                       "`tactful send x --text - < draft.txt`")
    return text


def _document(outcome: Outcome, context: App) -> dict[str, Any]:
    """What `send --json` says: what was sent (or would be), to whom, and where it lives."""
    attempt, sent = outcome.attempt, outcome.sent
    post = attempt.post
    status = "preview" if outcome.preview else "dry_run" if outcome.dry_run else "sent"
    return {"status": status, "platform": attempt.platform, "action": attempt.action,
            "to": attempt.recipient, "text": attempt.text,
            "in_reply_to": (post.url or post.id) if post is not None else None,
            "id": sent.id if sent is not None else None,
            "url": sent.url if sent is not None else None,
            "at": iso(attempt.at, context.settings.tz),
            "unchecked": list(attempt.unchecked) if outcome.dry_run else [],
            "warnings": list(outcome.aftermath.warnings)}
