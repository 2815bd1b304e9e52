"""The commands that change memory: remember, pin, unpin, resolve, flag, unflag, dne, set, link.

Each parses its input into normalized names, calls memory, and prints one line that never
carries anyone's words. Linking (with the socket module it checks a proof's host with) is
imported only when a link may be made: `remember` runs as a command for every interaction, and
most name no display name (README, Speed).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from tactful.core.cli.args import target, when
from tactful.core.errors import BadInput, TactfulError
from tactful.core.memory import platforms, recording
from tactful.core.memory.handles import normalize_id, split_ref
from tactful.core.memory.person import Person
from tactful.core.memory.recording import Outcome

if TYPE_CHECKING:
    import argparse
    from datetime import datetime

    from tactful.core.cli.context import Context


def _report(person: Person, outcome: Outcome, verb: str) -> int:
    parts = [f"{verb} {person.platform}/@{person.handle}"]
    rung = person.relationship if person.kind == "person" else person.kind
    count = person.interaction_count()
    parts.append(f"{rung}, {count} {'entry' if count == 1 else 'entries'}")
    if outcome.note:
        parts.append(outcome.note)
    if outcome.redacted:
        parts.append("redacted: " + ", ".join(outcome.redacted))
    if outcome.withheld:
        parts.append(f"withheld: looks like instructions ({outcome.withheld}); "
                     f"flagged {recording.INJECTION_FLAG}")
    print(" — ".join(parts))
    return 0


def _change(context: Context, args: argparse.Namespace, verb: str,
            mutate: Callable[[Person], Outcome], *, existing: bool = False) -> int:
    platform, handle = target(args)
    if existing:
        context.home.require_readable()
        if context.people.load(platform, handle) is None:
            raise BadInput(f"no file for {platform}/@{handle}; nothing to {verb}")
    person, outcome = context.people.change(platform, handle, mutate)
    context.after_memory_change()
    return _report(person, outcome, verb)


def remember(context: Context, args: argparse.Namespace) -> int:
    at = when(context, args.at)
    direction = args.direction or ("inbound" if args.they is not None else "outbound")
    person_id = normalize_id(args.id) if args.id is not None else None
    platform, handle = target(args)
    recording.validate_entry(args.kind, direction, args.link)

    def mutate(person: Person) -> Outcome:
        return recording.remember(
            person, kind=args.kind, direction=direction, at=at, they=args.they, me=args.me,
            link=args.link, topics=args.topic, open_items=args.open, thread=args.thread,
            display_name=args.display_name, person_id=person_id)

    person, outcome = context.people.change(platform, handle, mutate)
    try:
        _auto_link(context, person)
    except TactfulError as exc:
        # The entry is written; a failed link must not make a retry write it twice.
        print(f"tactful: warning: no automatic link made: {exc}", file=sys.stderr)
    context.after_memory_change()
    return _report(person, outcome, "remembered")


def _auto_link(context: Context, person: Person) -> None:
    """Link to the same handle elsewhere when the display names match too (docs/memory.md)."""
    if not person.display_name:
        return
    from tactful.core.memory import linking

    # The platforms memory knows without loading a plugin (the static table).
    for other_platform, other_handle in linking.candidates(person.platform, person.handle,
                                                           platforms.names()):
        other = context.people.load(other_platform, other_handle)
        if other is None or not linking.same_name(person, other):
            continue
        _link_both(context, (person.platform, person.handle), (other.platform, other.handle),
                   "same display name and handle", context.now(), None)


def _link_both(context: Context, first: tuple[str, str], second: tuple[str, str], reason: str,
               at: datetime, proof: str | None) -> None:
    """Both files get the link, or neither: `check` reads links from the file it checks."""
    first_ref, second_ref = "/".join(first), "/".join(second)
    _add_link(context, *first, second_ref, reason, at, proof)
    try:
        _add_link(context, *second, first_ref, reason, at, proof)
    except TactfulError:
        def undo(person: Person) -> Outcome:
            person.aka = [a for a in person.aka if a.ref != second_ref or a.at != at]
            return Outcome(note="link undone")

        with contextlib.suppress(TactfulError):
            context.people.change(*first, undo)
        raise


def _add_link(context: Context, platform: str, handle: str, ref: str, reason: str,
              at: datetime, proof: str | None) -> None:
    from tactful.core.memory import linking

    def mutate(person: Person) -> Outcome:
        added = linking.add_link(person, ref, reason, at, proof)
        return Outcome(note="linked" if added else "already linked")

    context.people.change(platform, handle, mutate)


def pin(context: Context, args: argparse.Namespace) -> int:
    if not args.text.strip():
        raise BadInput("the pin is empty; give what was said")
    at = context.now()
    return _change(context, args, "pinned",
                   lambda p: recording.pin(p, args.text, args.by, at))


def unpin(context: Context, args: argparse.Namespace) -> int:
    return _change(context, args, "unpin", lambda p: recording.unpin(p, args.number),
                   existing=True)


def resolve(context: Context, args: argparse.Namespace) -> int:
    at = context.now()
    return _change(context, args, "resolve", lambda p: recording.resolve(p, args.number, at),
                   existing=True)


def flag(context: Context, args: argparse.Namespace) -> int:
    recording.validate_flag_name(args.name)
    at = context.now()
    return _change(context, args, "flagged",
                   lambda p: recording.flag(p, args.name, args.reason, at))


def unflag(context: Context, args: argparse.Namespace) -> int:
    return _change(context, args, "unflag", lambda p: recording.unflag(p, args.name),
                   existing=True)


def dne(context: Context, args: argparse.Namespace) -> int:
    at = context.now()
    on = args.state == "on"
    return _change(context, args, "marked",
                   lambda p: recording.do_not_engage(p, on, args.reason, at))


def set_(context: Context, args: argparse.Namespace) -> int:
    at = context.now()
    person_id = normalize_id(args.id) if args.id is not None else None
    if args.kind is None and args.collaborator is None and args.display_name is None \
            and person_id is None:
        raise BadInput("set: nothing to set; give --kind, --collaborator, --display-name or --id")
    return _change(context, args, "set", lambda p: recording.set_fields(
        p, kind=args.kind, collaborator=args.collaborator, display_name=args.display_name,
        person_id=person_id, at=at))


def link(context: Context, args: argparse.Namespace) -> int:
    first, second = split_ref(args.first), split_ref(args.second)
    if first == second:
        raise BadInput("link: both sides name the same account")
    from tactful.core.memory import linking

    proof = linking.public_url(args.proof)
    context.home.require_readable()
    for platform, handle in (first, second):
        person = context.people.load(platform, handle)
        if person is None:
            raise BadInput(f"link: no file for {platform}/@{handle}; remember them first")
    _link_both(context, first, second, f"linked by hand; proof: {proof}", context.now(), proof)
    context.after_memory_change()
    print(f"linked {first[0]}/@{first[1]} and {second[0]}/@{second[1]} — proof: {proof}")
    return 0


