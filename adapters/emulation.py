"""What every platform emulator shares: a loopback HTTP server, a request log, queued errors.

Each adapter folder has an `emulator.py` built on this: it answers the endpoints its library
calls, checks the fields that matter (threading, mentions), and says which requests write.
Tests and `tactful demo` start one on 127.0.0.1 with port 0 and point the adapter's `base_url`
at it. Standard library only, so the demo needs nothing beyond tactful itself.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Request:
    """One request as the emulator saw it."""

    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]  # names lower-cased
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")

    def form(self) -> dict[str, str]:
        """A form-encoded body (or the query), one value per key."""
        pairs = parse_qs(self.body.decode("utf-8"), keep_blank_values=True)
        return {key: values[-1] for key, values in pairs.items()}


DROP = 0  # the status of a queued Reply that closes the connection instead of answering


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # JSON-able, or bytes sent as they are
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class _Queued:
    reply: Reply
    match: Callable[[Request], bool] | None


class Emulator:
    """Subclasses implement `answer(request)` and `is_write(request)`."""

    name = "emulator"

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._queued: deque[_Queued] = deque()
        self._stalls: list[tuple[float, Callable[[Request], bool] | None]] = []
        self._lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- what a platform emulator provides ----------------------------------------------

    def answer(self, request: Request) -> Reply:
        raise NotImplementedError

    def is_write(self, request: Request) -> bool:
        """Does this request change anything on the platform (post, like, follow)?"""
        raise NotImplementedError

    # ---- what tests use ---------------------------------------------------------------------

    def fail_next(self, status: int, body: Any = None, headers: Mapping[str, str] | None = None,
                  *, match: Callable[[Request], bool] | None = None, times: int = 1) -> None:
        """Answer the next matching request(s) with this error instead of the real answer."""
        with self._lock:
            for _ in range(times):
                self._queued.append(_Queued(Reply(status, body, dict(headers or {})), match))

    def drop_next(self, *, match: Callable[[Request], bool] | None = None,
                  times: int = 1) -> None:
        """Close the connection of the next matching request(s) without any answer: a
        connection that broke after the request was handed over (the platform may have taken
        it; whether it did is what the client cannot know)."""
        with self._lock:
            for _ in range(times):
                self._queued.append(_Queued(Reply(DROP), match))

    def stall_next(self, seconds: float, *,
                   match: Callable[[Request], bool] | None = None) -> None:
        """Answer the next matching request only after `seconds`, and still carry it out: a
        platform that took a post but answered too late (to test timeouts)."""
        with self._lock:
            self._stalls.append((seconds, match))

    def writes(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if self.is_write(r)]

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError(f"{self.name} emulator is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Emulator:
        emulator = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go in two writes: no 40 ms stall

            def _any(self) -> None:
                emulator._serve(self)

            do_GET = do_POST = do_PUT = do_DELETE = _any

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: a test's output is for the test

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # A short poll interval: stop() waits for it, and tests stop many emulators.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        name=f"{self.name}-emulator", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- the server side --------------------------------------------------------------------

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        parts = urlsplit(handler.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        request = Request(handler.command, parts.path, query,
                          {k.lower(): v for k, v in handler.headers.items()}, body)
        with self._lock:
            self.requests.append(request)
            queued = next((q for q in self._queued if q.match is None or q.match(request)), None)
            if queued is not None:
                self._queued.remove(queued)
        if queued is None:
            with self._lock:
                stall = next((s for s in self._stalls if s[1] is None or s[1](request)), None)
                if stall is not None:
                    self._stalls.remove(stall)
            if stall is not None:
                time.sleep(stall[0])
        if queued is not None and queued.reply.status == DROP:
            handler.close_connection = True  # no status line, no headers: the socket closes
            return
        try:
            reply = queued.reply if queued is not None else self.answer(request)
        except Exception as exc:  # noqa: BLE001 — a bug in an emulator is a 500, visibly
            reply = Reply(500, {"error": f"emulator: {type(exc).__name__}: {exc}"})
        payload = reply.body if isinstance(reply.body, bytes) else \
            json.dumps(reply.body).encode("utf-8")
        try:
            handler.send_response(reply.status)
            headers = {"Content-Type": "application/json", **reply.headers}
            for key, value in headers.items():
                handler.send_header(key, value)
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True  # the client gave up waiting (a timeout test)
