"""The Telegram session: aiogram against the Bot API emulator on 127.0.0.1, nothing mocked."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from tactful.adapters.telegram.adapter import TelegramAdapter
from tactful.adapters.telegram.emulator import TelegramEmulator
from tactful.core.errors import BadInput
from tactful.core.send.adapter import (
    AdapterSettings,
    Author,
    Forbidden,
    PlatformDown,
    PostRef,
    RateLimited,
    Session,
    Unauthorized,
)

WRONG_TOKEN = "654321:not-the-emulator-token"


@pytest.fixture
def emulator() -> Iterator[TelegramEmulator]:
    with TelegramEmulator() as emulator:
        yield emulator


def make_adapter(base_url: str, timeout: float = 3) -> TelegramAdapter:
    return TelegramAdapter(AdapterSettings("telegram", "persona", base_url=base_url,
                                           options={"timeout": timeout}))


@pytest.fixture
def adapter(emulator: TelegramEmulator) -> TelegramAdapter:
    return make_adapter(emulator.base_url)


@pytest.fixture
def session(adapter: TelegramAdapter, emulator: TelegramEmulator) -> Iterator[Session]:
    session = adapter.open(emulator.credentials)
    yield session
    session.close()


def methods_since(emulator: TelegramEmulator, start: int) -> list[str | None]:
    return [TelegramEmulator.method(r) for r in emulator.requests[start:]]


# ---- replies and mentions -------------------------------------------------------------------

def test_a_reply_lands_threaded(emulator: TelegramEmulator, adapter: TelegramAdapter,
                                session: Session) -> None:
    ref = emulator.add_post("alice_dev", "hello @persona")
    chat, message = ref.split("/")
    session.enable_posting({})  # the token that reads also posts: nothing more to add
    sent = session.send("hi back", reply_to=adapter.parse_post(ref), to=None, mentions={})
    (call,) = emulator.calls("sendMessage")
    assert call["chat_id"] == chat
    assert call["reply_parameters"] == {"message_id": int(message),
                                        "allow_sending_without_reply": False}
    assert "parse_mode" not in call  # text goes out literally, never as HTML or Markdown
    (posted,) = emulator.sent()
    assert posted["reply_to"] == ref and posted["text"] == "hi back"
    assert sent.id == posted["id"] == f"{chat}/2"
    assert sent.url is None  # private messages have no links


def test_a_reply_in_a_supergroup_through_its_link(emulator: TelegramEmulator,
                                                  adapter: TelegramAdapter,
                                                  session: Session) -> None:
    group = emulator.add_group("Builders")
    ref = emulator.add_post("bob_dev", "@persona what do you think?", chat=group)
    internal = group.removeprefix("-100")
    link = f"https://t.me/c/{internal}/{ref.split('/')[1]}"
    sent = session.send("I think yes", reply_to=adapter.parse_post(link), to=None, mentions={})
    (call,) = emulator.calls("sendMessage")
    assert call["chat_id"] == group
    assert call["reply_parameters"]["message_id"] == 1
    assert emulator.sent()[0]["reply_to"] == ref
    assert sent.url == f"https://t.me/c/{internal}/2"


def test_a_reply_in_a_public_group_by_username(emulator: TelegramEmulator,
                                               adapter: TelegramAdapter,
                                               session: Session) -> None:
    group = emulator.add_group("Evals", username="evals_chat")
    ref = emulator.add_post("bob_dev", "@persona hi", chat=group)
    link = f"https://t.me/Evals_Chat/{ref.split('/')[1]}"
    sent = session.send("hello", reply_to=adapter.parse_post(link), to=None, mentions={})
    (call,) = emulator.calls("sendMessage")
    assert call["chat_id"] == "@evals_chat"
    assert emulator.sent()[0]["reply_to"] == ref
    assert sent.id == f"{group}/2" and sent.url == "https://t.me/evals_chat/2"


def test_a_reply_to_a_missing_message_is_refused_not_posted_unthreaded_as_bad_input(
        emulator: TelegramEmulator, adapter: TelegramAdapter, session: Session) -> None:
    # Telegram's 400 on a write used to be Forbidden (exit 5); the one mapping
    # (core/send/answers.py) makes every 400 BadInput (exit 2), on every platform.
    ref = emulator.add_post("alice_dev", "hello")
    gone = adapter.parse_post(ref.split("/")[0] + "/99")
    with pytest.raises(BadInput, match="message to be replied not found"):
        session.send("hi back", reply_to=gone, to=None, mentions={})
    assert emulator.sent() == []
    assert len(emulator.writes()) == 1


def test_a_mention_becomes_telegrams_mention(emulator: TelegramEmulator,
                                             adapter: TelegramAdapter, session: Session) -> None:
    alice = emulator.add_user("alice_dev")
    emulator.add_post("alice_dev", "hi")
    text = "cc @Bob_Builder and @alice_dev; mail x@example.com"
    session.send(text, reply_to=None, to=alice, mentions={"bob_builder": None})
    (posted,) = emulator.sent()
    assert posted["mentions"] == ["bob_builder", "alice_dev"]
    assert adapter.mentions(text) == posted["mentions"]


def test_a_direct_message_to_a_chat_id(emulator: TelegramEmulator, session: Session) -> None:
    alice = emulator.add_user("alice_dev")
    emulator.add_post("alice_dev", "hi")
    sent = session.send("a note for you", reply_to=None, to=alice, mentions={})
    (call,) = emulator.calls("sendMessage")
    assert call["chat_id"] == alice and "reply_parameters" not in call
    assert sent.id == f"{alice}/2"


def test_the_bot_cannot_write_first_nor_to_who_blocked_it(emulator: TelegramEmulator,
                                                          session: Session) -> None:
    stranger = emulator.add_user("stranger_x")
    with pytest.raises(Forbidden, match="initiate conversation"):
        session.send("hello", reply_to=None, to=stranger, mentions={})
    alice = emulator.add_user("alice_dev")
    emulator.add_post("alice_dev", "hi")
    emulator.block("alice_dev")
    with pytest.raises(Forbidden, match="blocked by the user"):
        session.send("hello", reply_to=None, to=alice, mentions={})
    assert emulator.sent() == []


def test_a_post_needs_a_chat(session: Session) -> None:
    with pytest.raises(BadInput, match="--to CHAT"):
        session.send("hello world", reply_to=None, to=None, mentions={})


def test_text_over_the_limit_is_refused_by_telegram_as_bad_input(
        emulator: TelegramEmulator, session: Session) -> None:
    # A 400, so BadInput (exit 2) as on every platform; it used to be Forbidden here.
    alice = emulator.add_user("alice_dev")
    emulator.add_post("alice_dev", "hi")
    with pytest.raises(BadInput, match="too long"):
        session.send("x" * 4097, reply_to=None, to=alice, mentions={})
    session.send("x" * 4096, reply_to=None, to=alice, mentions={})
    assert [len(p["text"]) for p in emulator.sent()] == [4096]


def test_emoji_text_at_the_limit_is_measured_as_telegram_measures_it(
        emulator: TelegramEmulator, adapter: TelegramAdapter, session: Session) -> None:
    # 2049 emoji are 2049 code points but 4098 UTF-16 code units: Telegram refuses them, and so
    # does the adapter's count, which the gate applies before any credential is read.
    alice = emulator.add_user("alice_dev")
    emulator.add_post("alice_dev", "hi")
    over, at_limit = "🙂" * 2049, "🙂" * 2048
    assert adapter.text_length(over) > adapter.text_limit >= adapter.text_length(at_limit)
    with pytest.raises(BadInput, match="too long"):
        session.send(over, reply_to=None, to=alice, mentions={})
    session.send(at_limit, reply_to=None, to=alice, mentions={})
    assert [p["text"] for p in emulator.sent()] == [at_limit]


# ---- the author lookup --------------------------------------------------------------------------

def test_the_author_lookup_is_exactly_one_request(emulator: TelegramEmulator,
                                                  adapter: TelegramAdapter,
                                                  session: Session) -> None:
    alice = emulator.add_user("Alice_Dev", display_name="Alice Dev")
    ref = emulator.add_post("Alice_Dev", "hello @persona")
    start = len(emulator.requests)
    author = session.author(adapter.parse_post(ref))
    assert methods_since(emulator, start) == ["getchat"]
    assert author == Author(handle="alice_dev", id=alice, display_name="Alice Dev",
                            is_bot=False, thread=alice, url=None)


def test_a_user_without_username_is_their_id(emulator: TelegramEmulator,
                                             adapter: TelegramAdapter, session: Session) -> None:
    ref = emulator.add_post("424242", "hi")
    author = session.author(adapter.parse_post(ref))
    assert (author.handle, author.id) == ("424242", "424242")


def test_a_group_message_has_no_author_lookup(emulator: TelegramEmulator,
                                              adapter: TelegramAdapter,
                                              session: Session) -> None:
    group = emulator.add_group("Builders")
    ref = emulator.add_post("bob_dev", "@persona hi", chat=group)
    start = len(emulator.requests)
    with pytest.raises(BadInput, match="--to HANDLE"):
        session.author(adapter.parse_post(ref))
    assert methods_since(emulator, start) == []


def test_resolve_knows_ids_and_never_asks(emulator: TelegramEmulator, session: Session) -> None:
    start = len(emulator.requests)
    assert session.resolve("424242") == "424242"
    assert session.resolve("alice_dev") is None  # the Bot API cannot look up a user's name
    assert methods_since(emulator, start) == []


def test_a_post_of_another_platform_is_refused(session: Session) -> None:
    with pytest.raises(BadInput, match="belongs to 'x'"):
        session.author(PostRef("x", "1234567890"))


# ---- errors -------------------------------------------------------------------------------------

def test_429_is_rate_limited_with_the_retry_time_and_not_retried(
        emulator: TelegramEmulator, adapter: TelegramAdapter, session: Session) -> None:
    ref = adapter.parse_post(emulator.add_post("alice_dev", "hello"))
    emulator.fail_method("sendMessage", 429, retry_after=7)
    with pytest.raises(RateLimited) as caught:
        session.send("hi back", reply_to=ref, to=None, mentions={})
    assert caught.value.retry_after == 7
    assert "retry in 7 s" in str(caught.value)
    assert len(emulator.writes()) == 1 and emulator.sent() == []


def test_a_plain_429_uses_the_retry_after_header(emulator: TelegramEmulator,
                                                 adapter: TelegramAdapter,
                                                 session: Session) -> None:
    ref = adapter.parse_post(emulator.add_post("alice_dev", "hello"))
    emulator.fail_next(429, headers={"Retry-After": "12"})
    with pytest.raises(RateLimited) as caught:
        session.author(ref)
    assert caught.value.retry_after == 12


def test_401_is_unauthorized_and_shows_no_token(emulator: TelegramEmulator,
                                                adapter: TelegramAdapter) -> None:
    ref = adapter.parse_post(emulator.add_post("alice_dev", "hello"))
    session = adapter.open({"token": WRONG_TOKEN})
    try:
        with pytest.raises(Unauthorized) as caught:
            session.author(ref)
        with pytest.raises(Unauthorized):
            session.send("hi", reply_to=ref, to=None, mentions={})
    finally:
        session.close()
    assert WRONG_TOKEN.split(":")[1] not in str(caught.value)
    assert "tactful credentials set telegram" in str(caught.value)
    assert emulator.sent() == []


def test_5xx_on_the_write_may_have_sent(emulator: TelegramEmulator, adapter: TelegramAdapter,
                                        session: Session) -> None:
    ref = adapter.parse_post(emulator.add_post("alice_dev", "hello"))
    emulator.fail_method("sendMessage", 502)
    with pytest.raises(PlatformDown) as caught:
        session.send("hi back", reply_to=ref, to=None, mentions={})
    assert caught.value.maybe_sent is True
    assert len(emulator.writes()) == 1  # reported, never retried


def test_5xx_on_a_read_sent_nothing(emulator: TelegramEmulator, adapter: TelegramAdapter,
                                    session: Session) -> None:
    ref = adapter.parse_post(emulator.add_post("alice_dev", "hello"))
    emulator.fail_next(500)
    with pytest.raises(PlatformDown) as caught:
        session.author(ref)
    assert caught.value.maybe_sent is False


def test_a_timeout_on_the_write_may_have_sent(emulator: TelegramEmulator) -> None:
    adapter = make_adapter(emulator.base_url, timeout=0.5)
    ref = adapter.parse_post(emulator.add_post("alice_dev", "hello"))
    emulator.stall_next(1.5, method="sendMessage")
    session = adapter.open(emulator.credentials)
    try:
        began = time.monotonic()
        with pytest.raises(PlatformDown) as caught:
            session.send("hi back", reply_to=ref, to=None, mentions={})
        assert time.monotonic() - began < 1.4
    finally:
        session.close()
    assert caught.value.maybe_sent is True
    assert len(emulator.writes()) == 1


def test_nobody_listening_sent_nothing(adapter: TelegramAdapter) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    session = make_adapter(f"http://127.0.0.1:{port}").open(
        {"token": "123456:TEST-emulator-token"})
    ref = adapter.parse_post("123456789/1")
    try:
        with pytest.raises(PlatformDown) as caught:
            session.send("hi", reply_to=ref, to=None, mentions={})
        assert caught.value.maybe_sent is False
        with pytest.raises(PlatformDown):
            session.author(ref)
    finally:
        session.close()


# ---- inbound ------------------------------------------------------------------------------------

def test_fetch_inbound_returns_what_addresses_the_persona(emulator: TelegramEmulator,
                                                          adapter: TelegramAdapter,
                                                          session: Session) -> None:
    group = emulator.add_group("Builders")
    private = emulator.add_post("alice_dev", "hi, can you help?")
    mention = emulator.add_post("bob_dev", "what does @Persona think?", chat=group)
    emulator.add_post("carol_dev", "unrelated chatter, cc @persona_fan", chat=group)
    mine = session.send("I think yes", reply_to=adapter.parse_post(mention), to=None,
                        mentions={})
    reply = emulator.add_post("carol_dev", "why?", reply_to=mine.id)
    page = session.fetch_inbound(None, 10)
    assert [item.post.id for item in page.items] == [private, mention, reply]
    first = page.items[0]
    assert (first.author.handle, first.text, first.thread) == (
        "alice_dev", "hi, can you help?", private.split("/")[0])
    assert first.at.tzinfo is not None
    assert page.items[1].mentions == ("persona",)
    assert page.items[1].post.url == f"https://t.me/c/{group.removeprefix('-100')}/1"
    assert page.cursor == "5"
    again = session.fetch_inbound(page.cursor, 10)
    assert (list(again.items), again.cursor) == ([], "5")
    assert emulator.pending_updates() == []  # confirmed only by the next call's offset
    assert [c for c in emulator.calls("getMe")] == [{}]  # the bot's name, read once


def test_fetch_inbound_never_confirms_what_it_did_not_return(emulator: TelegramEmulator,
                                                             session: Session) -> None:
    for n in range(3):
        emulator.add_post("alice_dev", f"message {n}")
    page = session.fetch_inbound(None, 2)
    assert [i.text for i in page.items] == ["message 0", "message 1"]
    assert emulator.pending_updates() == [1, 2, 3]
    rest = session.fetch_inbound(page.cursor, 2)
    assert [i.text for i in rest.items] == ["message 2"]
    assert emulator.pending_updates() == [3]


def test_fetch_inbound_on_nothing_returns_at_once(emulator: TelegramEmulator,
                                                  session: Session) -> None:
    began = time.monotonic()
    page = session.fetch_inbound("7", 50)
    assert time.monotonic() - began < 1
    assert (list(page.items), page.cursor) == ([], "7")
    (call,) = emulator.calls("getUpdates")
    assert call["timeout"] == "0" and call["offset"] == "7" and call["limit"] == "50"


def test_a_bad_cursor_is_bad_input(session: Session) -> None:
    with pytest.raises(BadInput, match="not an update offset"):
        session.fetch_inbound("../../1", 10)


# ---- hygiene ------------------------------------------------------------------------------------

def test_no_text_nor_token_reaches_a_log(emulator: TelegramEmulator, adapter: TelegramAdapter,
                                         session: Session,
                                         caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    ref = adapter.parse_post(emulator.add_post("alice_dev", "my secret plans for tuesday"))
    session.fetch_inbound(None, 10)
    session.send("the reply nobody logs", reply_to=ref, to=None, mentions={})
    emulator.fail_method("sendMessage", 503)
    with pytest.raises(PlatformDown) as caught:
        session.send("a second reply nobody logs", reply_to=ref, to=None, mentions={})
    logged = caplog.text + str(caught.value)
    for secret in ("secret plans", "nobody logs", emulator.token.split(":")[1]):
        assert secret not in logged


def test_a_session_is_a_session_and_closes_cleanly(emulator: TelegramEmulator,
                                                   adapter: TelegramAdapter) -> None:
    session = adapter.open(emulator.credentials)
    assert isinstance(session, Session)
    session.fetch_inbound(None, 1)
    session.close()
    session.close()  # twice is harmless
    assert not [t for t in threading.enumerate() if t.name == "tactful-telegram-loop"]


async def test_the_session_works_from_inside_a_running_loop(emulator: TelegramEmulator,
                                                           adapter: TelegramAdapter,
                                                           session: Session) -> None:
    # Its own loop runs in its own thread, so an async caller (a routine) can use it too.
    ref = emulator.add_post("alice_dev", "hello")
    assert session.author(adapter.parse_post(ref)).handle == "alice_dev"
