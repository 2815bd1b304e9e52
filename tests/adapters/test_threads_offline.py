"""The Threads adapter offline: references, mentions, length, plugin loading, imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tactful.adapters.meta.threads import plugin
from tactful.adapters.meta.threads.adapter import ThreadsAdapter, api_root, decode_cursor
from tactful.core.errors import BadInput, MissingCredential
from tactful.core.plugins import Host
from tactful.core.send.adapter import Adapter, AdapterSettings, PostRef

from ..recording_keyring import accesses

SETTINGS = AdapterSettings("threads", "galatea")


@pytest.fixture
def adapter() -> ThreadsAdapter:
    return ThreadsAdapter(SETTINGS)


# ---- post references ------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "expected"), [
    ("https://www.threads.net/@alice/post/C8xYzAbCdEf",
     PostRef("threads", "C8xYzAbCdEf", "https://www.threads.com/@alice/post/C8xYzAbCdEf",
             "alice")),
    ("https://www.threads.com/@Alice.B_1/post/DDzbnVKx57R/?xmt=AQGz&igshid=1",
     PostRef("threads", "DDzbnVKx57R", "https://www.threads.com/@alice.b_1/post/DDzbnVKx57R",
             "alice.b_1")),
    ("threads.net/@alice/post/C8xYz-Ab_Ef",
     PostRef("threads", "C8xYz-Ab_Ef", "https://www.threads.com/@alice/post/C8xYz-Ab_Ef",
             "alice")),
    ("  http://threads.com/t/DDzbnVKx57R#top ",
     PostRef("threads", "DDzbnVKx57R", "https://www.threads.com/t/DDzbnVKx57R", None)),
    ("18031234567890123", PostRef("threads", "18031234567890123")),
])
def test_parse_post_accepts_real_reference_forms(adapter: ThreadsAdapter, raw: str,
                                                 expected: PostRef) -> None:
    assert adapter.parse_post(raw) == expected


@pytest.mark.parametrize("raw", [
    "", "   ",
    "../../etc/passwd",
    "https://www.threads.net/@alice/post/../../../etc/passwd",
    "https://www.threads.net/@alice/post/%2e%2e%2fsecret",
    "https://www.threads.net/@../post/C8xYzAbCdEf",
    "https://www.threads.net/@.alice/post/C8xYzAbCdEf",
    "https://www.threads.net/@alice/post/C8xY zAbCdEf",
    "https://www.threads.net/@alice/post/C8xYz\x00AbCdEf",
    "https://www.threads.net/@alice",
    "https://www.threads.net/@alice/post/",
    "https://www.threads.net.evil.example/@alice/post/C8xYzAbCdEf",
    "https://user:pw@www.threads.net/@alice/post/C8xYzAbCdEf",
    "https://www.threads.net:8443/@alice/post/C8xYzAbCdEf",
    "ftp://www.threads.net/@alice/post/C8xYzAbCdEf",
    "javascript:alert(1)",
    "https://x.com/alice/status/1790000000000000000",
    "https://bsky.app/profile/alice.bsky.social/post/3kabc",
    "at://did:plc:abc/app.bsky.feed.post/3kabc",
    "https://www.instagram.com/p/C8xYzAbCdEf/",
    "-12345", "12/34", "1" * 26,
])
def test_parse_post_refuses_garbage_with_one_line_saying_how(adapter: ThreadsAdapter,
                                                             raw: str) -> None:
    with pytest.raises(BadInput) as caught:
        adapter.parse_post(raw)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("threads: ")
    assert "https://www.threads.com/@alice/post/" in message  # how to write one


def test_a_long_bad_reference_is_cut_short_in_the_message(adapter: ThreadsAdapter) -> None:
    with pytest.raises(BadInput) as caught:
        adapter.parse_post("https://evil.example/" + "a" * 500)
    assert len(str(caught.value)) < 300


# ---- mentions and length ----------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("hi @alice", ["alice"]),
    ("@Alice, @BOB! and @carol.", ["alice", "bob", "carol"]),
    ("(@alice) [@bob] “@carol” @dave's @erin…", ["alice", "bob", "carol", "dave", "erin"]),
    ("@alice.smith. and @al..ice", ["alice.smith", "alice", "al"]),
    ("write to me@example.com or alice@example.org", []),
    ("x@alice y_@bob", []),
    # a superset on purpose: a name Threads might link is checked rather than missed
    ("z.@carol -@dave /@erin", ["carol", "dave", "erin"]),
    ("@bob@mastodon.social is elsewhere", ["bob"]),
    ("see https://www.threads.com/@alice/post/C8xYzAbCdEf and www.x.com/@bob", []),
    ("@" + "a" * 30 + " and @" + "b" * 31, ["a" * 30, "b" * 30]),
    ("@alice @Alice @ALICE @alice", ["alice"]),
    ("héllo @bob, 日本語@carol, ünï@dave", ["bob", "carol", "dave"]),
    ("@ålice is not a username, @ nor this, nor @@bob, nor @.dot", []),
    ("", []),
])
def test_mentions_are_every_name_threads_may_link(adapter: ThreadsAdapter, text: str,
                                        expected: list[str]) -> None:
    assert adapter.mentions(text) == expected


@pytest.mark.parametrize(("text", "length"), [
    ("hello", 5),
    ("héllo 日本", 8),
    ("👋", 4),
    ("👩\u200d👩\u200d👧", 4 + 3 + 4 + 3 + 4),
    ("❤\ufe0f", 3 + 3),
    ("a" * 500, 500),
])
def test_text_length_counts_emoji_by_their_bytes(adapter: ThreadsAdapter, text: str,
                                                 length: int) -> None:
    assert adapter.text_length(text) == length


def test_the_adapter_speaks_the_contract(adapter: ThreadsAdapter) -> None:
    assert isinstance(adapter, Adapter)
    assert (adapter.platform, adapter.text_limit, adapter.direct_kind) == (
        "threads", 500, "mention")
    assert adapter.read_fields == ("access_token",)
    assert adapter.post_fields == ()
    assert dict(adapter.quotas) == {"post": 250, "reply": 1000}


@pytest.mark.parametrize(("base", "root"), [
    (None, "https://graph.threads.net/v1.0"),
    ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1.0"),
    ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1.0"),
    ("https://proxy.example/threads/v1.0/", "https://proxy.example/threads/v1.0"),
])
def test_the_api_version_is_added_to_the_base_url_explicitly(base: str | None,
                                                             root: str) -> None:
    assert api_root(base) == root


def test_a_cursor_reads_back() -> None:
    assert decode_cursor("1796000000:18000000000000002,18000000000000001") == (
        1796000000, frozenset({"18000000000000001", "18000000000000002"}))
    assert decode_cursor("12:") == (12, frozenset())


@pytest.mark.parametrize("raw", ["", "abc", "12:ab", "12:1,,2", "-1:2", "1:2:3", "1:../x"])
def test_cursors_tactful_did_not_make_are_refused(raw: str) -> None:
    with pytest.raises(BadInput, match="not one tactful made"):
        decode_cursor(raw)


def test_open_without_a_token_names_the_command(adapter: ThreadsAdapter) -> None:
    with pytest.raises(MissingCredential, match="tactful credentials set threads access_token"):
        adapter.open({})


def test_a_malformed_token_is_refused_without_showing_it(adapter: ThreadsAdapter) -> None:
    with pytest.raises(BadInput) as caught:
        adapter.open({"access_token": "EAAB secret\nvalue"})
    assert "secret" not in str(caught.value)


def test_the_offline_adapter_never_touches_the_keyring(adapter: ThreadsAdapter,
                                                       keyring_log: Path) -> None:
    adapter.parse_post("https://www.threads.net/@alice/post/C8xYzAbCdEf")
    adapter.mentions("@alice hi")
    adapter.text_length("hi")
    plugin.make_adapter(SETTINGS)
    assert accesses() == []


# ---- the plugin ------------------------------------------------------------------------------

def test_the_host_collects_the_threads_factory() -> None:
    found = Host().collect("register_adapters")
    owner, factory = found["threads"]
    assert owner == "threads"
    assert factory is plugin.make_adapter
    made = factory(SETTINGS)
    assert isinstance(made, ThreadsAdapter)
    assert isinstance(made, Adapter)


def test_loading_the_plugin_and_adapter_imports_no_sdk() -> None:
    code = (
        "import json, sys\n"
        "import tactful.adapters.meta.threads.plugin as p\n"
        "import tactful.adapters.meta.threads.adapter as a\n"
        "from tactful.core.send.adapter import AdapterSettings\n"
        "made = p.make_adapter(AdapterSettings('threads', 'x'))\n"
        "made.parse_post('https://www.threads.net/@a/post/C8xYzAbCdEf')\n"
        "made.mentions('@a'); made.text_length('a')\n"
        "heavy = ('httpx', 'httpcore', 'anyio', 'tweepy', 'atproto', 'aiogram')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in heavy)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, check=True)
    assert json.loads(result.stdout) == []
