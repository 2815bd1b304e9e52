"""One answer per HTTP answer: the table of docs/sending.md, enforced on every adapter.

The table is read from the docs themselves, and every row is driven through each adapter's real
library (tweepy, atproto, httpx, aiogram) against its loopback emulator, once on a read (the
author lookup) and once on the write (the request that hands the post over): the same answer
must give the same error class, exit code and "maybe sent" on every platform. Below, the shared
module on its own: the wait of a 429 and the definition of "maybe sent".
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime
from http import HTTPStatus
from pathlib import Path
from typing import Any

import httpx
import pytest

from tactful.adapters.bluesky.adapter import BlueskyAdapter
from tactful.adapters.bluesky.emulator import BlueskyEmulator
from tactful.adapters.emulation import Emulator, Request
from tactful.adapters.meta.facebook.adapter import FacebookAdapter
from tactful.adapters.meta.facebook.emulator import FacebookEmulator
from tactful.adapters.meta.instagram.adapter import InstagramAdapter
from tactful.adapters.meta.instagram.emulator import InstagramEmulator
from tactful.adapters.meta.threads.adapter import ThreadsAdapter
from tactful.adapters.meta.threads.emulator import ThreadsEmulator
from tactful.adapters.telegram.adapter import TelegramAdapter
from tactful.adapters.telegram.emulator import TelegramEmulator
from tactful.adapters.x.adapter import XAdapter
from tactful.adapters.x.emulator import XEmulator
from tactful.core.errors import BadInput, TactfulError
from tactful.core.send import adapter as contract
from tactful.core.send.adapter import AdapterSettings, PlatformDown, RateLimited, Session
from tactful.core.send.answers import Answer, error_for, maybe_sent, retry_after

DOCS = Path(__file__).resolve().parents[2] / "docs" / "sending.md"
SECTION = "## One answer per HTTP answer"
TRANSPORTS = ("connect", "timeout", "broken", "unreadable")
ERRORS: dict[str, type[TactfulError]] = {
    "RateLimited": contract.RateLimited, "Unauthorized": contract.Unauthorized,
    "Forbidden": contract.Forbidden, "BadInput": BadInput,
    "PlatformDown": contract.PlatformDown}
WAIT = 7  # the Retry-After every queued 429 carries


@dataclass(frozen=True)
class Row:
    """One answer of the table: what the platform does, and what tactful makes of it."""

    answer: str  # "429", or a transport failure: "connect", "timeout", "broken", "unreadable"
    error: type[TactfulError]
    exit_code: int
    pending: bool  # a failed write keeps its ledger row pending: maybe sent

    def __str__(self) -> str:
        return self.answer


def _table() -> list[Row]:
    text = DOCS.read_text(encoding="utf-8")
    assert SECTION in text, f"docs/sending.md lost its section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows: list[Row] = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not cells[2].isdigit():
            continue  # the header, the rule, the prose
        named = re.search(r"`(\w+)`", cells[1])
        assert named is not None and named[1] in ERRORS, line
        answers = re.findall(r"\b[1-5]\d\d\b", cells[0]) + \
            [t for t in re.findall(r"`(\w+)`", cells[0]) if t in TRANSPORTS]
        assert answers, f"a row of the table names no answer: {line}"
        for answer in answers:
            rows.append(Row(answer, ERRORS[named[1]], int(cells[2]), "pending" in cells[4]))
    return rows


TABLE = _table()


# ---- one driver per platform: its emulator, its real library, a read and a write -------------

@dataclass
class Driver:
    """How to make one adapter read and write against its emulator."""

    name: str
    start: Callable[[], Emulator]
    open: Callable[[Emulator, str, float], Session]  # (emulator, base_url, timeout)
    read: Callable[[Emulator, Session], object]
    write: Callable[[Emulator, Session], object]
    is_write: Callable[[Emulator, Request], bool]  # the request that hands the post over
    body: Callable[[int], Any]  # the platform's own error answer for a status

    def __str__(self) -> str:
        return self.name


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


# X: tweepy against the X emulator; the read is GET /2/tweets/:id, the write POST /2/tweets.
X_READ = {"bearer_token": "app-bearer-SECRET"}
X_POST = {"consumer_key": "ck-SECRET", "consumer_secret": "cs-SECRET",
          "access_token": "1500000001-at-SECRET", "access_token_secret": "ats-SECRET"}


def _x_open(emulator: Emulator, base_url: str, timeout: float) -> Session:
    session = XAdapter(AdapterSettings("x", "default", base_url=base_url,
                                       options={"timeout": timeout})).open(X_READ)
    session.enable_posting(X_POST)
    return session


def _x_read(emulator: Emulator, session: Session) -> object:
    assert isinstance(emulator, XEmulator)
    post = XAdapter(AdapterSettings("x", "default")).parse_post(emulator.add_post("ada", "hi"))
    return session.author(post)


# Bluesky: atproto's Client; the read is getPostThread, the write createRecord.
BSKY_PASSWORD = "abcd-efgh-ijkl-mnop"


def _bsky_open(emulator: Emulator, base_url: str, timeout: float) -> Session:
    assert isinstance(emulator, BlueskyEmulator)
    adapter = BlueskyAdapter(AdapterSettings("bluesky", emulator.persona, base_url=base_url,
                                             options={"timeout": timeout}))
    return adapter.open({"app_password": BSKY_PASSWORD})


def _bsky_read(emulator: Emulator, session: Session) -> object:
    assert isinstance(emulator, BlueskyEmulator)
    url = emulator.add_post("ada", "hi")
    adapter = BlueskyAdapter(AdapterSettings("bluesky", emulator.persona))
    return session.author(adapter.parse_post(url))


# Threads: httpx; the read is GET /{media-id}, the write the publish request.
THREADS_PERSONA = "galatea"


def _threads_open(emulator: Emulator, base_url: str, timeout: float) -> Session:
    assert isinstance(emulator, ThreadsEmulator)
    adapter = ThreadsAdapter(AdapterSettings("threads", THREADS_PERSONA, base_url=base_url),
                             timeout=timeout, container_interval=0.0)
    return adapter.open({"access_token": emulator.token})


def _threads_read(emulator: Emulator, session: Session) -> object:
    assert isinstance(emulator, ThreadsEmulator)
    media_id = emulator.media_id(emulator.add_post("ada", "hi"))
    adapter = ThreadsAdapter(AdapterSettings("threads", THREADS_PERSONA))
    return session.author(adapter.parse_post(media_id))


# Instagram and Facebook: httpx on the Graph family's base; the read is a comment's author,
# the write a reply to it.
def _instagram_open(emulator: Emulator, base_url: str, timeout: float) -> Session:
    assert isinstance(emulator, InstagramEmulator)
    adapter = InstagramAdapter(AdapterSettings("instagram", THREADS_PERSONA, base_url=base_url),
                               timeout=timeout, container_interval=0.0)
    return adapter.open({"access_token": emulator.token})


def _instagram_comment(emulator: Emulator) -> contract.PostRef:
    assert isinstance(emulator, InstagramEmulator)
    return InstagramAdapter(AdapterSettings("instagram", THREADS_PERSONA)).parse_post(
        emulator.add_comment("ada", "hi"))


def _facebook_open(emulator: Emulator, base_url: str, timeout: float) -> Session:
    assert isinstance(emulator, FacebookEmulator)
    adapter = FacebookAdapter(AdapterSettings("facebook", emulator.page_id, base_url=base_url),
                              timeout=timeout)
    return adapter.open({"access_token": emulator.token})


def _facebook_comment(emulator: Emulator) -> contract.PostRef:
    assert isinstance(emulator, FacebookEmulator)
    return FacebookAdapter(AdapterSettings("facebook", emulator.page_id)).parse_post(
        emulator.add_comment("100000000000011", "hi"))


def _graph_error(status: int) -> dict[str, Any]:
    return {"error": {"message": _phrase(status), "type": "OAuthException",
                      "fbtrace_id": "emulator"}}


# Telegram: aiogram; the read is getChat, the write sendMessage.
def _telegram_open(emulator: Emulator, base_url: str, timeout: float) -> Session:
    assert isinstance(emulator, TelegramEmulator)
    adapter = TelegramAdapter(AdapterSettings("telegram", "persona", base_url=base_url,
                                              options={"timeout": timeout}))
    return adapter.open(emulator.credentials)


def _telegram_post(emulator: Emulator) -> contract.PostRef:
    assert isinstance(emulator, TelegramEmulator)
    adapter = TelegramAdapter(AdapterSettings("telegram", "persona"))
    return adapter.parse_post(emulator.add_post("alice_dev", "hello"))


def _plain_post(emulator: Emulator, session: Session) -> object:
    return session.send("hello there", reply_to=None, to=None, mentions={})


DRIVERS = [
    Driver("x", lambda: XEmulator(persona="persona").start(), _x_open, _x_read, _plain_post,
           lambda e, r: e.is_write(r),
           lambda status: {"title": _phrase(status), "detail": _phrase(status),
                           "type": "about:blank", "status": status}),
    Driver("bluesky", lambda: BlueskyEmulator(password=BSKY_PASSWORD).start(), _bsky_open,
           _bsky_read, _plain_post, lambda e, r: e.is_write(r),
           lambda status: {"error": _phrase(status).replace(" ", ""),
                           "message": _phrase(status)}),
    Driver("threads", lambda: ThreadsEmulator(THREADS_PERSONA).start(), _threads_open,
           _threads_read, _plain_post, lambda e, r: r.path.endswith("/threads_publish"),
           lambda status: {"error": {"message": _phrase(status), "type": "OAuthException",
                                     "fbtrace_id": "emulator"}}),
    Driver("instagram", lambda: InstagramEmulator(THREADS_PERSONA).start(), _instagram_open,
           lambda e, s: s.author(_instagram_comment(e)),
           lambda e, s: s.send("hi back", reply_to=_instagram_comment(e), to=None,
                               mentions={}),
           lambda e, r: r.method == "POST" and r.path.endswith("/replies"), _graph_error),
    Driver("facebook", lambda: FacebookEmulator().start(), _facebook_open,
           lambda e, s: s.author(_facebook_comment(e)),
           lambda e, s: s.send("hi back", reply_to=_facebook_comment(e), to=None,
                               mentions={}),
           lambda e, r: r.method == "POST" and r.path.endswith("/comments"), _graph_error),
    Driver("telegram", lambda: TelegramEmulator().start(), _telegram_open,
           lambda e, s: s.author(_telegram_post(e)),
           lambda e, s: s.send("hi back", reply_to=_telegram_post(e), to=None, mentions={}),
           lambda e, r: e.is_write(r),
           lambda status: None),  # the emulator answers Telegram's own error body
]


@pytest.fixture
def running() -> Iterator[list[Emulator]]:
    """Emulators to stop after the test, in the background (each stop waits out a poll)."""
    started: list[Emulator] = []
    yield started
    for emulator in started:
        threading.Thread(target=emulator.stop, daemon=True).start()


def _free_port() -> int:
    with socket.socket() as probe:  # free a moment ago: nobody listens there now
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _failed(driver: Driver, row: Row, kind: str, running: list[Emulator]) -> TactfulError:
    """Drive `kind` ("read" or "write") on `driver`'s platform into the answer of `row`."""
    emulator = driver.start()
    running.append(emulator)
    timeout = 0.5 if row.answer == "timeout" else 5.0
    if row.answer == "connect":
        dead = f"http://127.0.0.1:{_free_port()}"
        session = _bsky_moved(emulator, dead) if driver.name == "bluesky" else \
            driver.open(emulator, dead, timeout)
    else:
        session = driver.open(emulator, emulator.base_url, timeout)

    def match(request: Request) -> bool:
        if kind == "read":
            return not emulator.is_write(request)
        return driver.is_write(emulator, request)

    try:
        if row.answer == "timeout":
            emulator.stall_next(1.5, match=match)
        elif row.answer == "broken":
            emulator.drop_next(match=match)
        elif row.answer == "unreadable":
            emulator.fail_next(200, b"<html>oops</html>", match=match)
        elif row.answer != "connect":
            status = int(row.answer)
            headers = {"Retry-After": str(WAIT)} if status == 429 else {}
            emulator.fail_next(status, driver.body(status), headers, match=match)
        act = driver.read if kind == "read" else driver.write
        with pytest.raises(TactfulError) as caught:
            act(emulator, session)
        return caught.value
    finally:
        session.close()


def _bsky_moved(emulator: Emulator, dead: str) -> Session:
    """A Bluesky session whose PDS is unreachable once logged in: the login answer carries a
    DID document naming `dead` as the account's PDS, and atproto moves there, as it does for
    an account hosted elsewhere (Bluesky logs in at open, so the emulator must answer that)."""
    assert isinstance(emulator, BlueskyEmulator)
    login = httpx.post(f"{emulator.base_url}/xrpc/com.atproto.server.createSession",
                       json={"identifier": emulator.persona, "password": BSKY_PASSWORD})
    body = login.json()
    body["didDoc"] = {
        "@context": ["https://www.w3.org/ns/did/v1"], "id": body["did"],
        "alsoKnownAs": [f"at://{body['handle']}"], "verificationMethod": [],
        "service": [{"id": "#atproto_pds", "type": "AtprotoPersonalDataServer",
                     "serviceEndpoint": dead}]}
    emulator.fail_next(200, body, match=BlueskyEmulator.method("com.atproto.server."
                                                               "createSession"))
    return _bsky_open(emulator, emulator.base_url, 5.0)


@pytest.mark.parametrize("kind", ["read", "write"])
@pytest.mark.parametrize("driver", DRIVERS, ids=str)
@pytest.mark.parametrize("row", TABLE, ids=str)
def test_the_same_answer_is_the_same_error_on_every_platform(
        row: Row, driver: Driver, kind: str, running: list[Emulator]) -> None:
    error = _failed(driver, row, kind, running)
    assert type(error) is row.error, f"{driver} {kind} {row}: {type(error).__name__}: {error}"
    assert error.exit_code == row.exit_code
    if isinstance(error, PlatformDown):
        assert error.maybe_sent is (kind == "write" and row.pending), str(error)
    else:
        assert not row.pending  # only PlatformDown can keep a row pending
    if isinstance(error, RateLimited):
        assert error.retry_after == WAIT, str(error)  # the wait, parsed one way everywhere
    assert getattr(error, "platform", driver.name) == driver.name
    assert "SECRET" not in str(error) and "TEST-emulator-token" not in str(error)


def test_the_table_covers_every_kind_of_answer() -> None:
    answers = {row.answer for row in TABLE}
    assert {"400", "401", "403", "404", "422", "429", "500", "502", "503"} <= answers
    assert set(TRANSPORTS) <= answers
    assert len(answers) == len(TABLE)  # no answer in two rows


# ---- the shared module on its own -----------------------------------------------------------

NOW = 1_800_000_000.0


@pytest.mark.parametrize(("headers", "wait"), [
    ({}, None),
    ({"Retry-After": "30"}, 30),
    ({"retry-after": format_datetime(datetime.fromtimestamp(NOW + 90, UTC), usegmt=True)}, 90),
    ({"Retry-After": "soon"}, None),
    ({"x-rate-limit-reset": str(int(NOW) + 120), "x-rate-limit-remaining": "0"}, 120),
    # X: the used-up 24-hour allowance decides, not the window that still has requests left
    ({"x-rate-limit-reset": str(int(NOW) + 60), "x-rate-limit-remaining": "99",
      "x-user-limit-24hour-reset": str(int(NOW) + 7200),
      "x-user-limit-24hour-remaining": "0"}, 7200),
    ({"ratelimit-reset": str(int(NOW) + 45)}, 45),  # Bluesky: a Unix time
    ({"RateLimit-Reset": "45"}, 45),  # the IETF draft: seconds
    ({"Retry-After": "10", "ratelimit-reset": str(int(NOW) + 300)}, 300),  # the longest wait
    ({"X-Business-Use-Case-Usage":
      '{"1": [{"type": "threads", "estimated_time_to_regain_access": 5}]}'}, 300),
    ({"x-app-usage": '{"call_count": 100, "estimated_time_to_regain_access": 2}'}, 120),
    ({"x-app-usage": "not json"}, None),
    ({"x-rate-limit-reset": str(int(NOW) - 10)}, 0),  # a reset in the past: at once
])
def test_the_wait_of_a_429_is_parsed_one_way(headers: dict[str, str],
                                             wait: float | None) -> None:
    assert retry_after(headers, now=NOW) == wait


@pytest.mark.parametrize(("status", "failure", "write", "sent"), [
    (None, "connect", True, False), (None, "timeout", True, True),
    (None, "broken", True, True), (None, "unreadable", True, True),
    (None, "timeout", False, False), (500, None, True, True), (503, None, False, False),
    (501, None, True, False), (408, None, True, True), (400, None, True, False),
    (429, None, True, False), (201, None, True, True)])
def test_maybe_sent_is_only_a_write_that_may_have_reached_the_platform(
        status: int | None, failure: Any, write: bool, sent: bool) -> None:
    answer = Answer("p", status, write=write, failure=failure)
    assert maybe_sent(answer) is sent
    error = error_for(answer)
    assert isinstance(error, PlatformDown) or not sent
    if isinstance(error, PlatformDown):
        assert error.maybe_sent is sent


def test_a_platform_code_decides_as_the_status_it_stands_for() -> None:
    # Threads: Graph code 17 at HTTP 400 is a rate limit; it is refused, never "maybe sent".
    error = error_for(Answer("threads", 400, write=True, code=17, means=429,
                             headers={"Retry-After": "60"}, detail="User request limit",
                             what="POST /threads_publish"))
    assert type(error) is RateLimited and error.retry_after == 60
    assert "HTTP 400 (code 17) while POST /threads_publish: User request limit" in str(error)


def test_bad_input_names_what_was_not_found_and_the_fix() -> None:
    error = error_for(Answer("x", 404, what="looking up the post", missing="post 123",
                             detail="Not Found", hint="check the --reply-to link"))
    assert type(error) is BadInput
    assert str(error) == ("x: post 123 was not found (HTTP 404 while looking up the post: Not "
                          "Found); nothing was sent; check the --reply-to link")
