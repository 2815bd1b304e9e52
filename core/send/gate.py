"""The one gate: every outgoing message of every sender passes here (docs/sending.md).

`tactful send`, the batch replier, every message of the companion (replies, the hold line,
check-ins, answers to commands), the demo and any plugin ask the gate, and none of them
repeats a check of its own. In order:

1. `prepare`: the input (exit 2) — platform, text, the reference replied to, @mentions, posts
   the text quotes; the ledger keys, computed here and nowhere else.
2. `offline`: every guard's offline check — plugins loaded, memory loads, nobody flagged (the
   target, the author named in the reference, every @mention, quoted posts, the parties a
   sender knows), a bot's one reply per thread, the ledger, quotas, plugin guards. No
   credential has been read. A dry run stops here and writes the outbox, saying what it could
   not check.
3. `resolve` (with a session opened on read credentials only): the author of the post replied
   to with one read, the thread's other authors, the authors of quoted posts, and every handle
   to its stable id where the platform can; then every guard's online check. A read that fails
   refuses. A preview stops here and writes the outbox.
4. `claim`: posting credentials may be read now; the guards' in-claim checks and the pending
   record share one ledger transaction. The result is a `Ticket`.
5. The sender delivers, then `Ticket.settle(sent)` (ledger sent, memory written at once) or
   `Ticket.release(maybe_sent=…)`.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from tactful.core.config.values import Config
from tactful.core.errors import BadInput, Refused, TactfulError
from tactful.core.memory import check as checks
from tactful.core.memory.handles import normalize_handle, normalize_id, normalize_platform
from tactful.core.memory.home import Home
from tactful.core.memory.person import ENTRY_KINDS
from tactful.core.memory.settings import MemorySettings
from tactful.core.memory.store import People
from tactful.core.plugins import Host
from tactful.core.send import guards, outbox
from tactful.core.send.adapter import (
    Adapter,
    Author,
    AuthorUnknown,
    Party,
    PostRef,
    Sent,
    Session,
)
from tactful.core.send.adapters import adapter_for
from tactful.core.send.aftermath import Aftermath, Memo, ready, record, repair
from tactful.core.send.attempt import Attempt, SendRequest
from tactful.core.send.ledger import Ledger, send_key

# A token that may link to a post: a URL, or a bare host with a path (x.com/a/status/1). Post
# links are ASCII: a token ends at the first character that is not (an ellipsis, a CJK stop,
# a zero-width space), and may start right after one (看x.com/...).
_LINK = re.compile(r"(?:[a-z][a-z0-9+.-]*://|(?<![A-Za-z0-9@/._-])[a-z0-9-]+(?:\.[a-z0-9-]+)+/)"
                   r"[!-~]+", re.IGNORECASE)
_TAIL = re.compile(r"[^A-Za-z0-9/_-]+$")  # what a sentence adds after a link: . , ) > ' "


@dataclass
class Ticket:
    """An admitted message, claimed in the ledger: the sender delivers it, then settles it as
    sent or releases it."""

    gate: Gate
    attempt: Attempt
    keys: list[str]
    settled: bool = False

    def require(self, text: str) -> None:
        """A sender that delivers itself (the companion's channel) asks this before each
        message: only the text the gate admitted goes out, and only while the ticket is open."""
        request = self.attempt.request
        if self.settled or (text != request.text and text not in request.parts):
            raise RuntimeError("refused: a message without an open gate ticket for exactly "
                               "this text; every message passes the send gate")

    def recheck(self) -> None:
        """Everyone it reaches, once more, fresh: for a sender whose claim became durable only
        after the gate's checks (the companion's group commit, where the claim waits for its
        commit round: docs/companion.md, "Throughput"). Someone flagged while it waited is
        refused (`DoNotEngage`); the caller releases the ticket."""
        self.attempt.checked.clear()
        guards.NobodyFlagged().offline(self.attempt)

    def settle(self, sent: Sent) -> Aftermath:
        """The message is out: the ledger says so, and memory records it at once."""
        attempt, gate = self.attempt, self.gate
        self.settled = True
        warnings: list[str] = []
        private = attempt.request.private
        try:
            gate.ledger.mark_sent(self.keys, post_id=sent.id, url=sent.url, at=gate.clock(),
                                  remembered=private)
        except TactfulError as exc:
            # The post is out: a ledger that cannot say so must not undo that, nor memory.
            warnings.append(f"the ledger could not mark the send as sent ({exc}); it stays "
                            "pending, so a rerun refuses until you check it by hand")
        if private:
            return Aftermath(warnings=warnings, remembered=True)
        done = record(gate.home, gate.people, gate.settings, memo_of(attempt, sent))
        with contextlib.suppress(TactfulError):
            if done.remembered:
                # Should this fail, the repair finds the entry by its link and adds nothing.
                gate.ledger.mark_remembered(self.keys)
            else:
                # Held no longer: the next send or batch run, this process's too, repairs it.
                gate.ledger.disown(self.keys)
        done.warnings[:0] = warnings
        return done

    def release(self, *, maybe_sent: bool) -> None:
        """Not delivered. Certainly not (refused before the platform took it): a later run may
        try again. Maybe (a timeout after handing it over): the record stays pending, and a
        rerun refuses until someone checked."""
        self.settled = True
        if not maybe_sent:
            self.gate.ledger.release(self.keys)


@dataclass
class DryRun:
    """What a dry run or a preview found: the message would be sent."""

    attempt: Attempt
    preview: bool = False


@dataclass
class Gate:
    config: Config
    home: Home
    people: People
    settings: MemorySettings
    host: Host
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    _ledger: Ledger | None = field(default=None, repr=False)
    _chain: dict[str, list[guards.Guard]] = field(default_factory=dict, repr=False)
    _adapters: dict[str, Adapter] = field(default_factory=dict, repr=False)

    @classmethod
    def for_home(cls, root: Path, *, config: Config | None = None, host: Host | None = None,
                 clock: Callable[[], datetime] | None = None) -> Gate:
        """A gate on one memory home, for a sender that has no command-line context (a
        test suite, an embedding application)."""
        from tactful.core.plugins import host as the_host

        settings = MemorySettings()
        home = Home(root)
        return cls(config=config or Config(), home=home, people=People(home, settings),
                   settings=settings, host=host or the_host(),
                   clock=clock or (lambda: datetime.now(UTC)))

    # ---- what the gate holds ---------------------------------------------------------------

    @property
    def ledger(self) -> Ledger:
        if self._ledger is None:
            self._ledger = Ledger(self.home.root)
        return self._ledger

    def close(self) -> None:
        if self._ledger is not None:
            self._ledger.close()
            self._ledger = None

    def adapter(self, platform: str) -> Adapter:
        if platform not in self._adapters:
            self._adapters[platform] = adapter_for(platform, self.config, self.host)
        return self._adapters[platform]

    def chain(self, platform: str) -> list[guards.Guard]:
        """The guards, in order: the built-in ones, then the plugins' (by name)."""
        if platform not in self._chain:
            self.host.load()
            ledger = self.ledger
            chain: list[guards.Guard] = [
                guards.PluginsLoaded(self.host.load_errors),
                guards.MemoryLoads(),
                guards.NobodyFlagged(),
                guards.PublicOnly(self.config.platform(platform).allow_private),
                guards.BotThreadOnce(),
                guards.LedgerFree(ledger.find_any),
                guards.WithinQuota(self.config.platform(platform).limits, ledger.count_since),
            ]
            for name, (plugin, guard) in sorted(self.host.collect("register_guards").items()):
                chain.append(guards.PluginGuard(name, plugin, guard))
            self._chain[platform] = chain
        return self._chain[platform]

    # ---- 1. the input ----------------------------------------------------------------------

    def prepare(self, request: SendRequest) -> Attempt:
        platform = normalize_platform(request.platform)
        adapter = self.adapter(platform)
        if request.parts:
            request = replace(request, text="\n\n".join(request.parts))
        for part in request.parts or (request.text,):
            _check_text(part, platform, adapter)
        request = replace(request, platform=platform, parties=tuple(
            _party(p, platform) for p in request.parties))
        attempt = Attempt(request=request, adapter=adapter,
                          home=self.home, people=self.people, settings=self.settings,
                          at=self.clock().astimezone(self.settings.tz))
        attempt.thread = request.thread
        if request.to is not None:
            attempt.to = normalize_handle(request.to, platform)
        if request.reply_to is not None:
            post = adapter.parse_post(request.reply_to)
            if post.platform != platform:
                raise BadInput(f"--reply-to {request.reply_to[:80]!r} is a {post.platform} "
                               f"post, not a {platform} one")
            if post.handle is not None:
                post = replace(post, handle=normalize_handle(post.handle, platform))
            attempt.post = post
        attempt.action = _action(request.action or (
            "reply" if attempt.post is not None
            else adapter.direct_kind if attempt.to is not None else "post"))
        # Normalized here as well: an adapter that forgets to must not hide `Mallory`.
        attempt.mentions = list(dict.fromkeys(
            normalize_handle(m, platform) for m in adapter.mentions(attempt.text)))
        if attempt.action == "mention" and attempt.to not in attempt.mentions:
            # A post addressed to someone names them; adding "@to" here would send text that
            # no guard has seen.
            raise BadInput(f"--to {attempt.to} without --reply-to makes a post that mentions "
                           f"them, but the text has no @{attempt.to}; add it, or reply to a "
                           "post")
        _check_request(adapter, attempt, request.image)
        attempt.quoted = quoted_posts(adapter, attempt.text)
        attempt.keys = self._keys(attempt)
        return attempt

    def _keys(self, attempt: Attempt) -> list[str]:
        request = attempt.request
        if request.inbound_keys:
            spellings: list[str | None] = list(request.inbound_keys)
        elif attempt.post is not None:
            spellings = [attempt.post.id, attempt.post.url, *request.aliases]
            if attempt.author is not None and attempt.author.url:
                spellings.append(attempt.author.url)
        else:
            spellings = [None]
        found: list[str] = []
        for spelling in spellings:
            if spelling is None and found:
                continue
            key = send_key(attempt.platform, attempt.action, spelling, attempt.to,
                           attempt.text)
            if key not in found:
                found.append(key)
        return found

    # ---- 2. offline ------------------------------------------------------------------------

    def offline(self, attempt: Attempt) -> None:
        for guard in self.chain(attempt.platform):
            guard.offline(attempt)
        attempt.unchecked = self._unseen(attempt)

    def _unseen(self, attempt: Attempt) -> list[str]:
        """What an offline run cannot check: parties only a read names or resolves."""
        unseen = []
        if attempt.post is not None and attempt.post.handle is None and \
                attempt.post.author_id is None and attempt.to is None:
            unseen.append("the author of the post replied to (needs a read)")
        if attempt.post is not None:
            unseen.append("the other authors of the thread (needs a read)")
        unseen += [f"the author of the quoted post {ref.url or ref.id} (needs a read)"
                   for ref in attempt.quoted if ref.handle is None and ref.author_id is None]
        if getattr(attempt.adapter, "resolves_handles", False):
            handles = [p.handle for p in attempt.parties() if p.handle and p.id is None]
            if handles:
                unseen.append("whether " + ", ".join(f"@{h}" for h in handles) +
                              " is a renamed account (needs the handle resolved to its id)")
        return unseen

    def dry_run(self, attempt: Attempt, *, preview: bool = False) -> DryRun:
        record_line = {"time": attempt.at.isoformat(), "platform": attempt.platform,
                       "action": attempt.action, "handle": attempt.recipient,
                       "reply_to": attempt.request.reply_to, "mentions": attempt.mentions,
                       "text": "" if attempt.request.private else attempt.text,
                       "dry_run": True, "preview": preview,
                       "unchecked": [] if preview else attempt.unchecked}
        if attempt.request.image is not None:
            record_line["image"] = attempt.request.image
        outbox.append(self.home, record_line)
        return DryRun(attempt, preview=preview)

    # ---- 3. online, with read credentials only ---------------------------------------------

    def resolve(self, attempt: Attempt, session: Session) -> None:
        """Every party as the platform names it, then every guard again. A read that fails
        refuses: an account that could not be resolved is never taken as nobody."""
        try:
            if attempt.post is not None:
                self._author(attempt, session)
            for ref in attempt.quoted:
                attempt.quoted_authors.append(_normalized(session.author(ref),
                                                          attempt.platform))
            if getattr(attempt.adapter, "resolves_handles", False):
                for party in attempt.parties():
                    if party.handle is not None and party.id is None and \
                            party.handle not in attempt.resolved:
                        attempt.resolved[party.handle] = session.resolve(party.handle)
        except TactfulError:
            raise
        except Exception as exc:
            raise Refused(f"refused: {attempt.platform}: a party of this post could not be "
                          f"resolved ({type(exc).__name__}); nothing was sent") from exc
        attempt.online = True
        if attempt.author is not None and attempt.author.url and \
                not attempt.request.inbound_keys:
            attempt.keys = self._keys(attempt)
        for guard in self.chain(attempt.platform):
            guard.online(attempt)

    def _author(self, attempt: Attempt, session: Session) -> None:
        """The post's author, one read. With --to named, they must be the same account; a
        platform that cannot name a message's author (a Telegram group) keeps the named one."""
        assert attempt.post is not None
        try:
            found = session.author(attempt.post)
        except AuthorUnknown:
            if attempt.to is None:
                raise
            return  # the platform cannot say: the target named by hand stands (checked)
        author = _normalized(found, attempt.platform)
        attempt.author = author
        attempt.thread = author.thread or attempt.thread
        if attempt.to is not None and author.handle != attempt.to:
            # Checked first, so a do-not-engage author stops it as such (exit 3).
            guards.NobodyFlagged().online(attempt)
            raise BadInput(f"--to {attempt.to} but the post replied to is by "
                           f"@{author.handle}; name its author, or leave --to out")

    # ---- 4. the claim ----------------------------------------------------------------------

    def ready(self, attempt: Attempt) -> None:
        """Before posting credentials: the locks memory will need are free (a stuck process
        refuses the send now, exit 4, never after the post)."""
        if not attempt.request.private:
            ready(self.home, attempt.platform, attempt.recipient, attempt.at)

    def claim(self, attempt: Attempt) -> Ticket:
        chain = self.chain(attempt.platform)
        private = attempt.request.private
        post = attempt.post
        # A private conversation leaves no name in the ledger: its keys are hashes, and a
        # chat erased by its user must not come back through the record of the last answer.
        keys = self.ledger.claim(
            attempt.keys, platform=attempt.platform, action=attempt.action,
            reply_to=post.id if post else None,
            handle=None if private else attempt.recipient,
            thread=None if private else attempt.thread or (post.id if post else None),
            mentions=[] if private else attempt.mentions,
            text=None if private else attempt.text, at=attempt.at,
            again=attempt.request.again,
            person_id=None if private else _recipient_id(attempt),
            in_reply_to=(post.url or post.id) if post is not None else None,
            checks=[partial(_in_claim, guard, attempt) for guard in chain])
        ticket = Ticket(self, attempt, keys)
        # The claim's commit may have waited (a reader holding the ledger, up to its busy
        # timeout) after the in-claim checks ran: someone flagged meanwhile is not sent to.
        try:
            ticket.recheck()
        except TactfulError:
            ticket.release(maybe_sent=False)
            raise
        return ticket

    # ---- for senders that deliver themselves (the companion) -------------------------------

    def admit(self, request: SendRequest) -> Ticket | DryRun:
        """Offline guards, then the claim: for a sender that already holds its connection and
        knows every party (the companion, whose chat user is named by id and username). A
        platform or request in dry run gets the outbox instead of a ticket."""
        attempt = self.prepare(request)
        self.offline(attempt)
        if request.dry_run or self.config.platform(attempt.platform).dry_run:
            return self.dry_run(attempt)
        return self.claim(attempt)

    def answered(self, platform: str, inbound_keys: list[str], *, action: str) -> bool:
        """Whether a message answering any of these inbound keys is pending or sent."""
        keys = [send_key(platform, action, key, None, "") for key in inbound_keys]
        return self.ledger.find_any(keys) is not None

    def may_reach(self, platform: str, handle: str | None,
                  person_id: str | None = None) -> checks.Verdict:
        """The verdict the gate's do-not-engage guard would give this account."""
        return checks.check(self.people, platform, handle, person_id)

    def repair(self) -> list[str]:
        """Memory for every send that went out but was never written (a crash between)."""
        return repair(self.home, self.people, self.settings, self.ledger)


def _in_claim(guard: guards.Guard, attempt: Attempt, db: sqlite3.Connection) -> None:
    guard.in_claim(attempt, db)


def memo_of(attempt: Attempt, sent: Sent) -> Memo:
    post = attempt.post
    return Memo(platform=attempt.platform, handle=attempt.recipient,
                person_id=_recipient_id(attempt), action=attempt.action, text=attempt.text,
                url=sent.url, in_reply_to=(post.url or post.id) if post is not None else None,
                thread=attempt.thread, mentions=tuple(attempt.mentions), at=attempt.at,
                display_name=attempt.author.display_name if attempt.author else None)


def _recipient_id(attempt: Attempt) -> str | None:
    if attempt.author is not None and attempt.author.handle == attempt.recipient:
        return attempt.author.id
    if attempt.recipient is not None:
        return attempt.resolved.get(attempt.recipient)
    return None


def _normalized(author: Author, platform: str) -> Author:
    """An author as a read gave it, every handle normalized (an adapter may forget to). A
    party the platform named by neither handle nor id is someone nobody can check: refused."""
    for party in author.parties:
        if party.handle is None and party.id is None:
            raise Refused(f"refused: {platform}: the read named a party ({party.role}) by "
                          "neither handle nor id, so they cannot be checked; nothing was sent")
    return replace(author, handle=normalize_handle(author.handle, platform),
                   parties=tuple(_party(p, platform) for p in author.parties))


def _party(party: Party, platform: str) -> Party:
    handle = normalize_handle(party.handle, platform) if party.handle is not None else None
    return replace(party, handle=handle,
                   id=normalize_id(party.id) if party.id is not None else None)


def _action(raw: str) -> str:
    """The kind a sender (or a plugin adapter's `direct_kind`) named, in its one spelling: the
    ledger's keys, the quotas, the mention rule and memory read it, so "Reply" must not be a
    kind of its own that no earlier reply or quota counts."""
    action = raw.strip().lower()
    if action not in ENTRY_KINDS:
        raise BadInput(f"action {raw[:40]!r} is not a kind tactful sends; use one of "
                       f"{', '.join(ENTRY_KINDS)}")
    return action


def _check_text(text: str, platform: str, adapter: Adapter) -> None:
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
        unit = getattr(adapter, "text_unit", "characters")  # as the platform counts them
        raise BadInput(f"--text is {length} {unit}; {platform} allows "
                       f"{adapter.text_limit}: shorten it")


def _check_request(adapter: Adapter, attempt: Attempt, image: str | None) -> None:
    """What the platform cannot carry, refused offline (exit 2): an image where it takes none,
    and whatever the adapter's optional `check_request(action, image=)` refuses (Instagram:
    a post without an image; Facebook: a Page mentioning a person)."""
    if image is not None and not getattr(adapter, "takes_images", False):
        raise BadInput(f"--image: {attempt.platform} posts no images through tactful; leave "
                       "--image out")
    check = getattr(adapter, "check_request", None)
    if check is not None:
        check(attempt.action, image=image)


def quoted_posts(adapter: Adapter, text: str) -> list[PostRef]:
    """Posts of this platform that the text links to: a link to a post quotes it (X makes it a
    quote, others show a card), so its author is a party too."""
    found: list[PostRef] = []
    for match in _LINK.finditer(text):
        ref = _post_of(adapter, _TAIL.sub("", match.group(0).lstrip("<")))
        if ref is not None and ref.platform == adapter.platform and \
                all(r.id != ref.id for r in found):
            found.append(ref)
    return found


def _post_of(adapter: Adapter, token: str) -> PostRef | None:
    """The post a link names, in the spellings a platform links: any case of scheme and host,
    with or without its query and fragment."""
    scheme, sep, rest = token.partition("://")
    host, slash, path = (rest if sep else token).partition("/")
    canonical = (f"{scheme.lower()}://" if sep else "") + host.lower() + slash + path
    for candidate in dict.fromkeys((token, canonical, re.split(r"[?#]", canonical)[0])):
        try:
            return adapter.parse_post(candidate)
        except BadInput:
            continue  # not a post of this platform, in this spelling
        except Exception as exc:
            # Fail closed: a link the adapter cannot read may be a post by anyone.
            raise TactfulError(f"refused: the {adapter.platform} adapter could not read a "
                               f"link in the text ({type(exc).__name__}); nothing was "
                               "sent") from exc
    return None


def defaults_notice(config: Any) -> str | None:
    """The line a command that sends, previews or runs routines prints on built-in defaults."""
    if getattr(config, "source", None) is not None:
        return None
    try:
        from tactful.core.config.loader import defaults_notice as notice
    except ImportError:
        return "tactful: note: no config file found; running on built-in defaults"
    text: str = notice()
    return text
