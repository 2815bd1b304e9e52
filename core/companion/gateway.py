"""The companion's gateway: one short-lived turn per message (docs/companion.md), platform-agnostic.

A chat platform (the Telegram side, adapters/telegram/companion.py) turns what arrives into an
`Incoming` and gives a `Channel` to talk back through; everything else happens here:

- Commands: /start /help /memory /forget /export /delete /invite /pause /resume.
- Guards before any turn: group chats are ignored unless configured; a do-not-engage person is
  never answered; the limits (window and daily cap, in the user's time zone) hold a message in
  the private store and say one friendly line; the send ledger, keyed by the inbound message,
  makes sure a restart never answers one message twice.
- Bursts: messages closer than `join_seconds` are answered once, joined. A per-chat mutex keeps
  two turns of one chat apart; a global semaphore caps turns in parallel.
- A turn: compose the prompt from its parts, let the responder (no tools) answer once, split
  and pace the reply with the typing indicator, store the history. A responder that fails, hangs
  or says nothing gets the user one short honest line, and nothing is stored as a reply.

No state lives in memory between turns except the short join buffers and the locks of chats
that are mid-turn: everything else is in the session folder and the private database. Nothing
here logs message text.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import Protocol

from tactful.core.companion import checkins, limits, pacing, phrases
from tactful.core.companion.prompting import Line, compose, persona_block
from tactful.core.companion.session import HistoryWriter, Role, Session
from tactful.core.companion.store import CompanionStore
from tactful.core.companion.timers import Timers
from tactful.core.config.values import CompanionConfig
from tactful.core.errors import TactfulError
from tactful.core.memory import check as checks
from tactful.core.memory.clock import zone
from tactful.core.responders.base import Prompt, Responder
from tactful.core.schedule.events import EventLog
from tactful.core.send.adapter import Party, Sent
from tactful.core.send.attempt import SendRequest
from tactful.core.send.gate import Gate, Ticket

COMMANDS = ("start", "help", "memory", "forget", "export", "delete", "invite", "pause", "resume",
            "timezone")
GROUP_COMMANDS = ("start", "help")  # with `groups: true`; the rest act on a person's data
HISTORY_TURNS = 20  # lines of recent history in a turn's prompt
NOTES_JOB = "memory-pass"  # the store's name for the memory pass's schedule


class Blocked(Exception):
    """The platform says the user blocked the bot: never message them again."""


class ChatPlatform(Protocol):
    """What the gateway must know of the chat platform it runs on. The adapter declares it
    (the Telegram plugin's `Chats`): the core names no platform."""

    @property
    def name(self) -> str:
        """The platform's name, as memory, the ledger and the gate know it."""
        ...

    @property
    def max_length(self) -> int:
        """The longest message the platform takes, in its own unit (see `length`)."""
        ...

    def length(self, text: str) -> int:
        """A message's length as the platform counts it (Telegram: UTF-16 code units)."""
        ...

    def person_of(self, chat_id: int) -> int | None:
        """The user a chat is a private conversation with (their user id), or None when the
        chat is a group, which is no person."""
        ...

    def invite_link(self, bot: str, code: str) -> str:
        """A link that opens a chat with the bot and hands it `code` with the first message."""
        ...


class Channel(Protocol):
    """How the gateway talks back on one chat platform, and what that platform is."""

    @property
    def platform(self) -> ChatPlatform: ...

    async def typing(self, chat_id: int) -> None: ...

    async def send(self, chat_id: int, text: str, *, ticket: Ticket) -> None:
        """Send one message the gate admitted (`ticket.require(text)` first); raises Blocked
        when the user blocked the bot."""
        ...

    async def send_file(self, chat_id: int, name: str, data: bytes, *,
                        ticket: Ticket) -> None: ...


@dataclass(frozen=True)
class Incoming:
    chat_id: int
    user_id: int
    message_id: int
    at: datetime
    text: str | None  # None: a sticker, a photo, anything without text
    language_code: str | None = None
    private: bool = True
    handle: str | None = None  # the sender's username, normalized, when they have one


@dataclass
class _Buffer:
    timer: asyncio.Task[None] | None = None  # the join pause; the messages are in the store
    answering: bool = False  # the pause is over and its turn runs: it is never cancelled


@dataclass
class _ChatLock:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


Sleep = Callable[[float], Awaitable[None]]
Senders = tuple[tuple[int | None, str | None], ...]  # (user id, username) of who wrote


class Gateway:
    def __init__(self, *, home: Path, bot: str, config: CompanionConfig, persona_name: str,
                 default_tz: str, responder: Responder, channel: Channel, gate: Gate,
                 log: EventLog, clock: Callable[[], datetime],
                 rng: random.Random | None = None, sleep: Sleep = asyncio.sleep,
                 stores: Callable[[], CompanionStore] | None = None,
                 chat_mutex: Callable[[int], AbstractAsyncContextManager[None]] | None = None,
                 group_commit: bool = True) -> None:
        self.home, self.bot, self.config = home, bot, config
        self.persona = persona_block(persona_name, config.prompt)
        self.default_tz = config.default_timezone or default_tz
        self.responder, self.channel, self.gate = responder, channel, gate
        self.platform = channel.platform  # the chat platform's facts, from its adapter
        self.log, self.clock = log, clock
        self.rng = rng or random.Random()  # noqa: S311 — jitter, not security
        self.sleep = sleep
        self.timers = Timers.of(config)
        # Many workers (docs/companion.md, "Running on many workers") bring a store of their
        # shared database (each write committed as it is made), and a mutex that keeps a chat's
        # turns apart across processes. `_stores` also makes the memory pass's own store, in
        # its thread: a plain one, outside any group commit.
        self._stores = stores or (lambda: CompanionStore(home, bot))
        self._chat_mutex = chat_mutex
        # Group commit (docs/companion.md, "Throughput"): the writes of every turn in flight
        # share one durable commit round, and a turn awaits `_durable` before anything that
        # depends on them leaves the process. Off: a durable commit per write, as before. An
        # injected store (the shared database) commits each write itself: nothing to group.
        group_commit = group_commit and stores is None
        self.store = CompanionStore(home, bot, group_commit=True) if group_commit \
            else self._stores()
        if group_commit:
            gate.ledger.group_commits()
        self._history = HistoryWriter() if group_commit else None
        self.turns = asyncio.Semaphore(config.parallel_turns)
        # Drafts run in threads of their own: a draft that outlives its turn (a responder
        # ignoring its timeout) must not take the threads the next turns need.
        self._drafts = ThreadPoolExecutor(max_workers=config.parallel_turns * 2,
                                          thread_name_prefix="companion-draft")
        self._locks: dict[int, _ChatLock] = {}
        self._buffers: dict[int, _Buffer] = {}
        self._answering: set[asyncio.Task[None]] = set()  # turns of a pause a message outran

    def close(self) -> None:
        self._drafts.shutdown(wait=False, cancel_futures=True)
        if self._history is not None:
            self._history.close()
        self.store.close()
        self.gate.close()

    async def _durable(self) -> None:
        """Every write made so far, in the store and in the send ledger, is on disk (with group
        commit this waits for the round that holds them; raises `MemoryUnavailable` when the
        round holding this task's writes failed)."""
        await self.store.durable()
        await self.gate.ledger.durable()

    async def _settled(self) -> None:
        """After a message went out: what the turn wrote since, on disk. A round that fails
        now cannot undo the send; the claim, on disk since before it, keeps a second answer
        away, and the failure is logged (by kind)."""
        try:
            await self._durable()
        except TactfulError as exc:
            self.log.emit("companion.commit_failed", error=type(exc).__name__)

    async def _remember(self, session: Session, turns: list[tuple[Role, str, datetime]]) -> None:
        """Add a turn to the chat's history, durably (in the history writer's next round)."""
        if self._history is None:
            session.extend(turns)
        else:
            await self._history.extend(session, turns)

    # ---- what arrives ---------------------------------------------------------------------

    async def on_message(self, message: Incoming) -> None:
        try:
            await self._on_message(message)
        finally:
            # The platform counts the message as delivered: what it changed is on disk before
            # the handler returns (in the commit round it shares with the other turns).
            await self._durable()

    async def _on_message(self, message: Incoming) -> None:
        if message.text is None or not message.text.strip():
            return  # stickers, photos, empty: nothing to answer, nothing stored
        text = message.text.strip()
        command = _command_of(text)
        if not message.private and not self.config.groups:
            # Groups are ignored unless configured; only /start and /help get the one line
            # that says so, and nothing of the group is stored.
            if command in GROUP_COMMANDS and not self._do_not_engage(message):
                await self._group_line(message)
            return
        if self._do_not_engage(message):
            self.log.emit("companion.ignored", reason="do-not-engage")
            if command in ("delete", "forget") and message.private:
                # Their data is still theirs to remove; nothing is said back. (In a group the
                # data is everyone's: no member erases it.)
                async with self._chat(message.chat_id):
                    self._erase(command, message.chat_id)
            return
        if self._answered(message.chat_id, message.message_id):
            return  # redelivered after a restart: answered already, and counted already
        waiting = {p.message_id: p for p in self.store.pending(message.chat_id)}
        if message.message_id in waiting:
            # Redelivered while it still waits: counted already; a queued one needs its pause
            # again (the process that started it is gone), a held one just its window.
            if waiting[message.message_id].kind == "queued" and \
                    message.chat_id not in self._buffers:
                self._start_pause(message.chat_id)
            return
        first_contact = self.store.user(message.chat_id) is None
        user = self.store.touch_user(message.chat_id, language_code=message.language_code,
                                     at=message.at, tz_default=self.default_tz,
                                     handle=message.handle)
        if user.blocked:
            # Any message, /start (Telegram's "restart") included, means they unblocked us.
            self.store.set_blocked(message.chat_id, False)
        if first_contact and text.startswith("/start "):
            # A personal invite link: only the count of arrivals is kept, never who.
            self.store.record_arrival(text.split(maxsplit=1)[1].strip()[:64])
        if command in COMMANDS:
            if not message.private and command not in GROUP_COMMANDS:
                return  # in a group, one member must not read or erase what all share
            async with self._chat(message.chat_id):
                await self._command(command, message, user.language_code)
            return
        times = self.store.message_times(message.chat_id, message.at - timedelta(days=2))
        decision = limits.decide(times, message.at, self._tz(user.timezone),
                                 window_messages=self.config.window_messages,
                                 window_minutes=self.config.window_minutes,
                                 daily_cap=self.config.daily_cap)
        decision = self._rolling_day(message, times, decision)
        held = isinstance(decision, limits.Held) or \
            bool(self.store.pending(message.chat_id, kind="held"))
        if held:
            await self._hold(message, text, decision, user.language_code)
            return
        await self._buffer(message, text)

    async def _group_line(self, message: Incoming) -> None:
        if self._answered(message.chat_id, f"{message.message_id}/answer"):
            return  # redelivered after a restart
        async with self._chat(message.chat_id):
            await self._say(message.chat_id,
                            phrases.pick("group_ignored", message.language_code, self.rng),
                            key=self._inbound_key(message.chat_id,
                                                  f"{message.message_id}/answer"),
                            user_id=message.user_id, handle=message.handle)

    def _rolling_day(self, message: Incoming, times: list[datetime],
                     decision: limits.Allowed | limits.Held) -> limits.Allowed | limits.Held:
        """For a day after a time-zone change, the daily cap also counts the last 24 hours:
        a zone whose midnight just passed must not hand out a fresh day."""
        changed = self.store.timezone_set_at(message.chat_id)
        if isinstance(decision, limits.Held) or changed is None or \
                message.at - changed >= timedelta(days=1):
            return decision
        recent = sorted(t for t in times if t > message.at - timedelta(days=1))
        if len(recent) < self.config.daily_cap:
            return decision
        return limits.Held(until=recent[-self.config.daily_cap] + timedelta(days=1),
                           reason="daily")

    def _tz(self, name: str | None) -> tzinfo:
        return zone(name or self.default_tz)

    def _inbound_key(self, chat_id: int, message_id: int | str) -> str:
        return f"{self.bot}/{chat_id}/{message_id}"

    def _answered(self, chat_id: int, message_id: int | str) -> bool:
        return self.gate.answered(self.platform.name, [self._inbound_key(chat_id, message_id)],
                                  action="dm")

    def _flagged(self, handle: str | None, user_id: int | None) -> bool:
        """The gate's verdict on this person, by username and by id: flagged, or memory that
        cannot be read (fail closed), means no."""
        verdict = self.gate.may_reach(self.platform.name,
                                      handle or (str(user_id) if user_id else None),
                                      str(user_id) if user_id else None)
        return verdict.status not in (checks.KNOWN, checks.STRANGER)

    def _do_not_engage(self, message: Incoming) -> bool:
        return self._flagged(message.handle, message.user_id)

    def _request(self, chat_id: int, text: str | tuple[str, ...], keys: list[str], *,
                 user_id: int | None = None, senders: Senders = ()) -> SendRequest:
        """A message to one chat, as the gate sees it: the chat, its user by id and by the
        username they wrote with, everyone whose message it answers (in a group, each member
        who wrote), and the keys of the messages it answers."""
        user = self.store.user(chat_id)
        person = self.platform.person_of(chat_id)  # None: a group
        if user_id is None:
            user_id = person
        handle = user.handle if user is not None and person is not None else None
        parts = (text,) if isinstance(text, str) else text
        # A group is no person: its members are, and the one who wrote is a party.
        return SendRequest(platform=self.platform.name, text="\n\n".join(parts),
                           to=str(chat_id) if person is not None else None,
                           action="dm", private=True, parts=parts,
                           inbound_keys=tuple(keys),
                           parties=(Party("chat user", handle,
                                          str(user_id) if user_id else None),
                                    *(Party("who wrote", h, str(u) if u else None)
                                      for u, h in senders)))

    async def _admit(self, request: SendRequest) -> Ticket | None:
        """The gate's answer: a ticket to deliver, or None (refused, or a dry run, whose line
        is in the outbox). The refusal is logged by kind, never with text. A ticket is handed
        out only once its claim (and everything the turn wrote before it) is durable: with
        group commit, that is the round this turn shares with the others."""
        try:
            admitted = self.gate.admit(request)
            if isinstance(admitted, Ticket):
                try:
                    await self._durable()
                    # The round may have waited (a reader holding the ledger): someone flagged
                    # meanwhile is not sent to.
                    admitted.recheck()
                except TactfulError:
                    with contextlib.suppress(TactfulError):
                        # The claim went with its round, or is released unsent.
                        admitted.release(maybe_sent=False)
                    raise
        except TactfulError as exc:
            self.log.emit("companion.refused", reason=type(exc).__name__,
                          exit_code=exc.exit_code)
            return None
        return admitted if isinstance(admitted, Ticket) else None

    async def _hold(self, message: Incoming, text: str, decision: limits.Allowed | limits.Held,
                    language: str | None) -> None:
        # One release time per chat: every held message waits for the same moment and is
        # answered in the same turn, merged in order. A later, longer hold (the daily cap
        # reached while the window held) moves the whole chat's release, never part of it.
        held = self.store.pending(message.chat_id, kind="held")
        first = not held
        current = max((p.release_at for p in held), default=None)
        until = decision.until if isinstance(decision, limits.Held) else self.clock()
        moved = current is None or (isinstance(decision, limits.Held) and until > current)
        if moved or current is None:
            release = limits.release_at(until, self.rng, jitter=self.timers.release_jitter)
        else:
            release = current
        with self.store.together():  # one commit: its time (not counted), the message, the move
            if moved and current is not None:
                self.store.move_release(message.chat_id, release)
            self.store.record_user_message(message.chat_id, message.at, counted=False)
            self.store.hold(message.chat_id, message.message_id, text, message.at, release,
                            user_id=message.user_id, handle=message.handle)
        self.log.emit("companion.held", chat=message.chat_id,
                      reason=decision.reason if isinstance(decision, limits.Held) else "queued")
        if first:
            await self._say(message.chat_id, phrases.pick("hold", language, self.rng),
                            key=self._inbound_key(message.chat_id, f"{message.message_id}/hold"))

    async def _buffer(self, message: Incoming, text: str) -> None:
        # Kept in the store too: the platform counts the message as delivered, so a restart in
        # the pause (or while the responder thinks) must find it there; `release_pending`
        # answers it then, once.
        with self.store.together():  # one commit: its time and the message
            self.store.record_user_message(message.chat_id, message.at)
            self.store.hold(message.chat_id, message.message_id, text, message.at,
                            message.at + timedelta(seconds=self.config.join_seconds),
                            kind="queued", user_id=message.user_id, handle=message.handle)
        # A running pause restarts with this message (as `_start_pause` would), stopped now:
        # the chat's pause must not end while this one waits for its commit round.
        buffer = self._pause_stopped(message.chat_id)
        try:
            await self._durable()  # on disk before its pause starts (its turn may answer it)
        except BaseException:
            if self._buffers.get(message.chat_id) is buffer and buffer.timer is None:
                del self._buffers[message.chat_id]  # no pause: the timers look at the chat
            raise
        self._start_pause(message.chat_id)

    def _pause_stopped(self, chat_id: int) -> _Buffer:
        """The chat's buffer with no pause running. A pause still waiting is cancelled: the
        new message restarts it. A pause that ended runs its turn to the end, apart: cancelled
        once its answer is claimed, the claim would stay pending and the answer be lost. The
        next turn waits for the chat's mutex and answers what came meanwhile."""
        buffer = self._buffers.get(chat_id)
        timer = buffer.timer if buffer is not None else None
        if buffer is not None and timer is not None:
            if buffer.answering:
                self._answering.add(timer)
                timer.add_done_callback(self._answering.discard)
                buffer = None
            else:
                timer.cancel()
                buffer.timer = None
        if buffer is None:
            buffer = self._buffers[chat_id] = _Buffer()
        return buffer

    def _start_pause(self, chat_id: int) -> None:
        buffer = self._pause_stopped(chat_id)
        buffer.timer = asyncio.create_task(self._after_pause(chat_id))

    async def _after_pause(self, chat_id: int) -> None:
        await self.sleep(self.config.join_seconds)
        buffer = self._buffers.get(chat_id)
        if buffer is not None and buffer.timer is asyncio.current_task():
            buffer.answering = True
        try:
            await self._answer_waiting(chat_id, held_too=False)
        finally:
            buffer = self._buffers.get(chat_id)
            if buffer is not None and buffer.timer is asyncio.current_task():
                del self._buffers[chat_id]

    async def _answer_waiting(self, chat_id: int, *, held_too: bool) -> bool:
        """Answer the chat's waiting messages in one turn: the queued ones, and with
        `held_too` the held ones whose window opened. Read under the chat's mutex (a /forget
        waiting for it wins), dropped only after the turn (a stop or crash meanwhile keeps
        them, and the ledger keeps a second answer away)."""
        async with self._chat(chat_id), self.turns:
            now = self.clock()
            pending = self.store.pending(chat_id)
            # The chat's held messages go together once its release time came (rows from
            # before one release per chat may differ: the earliest decides for all).
            due = held_too and any(p.kind == "held" and p.release_at <= now for p in pending)
            waiting = [p for p in pending if p.kind == "queued" or due]
            if not waiting:
                return False
            items: list[tuple[int | str, str]] = [(p.message_id, p.text) for p in waiting]
            mode = "held" if any(p.kind == "held" for p in waiting) else "reply"
            senders = tuple(dict.fromkeys((p.user_id, p.handle) for p in waiting))
            drop = [p.message_id for p in waiting]
            answered = await self._turn(chat_id, items, mode, senders, drop=drop)
            if not answered:
                self.store.drop_pending(chat_id, drop)  # (answered: with the turn's last write)
            return answered

    async def drain(self) -> None:
        """Wait for every buffered message to be answered (tests; a clean stop)."""
        while self._buffers or self._answering:
            timers = [b.timer for b in self._buffers.values() if b.timer is not None]
            timers += self._answering
            if not timers:
                break
            await asyncio.gather(*timers, return_exceptions=True)
        for entry in list(self._locks.values()):
            async with entry.lock:
                pass

    async def idle(self, chat_id: int) -> None:
        """Wait until this chat's join pause and the turn it leads to are over (a worker hands
        the chat on only then: docs/companion.md, "Running on many workers")."""
        while (buffer := self._buffers.get(chat_id)) is not None and buffer.timer is not None:
            await asyncio.wait([buffer.timer])  # never cancels the turn, even when we are
            if self._buffers.get(chat_id) is buffer and buffer.timer.done():
                break

    # ---- one turn ---------------------------------------------------------------------------

    @asynccontextmanager
    async def _chat(self, chat_id: int) -> AsyncIterator[None]:
        """The chat's mutex. It lives only while some turn or command of that chat runs or
        waits: idle chats cost no memory between turns."""
        entry = self._locks.setdefault(chat_id, _ChatLock())
        entry.users += 1
        try:
            async with entry.lock:
                if self._chat_mutex is None:
                    yield
                else:
                    async with self._chat_mutex(chat_id):
                        yield
        finally:
            entry.users -= 1
            if entry.users == 0:
                self._locks.pop(chat_id, None)

    async def turn(self, chat_id: int, items: list[tuple[int | str, str]], *,
                   mode: str) -> bool:
        """Answer these messages (id, text) once, together; True when a reply went out."""
        async with self._chat(chat_id), self.turns:
            return await self._turn(chat_id, items, mode)

    def _may_write(self, chat_id: int, mode: str, senders: Senders = ()) -> bool:
        """Read fresh, at the moment of writing: deleted, blocked, flagged (by id or by the
        username they wrote with; in a group, anyone whose message is answered), or paused
        for a check-in means no."""
        user = self.store.user(chat_id)
        if user is None or user.blocked or (mode == "checkin" and user.paused):
            return False
        person = self.platform.person_of(chat_id)
        accounts: list[tuple[str | None, int | None]] = []
        if person is not None:
            accounts.append((user.handle, person))
        elif user.handle:
            accounts.append((user.handle, None))
        accounts += [(handle, user_id) for user_id, handle in senders]
        # Each account asked once: in a private chat the one who wrote is the chat's user.
        return not any(self._flagged(handle, user_id)
                       for handle, user_id in dict.fromkeys(accounts))

    async def _turn(self, chat_id: int, items: list[tuple[int | str, str]], mode: str,
                    senders: Senders = (), drop: list[int] | None = None) -> bool:
        """One turn; `drop`: the waiting messages it answers, dropped from the store in the
        same commit as the bot's message time once a part went out (a held answer also counts
        toward the window then, once)."""
        if not self._may_write(chat_id, mode, senders):
            return False
        items = [(m, t) for m, t in items if not self._answered(chat_id, m)]
        if not items:
            self.log.emit("companion.skipped", chat=chat_id, reason="already answered")
            return False
        text = "\n".join(t for _, t in items)
        user = self.store.user(chat_id)
        language = user.language_code if user else None
        session = Session(self.home, self.bot, chat_id)
        notes = session.notes()
        history = [Line(t.role, t.text) for t in session.recent(HISTORY_TURNS)]
        prompt = compose(persona=self.persona, mode=mode, memory_note=notes.memory,
                         style_note=notes.style, history=history, message=text)
        session.write_prompt(prompt.system + "\n\n" + prompt.user)
        started = self.clock()
        reply = await self._draft(prompt)
        if not self._may_write(chat_id, mode, senders):
            return False  # deleted, flagged or paused while the responder thought
        if reply is None:
            if mode == "checkin":
                return False  # nobody asked: no apology for a check-in that did not happen
            await self._say(chat_id, phrases.pick("failed", language, self.rng),
                            key=self._inbound_key(chat_id, f"{items[-1][0]}/failed"))
            await self._remember(session, [("user", text, started)])
            return False
        parts = _fit(pacing.split(reply), self.platform.max_length, self.platform.length)
        ticket = await self._admit(self._request(
            chat_id, tuple(parts), [self._inbound_key(chat_id, m) for m, _ in items],
            senders=senders))
        if ticket is None:
            return False  # refused by the gate (a flagged @mention, a quota…), or a dry run
        thinking = (self.clock() - started).total_seconds()
        delays = pacing.typing_delays(parts, thinking=thinking, rng=self.rng,
                                      pace=self.timers.typing_pace)
        said: list[tuple[Role, str, datetime]] = \
            [] if mode == "checkin" else [("user", text, started)]
        sent = 0
        try:
            for part, delay in zip(parts, delays, strict=True):
                await self.channel.typing(chat_id)
                await self.sleep(delay)
                if not self._may_write(chat_id, mode, senders):
                    break  # flagged, blocked or deleted while typing: no further part
                await self.channel.send(chat_id, part, ticket=ticket)
                sent += 1
                said.append(("bot", part, self.clock()))
        except Blocked:
            self.store.set_blocked(chat_id, True)
            self.log.emit("companion.blocked", chat=chat_id)
        except Exception as exc:  # noqa: BLE001 — the platform refused a part: say so once
            self.log.emit("companion.send_failed", chat=chat_id, error=type(exc).__name__,
                          sent=sent)
            if sent == 0:
                ticket.release(maybe_sent=False)
                if mode != "checkin":
                    await self._say(chat_id, phrases.pick("failed", language, self.rng),
                                    key=self._inbound_key(chat_id, f"{items[-1][0]}/failed"))
                    await self._remember(session, [("user", text, started)])
                return False
        finally:
            # One write for the whole turn, whatever part of it went out; on disk before the
            # store drops the messages it answers.
            if sent or not said or said[0][0] == "user":
                await self._remember(session, said if sent else said[:1])
            if sent:
                with self.store.together():
                    self.store.record_bot_message(chat_id, self.clock())
                    if drop is not None:
                        if mode == "held":
                            self.store.count_message(chat_id, self.clock())
                        self.store.drop_pending(chat_id, drop)
        if sent:
            ticket.settle(Sent(id=str(items[-1][0])))
        else:
            ticket.release(maybe_sent=False)  # blocked before the first part: nothing went out
            return False
        await self._settled()  # the turn is done once what it wrote is on disk
        self.log.emit("companion.turn", chat=chat_id, mode=mode, parts=len(parts),
                      thinking_ms=int(thinking * 1000))
        return True

    async def _draft(self, prompt: Prompt) -> str | None:
        loop = asyncio.get_running_loop()
        try:
            reply = await asyncio.wait_for(
                loop.run_in_executor(self._drafts, self.responder.draft, prompt),
                timeout=self.config.turn_timeout)
        except Exception as exc:  # noqa: BLE001 — a broken responder must not end the bot
            self.log.emit("companion.draft_failed", error=type(exc).__name__)
            return None
        reply = reply.strip()
        return reply or None

    async def _say(self, chat_id: int, text: str, *, key: str,
                   user_id: int | None = None, handle: str | None = None) -> bool:
        """One line to the chat (a hold line, a command's answer), through the gate."""
        senders: Senders = ((user_id, handle),) if handle else ()
        ticket = await self._admit(self._request(chat_id, text, [key], user_id=user_id,
                                                 senders=senders))
        if ticket is None:
            return False
        try:
            await self.channel.send(chat_id, text, ticket=ticket)
        except Blocked:
            ticket.release(maybe_sent=False)
            self.store.set_blocked(chat_id, True)
            return False
        except Exception as exc:  # noqa: BLE001 — a line that cannot be said is logged, no more
            ticket.release(maybe_sent=False)
            self.log.emit("companion.send_failed", chat=chat_id, error=type(exc).__name__,
                          sent=0)
            return False
        ticket.settle(Sent(id=_sent_id(key)))
        self.store.record_bot_message(chat_id, self.clock())
        await self._settled()
        return True

    async def _send_file(self, chat_id: int, name: str, data: bytes, *, key: str) -> None:
        ticket = await self._admit(self._request(chat_id, file_line(name), [key]))
        if ticket is None:
            return
        try:
            await self.channel.send_file(chat_id, name, data, ticket=ticket)
        except Exception:
            ticket.release(maybe_sent=False)
            raise
        ticket.settle(Sent(id=_sent_id(key)))
        await self._settled()

    def _erase(self, command: str, chat_id: int) -> None:
        from tactful.core.companion import erasure

        self._buffers.pop(chat_id, None)
        if command == "forget":
            erasure.forget(self.store, self.home, self.bot, chat_id)
            return
        erasure.delete(self.store, self.home, self.bot, chat_id)
        # The ledger keeps hashed keys (so nothing is answered twice); the chat id goes.
        self.gate.ledger.forget(self.platform.name, str(chat_id))

    # ---- commands ---------------------------------------------------------------------------

    async def _command(self, command: str, message: Incoming, language: str | None) -> None:
        from tactful.core.companion import erasure

        chat = message.chat_id
        self.log.emit("companion.command", chat=chat, command=command)
        key = self._inbound_key(chat, f"{message.message_id}/answer")

        async def say(text: str) -> bool:
            return await self._say(chat, text, key=key, user_id=message.user_id)

        if command in ("start", "help"):
            await say(phrases.pick("welcome" if command == "start" else "help",
                                               language, self.rng))
        elif command == "memory":
            notes = Session(self.home, self.bot, chat).notes()
            if not (notes.memory or notes.style):
                await say(phrases.pick("memory_empty", language, self.rng))
            else:
                await say(f"{notes.memory or '—'}\n\n{notes.style or '—'}")
        elif command == "forget":
            self._erase("forget", chat)
            await say(phrases.pick("forgotten", language, self.rng))
        elif command == "export":
            await self._send_file(chat, "tactful-notes.md",
                                  erasure.export(self.home, self.bot, chat), key=key)
        elif command == "delete":
            self._erase("delete", chat)  # first: a confirmation that fails must not keep it
            await say(phrases.pick("deleted", language, self.rng))
        elif command == "invite":
            code = self.store.invite_code(chat)
            await say(self.platform.invite_link(self.bot, code))
        elif command == "pause":
            self.store.set_paused(chat, True)
            await say(phrases.pick("paused", language, self.rng))
        elif command == "resume":
            self.store.set_paused(chat, False)
            await say(phrases.pick("resumed", language, self.rng))
        elif command == "timezone":
            # Telegram never says where someone lives: the daily cap, quiet hours and
            # check-ins follow this once they set it (docs/companion.md).
            # Once a day: a zone whose midnight just passed would otherwise reset the cap.
            zone_name = _argument(message.text or "")
            user = self.store.user(chat)
            last = self.store.timezone_set_at(chat)
            if not zone_name:
                await say(phrases.pick("timezone_now", language, self.rng).format(
                    zone=user.timezone if user else self.default_tz))
            elif (found := _time_zone(zone_name)) is None:
                await say(phrases.pick("timezone_unknown", language, self.rng))
            elif last is not None and message.at - last < timedelta(days=1):
                await say(phrases.pick("timezone_later", language, self.rng))
            else:
                self.store.set_timezone(chat, found, message.at)
                await say(phrases.pick("timezone_set", language, self.rng).format(
                    zone=found))

    # ---- what runs on a timer ---------------------------------------------------------------

    def sweep(self) -> int:
        """History goes `history_days` after the user's last message (start-up, every pass)."""
        from tactful.core.companion import retention

        removed = retention.sweep(self.store, self.home, self.bot, self.clock(),
                                  history_days=self.config.history_days)
        self.log.emit("companion.sweep", sessions_reset=removed)
        return removed

    async def memory_pass(self) -> None:
        """Rewrite both notes of every chat that wrote since the last pass and is quiet."""
        from tactful.core.companion import notes

        def job() -> notes.PassReport:
            store = self._stores()  # a connection of the worker thread's own
            try:
                return notes.run_pass(store, self.home, self.bot, self.responder, self.clock(),
                                      quiet_minutes=self.config.quiet_minutes,
                                      pass_messages=self.config.pass_messages)
            finally:
                store.close()

        report = await asyncio.to_thread(job)
        self.log.emit("companion.memory_pass", **{k: v for k, v in vars(report).items()
                                                  if isinstance(v, int)})

    async def release_pending(self) -> int:
        """Answer waiting messages whose time came: held ones when the window opened, and
        queued ones a restart left behind. Each chat once, joined."""
        answered = 0
        for chat_id in self.store.due_pending(self.clock()):
            if chat_id in self._buffers:
                continue  # its join pause is running: that answers it
            if await self._answer_waiting(chat_id, held_too=True):
                answered += 1
        return answered

    async def check_in(self) -> int:
        """Write first to the users whose check-in is due, every brake applied."""
        if not self.config.checkins:
            return 0
        sent = 0
        now = self.clock()
        start, end = checkins.parse_quiet_hours(self.config.quiet_hours)
        for user in self.store.users():
            if user.blocked or user.paused:
                continue
            state = checkins.CheckinState(
                started_at=user.started_at, last_user_at=user.last_user_at,
                last_checkin_at=user.last_checkin_at, checkins_sent=tuple(user.checkins_sent),
                unanswered=user.unanswered, paused=user.paused, blocked=user.blocked,
                tz=self._tz(user.timezone))
            due = checkins.due(state, now, quiet_hours=(start, end),
                               per_week=self.config.checkins_per_week,
                               unanswered_before_backoff=self.config.unanswered_before_backoff,
                               rng=self.rng)
            if due is None:
                continue
            stamp = f"checkin-{int(now.timestamp())}"
            went = await self.turn(user.chat_id, [(stamp, "")], mode="checkin")
            # Recorded even when nothing went out (a draft that failed): the brakes then hold
            # the next try back instead of trying again every tick.
            self.store.record_checkin(user.chat_id, now)
            if went:
                self.log.emit("companion.checkin", chat=user.chat_id, kind=due.kind)
                sent += 1
        return sent


def _sent_id(key: str) -> str:
    """What the ledger keeps as a line's post id: the inbound message and what answered it
    ("5/answer"), never the bot and chat before them. A /delete is confirmed after the chat
    was erased, so its line must not bring the chat id back."""
    return key.split("/", 2)[-1]


def file_line(name: str) -> str:
    """What the gate is shown for a file sent in a chat: its name."""
    return f"[a file: {name}]"


def _command_of(text: str) -> str | None:
    """`/memory@my_bot extra` → "memory"; None when the text is not a command."""
    if not text.startswith("/") or len(text) < 2:
        return None
    return text[1:].split(maxsplit=1)[0].split("@", 1)[0].lower()


def _fit(parts: list[str], limit: int, length: Callable[[str], int] = len) -> list[str]:
    """Parts no longer than the platform takes, measured as it measures (`length`): a long one
    is cut at a space when it can be."""
    out: list[str] = []
    for part in parts:
        while length(part) > limit:
            cut = min(limit, len(part))
            while cut > 1 and length(part[:cut]) > limit:
                # A character counts at least one unit: step back by the excess, never past 1.
                cut -= max(1, length(part[:cut]) - limit)
            space = part.rfind(" ", 0, cut)
            cut = space if space > cut // 2 else cut
            out.append(part[:cut].rstrip())
            part = part[cut:].lstrip()
        if part:
            out.append(part)
    return out


def _argument(text: str) -> str:
    parts = text.strip().split(maxsplit=1)
    return parts[1].strip()[:64] if len(parts) == 2 else ""


def _time_zone(name: str) -> str | None:
    """An IANA Area/City zone (or UTC) as the user typed it (any case), or None. Names such as
    `localtime` or `Factory` are the server's business, not a place."""
    from zoneinfo import available_timezones

    wanted = name.strip().replace(" ", "_").lower()
    if wanted in ("utc", "etc/utc"):
        return "UTC"
    return next((z for z in sorted(available_timezones())
                 if z.lower() == wanted and "/" in z and not z.startswith(("Etc/", "posix",
                                                                          "right/"))), None)
