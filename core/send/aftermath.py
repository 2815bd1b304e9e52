"""Step 9: write memory the moment the post is out (SPEC §10).

The log line, the person's entry (or a journal entry for a post to no one), the desk. The post
stands whatever happens here: a failure is reported, never raised, and when the person's entry
could not be written the caller gets the exact `tactful remember ...` command that records it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from tactful.core.memory import engagement, journal, recording
from tactful.core.memory.person import Person
from tactful.core.memory.recording import Outcome
from tactful.core.send.adapter import Sent
from tactful.core.send.attempt import Attempt


@dataclass
class Aftermath:
    warnings: list[str] = field(default_factory=list)
    recovery: str | None = None  # the command that records the entry by hand


def record(attempt: Attempt, sent: Sent) -> Aftermath:
    done = Aftermath()
    handle = attempt.recipient
    person_id = attempt.author.id if attempt.author is not None else None
    in_reply_to = (attempt.post.url or attempt.post.id) if attempt.post is not None else None
    event = {"time": attempt.at, "platform": attempt.platform, "handle": handle,
             "id": person_id, "action": attempt.action, "text": attempt.text, "url": sent.url,
             "in_reply_to": in_reply_to, "thread": attempt.thread, "dry_run": False,
             "mentions": attempt.mentions}
    try:
        engagement.append(attempt.home, event, attempt.settings.tz)
    except Exception as exc:  # noqa: BLE001 — the post is out; nothing here may undo that
        done.warnings.append(f"the engagement log was not written ({exc}); the person file "
                             "still gets the entry")
    try:
        if handle is None:
            entry = journal.gated(at=attempt.at, kind="post", text=attempt.text, link=sent.url,
                                  platform=attempt.platform, thread=attempt.thread)
            journal.record(attempt.home, attempt.settings.tz, [entry], match_text=True)
        else:
            attempt.people.change(attempt.platform, handle,
                                  lambda person: _remember(attempt, person, sent, person_id))
    except Exception as exc:  # noqa: BLE001
        done.recovery = recovery_command(attempt, sent, person_id)
        done.warnings.append(f"memory was not written ({exc}); the post stands — record it "
                             f"with: {done.recovery}")
        return done
    try:
        from tactful.core.memory import desk

        desk.regenerate(attempt.home, attempt.settings, attempt.at)
    except Exception as exc:  # noqa: BLE001 — the desk is derived
        done.warnings.append(f"the desk was not regenerated: {exc}")
    return done


def _remember(attempt: Attempt, person: Person, sent: Sent, person_id: str | None) -> Outcome:
    display = attempt.author.display_name if attempt.author is not None else None
    return recording.remember(person, kind=attempt.action, direction="outbound", at=attempt.at,
                              they=None, me=attempt.text, link=sent.url, topics=[],
                              open_items=[], thread=attempt.thread, display_name=display,
                              person_id=person_id)


def recovery_command(attempt: Attempt, sent: Sent, person_id: str | None) -> str:
    if attempt.recipient is None:
        argv = ["tactful", "--home", str(attempt.home.root), "journal"]
        if sent.url:
            argv += ["--link", sent.url]
        return shlex.join([*argv, "--", attempt.text])  # a text that starts with - is text
    argv = ["tactful", "--home", str(attempt.home.root), "remember", attempt.platform,
            attempt.recipient, "--kind", attempt.action, "--outbound", f"--me={attempt.text}",
            "--at", attempt.at.isoformat()]
    if sent.url:
        argv += ["--link", sent.url]
    if attempt.thread:
        argv += ["--thread", attempt.thread]
    if person_id:
        argv += ["--id", person_id]
    return shlex.join(argv)
