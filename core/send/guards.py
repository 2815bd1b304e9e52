"""The built-in guards of the send pipeline, in the order SPEC §10 runs them.

Each guard reads the attempt and raises a tactful error to refuse: DoNotEngage (exit 3),
MemoryUnavailable (exit 4), Refused (exit 5). None of them reads a credential or opens a
connection; the pipeline calls them all before the keyring is touched.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from tactful.core.errors import DoNotEngage, MemoryUnavailable, Refused
from tactful.core.memory import check as checks
from tactful.core.send.attempt import Attempt
from tactful.core.send.ledger import Ledger, already


def memory_loads(attempt: Attempt) -> None:
    """Step 1: memory must be readable; a wrong or broken home refuses everything."""
    attempt.home.require_people()


def _who(attempt: Attempt, handle: str, role: str) -> str:
    return f"{attempt.platform}/@{handle} ({role})"


def nobody_do_not_engage(attempt: Attempt) -> None:
    """Steps 2–3: the target, the author named in the URL, the author found, every @mention."""
    unreadable: list[str] = []
    for handle, role in attempt.targets():
        person_id = attempt.author.id if attempt.author and handle == attempt.author.handle \
            else None
        # Checked again once the author read gives a stable id: a renamed account is caught
        # only through it.
        if (handle, person_id) in attempt.checked:
            continue
        attempt.checked.add((handle, person_id))
        verdict = checks.check(attempt.people, attempt.platform, handle, person_id)
        attempt.verdicts[handle] = verdict
        if verdict.status == checks.DNE:
            raise DoNotEngage(f"refused: {_who(attempt, handle, role)} is do-not-engage — "
                              f"{verdict.why}; nothing was sent")
        if verdict.status == checks.UNREADABLE:
            unreadable.append(f"{_who(attempt, handle, role)}: {verdict.why}")
    if unreadable:
        # Every target was still checked first: a do-not-engage anywhere wins (exit 3).
        raise MemoryUnavailable(f"refused: memory unavailable for {unreadable[0]}")


def is_bot(attempt: Attempt, handle: str) -> bool:
    verdict = attempt.verdicts.get(handle)
    if verdict is not None and verdict.person is not None and verdict.person.kind == "bot":
        return True
    return bool(attempt.author and attempt.author.handle == handle and attempt.author.is_bot)


def bot_thread_once(attempt: Attempt, ledger: Ledger) -> None:
    """Step 3: a bot gets one reply per thread, at most (two bots would never stop)."""
    handle = attempt.recipient
    if attempt.post is None or handle is None or not is_bot(attempt, handle):
        return
    thread = attempt.thread or attempt.post.id
    verdict = attempt.verdicts.get(handle)
    person = verdict.person if verdict else None
    earlier = person is not None and (
        any(e.direction == "outbound" and e.thread == thread for e in person.entries)
        or any(e.direction == "outbound" and e.thread == thread for e in person.compacted))
    if earlier or ledger.replied_in_thread(attempt.platform, handle, thread) is not None:
        raise Refused(f"refused: {attempt.platform}/@{handle} is a bot and was already replied "
                      "to in this thread (bots get one reply per thread); nothing was sent")


def ledger_free(attempt: Attempt, ledger: Ledger) -> None:
    """Step 4: the same reply pending or sent before refuses, unless overridden."""
    if attempt.request.again:
        return
    record = ledger.find_any(attempt.keys)
    if record is not None:
        raise already(record.state, record.started, record.url)


class QuotaReached(Refused):
    """A quota for the rolling 24 hours is used up: a batch stops here (exit 5)."""


def quota_for(attempt: Attempt, limits: Mapping[str, int]) -> tuple[int, datetime] | None:
    """The cap on this action for the rolling 24 hours, and when that window starts."""
    caps = [c for c in (attempt.adapter.quotas.get(attempt.action),
                        limits.get(attempt.action)) if c is not None]
    if not caps:
        return None
    return min(caps), attempt.at - timedelta(hours=24)


def within_quota(attempt: Attempt, ledger: Ledger, limits: Mapping[str, int]) -> None:
    """The platform's published quota and the operator's own limit, per rolling 24 hours.
    Checked here before any credential, and again inside the ledger's claim."""
    quota = quota_for(attempt, limits)
    if quota is None:
        return
    cap, since = quota
    count, oldest = ledger.count_since(attempt.platform, attempt.action, since)
    if count >= cap:
        raise QuotaReached(f"refused: {count} {attempt.action} sends on {attempt.platform} in "
                           f"the last 24 hours reach the limit of {cap}; the oldest ({oldest}) "
                           "leaves the window 24 hours after it was sent")
