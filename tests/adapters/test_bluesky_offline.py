"""Bluesky without a network: post references, mentions, length, plugin loading, imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tactful.adapters.bluesky import plugin
from tactful.adapters.bluesky.adapter import BlueskyAdapter, count_graphemes, mention_spans
from tactful.core.errors import BadInput, MissingCredential
from tactful.core.plugins import Host
from tactful.core.send.adapter import Adapter, AdapterSettings

DID = "did:plc:ewvi7nxzyoun6zhxrhs64oiz"
RKEY = "3kq2vzxjbcs2a"


@pytest.fixture
def adapter() -> BlueskyAdapter:
    return BlueskyAdapter(AdapterSettings("bluesky", "persona.bsky.social"))


# ---- post references ------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "uri", "handle"), [
    (f"https://bsky.app/profile/alice.bsky.social/post/{RKEY}",
     f"at://alice.bsky.social/app.bsky.feed.post/{RKEY}", "alice.bsky.social"),
    (f"https://bsky.app/profile/Alice.Bsky.Social/post/{RKEY}/",
     f"at://alice.bsky.social/app.bsky.feed.post/{RKEY}", "alice.bsky.social"),
    (f"https://bsky.app/profile/{DID}/post/{RKEY}",
     f"at://{DID}/app.bsky.feed.post/{RKEY}", None),
    (f"https://bsky.app/profile/{DID.replace(':', '%3A')}/post/{RKEY}?ref=share#top",
     f"at://{DID}/app.bsky.feed.post/{RKEY}", None),
    (f"bsky.app/profile/jay.bsky.team/post/{RKEY}",
     f"at://jay.bsky.team/app.bsky.feed.post/{RKEY}", "jay.bsky.team"),
    (f"  at://{DID}/app.bsky.feed.post/{RKEY}  ", f"at://{DID}/app.bsky.feed.post/{RKEY}", None),
    (f"at://example.com/app.bsky.feed.post/{RKEY}",
     f"at://example.com/app.bsky.feed.post/{RKEY}", "example.com"),
])
def test_parse_post_accepts_the_real_forms(adapter: BlueskyAdapter, raw: str, uri: str,
                                           handle: str | None) -> None:
    ref = adapter.parse_post(raw)
    assert (ref.platform, ref.id, ref.handle) == ("bluesky", uri, handle)
    actor = uri.split("/")[2]
    assert ref.url == f"https://bsky.app/profile/{actor}/post/{RKEY}"


@pytest.mark.parametrize("raw", [
    "",
    "   ",
    RKEY,  # an id alone names no author: not resolvable
    "https://x.com/alice/status/1234567890",
    "https://www.threads.net/@alice/post/C1a2b3",
    f"https://bsky.app.evil.example/profile/alice.bsky.social/post/{RKEY}",
    f"https://evil.example/bsky.app/profile/alice.bsky.social/post/{RKEY}",
    f"https://bsky.app:8443/profile/alice.bsky.social/post/{RKEY}",
    f"https://user:pw@bsky.app/profile/alice.bsky.social/post/{RKEY}",
    f"ftp://bsky.app/profile/alice.bsky.social/post/{RKEY}",
    "https://bsky.app/profile/alice.bsky.social",
    f"https://bsky.app/profile/../post/{RKEY}",
    f"https://bsky.app/profile/%2e%2e/post/{RKEY}",
    f"https://bsky.app/profile/alice.bsky.social/post/{RKEY}/../../etc/passwd",
    "https://bsky.app/profile/alice.bsky.social/post/..",
    "https://bsky.app/profile/alice.bsky.social/post/not-a-tid",
    f"https://bsky.app/profile/alice.bsky.social/feed/{RKEY}",
    f"https://bsky.app/profile/alice/post/{RKEY}",  # not a domain
    f"https://bsky.app/profile/bob@example.com/post/{RKEY}",
    f"https://bsky.app/profile/did:key:zQ3shokFTS3brHcDQrn/post/{RKEY}",
    f"at://{DID}/app.bsky.feed.like/{RKEY}",
    f"at://{DID}/app.bsky.feed.post/{RKEY}/extra",
    f"at://{DID}/app.bsky.feed.post/..",
    f"https://bsky.app/profile/alice.bsky.social/post/{RKEY}\x00",
    f"https://bsky.app/profile/alice.bsky.social/post/{RKEY} trailing",
])
def test_parse_post_refuses_garbage(adapter: BlueskyAdapter, raw: str) -> None:
    with pytest.raises(BadInput) as caught:
        adapter.parse_post(raw)
    message = str(caught.value)
    assert message.startswith("bluesky:")
    assert "\n" not in message
    assert "https://bsky.app/profile/HANDLE/post/ID" in message  # says how to fix it


def test_one_post_has_one_id_whatever_the_case_of_its_handle(adapter: BlueskyAdapter) -> None:
    # the ledger keys on the id: two spellings of one reference must not look like two posts
    upper = adapter.parse_post(f"https://bsky.app/profile/ALICE.bsky.social/post/{RKEY}")
    lower = adapter.parse_post(f"at://alice.bsky.social/app.bsky.feed.post/{RKEY}")
    assert upper.id == lower.id


# ---- mentions ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("hi @alice.bsky.social!", ["alice.bsky.social"]),
    ("@alice.bsky.social.", ["alice.bsky.social"]),  # a full stop ends the sentence
    ("ask @alice.bsky.social, @bob.test; (@carol.example.org)", [
        "alice.bsky.social", "bob.test", "carol.example.org"]),
    ("mail bob@example.com or write to me@alice.bsky.social", []),  # e-mails are not handles
    ("@bob and @localhost are no handles on Bluesky", []),
    ("@-bad.example @1.2 @x.123", []),
    ("@Alice.Bsky.Social and @alice.bsky.social and @ALICE.bsky.social", ["alice.bsky.social"]),
    ("Café ☕🏳️‍🌈 @zoë.example @jürgen.bsky.social", []),  # non-ASCII: not a handle
    ("naïve\u3000@alice.bsky.social's post", ["alice.bsky.social"]),
    ("line one\n@bob.bsky.social", ["bob.bsky.social"]),
    ("quote:@alice.bsky.social \"@bob.bsky.social\"", []),
    ("@alice.bsky.social-", ["alice.bsky.social"]),
    ("", []),
])
def test_mentions_as_bluesky_links_them(adapter: BlueskyAdapter, text: str,
                                        expected: list[str]) -> None:
    assert adapter.mentions(text) == expected


def test_mention_spans_are_utf8_byte_ranges_end_exclusive() -> None:
    text = "Café 🏳️‍🌈 @Alice.bsky.social x @bob.test"
    data = text.encode("utf-8")
    spans = mention_spans(text)
    assert [data[s.byte_start:s.byte_end].decode() for s in spans] == [
        "@Alice.bsky.social", "@bob.test"]
    assert spans[0].byte_start != text.index("@")  # bytes, not characters


# ---- length ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "graphemes"), [
    ("", 0),
    ("hello", 5),
    ("e\u0301", 1),  # e + combining acute
    ("👨‍👩‍👧‍👦", 1),
    ("🇳🇱🇩🇪", 2),
    ("👍🏽", 1),
    ("🏳️‍🌈", 1),
    ("a\r\nb", 3),
    ("한국어", 3),
    ("\u1100\u1161\u11a8", 1),  # conjoining jamo
])
def test_graphemes(text: str, graphemes: int) -> None:
    assert count_graphemes(text) == graphemes


def test_text_length_counts_graphemes_and_the_byte_cap(adapter: BlueskyAdapter) -> None:
    assert adapter.text_limit == 300
    assert adapter.text_length("é" * 300) == 300
    assert adapter.text_length("e\u0301" * 300) == 300  # 900 bytes, 600 code points
    assert adapter.text_length("x" * 301) == 301
    families = "👨‍👩‍👧‍👦" * 150  # 150 graphemes but 3750 bytes: over the 3000-byte cap
    assert adapter.text_length(families) > adapter.text_limit


# ---- the adapter's contract -------------------------------------------------------------------

def test_the_adapter_declares_its_credentials_and_kinds(adapter: BlueskyAdapter) -> None:
    assert isinstance(adapter, Adapter)
    assert adapter.platform == "bluesky"
    assert adapter.read_fields == ("app_password",)
    assert adapter.post_fields == ()
    assert dict(adapter.quotas) == {}
    assert adapter.direct_kind == "mention"


def test_open_without_an_app_password_names_the_command(adapter: BlueskyAdapter) -> None:
    with pytest.raises(MissingCredential, match="tactful credentials set bluesky app_password"):
        adapter.open({})


@pytest.mark.parametrize("account", ["default", "persona", "has space.bsky.social"])
def test_open_refuses_an_account_that_cannot_log_in(account: str) -> None:
    adapter = BlueskyAdapter(AdapterSettings("bluesky", account))
    with pytest.raises(BadInput, match=r"platforms\.bluesky\.account"):
        adapter.open({"app_password": "abcd-efgh-ijkl-mnop"})


def test_the_plugin_registers_through_the_host() -> None:
    found = Host().collect("register_adapters")
    assert found["bluesky"] == ("bluesky", plugin.make_adapter)
    made = found["bluesky"][1](AdapterSettings("bluesky", "persona.bsky.social"))
    assert isinstance(made, BlueskyAdapter)
    assert made.settings.account == "persona.bsky.social"


_PROBE = """
import json, sys
{imports}
from tactful.core.send.adapter import AdapterSettings
adapter = plugin.make_adapter(AdapterSettings("bluesky", "persona.bsky.social"))
adapter.parse_post("https://bsky.app/profile/alice.bsky.social/post/3kq2vzxjbcs2a")
adapter.mentions("hi @alice.bsky.social"); adapter.text_length("hi")
heavy = ("atproto", "httpx", "pydantic", "tweepy", "aiogram")
print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules if m.startswith(heavy)}})))
"""


def _loaded_heavy(imports: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", _PROBE.format(imports=imports)],
                          capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_loading_the_plugin_and_adapter_imports_no_sdk() -> None:
    imports = ("from tactful.adapters.bluesky import plugin\n"
               "import tactful.adapters.bluesky.adapter")
    assert _loaded_heavy(imports) == []


def test_the_probe_sees_the_sdk_when_the_session_is_imported() -> None:
    # proves the probe above can fail: the session module does load atproto
    imports = ("from tactful.adapters.bluesky import plugin\n"
               "import tactful.adapters.bluesky.session")
    assert "atproto_client" in _loaded_heavy(imports)
