"""Write memory the moment a post is out: the log line, the person's entry (or a journal entry
for a post to no one), the desk.

The post stands whatever happens here: a failure is reported, never raised, and when the
person's entry could not be written the caller gets the exact `tactful remember ...` command
that records it. The ledger row of the send keeps what this needs until it is done, so a crash
in between is repaired on the next run (`repair`), once, and only when the sender is certainly
gone (`owners`).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from datetime import datetime

from tactful.core.memory import engagement, journal, recording
from tactful.core.memory.atomic import locked
from tactful.core.memory.clock import read_time
from tactful.core.memory.home import Home
from tactful.core.memory.person import Person
from tactful.core.memory.recording import Outcome
from tactful.core.memory.settings import MemorySettings
from tactful.core.memory.store import People
from tactful.core.send.ledger import Ledger


@dataclass
class Aftermath:
    warnings: list[str] = field(default_factory=list)
    recovery: str | None = None  # the command that records the entry by hand
    remembered: bool = False  # the person entry (or journal entry) was written


@dataclass(frozen=True)
class Memo:
    """What memory records of one send: all of it is in the ledger row too."""

    platform: str
    handle: str | None
    person_id: str | None
    action: str
    text: str
    url: str | None
    in_reply_to: str | None
    thread: str | None
    mentions: tuple[str, ...]
    at: datetime
    display_name: str | None = None


def ready(home: Home, platform: str, handle: str | None, at: datetime) -> None:
    """Before a post goes out: the locks its memory will need (the engagement log, and the
    person's file or the journal month) are free within the bounded wait. A process stuck on
    one of them refuses the send now (exit 4), not after the post with memory unwritten."""
    needed = [(home.root / engagement.LOCK, "the engagement log")]
    if handle is None:
        month = f"{at:%Y-%m}"
        needed.append((journal.lock_of(home, month), f"the journal of {month}"))
    else:
        needed.append((home.person_lock(platform, handle), f"{platform}/@{handle}"))
    for path, what in needed:
        home.prepare_folder(path.parent)
        with locked(path, what=what):
            pass


def record(home: Home, people: People, settings: MemorySettings, memo: Memo, *,
           log: bool = True) -> Aftermath:
    done = Aftermath()
    event = {"time": memo.at, "platform": memo.platform, "handle": memo.handle,
             "id": memo.person_id, "action": memo.action, "text": memo.text, "url": memo.url,
             "in_reply_to": memo.in_reply_to, "thread": memo.thread, "dry_run": False,
             "mentions": list(memo.mentions)}
    if log:
        try:
            engagement.append(home, event, settings.tz)
        except Exception as exc:  # noqa: BLE001 — the post is out; nothing here may undo that
            done.warnings.append(f"the engagement log was not written ({exc}); the person "
                                 "file still gets the entry")
    try:
        if memo.handle is None:
            entry = journal.gated(at=memo.at, kind="post", text=memo.text, link=memo.url,
                                  platform=memo.platform, thread=memo.thread)
            journal.record(home, settings.tz, [entry], match_text=True)
        else:
            people.change(memo.platform, memo.handle, lambda person: _remember(memo, person))
    except Exception as exc:  # noqa: BLE001
        done.recovery = recovery_command(home, memo)
        done.warnings.append(f"memory was not written ({exc}); the post stands — record it "
                             f"with: {done.recovery}")
        return done
    done.remembered = True
    try:
        from tactful.core.memory import desk

        desk.after_change(home, settings, memo.at)
    except Exception as exc:  # noqa: BLE001 — the desk is derived
        done.warnings.append(f"the desk was not regenerated: {exc}")
    return done


def _remember(memo: Memo, person: Person) -> Outcome:
    if memo.url and any(e.link == memo.url and e.direction == "outbound"
                        for e in person.entries):
        return Outcome(note="already remembered")  # a repair after a crash mid-write
    return recording.remember(person, kind=memo.action, direction="outbound", at=memo.at,
                              they=None, me=memo.text, link=memo.url, topics=[],
                              open_items=[], thread=memo.thread,
                              display_name=memo.display_name, person_id=memo.person_id)


def repair(home: Home, people: People, settings: MemorySettings, ledger: Ledger) -> list[str]:
    """Write the memory of every send that went out but was never recorded (the process died
    between "sent" and the write). Returns one line per repaired send, naming no text."""
    repaired = []
    for listed in ledger.unremembered():
        # Only a send whose sender is certainly gone (and that no other repairer took): one
        # still running writes its own memory, and two writers would record it twice.
        row = ledger.take(listed.key)
        if row is None:
            continue
        memo = Memo(platform=row.platform, handle=row.handle, person_id=row.person_id,
                    action=row.action, text=row.text or "", url=row.url,
                    in_reply_to=row.in_reply_to, thread=row.thread,
                    mentions=tuple(row.mentions.split()),
                    at=(read_time(row.started, settings.tz)
                        or datetime.now(settings.tz)).astimezone(settings.tz))
        done = record(home, people, settings, memo)
        if done.remembered:
            ledger.mark_remembered([row.key])
            who = f"{row.platform}/@{row.handle}" if row.handle else row.platform
            repaired.append(f"recorded a send to {who} that went out at {row.started} but "
                            "was never written to memory (the process stopped in between)")
        else:
            ledger.disown([row.key])  # the next run tries again
    return repaired


def recovery_command(home: Home, memo: Memo) -> str:
    if memo.handle is None:
        argv = ["tactful", "--home", str(home.root), "journal"]
        if memo.url:
            argv += ["--link", memo.url]
        return shlex.join([*argv, "--", memo.text])  # a text that starts with - is text
    argv = ["tactful", "--home", str(home.root), "remember", memo.platform, memo.handle,
            "--kind", memo.action, "--outbound", f"--me={memo.text}",
            "--at", memo.at.isoformat()]
    if memo.url:
        argv += ["--link", memo.url]
    if memo.thread:
        argv += ["--thread", memo.thread]
    if memo.person_id:
        argv += ["--id", memo.person_id]
    return shlex.join(argv)
