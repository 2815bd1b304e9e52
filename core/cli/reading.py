"""The commands that only read memory: check, card, export.

Kept apart from the writing commands so that `check` and `card` never import the scrubber, the
injection guard or anything else a write needs: they run before every reply and must be quick.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tactful.core.cli.args import target
from tactful.core.cli.output import emit, iso, plural
from tactful.core.errors import BadInput, MemoryUnavailable
from tactful.core.memory import check as checks
from tactful.core.memory.atomic import open_regular, read_regular
from tactful.core.memory.handles import normalize_handle, normalize_id, normalize_platform

if TYPE_CHECKING:
    import argparse  # `check` and `card` are read without it (main._quick)
    from collections.abc import Callable

    from tactful.core.cli.context import Context


def check(context: Context, args: argparse.Namespace) -> int:
    platform = normalize_platform(args.platform)
    handles = [normalize_handle(h, platform) for h in args.handles]
    person_id = normalize_id(args.id) if args.id is not None else None
    if person_id and len(handles) != 1:
        raise BadInput("--id names one account; give exactly one HANDLE with it")
    context.home.require_people()
    verdicts = [checks.check(context.people, platform, h, person_id) for h in handles]

    def say() -> None:
        if args.json:
            tz = context.settings.tz
            emit({"results": [_verdict(v, tz) for v in verdicts],
                  "exit_code": checks.overall_exit(verdicts)})
        else:
            for verdict in verdicts:
                print(verdict.line())

    return _verdict_said(checks.overall_exit(verdicts), say)


def _verdict_said(exit_code: int, say: Callable[[], None]) -> int:
    """The verdict's exit code, whether or not its words could be written: a caller that
    stopped reading (a pipe closed early) still learns "do not engage" from the code, and a
    broken pipe must never read as exit 0, "may be touched" (README: exit codes)."""
    try:
        say()
        sys.stdout.flush()
    except BrokenPipeError:
        # What is still buffered (and the end-of-command flush) goes nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return exit_code


def _verdict(verdict: checks.Verdict, tz: tzinfo) -> dict[str, Any]:
    person = verdict.person
    return {"platform": verdict.platform, "handle": verdict.handle, "status": verdict.status,
            "do_not_engage": verdict.status == checks.DNE, "why": verdict.why or None,
            "known": person is not None,
            "relationship": person.relationship if person is not None else None,
            "kind": person.kind if person is not None else None,
            "last_seen": iso(person.last_seen, tz) if person is not None else None,
            "exit_code": verdict.exit_code}


def card(context: Context, args: argparse.Namespace) -> int:
    platform, handle = target(args)
    person_id = normalize_id(args.id) if args.id is not None else None
    context.home.require_people()
    verdict = checks.check(context.people, platform, handle, person_id)
    if verdict.status == checks.UNREADABLE:
        print(f"tactful: memory unavailable: {verdict.why}", file=sys.stderr)
        return verdict.exit_code
    from tactful.core.memory import card as cards  # only `card` needs it, not `check`

    tz = context.settings.tz

    def say() -> None:
        if args.json:
            print(cards.render_json(cards.build(verdict, tz)))
        else:
            sys.stdout.write(cards.render_text(verdict, tz))

    return _verdict_said(verdict.exit_code, say)


def export(context: Context, args: argparse.Namespace) -> int:
    platform, handle = target(args)
    context.home.require_readable()
    person = context.people.load(platform, handle)
    path = context.home.person_path(platform, handle)
    events = _log_events(context, platform, handle)
    if person is None and not events:
        raise BadInput(f"nothing is held about {platform}/@{handle}")
    print(f"# everything tactful holds about {platform}/@{handle}")
    if person is not None:
        text = _read_person_file(path)
        print(f"## {path}")
        sys.stdout.write(text)
    print(f"## {context.home.engagement_log} ({plural(len(events), 'event')})")
    for event in events:
        print(json.dumps(event, ensure_ascii=False))
    return 0


def _log_events(context: Context, platform: str, handle: str) -> list[dict[str, object]]:
    from tactful.core.memory.forgetting import about  # the one rule of "whose event is this"

    found: list[dict[str, object]] = []
    path = context.home.engagement_log
    try:
        with open_regular(path, "r", encoding="utf-8", errors="replace") as log:
            for line in log:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if about(event, platform, handle):
                    found.append(event)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise MemoryUnavailable(f"cannot read {path}: {exc.strerror or exc}; fix the file or "
                                "its permissions") from exc
    return found


def _read_person_file(path: Path) -> str:
    """The file as it is on disk (it parsed a moment ago; a FIFO swapped in since is refused)."""
    try:
        return read_regular(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MemoryUnavailable(f"cannot read {path}: {exc}; fix the file or its "
                                "permissions") from exc
