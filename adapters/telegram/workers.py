"""The companion on many workers (docs/companion.md, "Running on many workers"): one poller, N
workers, PostgreSQL between them.

- The poller (`tactful companion poll`) is the one getUpdates consumer Telegram allows. Each
  batch of updates is written to the `updates` table (Telegram's update_id is the key, so a
  redelivery is a no-op) together with the next offset, committed, and only then confirmed to
  Telegram by the next getUpdates: a crash in between makes Telegram send them again, never
  lose them. The commit NOTIFYs the workers (no payload: nothing of a chat goes through the
  notification queue).
- A worker (`tactful companion worker`) LISTENs, and also looks every second (a notification
  is lost when no worker listens). It takes a chat that has updates with
  `pg_try_advisory_lock` on a connection of its own (session level: a killed worker's locks go
  with its connection), feeds that chat's updates to the gateway strictly in update_id order,
  deletes each row once handled (its text goes with it), waits until the chat's turn is over,
  and only then lets the chat go. At most `parallel_turns` chats per worker at once, so a busy
  worker leaves chats to the others.
- The gateway's per-chat mutex becomes a second advisory lock per chat (a turn started by the
  release timer of another worker waits for it); held answers are released by whichever worker
  looks first. Check-ins and the memory pass run on one worker only: the one that holds the
  timers' advisory lock, taken again by another when that worker dies.
- A worker killed mid-turn: the message is still in the store's `pending` rows and its locks
  are gone, so the next worker's release timer answers it; if the send ledger was already
  claimed (the answer may have gone out), the message is never answered again (fail closed).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from aiogram import Bot
from aiogram.types import BotCommand, Message

from tactful.core.companion.gateway import COMMANDS, NOTES_JOB, Gateway
from tactful.core.errors import MemoryUnavailable
from tactful.core.memory.postgres import Connection, lock_key
from tactful.core.schedule.events import EventLog

from .companion import DESCRIPTIONS, incoming

if TYPE_CHECKING:
    import psycopg

    from tactful.core.app import App
    from tactful.core.companion.postgres import PostgresStore

LOOK_EVERY = 1.0  # seconds between looks at the queue when no notification came
POLL_TIMEOUT = 10  # seconds a getUpdates long poll waits
ERASING = ("delete", "forget")  # commands after which the queue row is scrubbed too


def _erasing(text: str) -> bool:
    """A /delete or /forget (also as /delete@bot): its queue row is scrubbed after it."""
    word = text.strip().split(maxsplit=1)[0] if text.strip() else ""
    return word[1:].split("@", 1)[0].lower() in ERASING if word.startswith("/") else False


def channel_of(schema: str) -> str:
    return f"{schema}_updates"


class Locks:
    """Advisory locks on one connection of their own: a worker's chats, and the timers."""

    def __init__(self, dsn: str, bot: str) -> None:
        import psycopg

        self.bot = bot
        self._guard = threading.Lock()
        self.db: psycopg.Connection[Any] = psycopg.connect(
            dsn, autocommit=True, application_name=f"tactful-locks-{bot}", connect_timeout=10)

    def key(self, kind: str, chat_id: int | None = None) -> int:
        return lock_key("tactful-companion", self.bot, kind, chat_id)

    def _ask(self, query: str, key: int) -> bool:
        import psycopg

        try:
            with self._guard:
                row = self.db.execute(query, (key,)).fetchone()
        except psycopg.Error as exc:
            # The session is gone, and with it every lock this worker held: stop.
            raise MemoryUnavailable(f"the worker's lock connection to companion.database "
                                    f"failed ({type(exc).__name__}); restart the worker") from None
        return bool(row and row[0])

    def try_lock(self, key: int) -> bool:
        return self._ask("SELECT pg_try_advisory_lock(%s)", key)

    def unlock(self, key: int) -> None:
        if not self._ask("SELECT pg_advisory_unlock(%s)", key):
            # A lock we thought we held is not ours: the session was lost. Never go on as if
            # the chat were still ours alone.
            raise RuntimeError("an advisory lock of this worker was lost; stopping")

    @asynccontextmanager
    async def hold(self, key: int) -> AsyncIterator[None]:
        pause = 0.005
        while not self.try_lock(key):
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.1)
        try:
            yield
        finally:
            self.unlock(key)

    def chat_mutex(self, chat_id: int) -> contextlib.AbstractAsyncContextManager[None]:
        """The gateway's per-chat mutex across workers (its in-process lock is taken first)."""
        return self.hold(self.key("turn", chat_id))

    def close(self) -> None:
        self.db.close()


# ---- the poller ------------------------------------------------------------------------------

def _next_update(db: Connection) -> int:
    row = db.execute("SELECT next_update FROM poller WHERE id = 1").fetchone()
    return int(row[0]) if row else 0


def store_updates(db: Connection, channel: str, updates: list[tuple[int, int, str]],
                  next_update: int) -> None:
    """(update_id, chat_id, message JSON) rows and the next offset, in one commit, NOTIFYing
    the workers at that commit."""
    with db.transaction() as tx:
        tx.executemany("INSERT OR IGNORE INTO updates (update_id, chat_id, body) VALUES (?, ?, ?)",
                       updates)
        tx.execute("INSERT INTO poller (id, next_update) VALUES (1, ?) ON CONFLICT (id) "
                   "DO UPDATE SET next_update = greatest(poller.next_update, "
                   "excluded.next_update)", (next_update,))
        tx.execute("SELECT pg_notify(?, '')", (channel,))


async def poll(bot: Bot, db: Connection, log: EventLog, stop: threading.Event, *,
               timeout: int = POLL_TIMEOUT) -> None:
    """Take updates from Telegram into the queue until `stop` is set."""
    await bot.delete_webhook()
    await bot.set_my_commands([BotCommand(command=c, description=DESCRIPTIONS[c])
                               for c in COMMANDS])
    channel = channel_of(db.schema)
    offset = _next_update(db)
    log.emit("companion.poller_start")
    while not stop.is_set():
        fetch = asyncio.create_task(bot.get_updates(
            offset=offset or None, timeout=timeout, allowed_updates=["message"]))
        while not fetch.done() and not stop.is_set():
            await asyncio.wait([fetch], timeout=0.2)
        if not fetch.done():
            fetch.cancel()  # not confirmed: Telegram sends them again to the next poller
            with contextlib.suppress(BaseException):
                await fetch
            break
        try:
            updates = fetch.result()
        except Exception as exc:  # noqa: BLE001 — a failed poll is tried again
            log.emit("companion.poll_failed", error=type(exc).__name__)
            await asyncio.sleep(1)
            continue
        if not updates:
            continue
        rows = [(u.update_id, u.message.chat.id, u.message.model_dump_json(exclude_none=True))
                for u in updates if u.message is not None]
        offset = max(u.update_id for u in updates) + 1
        store_updates(db, channel, rows, offset)
        log.emit("companion.polled", updates=len(updates))
    log.emit("companion.poller_stop")


# ---- a worker ----------------------------------------------------------------------------------

class Worker:
    """Feeds queued updates to this process's gateway, chat by chat, and runs its timers."""

    def __init__(self, gateway: Gateway, store: PostgresStore, locks: Locks, dsn: str,
                 log: EventLog, clock: Callable[[], datetime], *, pass_every: float,
                 tick: float, first_pass: float | None = None) -> None:
        self.gateway, self.store, self.locks, self.dsn = gateway, store, locks, dsn
        self.log, self.clock = log, clock
        self.pass_every, self.tick = pass_every, tick
        self.first_pass = pass_every if first_pass is None else first_pass
        self.queue: Connection = store.db
        self.channel = channel_of(self.queue.schema)
        self.room = max(1, gateway.config.parallel_turns)
        self._active: dict[int, asyncio.Task[None]] = {}
        self._wake = asyncio.Event()
        self._leader = False
        self._broken: Exception | None = None  # a lock connection lost: stop, fail closed

    async def run(self, stop: threading.Event) -> None:
        self.gateway.sweep()
        listener = asyncio.create_task(self._listen(stop))
        timers = asyncio.create_task(self._timers(stop))
        self.log.emit("companion.worker_start", bot=self.gateway.bot)
        try:
            while not stop.is_set():
                if listener.done() and listener.exception() is not None:
                    raise listener.exception()  # type: ignore[misc]
                if self._broken is not None:
                    raise self._broken
                self._dispatch()
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=LOOK_EVERY)
        finally:
            for task in (listener, timers):
                task.cancel()
            if self._active:
                await asyncio.wait(list(self._active.values()), timeout=30)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.gateway.drain(), timeout=30)
            self.log.emit("companion.worker_stop", bot=self.gateway.bot)

    async def _listen(self, stop: threading.Event) -> None:
        import psycopg
        from psycopg import sql

        async with await psycopg.AsyncConnection.connect(
                self.dsn, autocommit=True, application_name="tactful-listen") as db:
            await db.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
            while not stop.is_set():
                async for _ in db.notifies(timeout=LOOK_EVERY):
                    self._wake.set()

    def _dispatch(self) -> None:
        """Take the chats with waiting updates that no worker has, oldest update first."""
        rows = self.queue.execute("SELECT chat_id FROM updates GROUP BY chat_id "
                                  "ORDER BY min(update_id)").fetchall()
        for (chat,) in rows:
            chat_id = int(chat)
            if len(self._active) >= self.room:
                return
            if chat_id in self._active or not self.locks.try_lock(self._claim(chat_id)):
                continue
            self._active[chat_id] = asyncio.create_task(self._consume(chat_id))

    def _claim(self, chat_id: int) -> int:
        return self.locks.key("queue", chat_id)

    async def _consume(self, chat_id: int) -> None:
        try:
            while True:
                rows = self.queue.execute("SELECT update_id, body FROM updates WHERE chat_id = ? "
                                          "ORDER BY update_id", (chat_id,)).fetchall()
                if not rows:
                    break
                for update_id, body in rows:
                    erasing = await self._handle(str(body))
                    self.queue.execute("DELETE FROM updates WHERE update_id = ?", (update_id,))
                    if erasing:
                        self.store.vacuum()  # the command's own row leaves no byte either
                        self.log.emit("companion.scrubbed")
                # The chat's turn over before the next batch: what arrived meanwhile joins.
                await self.gateway.idle(chat_id)
        except Exception as exc:  # noqa: BLE001 — the rows stay; another look tries again
            self.log.emit("companion.worker_failed", error=type(exc).__name__)
            await asyncio.sleep(LOOK_EVERY)  # not at once: the database may be restarting
        finally:
            self._active.pop(chat_id, None)
            try:
                self.locks.unlock(self._claim(chat_id))
            except Exception as exc:  # noqa: BLE001 — reported by `run`, which stops
                self._broken = exc
            self._wake.set()

    async def _handle(self, body: str) -> bool:
        """One update through the gateway; True when it was a command that erases. A database
        that fails raises: the row stays for the next look (the gateway takes a message it
        has seen again as a redelivery); any other failure is this update's alone."""
        try:
            message = Message.model_validate_json(body)
            arrived = incoming(message)
            if arrived is None:
                return False
            await self.gateway.on_message(arrived)
            return _erasing(arrived.text or "")
        except MemoryUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 — one bad update never stops the worker
            self.log.emit("companion.update_failed", error=type(exc).__name__)
            return False

    async def _timers(self, stop: threading.Event) -> None:
        passing: asyncio.Task[None] | None = None
        while not stop.is_set():
            await asyncio.sleep(self.tick)
            try:
                await self.gateway.release_pending()
                if not self._leader:
                    self._leader = self.locks.try_lock(self.locks.key("timers"))
                    if self._leader:
                        self.log.emit("companion.timers_taken", bot=self.gateway.bot)
                        if self.store.due_at(NOTES_JOB) is None:
                            self.store.set_due(NOTES_JOB, self.clock() +
                                               timedelta(seconds=self.first_pass))
                if not self._leader:
                    continue
                await self.gateway.check_in()
                due = self.store.due_at(NOTES_JOB)
                if (due is None or self.clock() >= due) and (passing is None or passing.done()):
                    self.store.set_due(NOTES_JOB, self.clock() + timedelta(seconds=self.pass_every))
                    passing = asyncio.create_task(self._pass_and_sweep())
            except Exception as exc:  # noqa: BLE001 — a step that fails tries next tick
                self.log.emit("companion.timer_failed", error=type(exc).__name__)

    async def _pass_and_sweep(self) -> None:
        for step in (self.gateway.memory_pass, self.gateway.sweep):
            try:
                result = step()
                if asyncio.iscoroutine(result):
                    await result
            except Exception as exc:  # noqa: BLE001
                self.log.emit("companion.timer_failed", error=type(exc).__name__)


# ---- the services ------------------------------------------------------------------------------

def database(app: App) -> str:
    """The configured DSN, checked (no password), and the server reached, before anything
    else happens: a worker that cannot share state must not answer anyone."""
    import psycopg

    from tactful.core.errors import BadInput, MemoryUnavailable
    from tactful.core.memory.postgres import check_dsn, shown

    dsn = app.config.companion.database
    where = f"{app.config.source}: " if app.config.source else ""
    if not dsn:
        raise BadInput(f"{where}companion.database is not set: many workers share their state "
                       "in PostgreSQL; set it to a connection string (docs/companion.md, "
                       "\"Running on many workers\")")
    check_dsn(dsn, f"{where}companion.database")
    try:
        psycopg.connect(dsn, connect_timeout=10).close()
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise MemoryUnavailable(f"{where}companion.database ({shown(dsn)}) cannot be reached: "
                                f"{first}; check that the server runs and the role may log in; "
                                "nothing was sent") from None
    return dsn


async def _bot(app: App) -> tuple[Bot, str]:
    from tactful.core.send import credentials
    from tactful.core.send.adapters import settings_for

    from .companion import make_bot
    from .platform import NAME

    settings = settings_for(NAME, app.config)
    token = credentials.read(NAME, settings.account, ("token",))["token"]
    bot = make_bot(token, settings.base_url)
    try:
        me = await bot.get_me()
    except BaseException:
        await bot.session.close()
        raise
    return bot, (me.username or settings.account).lower()


async def serve_poller(app: App, log: EventLog, stop: threading.Event) -> None:
    """`tactful companion poll`: Telegram's updates into the shared queue until `stop`."""
    from tactful.core.companion.postgres import PostgresStore

    dsn = database(app)
    bot, name = await _bot(app)
    try:
        store = PostgresStore(app.home.root, name, dsn)  # the schema, made once
        try:
            await poll(bot, store.db, log, stop)
        finally:
            store.close()
    finally:
        await bot.session.close()


async def serve_worker(app: App, log: EventLog, stop: threading.Event) -> None:
    """`tactful companion worker`: one of N processes answering from the shared queue."""
    from dataclasses import replace

    from tactful.core.companion.postgres import PostgresStore
    from tactful.core.companion.timers import check as check_timers
    from tactful.core.companion.timers import precise_clock
    from tactful.core.memory.postgres import check_erasable
    from tactful.core.responders.choose import responder_for
    from tactful.core.send.ledger_postgres import PostgresLedger

    from .companion import TelegramChannel

    config = app.config
    timers = check_timers(config.companion)  # BadInput (exit 2) below a production floor
    dsn = database(app)
    responder = responder_for(config.companion.responder, config, app.plugins,
                              where="companion.responder")
    bot, name = await _bot(app)
    locks: Locks | None = None
    gateway: Gateway | None = None
    try:
        clock = precise_clock(app.settings.tz, app.now)
        locks = Locks(dsn, name)
        ledger = PostgresLedger(app.home.root, dsn)
        gate = replace(app.make_gate(), _ledger=ledger)
        home = app.home.root
        gateway = Gateway(
            home=home, bot=name, config=config.companion, persona_name=config.persona.name,
            default_tz=config.persona.timezone, responder=responder,
            channel=TelegramChannel(bot, log), gate=gate, log=log, clock=clock,
            stores=lambda: PostgresStore(home, name, dsn, check=False),
            chat_mutex=locks.chat_mutex)
        store = gateway.store
        if not isinstance(store, PostgresStore):
            raise TypeError("the gateway did not take the PostgreSQL store it was given")
        for db in (store.db, ledger.db):
            check_erasable(db, "companion.database")
        worker = Worker(gateway, store, locks, dsn, log, clock, pass_every=timers.pass_every,
                        tick=timers.release_tick, first_pass=timers.first_pass)
        await worker.run(stop)
    finally:
        if gateway is not None:
            gateway.close()
        if locks is not None:
            locks.close()
        await bot.session.close()
