"""A Telegram Bot API emulator on 127.0.0.1, for tests and `tactful demo`. Standard library only.

It speaks the wire format aiogram uses: `POST {base}/bot{token}/{method}` with form-encoded
(or multipart, or JSON) parameters, nested objects as JSON strings, answers
`{"ok": true, "result": ...}` or `{"ok": false, "error_code": N, "description": ...}`.

It refuses what Telegram refuses where that matters to tactful: a wrong token (401), an unknown
chat, a reply to a message that does not exist, empty or over-long text (400), a user who never
started the bot or blocked it (403). Mentions are found in text as Telegram's servers find them
and returned as `mention` entities.

Seeding, uniform across the platform emulators:
- `add_user(handle)` makes a user; their private chat with the bot has the user's id.
- `add_post(handle, text, reply_to=None)` is a message the user sends the bot (in their private
  chat, or in a group with `chat=`); it becomes an update for getUpdates. It returns the
  reference "<chat_id>/<message_id>".
- `sent()` lists what the bot posted.
"""

from __future__ import annotations

import contextlib
import email.parser
import email.policy
import io
import itertools
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from tactful.adapters.emulation import Emulator, Reply, Request
from tactful.adapters.telegram.adapter import TEXT_LIMIT, mention_spans, post_url

DEFAULT_TOKEN = "123456:TEST-emulator-token"  # noqa: S105 — a fake the emulator accepts
LONG_POLL_CAP = 2.0  # the longest getUpdates waits, whatever timeout it asks for
EMPTY_PAUSE = 0.05  # an empty getUpdates always waits this long, so no poller spins
CAPTION_LIMIT = 1024
CHAT_ACTIONS = frozenset({
    "typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice",
    "upload_document", "choose_sticker", "find_location", "record_video_note",
    "upload_video_note",
})
WRITES = frozenset({"sendmessage", "senddocument"})
_PATH = re.compile(r"/bot(?P<token>[^/]+)/(?P<method>[A-Za-z]+)")
_COMMAND = re.compile(r"[a-z0-9_]{1,32}")

_DESCRIPTIONS = {
    400: "Bad Request", 401: "Unauthorized", 403: "Forbidden: bot was blocked by the user",
    404: "Not Found", 409: "Conflict: terminated by other getUpdates request",
    429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway",
    503: "Service Unavailable", 504: "Gateway Timeout",
}


class TelegramError(Exception):
    """Raised by a method handler; becomes Telegram's error answer."""

    def __init__(self, status: int, description: str) -> None:
        super().__init__(description)
        self.status = status
        self.description = description


def error_body(status: int, description: str | None = None,
               retry_after: int | None = None) -> dict[str, Any]:
    """Telegram's error answer, e.g. the 429 that aiogram turns into TelegramRetryAfter."""
    if description is None:
        description = _DESCRIPTIONS.get(status, "Error")
        if status == 429 and retry_after is not None:
            description += f": retry after {retry_after}"
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if retry_after is not None:
        body["parameters"] = {"retry_after": retry_after}
    return body


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@dataclass
class _User:
    id: int
    username: str | None
    first_name: str
    is_bot: bool = False
    started: bool = False  # has sent the bot a message: only then may the bot write first
    blocked: bool = False

    def json(self) -> dict[str, Any]:
        user: dict[str, Any] = {"id": self.id, "is_bot": self.is_bot,
                                "first_name": self.first_name}
        if self.username:
            user["username"] = self.username
        return user


class TelegramEmulator(Emulator):
    """The Bot API for one bot, whose username is `persona`."""

    name = "telegram"

    def __init__(self, persona: str = "persona", *, token: str = DEFAULT_TOKEN) -> None:
        super().__init__()
        self.persona = persona
        self.token = token
        self.bot_id = int(token.partition(":")[0])
        self.commands: list[dict[str, Any]] = []
        self.chat_actions: list[tuple[int, str]] = []
        self.documents: list[dict[str, Any]] = []
        self._users: dict[str, _User] = {}  # by lower-cased username, or by id for the rest
        self._by_id: dict[int, _User] = {}
        self._groups: dict[int, dict[str, Any]] = {}
        self._messages: dict[tuple[int, int], dict[str, Any]] = {}
        self._last_message: dict[int, int] = {}
        self._updates: list[dict[str, Any]] = []
        self._update_ids = itertools.count(1)
        self._user_ids = itertools.count(700_000_001)
        self._group_ids = itertools.count(1_000_000_001)
        self._sent: list[dict[str, Any]] = []
        self._arrived = threading.Condition(self._lock)
        self._stopping = False

    # ---- seeding (uniform across platforms) -----------------------------------------------

    @property
    def credentials(self) -> dict[str, str]:
        """What `tactful credentials set telegram token` would store for this bot."""
        return {"token": self.token}

    def add_user(self, handle: str, *, display_name: str | None = None,
                 is_bot: bool = False) -> str:
        """A Telegram user; a handle of digits is a user without a username. Returns the id."""
        return str(self._user(handle, display_name=display_name, is_bot=is_bot).id)

    def add_group(self, title: str, *, username: str | None = None) -> str:
        """A supergroup the bot is in (id -100...), public when it has a username."""
        with self._lock:
            chat_id = int(f"-100{next(self._group_ids)}")
            chat: dict[str, Any] = {"id": chat_id, "type": "supergroup", "title": title}
            if username:
                chat["username"] = username
            self._groups[chat_id] = chat
            return str(chat_id)

    def add_post(self, handle: str, text: str, *, reply_to: str | None = None,
                 chat: str | None = None) -> str:
        """`handle` sends a message: to the bot in private, or in group `chat`, or in the chat
        of `reply_to`. Returns "<chat_id>/<message_id>", the reference `--reply-to` takes."""
        with self._lock:
            user = self._user(handle)
            parent = self._find(reply_to) if reply_to else None
            if chat is not None:
                chat_id = int(chat)
            elif parent is not None:
                chat_id = parent["chat"]["id"]
            else:
                chat_id = user.id
            if chat_id > 0 and chat_id != user.id:
                raise ValueError(f"{handle} cannot post in another user's private chat")
            if parent is not None and parent["chat"]["id"] != chat_id:
                raise ValueError(f"{reply_to} is in another chat")
            message = self._store(chat_id, user.json(), text, parent)
            if chat_id > 0:
                user.started = True
            self._updates.append({"update_id": next(self._update_ids), "message": message})
            self._arrived.notify_all()
            return f"{chat_id}/{message['message_id']}"

    def block(self, handle: str) -> None:
        """The user blocks the bot: every later message to them is a 403."""
        with self._lock:
            self._user(handle).blocked = True

    def unblock(self, handle: str) -> None:
        """The user unblocks the bot (Telegram's "Restart"): messages reach them again."""
        with self._lock:
            self._user(handle).blocked = False

    def sent(self) -> list[dict[str, Any]]:
        """What the bot posted, in order: id, chat_id, text, reply_to, mentions, url, ..."""
        with self._lock:
            return [dict(entry) for entry in self._sent]

    def pending_updates(self) -> list[int]:
        """The ids of updates not yet confirmed by a getUpdates offset."""
        with self._lock:
            return [u["update_id"] for u in self._updates]

    # ---- test helpers -------------------------------------------------------------------------

    def fail_next(self, status: int, body: Any = None, headers: Mapping[str, str] | None = None,
                  *, match: Callable[[Request], bool] | None = None, times: int = 1) -> None:
        """As the base class; with no body, Telegram's own error answer for `status` (a 429
        carries `parameters.retry_after` from a Retry-After header, else 5)."""
        if body is None:
            retry_after = None
            if status == 429:
                given = {k.lower(): v for k, v in (headers or {}).items()}.get("retry-after")
                retry_after = int(given) if given and given.isdigit() else 5
                headers = {**(headers or {}), "Retry-After": str(retry_after)}
            body = error_body(status, retry_after=retry_after)
        super().fail_next(status, body, headers, match=match, times=times)

    def fail_method(self, method: str, status: int, *, retry_after: int | None = None,
                    description: str | None = None, times: int = 1) -> None:
        """Answer the next call(s) of one Bot API method with Telegram's error answer."""
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        self.fail_next(status, error_body(status, description, retry_after), headers,
                       match=lambda r: self.method(r) == method.lower(), times=times)

    def stall_next(self, seconds: float, *, match: Callable[[Request], bool] | None = None,
                   method: str | None = None) -> None:
        """Hold the next (matching) call this long before answering: a slow platform."""
        if method is not None:
            match = lambda r: self.method(r) == method.lower()  # noqa: E731
        super().stall_next(seconds, match=match)

    def calls(self, method: str) -> list[dict[str, Any]]:
        """The parameters of every call of one method, in order (nested objects decoded)."""
        with self._lock:
            requests = list(self.requests)
        return [self.params(r) for r in requests if self.method(r) == method.lower()]

    @staticmethod
    def method(request: Request) -> str | None:
        match = _PATH.fullmatch(request.path)
        return match["method"].lower() if match else None

    @staticmethod
    def params(request: Request) -> dict[str, Any]:
        """Query, form, multipart or JSON parameters; JSON-encoded objects decoded."""
        values: dict[str, Any] = dict(request.query)
        kind = request.headers.get("content-type", "")
        if kind.startswith("multipart/form-data"):
            message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                f"Content-Type: {kind}\r\n\r\n".encode() + request.body)
            for part in message.iter_parts():
                name = part.get_param("name", header="content-disposition")
                payload = part.get_payload(decode=True)
                if isinstance(name, str) and isinstance(payload, bytes):
                    filename = part.get_filename()
                    values[name] = {"filename": filename, "data": payload} if filename \
                        else payload.decode("utf-8")
        elif kind.startswith("application/json"):
            values.update(request.json() or {})
        elif request.body:
            values.update(request.form())
        for key, value in values.items():
            if isinstance(value, str) and value[:1] in ("{", "["):
                with contextlib.suppress(ValueError):  # text that merely starts with a brace
                    values[key] = json.loads(value)
        return values

    # ---- lifecycle ----------------------------------------------------------------------------

    def start(self) -> TelegramEmulator:
        super().start()
        assert self._server is not None
        quiet = self._server.handle_error

        def handle_error(request: Any, client_address: Any) -> None:
            # A poller that gave up (cancelled long poll) closes its socket before the answer:
            # not an emulator fault, and not worth a traceback in the test output.
            if not isinstance(sys.exc_info()[1], ConnectionError):
                quiet(request, client_address)

        self._server.handle_error = handle_error  # type: ignore[method-assign]
        with self._lock:
            self._stopping = False
        return self

    def stop(self) -> None:
        with self._lock:
            self._stopping = True
            self._arrived.notify_all()
        super().stop()

    def __enter__(self) -> TelegramEmulator:
        return self.start()

    # ---- the server side ----------------------------------------------------------------------

    def is_write(self, request: Request) -> bool:
        return self.method(request) in WRITES

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        """As the base class, also for a chunked body: aiohttp streams multipart uploads
        (sendDocument) without a Content-Length, which Telegram accepts."""
        if "chunked" not in handler.headers.get("Transfer-Encoding", "").lower():
            super()._serve(handler)
            return
        body, connection = _read_chunked(handler.rfile), handler.rfile
        del handler.headers["Transfer-Encoding"]
        handler.headers["Content-Length"] = str(len(body))
        handler.rfile = io.BytesIO(body)
        try:
            super()._serve(handler)
        finally:
            handler.rfile = connection  # the next request on this connection comes from here

    def answer(self, request: Request) -> Reply:
        match = _PATH.fullmatch(request.path)
        if match is None or request.method not in ("GET", "POST"):
            return Reply(404, error_body(404))
        if match["token"] != self.token:
            return Reply(401, error_body(401))
        handler = getattr(self, f"_m_{match['method'].lower()}", None)
        if handler is None:
            return Reply(404, error_body(404, "Not Found: method not found"))
        try:
            result = handler(self.params(request))
        except TelegramError as exc:
            return Reply(exc.status, error_body(exc.status, exc.description))
        return Reply(200, {"ok": True, "result": result})


    # ---- Bot API methods ------------------------------------------------------------------------

    def _bot_user(self) -> dict[str, Any]:
        return {"id": self.bot_id, "is_bot": True, "first_name": self.persona,
                "username": self.persona, "can_join_groups": True,
                "can_read_all_group_messages": True, "supports_inline_queries": False}

    def _m_getme(self, params: dict[str, Any]) -> Any:
        return self._bot_user()

    def _m_deletewebhook(self, params: dict[str, Any]) -> Any:
        return True

    def _m_setmycommands(self, params: dict[str, Any]) -> Any:
        commands = params.get("commands")
        if not isinstance(commands, list) or len(commands) > 100:
            raise TelegramError(400, "Bad Request: commands must be a list of at most 100")
        for command in commands:
            if not isinstance(command, dict) or \
                    not _COMMAND.fullmatch(str(command.get("command", ""))) or \
                    not 1 <= len(str(command.get("description", ""))) <= 256:
                raise TelegramError(400, "Bad Request: BOT_COMMAND_INVALID")
        with self._lock:
            self.commands = commands
        return True

    def _m_getupdates(self, params: dict[str, Any]) -> Any:
        offset = _int(params.get("offset"), 0)
        limit = max(1, min(100, _int(params.get("limit"), 100)))
        wait = min(max(0, _int(params.get("timeout"), 0)), LONG_POLL_CAP)
        deadline = time.monotonic() + max(wait, EMPTY_PAUSE)
        with self._arrived:
            if offset > 0:  # confirms every update before it, as Telegram does
                self._updates = [u for u in self._updates if u["update_id"] >= offset]
            while not self._updates and not self._stopping:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._arrived.wait(left)
            return self._updates[:limit]

    def _m_getchat(self, params: dict[str, Any]) -> Any:
        chat = self._chat(params.get("chat_id"))
        # Fields aiogram's ChatFullInfo requires, with Telegram's defaults.
        return {**chat, "accent_color_id": 0, "max_reaction_count": 11,
                "accepted_gift_types": {"unlimited_gifts": False, "limited_gifts": False,
                                        "unique_gifts": False, "premium_subscription": False,
                                        "gifts_from_channels": False}}

    def _m_sendchataction(self, params: dict[str, Any]) -> Any:
        chat = self._chat(params.get("chat_id"))
        self._may_write(chat["id"])
        action = params.get("action")
        if action not in CHAT_ACTIONS:
            raise TelegramError(400, "Bad Request: wrong parameter action in request")
        with self._lock:
            self.chat_actions.append((chat["id"], action))
        return True

    def _m_sendmessage(self, params: dict[str, Any]) -> Any:
        chat = self._chat(params.get("chat_id"))
        text = params.get("text")
        if not isinstance(text, str) or not text.strip():
            raise TelegramError(400, "Bad Request: message text is empty")
        if _utf16(text) > TEXT_LIMIT:  # Telegram counts UTF-16 code units
            raise TelegramError(400, "Bad Request: message is too long")
        return self._post(chat, params, text=text, entities=self._entities(text, params))

    def _m_senddocument(self, params: dict[str, Any]) -> Any:
        chat = self._chat(params.get("chat_id"))
        document = params.get("document")
        if isinstance(document, str) and document.startswith("attach://"):
            document = params.get(document.removeprefix("attach://"))
        if not isinstance(document, dict):
            raise TelegramError(400, "Bad Request: there is no document in the request")
        caption = params.get("caption") or ""
        if len(caption) > CAPTION_LIMIT:
            raise TelegramError(400, "Bad Request: message caption is too long")
        with self._lock:
            file_id = f"doc-{len(self.documents) + 1}"
            self.documents.append({"chat_id": chat["id"], "filename": document["filename"],
                                   "data": document["data"]})
        attached = {"file_id": file_id, "file_unique_id": file_id,
                    "file_name": document["filename"], "file_size": len(document["data"])}
        return self._post(chat, params, text=caption, entities=[], document=attached)

    # ---- checks and storage ---------------------------------------------------------------------

    def _post(self, chat: dict[str, Any], params: dict[str, Any], *, text: str,
              entities: list[dict[str, Any]], document: dict[str, Any] | None = None) -> Any:
        self._may_write(chat["id"])
        with self._lock:
            parent = self._parent(chat["id"], params)
            message = self._store(chat["id"], self._bot_user(), text, parent,
                                  entities=entities, document=document)
            reference = f"{chat['id']}/{message['message_id']}"
            self._sent.append({
                "id": reference, "chat_id": str(chat["id"]),
                "message_id": message["message_id"], "text": text,
                "reply_to": f"{chat['id']}/{parent['message_id']}" if parent else None,
                "mentions": _mentions(text, entities),
                "url": _url(message["chat"], message["message_id"]),
                "parse_mode": params.get("parse_mode"),
                "document": document["file_name"] if document else None,
            })
            return message

    def _parent(self, chat_id: int, params: dict[str, Any]) -> dict[str, Any] | None:
        """The message replied to, checked as Telegram checks it."""
        reply = params.get("reply_parameters")
        if reply is None and params.get("reply_to_message_id"):  # the pre-7.0 field
            reply = {"message_id": params["reply_to_message_id"],
                     "allow_sending_without_reply": params.get("allow_sending_without_reply")}
        if reply is None:
            return None
        if not isinstance(reply, dict) or _int(reply.get("message_id"), 0) <= 0:
            raise TelegramError(400, "Bad Request: invalid reply parameters")
        where = self._chat(reply["chat_id"])["id"] if reply.get("chat_id") else chat_id
        parent = self._messages.get((where, _int(reply["message_id"], 0)))
        if parent is None:
            if reply.get("allow_sending_without_reply") in (True, "true"):
                return None
            raise TelegramError(400, "Bad Request: message to be replied not found")
        return parent

    def _entities(self, text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Entities the caller gave, checked, plus the mentions Telegram finds itself."""
        given = params.get("entities") or []
        length = _utf16(text)
        if not isinstance(given, list):
            raise TelegramError(400, "Bad Request: can't parse entities JSON object")
        for entity in given:
            if not isinstance(entity, dict):
                raise TelegramError(400, "Bad Request: can't parse entities JSON object")
            offset, size = _int(entity.get("offset"), -1), _int(entity.get("length"), 0)
            if offset < 0 or size <= 0 or offset + size > length:
                raise TelegramError(400, "Bad Request: can't parse entities: entity beyond "
                                         "the end of the text")
            if entity.get("type") == "text_mention":
                user_id = _int((entity.get("user") or {}).get("id"), 0)
                with self._lock:
                    if user_id not in self._by_id:
                        raise TelegramError(400, "Bad Request: can't parse entities: user "
                                                 "not found")
        taken = [(e["offset"], e["offset"] + e["length"]) for e in given]
        found = []
        for start, end in mention_spans(text):
            offset, size = _utf16(text[:start]), _utf16(text[start:end])
            if all(offset + size <= a or offset >= b for a, b in taken):
                found.append({"type": "mention", "offset": offset, "length": size})
        return sorted([*given, *found], key=lambda e: e["offset"])

    def _may_write(self, chat_id: int) -> None:
        if chat_id < 0:
            return
        with self._lock:
            user = self._by_id[chat_id]
        if user.is_bot:
            raise TelegramError(403, "Forbidden: bot can't send messages to bots")
        if user.blocked:
            raise TelegramError(403, "Forbidden: bot was blocked by the user")
        if not user.started:
            raise TelegramError(403, "Forbidden: bot can't initiate conversation with a user")

    def _chat(self, raw: Any) -> dict[str, Any]:
        """The chat a chat_id names: a user id, a group id, or @username of a public group.
        Telegram resolves @username for public chats only, never for users."""
        text = str(raw or "")
        with self._lock:
            if text.startswith("@"):
                name = text[1:].lower()
                for group in self._groups.values():
                    if str(group.get("username", "")).lower() == name:
                        return dict(group)
            elif re.fullmatch(r"-?[0-9]{1,20}", text):
                number = int(text)
                if number in self._groups:
                    return dict(self._groups[number])
                user = self._by_id.get(number)
                if user is not None:
                    return _private_chat(user)
        raise TelegramError(400, "Bad Request: chat not found")

    def _user(self, handle: str, *, display_name: str | None = None,
              is_bot: bool = False) -> _User:
        name = handle.removeprefix("@")
        with self._lock:
            known = self._users.get(name.lower())
            if known is not None:
                return known
            if name.isdigit():
                user = _User(int(name), None, display_name or f"User {name}", is_bot)
            else:
                user = _User(next(self._user_ids), name, display_name or name, is_bot)
            self._users[name.lower()] = user
            self._by_id[user.id] = user
            return user

    def _find(self, reference: str) -> dict[str, Any]:
        chat, _, number = reference.partition("/")
        message = self._messages.get((_int(chat, 0), _int(number, 0)))
        if message is None:
            raise ValueError(f"no message {reference!r} in the emulator")
        return message

    def _store(self, chat_id: int, sender: dict[str, Any], text: str,
               parent: dict[str, Any] | None, *, entities: list[dict[str, Any]] | None = None,
               document: dict[str, Any] | None = None) -> dict[str, Any]:
        number = self._last_message.get(chat_id, 0) + 1
        self._last_message[chat_id] = number
        chat = dict(self._groups[chat_id]) if chat_id < 0 else \
            _private_chat(self._by_id[chat_id])
        if entities is None:
            entities = [{"type": "mention", "offset": _utf16(text[:s]),
                         "length": _utf16(text[s:e])} for s, e in mention_spans(text)]
        message: dict[str, Any] = {"message_id": number, "date": int(time.time()),
                                   "chat": chat, "from": sender}
        key = "caption" if document else "text"
        if text:
            message[key] = text
        if entities:
            message["caption_entities" if document else "entities"] = entities
        if document:
            message["document"] = document
        if parent is not None:
            # Telegram nests the replied-to message one level deep, without its own reply.
            message["reply_to_message"] = {k: v for k, v in parent.items()
                                           if k != "reply_to_message"}
        self._messages[(chat_id, number)] = message
        return message


def _private_chat(user: _User) -> dict[str, Any]:
    chat: dict[str, Any] = {"id": user.id, "type": "private", "first_name": user.first_name}
    if user.username:
        chat["username"] = user.username
    return chat


def _url(chat: dict[str, Any], message_id: int) -> str | None:
    if chat.get("type") != "private" and chat.get("username"):
        return post_url(f"@{chat['username']}", message_id)
    return post_url(str(chat["id"]), message_id)


def _mentions(text: str, entities: list[dict[str, Any]]) -> list[str]:
    """The handles Telegram's entities mention, normalized as tactful normalizes handles."""
    units = text.encode("utf-16-le")
    found: list[str] = []
    for entity in entities:
        if entity.get("type") == "mention":
            start, end = 2 * entity["offset"], 2 * (entity["offset"] + entity["length"])
            handle = units[start:end].decode("utf-16-le").removeprefix("@").lower()
        elif entity.get("type") == "text_mention":
            user = entity.get("user") or {}
            handle = str(user.get("username") or user.get("id")).lower()
        else:
            continue
        if handle not in found:
            found.append(handle)
    return found


def _read_chunked(stream: io.BufferedIOBase) -> bytes:
    """An HTTP/1.1 chunked body: hex size line, data, CRLF; a zero size ends it."""
    body = bytearray()
    while True:
        size = int(stream.readline(1024).split(b";")[0].strip() or b"0", 16)
        if size == 0:
            while stream.readline(1024) not in (b"\r\n", b"\n", b""):
                pass  # trailer fields, unused
            return bytes(body)
        body += stream.read(size)
        stream.readline(1024)  # the CRLF after each chunk


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default
