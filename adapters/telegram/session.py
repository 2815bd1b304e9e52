"""The Telegram session: the Bot API through aiogram 3, behind the synchronous Session contract.

aiogram is asynchronous and the pipeline is not, so each session owns one event loop, run in a
thread of its own: every method hands a coroutine to that loop and waits for it with a hard
bound. A thread (rather than `run_until_complete` in the caller's thread) lets the session be
used from code that already runs an event loop. `close` closes aiogram's aiohttp session on that
loop, then stops and closes the loop.

What the Bot API can and cannot do, and so what this session does:
- There is no read of a message by id. In a private chat the author of every message the bot
  did not write is the chat's user, and a private chat's id is that user's id: `author` reads
  the chat (`getChat`, one request). In a group nobody can be named from a message id alone:
  `author` refuses with BadInput, without a request, and asks for `--to`.
- A user's username cannot be turned into an id (`getChat` takes usernames of public chats
  only): `resolve` answers numeric ids and None otherwise, without a request.
- Replies carry `reply_parameters` with `allow_sending_without_reply=false`: if the message is
  gone, Telegram refuses rather than posting an unthreaded message.
- Nothing is retried: aiogram's default session has no retry middleware, and a failed write is
  reported (PlatformDown with `maybe_sent`) for the ledger to decide.
- A failure becomes the one tactful error of core/send/answers.py (docs/sending.md, "One answer
  per HTTP answer"), decided on the HTTP status itself, which `_StatusSession` keeps on
  aiogram's exception; Telegram's own facts stay in `_answer`.
Message text and the token never reach a log line or an error message.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from datetime import UTC
from typing import Any, TypeVar

import aiohttp
from aiogram import Bot
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import PRODUCTION, TelegramAPIServer
from aiogram.exceptions import (
    AiogramError,
    ClientDecodeError,
    DetailedAiogramError,
    TelegramConflictError,
    TelegramMigrateToChat,
    TelegramNetworkError,
    TelegramRetryAfter,
)
from aiogram.methods import Response, TelegramMethod
from aiogram.methods.base import TelegramType
from aiogram.types import Chat, Message, ReplyParameters, Update, User
from aiogram.utils.token import TokenValidationError

from tactful.core.errors import BadInput, TactfulError
from tactful.core.memory.handles import normalize_handle
from tactful.core.send.adapter import (
    Author,
    AuthorUnknown,
    Inbound,
    Page,
    PostRef,
    Sent,
    Unauthorized,
)
from tactful.core.send.answers import Answer, Failure, error_for

from .adapter import PLATFORM, post_url, split_post_id

T = TypeVar("T")

MAX_UPDATES = 100  # the most getUpdates returns at once
_GRACE = 2.0  # on top of aiohttp's own timeout, for the loop thread's bound on a whole call
_STATUS = "tactful_http_status"  # the attribute `_StatusSession` puts on aiogram's errors


class _LoopThread:
    """One event loop in a daemon thread; coroutines are run on it from any thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever,
                                        name="tactful-telegram-loop", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    def close(self) -> None:
        # A call abandoned at its time bound may still be pending: end it here, so that no
        # task or connection is left for the garbage collector to complain about.
        with contextlib.suppress(Exception):
            self.run(_cancel_others(), timeout=2)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        self.loop.close()


async def _cancel_others() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()


class _StatusSession(AiohttpSession):
    """aiogram's session, keeping the HTTP status on the error it raises for an answer.

    aiogram says the status only through the class of its exception, and not at all for a
    status it has no class for (422, 405, …) or an answer it could not decode (an HTML 502
    from a proxy): the one mapping (core/send/answers.py) decides on the status itself."""

    def check_response(self, bot: Bot, method: TelegramMethod[TelegramType],
                       status_code: int, content: str) -> Response[TelegramType]:
        try:
            return super().check_response(bot, method, status_code, content)
        except Exception as exc:
            setattr(exc, _STATUS, status_code)
            raise


class _LoopbackSession(_StatusSession):
    """The same, closed without aiogram's 250 ms pause: the pause lets TLS connections shut
    down gracefully, and a plain-http server (an emulator, a local Bot API server) has none."""

    async def close(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()


class TelegramSession:
    """A connected bot: one aiogram Bot, one loop thread, closed together by `close`."""

    def __init__(self, token: str, *, base_url: str | None, timeout: float) -> None:
        self._token = token
        self._timeout = timeout
        api = TelegramAPIServer.from_base(base_url) if base_url else PRODUCTION
        try:
            kind = _LoopbackSession if (base_url or "").startswith("http://") else _StatusSession
            self._bot = Bot(token, session=kind(api=api, timeout=timeout))
        except TokenValidationError:
            raise Unauthorized(PLATFORM, "the stored token is not a bot token") from None
        self._loop: _LoopThread | None = _LoopThread()
        self._username: str | None = None  # the bot's own, read once when a group needs it

    # ---- the Session contract ---------------------------------------------------------------

    def author(self, post: PostRef) -> Author:
        chat, _ = self._post(post)
        if not chat.isdigit():
            raise AuthorUnknown(
                f"telegram: the Bot API cannot tell who wrote message {post.id} (a group or "
                "channel message can only be read as it arrives); name the person you answer "
                "with --to HANDLE so the guards can check them")
        info = self._call(lambda: self._bot.get_chat(chat_id=int(chat)), write=False,
                          what="reading the chat (getChat)")
        if info.type != "private":
            raise AuthorUnknown(f"telegram: chat {chat} is not a private chat; name the "
                                "person you answer with --to HANDLE")
        handle = normalize_handle(info.username, PLATFORM) if info.username else str(info.id)
        name = " ".join(p for p in (info.first_name, info.last_name) if p) or None
        # A bot cannot chat privately with another bot, so the user of a private chat is a
        # person (is_bot False). The chat is the thread: Telegram has no other root to name.
        return Author(handle=handle, id=str(info.id), display_name=name, is_bot=False,
                      thread=chat, url=None)

    def resolve(self, handle: str) -> str | None:
        """A numeric handle is its own id; a username cannot be looked up (the Bot API has no
        user search), so None, without a request. `TelegramAdapter.resolves_handles` is
        False: the send gate never takes this None as "no such account"."""
        body = handle[1:] if handle.startswith("@") else handle
        return body if body.isdigit() else None

    def send(self, text: str, *, reply_to: PostRef | None, to: str | None,
             mentions: Mapping[str, str | None]) -> Sent:
        # Telegram makes the mention entities itself from "@username" in the text, so
        # `mentions` needs no translation here.
        if reply_to is not None:
            chat, message_id = self._post(reply_to)
            reply: ReplyParameters | None = ReplyParameters(
                message_id=message_id, allow_sending_without_reply=False)
        elif to is not None:
            chat, reply = self._chat_of(to), None
        else:
            raise BadInput("telegram has no public timeline to post to: give --to CHAT (a user "
                           "id, @channel or group id) or --reply-to POST")
        chat_id: int | str = int(chat) if chat.lstrip("-").isdigit() else chat
        message = self._call(
            lambda: self._bot.send_message(chat_id=chat_id, text=text, reply_parameters=reply),
            write=True, what="posting (sendMessage)")
        return Sent(id=f"{message.chat.id}/{message.message_id}",
                    url=_message_url(message.chat, message.message_id))

    def fetch_inbound(self, since: str | None, limit: int) -> Page:
        """One getUpdates (no long poll), plus one getMe the first time a group message must be
        checked for a mention of the bot.

        Telegram confirms updates when the next call passes a higher offset. The cursor
        returned moves past the updates this call fetched (returned, or not addressed to the
        persona: group chatter, edits, member changes) and never past one it did not fetch, so
        a caller that stops before storing the cursor sees the same items again."""
        if since is not None and not since.isdigit():
            raise BadInput(f"telegram: cursor {since[:40]!r} is not an update offset; pass the "
                           "cursor a previous fetch returned, or none to start")
        offset = int(since) if since is not None else None
        count = max(1, min(MAX_UPDATES, limit))
        updates: list[Update] = self._call(
            lambda: self._bot.get_updates(offset=offset, limit=count, timeout=0), write=False,
            what="reading updates (getUpdates)")
        items: list[Inbound] = []
        for update in updates:
            message = update.message
            if message is not None and message.from_user is not None and \
                    self._addressed(message):
                items.append(_inbound(message, message.from_user))
        cursor = str(max(u.update_id for u in updates) + 1) if updates else since
        return Page(items=tuple(items), cursor=cursor)

    def enable_posting(self, credentials: Mapping[str, str]) -> None:
        """Nothing to add: the bot token that reads also posts (`post_fields` is empty)."""

    def close(self) -> None:
        if self._loop is None:
            return
        loop, self._loop = self._loop, None
        try:
            loop.run(self._bot.session.close(), timeout=_GRACE + 1)
        except (TimeoutError, aiohttp.ClientError, OSError):
            pass  # closing a session that never connected, or a dead socket: nothing to free
        finally:
            loop.close()

    def __enter__(self) -> TelegramSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- helpers ------------------------------------------------------------------------------

    def _post(self, post: PostRef) -> tuple[str, int]:
        if post.platform != PLATFORM:
            raise BadInput(f"telegram: post {post.id[:60]!r} belongs to {post.platform!r}; "
                           "give a Telegram message reference")
        return split_post_id(post.id)

    @staticmethod
    def _chat_of(to: str) -> str:
        body = to[1:] if to.startswith("@") else to
        if body.lstrip("-").isdigit():
            return body
        if body.replace("_", "").isalnum() and body.isascii():
            return f"@{body}"  # a public channel or group; users are reached by id only
        raise BadInput(f"telegram: --to {to[:40]!r} names no chat; give a user or chat id "
                       "(e.g. 123456789) or a public @channel")

    def _addressed(self, message: Message) -> bool:
        """Private messages are all for the bot; in a group, a reply to the bot or a mention."""
        if message.chat.type == "private":
            return True
        replied = message.reply_to_message
        if replied is not None and replied.from_user is not None and \
                replied.from_user.id == self._bot.id:
            return True
        entities = [*(message.entities or []), *(message.caption_entities or [])]
        if any(e.type == "text_mention" and e.user is not None and e.user.id == self._bot.id
               for e in entities):
            return True
        if not any(e.type == "mention" for e in entities):
            return False
        return self._own_username() in _mentioned(message)

    def _own_username(self) -> str:
        if self._username is None:
            me: User = self._call(lambda: self._bot.get_me(), write=False,
                                  what="reading the bot's own account (getMe)")
            self._username = (me.username or str(me.id)).lower()
        return self._username

    def _call(self, make: Callable[[], Awaitable[T]], *, write: bool, what: str) -> T:
        """Run one request on the loop; every failure becomes the one tactful error for it
        (core/send/answers.py)."""
        if self._loop is None:
            raise RuntimeError("telegram session used after close()")

        async def call() -> T:
            return await make()

        try:
            return self._loop.run(call(), timeout=self._timeout + _GRACE)
        except TactfulError:
            raise
        except TimeoutError:  # our bound on the whole call (concurrent.futures' is the same)
            raise error_for(Answer(PLATFORM, None, write=write, failure="timeout", what=what,
                                   waited=self._timeout)) from None
        except (AiogramError, aiohttp.ClientError, OSError) as exc:
            raise _mapped(exc, write=write, token=self._token, what=what,
                          timeout=self._timeout) from None


# ---- from aiogram to tactful ------------------------------------------------------------------

def _detail(exc: BaseException, token: str) -> str:
    """Telegram's own description, on one line, short, without the token."""
    text = exc.message if isinstance(exc, DetailedAiogramError) else str(exc)
    line = (text.splitlines() or [type(exc).__name__])[0].replace(token, "<token>")
    return line if len(line) <= 160 else line[:160] + "…"


def _mapped(exc: BaseException, *, write: bool, token: str, what: str,
            timeout: float) -> TactfulError:
    return error_for(_answer(exc, write=write, token=token, what=what, timeout=timeout))


def _answer(exc: BaseException, *, write: bool, token: str, what: str,
            timeout: float) -> Answer:
    """The facts of a failed Bot API call; the one mapping decides. Telegram's own facts stay
    here: flood control is `parameters.retry_after` in the answer's body (read as Retry-After);
    a migrated group and a second poller are refusals (4xx) whose fix only Telegram's words
    name. A 403 "bot was blocked by the user" is Forbidden here like every 403; the companion
    (companion.py) reads the same 403 as Blocked and never messages that user again."""
    detail = _detail(exc, token)
    status = getattr(exc, _STATUS, None)
    if isinstance(status, int):
        headers: dict[str, str] = {}
        means: int | None = None
        hint = ""
        if isinstance(exc, TelegramRetryAfter):
            headers, means = {"Retry-After": str(exc.retry_after)}, 429
            detail = f"flood control: {detail}"
        elif isinstance(exc, TelegramMigrateToChat):
            hint = (f"the group became supergroup {exc.migrate_to_chat_id}; use that chat id "
                    "(its message numbers start afresh)")
        elif isinstance(exc, TelegramConflictError):
            hint = ("only one process may read this bot's updates: stop the other one (or "
                    "delete its webhook) and retry")
        elif status == 401:
            hint = "Telegram refused the bot token"
        elif status in (400, 404):
            hint = "check the post reference or chat"
        if isinstance(exc, ClientDecodeError):
            detail = "the answer could not be read"
        return Answer(PLATFORM, status, write=write, headers=headers, detail=detail,
                      means=means, what=what, hint=hint)
    failure: Failure = "broken"
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, aiohttp.ClientConnectorError | aiohttp.ConnectionTimeoutError):
            failure = "connect"  # refused before a byte was sent: certainly not posted
            break
        if isinstance(cause, asyncio.TimeoutError):
            failure = "timeout"
            break
        cause = cause.__cause__
    if failure == "broken" and isinstance(exc, AiogramError) \
            and not isinstance(exc, TelegramNetworkError):
        failure = "unreadable"  # an answer aiogram could not read
    if failure == "timeout":
        return Answer(PLATFORM, None, write=write, failure=failure, what=what, waited=timeout)
    return Answer(PLATFORM, None, write=write, failure=failure, what=what, detail=detail)


# ---- from Telegram objects to tactful's ---------------------------------------------------------

def _message_url(chat: Chat, message_id: int) -> str | None:
    if chat.type != "private" and chat.username:  # a user's username links the user, not posts
        return post_url(f"@{chat.username}", message_id)
    return post_url(str(chat.id), message_id)


def _handle(user: User) -> str:
    return normalize_handle(user.username, PLATFORM) if user.username else str(user.id)


def _mentioned(message: Message) -> list[str]:
    """The mentions Telegram found in a message (its entities), normalized, each once."""
    found: list[str] = []
    for text, entities in ((message.text, message.entities),
                           (message.caption, message.caption_entities)):
        for entity in entities or []:
            try:
                if entity.type == "mention" and text:
                    handle = normalize_handle(entity.extract_from(text), PLATFORM)
                elif entity.type == "text_mention" and entity.user is not None:
                    handle = _handle(entity.user)
                else:
                    continue
            except BadInput:
                continue  # an entity that names no handle cannot be checked, nor engaged
            if handle not in found:
                found.append(handle)
    return found


def _thread(message: Message) -> str:
    """The chat, or in a forum the topic, whose root message id is the topic id."""
    if message.is_topic_message and message.message_thread_id:
        return f"{message.chat.id}/{message.message_thread_id}"
    return str(message.chat.id)


def _inbound(message: Message, sender: User) -> Inbound:
    url = _message_url(message.chat, message.message_id)
    author = Author(handle=_handle(sender), id=str(sender.id), display_name=sender.full_name,
                    is_bot=sender.is_bot, thread=_thread(message), url=url)
    post = PostRef(PLATFORM, f"{message.chat.id}/{message.message_id}", url=url,
                   handle=author.handle)
    return Inbound(post=post, author=author, text=message.text or message.caption or "",
                   at=message.date.astimezone(UTC), thread=author.thread,
                   mentions=tuple(_mentioned(message)))
