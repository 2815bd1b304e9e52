"""The X adapter offline: post references, @mentions, text length, and loading without tweepy."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tactful.adapters.x import plugin
from tactful.adapters.x.adapter import XAdapter, mentions, parse_post, text_length
from tactful.adapters.x.emulator import extract_mentions, weighted_length
from tactful.core.errors import BadInput
from tactful.core.plugins import Host
from tactful.core.send.adapter import Adapter, AdapterSettings

ID = "1860000000000000123"


@pytest.mark.parametrize(("raw", "handle", "url"), [
    (f"https://x.com/Ada_Builds/status/{ID}", "ada_builds",
     f"https://x.com/Ada_Builds/status/{ID}"),
    (f"https://twitter.com/ada/status/{ID}?s=20&t=Ab-c_D", "ada", f"https://x.com/ada/status/{ID}"),
    (f"https://mobile.twitter.com/ada/status/{ID}/", "ada", f"https://x.com/ada/status/{ID}"),
    (f"http://www.x.com/ada/status/{ID}/photo/1", "ada", f"https://x.com/ada/status/{ID}"),
    (f"x.com/ada/statuses/{ID}", "ada", f"https://x.com/ada/status/{ID}"),
    (f"https://x.com/i/web/status/{ID}", None, f"https://x.com/i/web/status/{ID}"),
    (f"https://x.com/i/status/{ID}", None, f"https://x.com/i/web/status/{ID}"),
    (f"  {ID}\n", None, f"https://x.com/i/web/status/{ID}"),
])
def test_parse_post_accepts_the_real_forms(raw: str, handle: str | None, url: str) -> None:
    ref = parse_post(raw)
    assert (ref.platform, ref.id, ref.handle, ref.url) == ("x", ID, handle, url)


@pytest.mark.parametrize("raw", [
    "", "   ", "0123", "12345678901234567890", "-5", "12 34",
    f"https://x.com/../status/{ID}", f"https://x.com/ada/status/{ID}/../../etc/passwd",
    f"https://x.com/ada/status/%2e%2e/{ID}", f"https://x.com/ada/%2e%2e/status/{ID}",
    f"https://x.com/ada/status/{ID}?next=..%2F..&x=<script>",
    f"https://x.com.evil.example/ada/status/{ID}", f"https://x.com@evil.example/ada/status/{ID}",
    f"https://x.com:8080/ada/status/{ID}", f"ftp://x.com/ada/status/{ID}",
    "https://x.com/ada", f"https://x.com/ada/likes/{ID}",
    f"https://x.com/a_name_far_too_long_for_x/status/{ID}",
    f"https://bsky.app/profile/ada.bsky.social/post/{ID}",
    "https://www.threads.net/@ada/post/C1a2b3", "https://t.me/somechat/42",
    f"https://x.com/ada/status/{ID}\x00", f"https://x.com/ada/status/{ID} extra",
    "at://did:plc:abc/app.bsky.feed.post/3k", "/etc/passwd",
])
def test_parse_post_refuses_garbage_with_one_line(raw: str) -> None:
    with pytest.raises(BadInput) as caught:
        parse_post(raw)
    message = str(caught.value)
    assert message.startswith("x: ") and "\n" not in message
    assert "x.com/<handle>/status/<id>" in message  # says how to fix it


def test_parse_post_names_the_other_platform() -> None:
    with pytest.raises(BadInput, match="Bluesky link, not an X post"):
        parse_post("https://bsky.app/profile/ada.bsky.social/post/3k2")


@pytest.mark.parametrize(("text", "expected"), [
    ("hi @Ada_Builds and @grace!", ["ada_builds", "grace"]),
    ("mail ada@example.com or me@x.co", []),  # e-mail addresses are not mentions
    ("@ada, @ada. @ADA? (@ada)", ["ada"]),  # trailing punctuation, case, duplicates
    ("@bob@mastodon.social", []),  # another @ right after: not an X mention
    ("see @bob://thing", []),
    ("@josé and @bobé", []),  # a Latin accented letter continues the name: no mention
    ("日本語@tanaka です", ["tanaka"]),  # X only looks at ASCII before the @
    ("café@latte", ["latte"]),  # same rule: what X would notify, the guards must check
    ("\uff20fullwidth hello", ["fullwidth"]),
    ("RT@retweeted RT: @also", ["retweeted", "also"]),
    ("#@tag $@cash !@bang *@star &@amp", []),
    ("@a_name_of_sixteen", []),  # 16 characters: no X account can have it
    ("@fifteen_chars_x", ["fifteen_chars_x"]),
    ("@ alone, @, @@double", []),
    ("@owner/list-name", ["owner"]),  # deliberate: a list link names its owner
    ("", []),
])
def test_mentions_on_odd_inputs(text: str, expected: list[str]) -> None:
    assert mentions(text) == expected


@pytest.mark.parametrize("text", [
    "hi @Ada_Builds and @grace!", "mail ada@example.com", "@bob@mastodon.social",
    "@josé y @maría", "日本語@tanaka", "RT@retweeted RT: @also", "#@tag", "(@ada) @ADA",
])
def test_mentions_agree_with_the_emulators_reading_of_x(text: str) -> None:
    # The emulator follows twitter-text's grammar on its own; apart from list links the two
    # finders must name the same accounts.
    assert mentions(text) == list(dict.fromkeys(n.lower() for n, _, _ in extract_mentions(text)))


@pytest.mark.parametrize(("text", "length"), [
    ("hello", 5),
    ("a" * 280, 280),
    ("日本語", 6),  # CJK weighs 2
    ("—“quotes”—", 10),  # general punctuation in X's light ranges weighs 1
    ("e\u0301", 1),  # NFC first: é is one code point
    ("see https://example.com/a/very/long/path/that/is/long", 4 + 49),  # own length when > 23
    ("see x.co", 4 + 23),  # a short link is at least 23
    ("see https://t.co/x).", 4 + 23 + 2),  # trailing punctuation is not the link
    ("node.js rocks", 23 + 6),  # looks like a domain: counted as a link, conservatively
    ("👍", 2),
])
def test_text_length_weighs_like_x(text: str, length: int) -> None:
    assert text_length(text) == length


@pytest.mark.parametrize("text", [
    "hello " * 46, "日本" * 70, "https://example.com " * 10, "a.co " * 40,
    "👩‍👩‍👧 " * 30, "see https://example.com/" + "p" * 200, "x" * 281,
])
def test_text_length_never_below_what_x_counts(text: str) -> None:
    assert text_length(text) >= weighted_length(text)


def test_a_huge_text_is_measured_quickly() -> None:
    assert text_length("a." * 50_000) > 280


def test_adapter_facts() -> None:
    adapter = XAdapter(AdapterSettings(platform="x", account="default"))
    assert isinstance(adapter, Adapter)
    assert adapter.read_fields == ("bearer_token",)
    assert adapter.post_fields == ("consumer_key", "consumer_secret", "access_token",
                                   "access_token_secret")
    assert (adapter.text_limit, dict(adapter.quotas), adapter.direct_kind) == (280, {}, "mention")


def test_loading_the_plugin_and_the_adapter_imports_no_sdk() -> None:
    code = textwrap.dedent("""
        import sys
        import tactful.adapters.x.plugin as plugin
        import tactful.adapters.x.adapter
        from tactful.core.send.adapter import AdapterSettings
        adapter = plugin.make_adapter(AdapterSettings(platform="x", account="default"))
        adapter.parse_post("https://x.com/ada/status/1")
        adapter.mentions("@ada hi")
        adapter.text_length("hi")
        heavy = sorted(m for m in ("tweepy", "requests", "oauthlib", "atproto", "aiogram",
                                   "httpx") if m in sys.modules)
        print(",".join(heavy) or "none")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "none"


def test_the_host_finds_the_factory_through_the_entry_point() -> None:
    found = Host().collect("register_adapters")
    assert found["x"] == ("x", plugin.make_adapter)
    adapter = found["x"][1](AdapterSettings(platform="x", account="default"))
    assert isinstance(adapter, XAdapter) and isinstance(adapter, Adapter)
