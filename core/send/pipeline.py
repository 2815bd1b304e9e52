"""The guarded send pipeline (SPEC §10): every post of every adapter goes through `send`.

1. memory loads, or refuse (exit 4)          6. credentials for reading, from the keyring
2. find the target and every @mention        7. no target named: the author, one read, checked
3. any do-not-engage → 3; a bot's thread → 5     again (→ 3, → 5)
4. the ledger: pending or sent → 5           8. posting credentials; ledger pending → send →
   (then quotas, then plugin guards)            ledger sent
5. dry run: the outbox, and stop             9. memory: log line, person entry, desk

Nothing reaches the keyring before steps 1–5 pass, and the posting credentials are read only
after the author check. Input that cannot be right (an unknown platform, a reference that does
not parse, text over the limit) is refused (exit 2) before memory is even opened.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from tactful.core.config.values import Config
from tactful.core.errors import BadInput, TactfulError
from tactful.core.memory.handles import normalize_handle, normalize_platform
from tactful.core.memory.home import Home
from tactful.core.memory.settings import MemorySettings
from tactful.core.memory.store import People
from tactful.core.plugins import Host
from tactful.core.send import credentials, guards, outbox
from tactful.core.send.adapter import (
    Adapter,
    PlatformDown,
    Sent,
    Session,
)
from tactful.core.send.adapters import adapter_for, settings_for
from tactful.core.send.aftermath import Aftermath, record
from tactful.core.send.attempt import Attempt, SendRequest
from tactful.core.send.ledger import Ledger, send_key

Guard = Callable[[Attempt], None]


@dataclass
class Outcome:
    """What happened to one request that was not refused."""

    attempt: Attempt
    dry_run: bool
    sent: Sent | None = None
    aftermath: Aftermath = field(default_factory=Aftermath)

    def summary(self) -> str:
        a = self.attempt
        who = f" to {a.platform}/@{a.recipient}" if a.recipient else f" on {a.platform}"
        if self.dry_run:
            return f"dry run: would send {a.action}{who} ({len(a.text)} characters): {a.text}"
        where = f": {self.sent.url}" if self.sent and self.sent.url else ""
        return f"sent {a.action}{who}{where}"


@dataclass
class Pipeline:
    config: Config
    home: Home
    people: People
    settings: MemorySettings
    host: Host
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)

    def plugin_guards(self) -> list[tuple[str, str, Guard]]:
        return [(name, plugin, guard)
                for name, (plugin, guard) in sorted(self.host.collect("register_guards").items())]

    # ---- before anything: input ------------------------------------------------------------

    def prepare(self, request: SendRequest) -> Attempt:
        platform = normalize_platform(request.platform)
        adapter = adapter_for(platform, self.config, self.host)
        text = request.text
        if not text.strip():
            raise BadInput("--text is empty; give the exact text to send")
        if "\x00" in text:
            raise BadInput("--text contains a NUL character; remove it")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise BadInput("--text is not valid UTF-8 (a lone surrogate, e.g. from bytes that "
                           "are not text); give plain text") from None
        length = adapter.text_length(text)
        if length > adapter.text_limit:
            raise BadInput(f"--text is {length} characters; {platform} allows "
                           f"{adapter.text_limit}: shorten it")
        attempt = Attempt(request=SendRequest(**{**request.__dict__, "platform": platform}),
                          adapter=adapter, home=self.home, people=self.people,
                          settings=self.settings, at=self.clock().astimezone(self.settings.tz))
        attempt.thread = request.thread
        if request.to is not None:
            attempt.to = normalize_handle(request.to, platform)
        if request.reply_to is not None:
            post = adapter.parse_post(request.reply_to)
            if post.platform != platform:
                raise BadInput(f"--reply-to {request.reply_to[:80]!r} is a {post.platform} post, "
                               f"not a {platform} one")
            attempt.post = post
        attempt.action = ("reply" if attempt.post is not None
                          else adapter.direct_kind if attempt.to is not None else "post")
        if attempt.action == "mention" and attempt.to not in adapter.mentions(text):
            # A post addressed to someone names them; adding "@to" here would send text that
            # no guard has seen.
            raise BadInput(f"--to {attempt.to} without --reply-to makes a post that mentions "
                           f"them, but the text has no @{attempt.to}; add it, or reply to a post")
        attempt.keys = _keys(attempt, [request.inbound_key] if request.inbound_key else
                             [attempt.post.id, attempt.post.url, *request.aliases]
                             if attempt.post else [None])
        return attempt

    # ---- the pipeline ----------------------------------------------------------------------

    def send(self, request: SendRequest) -> Outcome:
        attempt = self.prepare(request)
        # 1. memory
        guards.memory_loads(attempt)
        # 2–3. the people this post touches
        attempt.mentions = attempt.adapter.mentions(attempt.text)
        guards.nobody_do_not_engage(attempt)
        ledger = Ledger(self.home.root)
        try:
            guards.bot_thread_once(attempt, ledger)
            # 4. the ledger, then quotas, then the plugins' own guards
            guards.ledger_free(attempt, ledger)
            section = self.config.platform(attempt.platform)
            guards.within_quota(attempt, ledger, section.limits)
            for name, plugin, guard in self.plugin_guards():
                _run_plugin_guard(name, plugin, guard, attempt)
            # 5. dry run
            if request.dry_run or section.dry_run:
                outbox.append(self.home, _outbox_record(attempt))
                return Outcome(attempt, dry_run=True)
            return self._deliver(attempt, ledger)
        finally:
            ledger.close()

    def _deliver(self, attempt: Attempt, ledger: Ledger) -> Outcome:
        adapter = attempt.adapter
        account = settings_for(attempt.platform, self.config).account
        # 6. credentials for reading
        session = adapter.open(credentials.read(attempt.platform, account, adapter.read_fields))
        try:
            # 7. the author, with one read, and every check again with what the read found
            if attempt.post is not None:
                self._author(attempt, session)
                if attempt.author is not None and attempt.author.url \
                        and not attempt.request.inbound_key:
                    attempt.keys = _keys(attempt, [attempt.post.id, attempt.post.url,
                                                   *attempt.request.aliases,
                                                   attempt.author.url])
                guards.nobody_do_not_engage(attempt)
                guards.bot_thread_once(attempt, ledger)
                guards.ledger_free(attempt, ledger)
            # 8. posting credentials, then pending → send → sent
            if adapter.post_fields:
                session.enable_posting(
                    credentials.read(attempt.platform, account, adapter.post_fields))
            mention_ids = {m: _known_id(attempt, m) for m in attempt.mentions}
            thread = attempt.thread or (attempt.post.id if attempt.post else None)
            bot = attempt.recipient if attempt.recipient is not None and \
                guards.is_bot(attempt, attempt.recipient) else None
            claimed = ledger.claim(
                attempt.keys, platform=attempt.platform, action=attempt.action,
                reply_to=attempt.post.id if attempt.post else None, handle=attempt.recipient,
                thread=thread, mentions=attempt.mentions, text=attempt.text, at=attempt.at,
                again=attempt.request.again,
                bot_thread=(bot, thread) if bot is not None and thread is not None else None,
                quota=guards.quota_for(attempt, self.config.platform(attempt.platform).limits))
            sent = _send(session, attempt, mention_ids, ledger, claimed)
        finally:
            session.close()
        warnings: list[str] = []
        try:
            ledger.mark_sent(claimed, post_id=sent.id, url=sent.url, at=self.clock())
        except TactfulError as exc:
            # The post is out: a ledger that cannot say so must not undo that, nor memory.
            warnings.append(f"the ledger could not mark the send as sent ({exc}); it stays "
                            "pending, so a rerun refuses until you check it by hand")
        # 9. memory, at once
        done = record(attempt, sent)
        done.warnings[:0] = warnings
        return Outcome(attempt, dry_run=False, sent=sent, aftermath=done)

    def _author(self, attempt: Attempt, session: Session) -> None:
        """The post's author, one read. With --to named, they must be the same account; a
        platform that cannot name a message's author (a Telegram group) keeps the named one."""
        assert attempt.post is not None
        try:
            found = session.author(attempt.post)
        except BadInput:
            if attempt.to is None:
                raise
            return
        author = replace(found, handle=normalize_handle(found.handle, attempt.platform))
        attempt.author = author
        attempt.thread = author.thread or attempt.thread
        if attempt.to is not None and author.handle != attempt.to:
            # Checked first, so a do-not-engage author stops it as such (exit 3).
            guards.nobody_do_not_engage(attempt)
            raise BadInput(f"--to {attempt.to} but the post replied to is by @{author.handle}; "
                           "name its author, or leave --to out")


def _send(session: Session, attempt: Attempt, mention_ids: Mapping[str, str | None],
          ledger: Ledger, claimed: list[str]) -> Sent:
    try:
        return session.send(attempt.text, reply_to=attempt.post, to=attempt.to,
                            mentions=mention_ids)
    except PlatformDown as exc:
        if not exc.maybe_sent:
            ledger.release(claimed)
            raise
        raise PlatformDown(exc.platform, f"{exc}; it may have gone out — the ledger keeps it "
                           "pending: check the platform, then pass --again to send anyway",
                           maybe_sent=True) from exc
    except TactfulError:
        ledger.release(claimed)  # refused before the platform took it: a retry may go
        raise
    except Exception as exc:
        # An adapter bug: whether the post went out is unknown, so the record stays pending.
        raise TactfulError(f"the {attempt.platform} adapter failed while sending "
                           f"({type(exc).__name__}: {exc}); the ledger keeps the send pending: "
                           "check the platform, then pass --again to send anyway") from exc


def _keys(attempt: Attempt, spellings: list[str | None]) -> list[str]:
    found: list[str] = []
    for spelling in spellings:
        if spelling is None and found:
            continue
        key = send_key(attempt.platform, attempt.action, spelling, attempt.to, attempt.text)
        if key not in found:
            found.append(key)
    return found


def _run_plugin_guard(name: str, plugin: str, guard: Guard, attempt: Attempt) -> None:
    try:
        guard(attempt)
    except TactfulError:
        raise
    except Exception as exc:
        # A guard that breaks refuses: fail closed, and name it.
        raise TactfulError(f"refused: guard {name!r} of plugin {plugin!r} failed "
                           f"({type(exc).__name__}: {exc}); nothing was sent") from exc


def _known_id(attempt: Attempt, handle: str) -> str | None:
    verdict = attempt.verdicts.get(handle)
    return verdict.person.id if verdict is not None and verdict.person is not None else None


def _outbox_record(attempt: Attempt) -> dict[str, Any]:
    return {"time": attempt.at.isoformat(), "platform": attempt.platform,
            "action": attempt.action, "handle": attempt.recipient,
            "reply_to": attempt.request.reply_to, "mentions": attempt.mentions,
            "text": attempt.text, "dry_run": True}


__all__ = ["Adapter", "Outcome", "Pipeline", "SendRequest"]
