"""The gate's guards: a chain of small objects, each doing one thing (docs/sending.md).

Every guard has up to three checks:
- `offline(attempt)`: before any credential is read or any connection made. A dry run stops
  after these.
- `online(attempt)`: again, once the reads with read credentials resolved every party (the
  author of the post replied to, the thread's other authors, quoted posts, handles to ids).
  Still before any posting credential.
- `in_claim(attempt, db)`: inside the one ledger transaction that claims the send, so two
  processes cannot both pass (the ledger, a bot's one reply per thread, quotas).

A guard raises a tactful error to refuse: DoNotEngage (exit 3), MemoryUnavailable (exit 4),
Refused (exit 5). None of them reads a credential or opens a connection.
"""

from __future__ import annotations

import inspect
import sqlite3
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from tactful.core.errors import DoNotEngage, MemoryUnavailable, Refused, TactfulError
from tactful.core.memory import check as checks
from tactful.core.send.attempt import Attempt
from tactful.core.send.ledger import already, utc


class Guard:
    """A link of the chain. Subclasses override what they check; the rest passes."""

    name = "guard"

    def offline(self, attempt: Attempt) -> None:
        """Before any credential."""

    def online(self, attempt: Attempt) -> None:
        """After every party was resolved with read credentials; the offline check again."""
        self.offline(attempt)

    def in_claim(self, attempt: Attempt, db: sqlite3.Connection) -> None:
        """Inside the ledger transaction that claims the send."""


class PluginsLoaded(Guard):
    """A plugin that failed to load might have been a guard: nothing goes out until it is
    fixed, uninstalled, or disabled by name in the config."""

    name = "plugins loaded"

    def __init__(self, load_errors: list[str]) -> None:
        self.load_errors = load_errors

    def offline(self, attempt: Attempt) -> None:
        if self.load_errors:
            raise MemoryUnavailable(f"refused: {self.load_errors[0]}; nothing was sent "
                                    "until every plugin loads (a broken one may be a guard)")


class MemoryLoads(Guard):
    """Memory must be readable; a wrong or broken home refuses everything."""

    name = "memory loads"

    def offline(self, attempt: Attempt) -> None:
        attempt.home.require_people()


class NobodyFlagged(Guard):
    """Every party, by handle and by stable id, against the one model of who a person is."""

    name = "do-not-engage"

    def offline(self, attempt: Attempt) -> None:
        unreadable: list[str] = []
        for party in attempt.parties():
            if (party.handle, party.id) in attempt.checked:
                continue
            attempt.checked.add((party.handle, party.id))
            verdict = checks.check(attempt.people, attempt.platform, party.handle, party.id)
            if party.handle is not None:
                attempt.verdicts[party.handle] = verdict
            who = f"{attempt.platform}/@{verdict.handle} ({party.role})"
            if verdict.status == checks.DNE:
                raise DoNotEngage(f"refused: {who} is do-not-engage — {verdict.why}; "
                                  "nothing was sent")
            if verdict.status == checks.UNREADABLE:
                unreadable.append(f"{who}: {verdict.why}")
        if unreadable:
            # Every party was still checked first: a do-not-engage anywhere wins (exit 3).
            raise MemoryUnavailable(f"refused: memory unavailable for {unreadable[0]}")

    def in_claim(self, attempt: Attempt, db: sqlite3.Connection) -> None:
        # Once more, fresh, in the claim: someone flagged while the keys were read (a keyring
        # that asked for a password, say) is not sent to.
        attempt.checked.clear()
        self.offline(attempt)


def is_private(attempt: Attempt) -> bool:
    """A private message: the platform says so when it can tell a private chat from a group
    (`adapter.is_private`, Telegram); elsewhere a dm is private."""
    says = getattr(attempt.adapter, "is_private", None)
    if callable(says):
        return bool(says(attempt.to, attempt.post))
    return attempt.action == "dm"


class PublicOnly(Guard):
    """Public interactions only, unless the operator chose otherwise for the platform
    (`platforms.<name>.allow_private: true`, docs/sending.md). The companion is private by
    nature: its conversations (`SendRequest.private`, set by the companion's gateway, which
    runs only in companion mode) pass."""

    name = "public interactions only"

    def __init__(self, allowed: bool) -> None:
        self.allowed = allowed

    def offline(self, attempt: Attempt) -> None:
        if self.allowed or attempt.request.private:
            return
        if is_private(attempt):
            raise Refused(f"refused: a private message on {attempt.platform}, and this persona "
                          "keeps to public interactions; to allow private messages set "
                          f"platforms.{attempt.platform}.allow_private: true in the config; "
                          "nothing was sent")


def is_bot(attempt: Attempt, handle: str) -> bool:
    verdict = attempt.verdicts.get(handle)
    if verdict is not None and verdict.person is not None and verdict.person.kind == "bot":
        return True
    return bool(attempt.author and attempt.author.handle == handle and attempt.author.is_bot)


def bot_thread(attempt: Attempt) -> tuple[str, str] | None:
    """(the bot, the thread) when this is a reply to a bot, else None."""
    handle = attempt.recipient
    if attempt.post is None or handle is None or not is_bot(attempt, handle):
        return None
    return handle, attempt.thread or attempt.post.id


class BotThreadOnce(Guard):
    """A bot gets one reply per thread, at most (two bots would never stop)."""

    name = "one reply per bot thread"

    def offline(self, attempt: Attempt) -> None:
        found = bot_thread(attempt)
        if found is None:
            return
        handle, thread = found
        verdict = attempt.verdicts.get(handle)
        person = verdict.person if verdict else None
        earlier = person is not None and (
            any(e.direction == "outbound" and e.thread == thread for e in person.entries)
            or any(e.direction == "outbound" and e.thread == thread for e in person.compacted))
        if earlier:
            raise _bot_refusal(attempt.platform, handle)

    def in_claim(self, attempt: Attempt, db: sqlite3.Connection) -> None:
        found = bot_thread(attempt)
        if found is not None and db.execute(
                "SELECT 1 FROM sends WHERE platform = ? AND handle = ? AND thread = ? LIMIT 1",
                (attempt.platform, *found)).fetchone() is not None:
            raise _bot_refusal(attempt.platform, found[0])


def _bot_refusal(platform: str, handle: str) -> Refused:
    return Refused(f"refused: {platform}/@{handle} is a bot and was already replied to in "
                   "this thread (bots get one reply per thread); nothing was sent")


class LedgerFree(Guard):
    """The same message pending or sent before refuses, unless overridden (`--again`)."""

    name = "ledger"

    def __init__(self, find: Callable[[list[str]], Any]) -> None:
        self.find = find

    def offline(self, attempt: Attempt) -> None:
        if attempt.request.again:
            return
        record = self.find(attempt.keys)
        if record is not None:
            raise already(record.state, record.started, record.url)

    def in_claim(self, attempt: Attempt, db: sqlite3.Connection) -> None:
        if attempt.request.again:
            return
        for key in attempt.keys:
            row = db.execute("SELECT state, started, url FROM sends WHERE key = ?",
                             (key,)).fetchone()
            if row is not None:
                raise already(row[0], row[1], row[2])


class QuotaReached(Refused):
    """A quota for the rolling 24 hours is used up: a batch stops here (exit 5)."""


class WithinQuota(Guard):
    """The platform's published quota and the operator's own limit, per rolling 24 hours."""

    name = "quota"

    def __init__(self, limits: Mapping[str, int],
                 count: Callable[[str, str, datetime], tuple[int, str | None]]) -> None:
        self.limits = limits
        self.count = count

    def quota(self, attempt: Attempt) -> tuple[int, datetime] | None:
        caps = [c for c in (attempt.adapter.quotas.get(attempt.action),
                            self.limits.get(attempt.action)) if c is not None]
        if not caps:
            return None
        return min(caps), attempt.at - timedelta(hours=24)

    def offline(self, attempt: Attempt) -> None:
        quota = self.quota(attempt)
        if quota is None:
            return
        cap, since = quota
        count, oldest = self.count(attempt.platform, attempt.action, since)
        if count >= cap:
            raise QuotaReached(f"refused: {count} {attempt.action} sends on {attempt.platform} "
                               f"in the last 24 hours reach the limit of {cap}; the oldest "
                               f"({oldest}) leaves the window 24 hours after it was sent")

    def in_claim(self, attempt: Attempt, db: sqlite3.Connection) -> None:
        quota = self.quota(attempt)
        if quota is None:
            return
        cap, since = quota
        (count,) = db.execute(
            "SELECT count(*) FROM sends WHERE platform = ? AND action = ? AND started >= ? "
            "AND alias = 0", (attempt.platform, attempt.action, utc(since))).fetchone()
        if count >= cap:
            raise QuotaReached(f"refused: {count} {attempt.action} sends on "
                               f"{attempt.platform} in the last 24 hours reach the limit of "
                               f"{cap}")


class PluginGuard(Guard):
    """A guard a plugin registered: a callable `guard(attempt)` (run offline, and again
    online), or an object with any of `offline`, `online`, `in_claim`. One that breaks
    refuses, naming itself: fail closed."""

    def __init__(self, name: str, plugin: str, guard: Any) -> None:
        self.name, self.plugin, self.guard = name, plugin, guard

    def _run(self, step: str, *args: Any) -> None:
        call = self.guard if callable(self.guard) and step != "in_claim" and \
            not hasattr(self.guard, step) else getattr(self.guard, step, None)
        if call is None:
            return
        try:
            answer = call(*args)
        except TactfulError:
            raise
        except Exception as exc:
            raise TactfulError(f"refused: guard {self.name!r} of plugin {self.plugin!r} failed "
                               f"({type(exc).__name__}: {exc}); nothing was sent") from exc
        if inspect.isawaitable(answer):
            if inspect.iscoroutine(answer):
                answer.close()  # never run: its refusal would be lost
            raise TactfulError(f"refused: guard {self.name!r} of plugin {self.plugin!r} is "
                               "asynchronous; a guard is a plain function that raises to "
                               "refuse; nothing was sent")
        if answer is not None:
            # Only None lets a message through: `return False` reads like a refusal.
            raise TactfulError(f"refused: guard {self.name!r} of plugin {self.plugin!r} "
                               f"answered {type(answer).__name__} instead of None (pass) or a "
                               "tactful error (refuse); nothing was sent")

    def offline(self, attempt: Attempt) -> None:
        self._run("offline", attempt)

    def online(self, attempt: Attempt) -> None:
        self._run("online", attempt)

    def in_claim(self, attempt: Attempt, db: sqlite3.Connection) -> None:
        self._run("in_claim", attempt, db)
