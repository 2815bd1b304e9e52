"""The Telegram adapter offline: references, mentions, length, imports and the plugin host."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tactful.adapters.telegram.adapter import TelegramAdapter
from tactful.core import plugins
from tactful.core.errors import BadInput
from tactful.core.send.adapter import Adapter, AdapterSettings, PostRef, Unauthorized

from .. import recording_keyring


@pytest.fixture
def adapter() -> TelegramAdapter:
    return TelegramAdapter(AdapterSettings("telegram", "persona"))


# ---- post references ------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "post_id", "url"), [
    ("123456789/42", "123456789/42", None),
    ("  123456789/42  ", "123456789/42", None),
    ("-4012345/7", "-4012345/7", None),  # a basic group: no links exist
    ("-1001234567890/42", "-1001234567890/42", "https://t.me/c/1234567890/42"),
    ("@durov/42", "@durov/42", "https://t.me/durov/42"),
    ("https://t.me/durov/42", "@durov/42", "https://t.me/durov/42"),
    ("t.me/Durov/42", "@durov/42", "https://t.me/durov/42"),
    ("http://telegram.me/durov/42/", "@durov/42", "https://t.me/durov/42"),
    ("https://t.me/s/durov/42", "@durov/42", "https://t.me/durov/42"),
    ("https://t.me/durov/42?single", "@durov/42", "https://t.me/durov/42"),
    ("https://t.me/c/1234567890/42", "-1001234567890/42", "https://t.me/c/1234567890/42"),
    ("https://t.me/c/1234567890/5/42", "-1001234567890/42", "https://t.me/c/1234567890/42"),
    ("https://t.me/builders_chat/9/42", "@builders_chat/42", "https://t.me/builders_chat/42"),
])
def test_parse_post_accepts_the_real_forms(adapter: TelegramAdapter, raw: str, post_id: str,
                                           url: str | None) -> None:
    chat = post_id.split("/")[0]
    # a private chat's id is its user's id: the reference names who a reply reaches
    author_id = chat if chat.isdigit() else None
    assert adapter.parse_post(raw) == PostRef("telegram", post_id, url=url, author_id=author_id)


def test_the_same_public_post_has_one_id_whatever_the_case() -> None:
    # The ledger keys on the id: two spellings of one post must not allow two replies.
    adapter = TelegramAdapter(AdapterSettings("telegram", "persona"))
    ids = {adapter.parse_post(raw).id for raw in
           ("https://t.me/Durov/42", "t.me/durov/42", "@DUROV/42", "https://t.me/s/durov/42")}
    assert ids == {"@durov/42"}


@pytest.mark.parametrize("raw", [
    "", "   ", "../../etc/passwd", "123/../4", "https://t.me/durov/../42",
    "https://t.me/%2e%2e/42", "https://t.me/durov/4%32", "123/4\x00", "123/4 5", "..\\42",
    "https://x.com/alice_dev/status/1234567890", "https://bsky.app/profile/a.bsky.social/post/3k",
    "https://www.threads.net/@alice/post/C1", "https://example.com/durov/42",
    "https://t.me/durov", "https://t.me/durov/0", "https://t.me/durov/1/2/3",
    "https://t.me/joinchat/12345/1", "https://t.me/+AbCdEf", "https://t.me/c/abc/1",
    "https://t.me/c/1234567890", "https://evil.example@t.me/durov/1", "https://t.me:8443/durov/1",
    "ftp://t.me/durov/1", "tg://resolve?domain=durov&post=42", "https://t.me/durov/42?comment=7",
    "https://t.me/durov/42#top", "123/0", "0/5", "123/abc", "abc/1", "123/", "/45", "123",
    "123/99999999999", "@ab/1", "x" * 5000,
])
def test_parse_post_refuses_garbage_with_one_line(adapter: TelegramAdapter, raw: str) -> None:
    with pytest.raises(BadInput) as caught:
        adapter.parse_post(raw)
    message = str(caught.value)
    assert message.startswith("telegram post reference ")
    assert "\n" not in message and len(message) < 400
    assert "t.me/c/" in message  # says how to write one


# ---- mentions and length ------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("hi @alice_dev!", ["alice_dev"]),
    ("mail bob@example.com or @carol_x.", ["carol_x"]),  # an e-mail is no mention
    ("me@alice_dev and x@y_zzzz", []),
    ("@Alice_Dev and @alice_dev again, @ALICE_DEV", ["alice_dev"]),
    ("(@dave_smith), [@erin_w]; @frank_1? @grace_h: 'ok'", ["dave_smith", "erin_w", "frank_1",
                                                             "grace_h"]),
    ("@alice_dev's idea, @bob_dev’s too", ["alice_dev", "bob_dev"]),
    ("@alice-dev", ["alice"]),  # '-' ends a username, as Telegram links it
    ("@@double_at", ["double_at"]),
    ("__@hidden_one and 12@digits_first", []),  # glued to a word: Telegram makes no mention
    ("@abc @abcd @gif", ["abcd", "gif"]),  # 4 characters, or a short inline bot
    ("@" + "a" * 32 + " @" + "b" * 33, ["a" * 32]),  # too long: no mention at all, no cut
    ("@алиса @café_bot café@alice_dev", []),  # a letter on either side ends it
    ("１２@alice_dev", []),  # a full-width digit is a digit
    ("🙂@smile_dev", ["smile_dev"]),
    ("", []), ("@", []), ("user@", []), ("@ alice", []),
])
def test_mentions_as_telegram_finds_them(adapter: TelegramAdapter, text: str,
                                         expected: list[str]) -> None:
    assert adapter.mentions(text) == expected


def test_text_is_counted_in_utf16_code_units_as_telegram_counts(
        adapter: TelegramAdapter) -> None:
    assert adapter.text_limit == 4096
    assert adapter.text_length("é🙂a") == 4  # the emoji is two UTF-16 code units
    assert adapter.text_length("x" * 4096) == adapter.text_limit
    assert adapter.text_length("🙂" * 2048) == adapter.text_limit


def test_the_adapter_declares_the_contract(adapter: TelegramAdapter) -> None:
    assert isinstance(adapter, Adapter)
    assert adapter.read_fields == ("token",)
    assert adapter.post_fields == ()
    assert dict(adapter.quotas) == {}
    assert adapter.direct_kind == "dm"


@pytest.mark.parametrize("token", ["", "not-a-token", "424242", ":abc", "12 3:abc",
                                   "123:abc def", "123:abc\n"])
def test_a_token_of_the_wrong_shape_is_refused_unshown(adapter: TelegramAdapter,
                                                       token: str) -> None:
    with pytest.raises(Unauthorized) as caught:
        adapter.open({"token": token})
    message = str(caught.value)
    assert "123456:ABC" in message and "tactful credentials set telegram" in message
    assert not token.strip() or token.strip() not in message


def test_the_adapter_never_touches_the_keyring(keyring_log: Path,
                                               adapter: TelegramAdapter) -> None:
    adapter.parse_post("https://t.me/durov/42")
    adapter.mentions("hi @alice_dev")
    with pytest.raises(Unauthorized):
        adapter.open({"token": "nope"})
    assert recording_keyring.accesses() == []


# ---- imports and the plugin host --------------------------------------------------------------

def test_the_plugin_and_adapter_import_no_sdk() -> None:
    probe = textwrap.dedent("""
        import json, sys
        import tactful.adapters.telegram.plugin as plugin
        plugin_only = "tactful.adapters.telegram.adapter" in sys.modules
        from tactful.adapters.telegram.adapter import TelegramAdapter
        from tactful.core.send.adapter import AdapterSettings
        adapter = plugin.make_adapter(AdapterSettings("telegram", "persona"))
        adapter.parse_post("https://t.me/durov/42"); adapter.mentions("hi @alice_dev")
        heavy = sorted(m for m in sys.modules
                       if m.split(".")[0] in {"aiogram", "aiohttp", "pydantic", "tweepy",
                                              "atproto", "httpx"})
        print(json.dumps({"heavy": heavy, "plugin_imports_adapter": plugin_only,
                          "adapter": type(adapter).__name__}))
    """)
    done = subprocess.run([sys.executable, "-W", "error", "-c", probe], capture_output=True,
                          text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report == {"heavy": [], "plugin_imports_adapter": False,
                      "adapter": "TelegramAdapter"}


def test_the_host_loads_the_plugin_and_its_factory() -> None:
    found = plugins.Host().collect("register_adapters")
    plugin, factory = found["telegram"]
    assert plugin == "telegram"
    adapter = factory(AdapterSettings("telegram", "persona", base_url="http://127.0.0.1:9"))
    assert isinstance(adapter, TelegramAdapter) and isinstance(adapter, Adapter)
    assert adapter.base_url == "http://127.0.0.1:9"
