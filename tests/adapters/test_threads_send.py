"""`tactful send threads` through the real pipeline, keyring and plugin host, to the emulator."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tactful.adapters.meta.threads.emulator import ThreadsEmulator

from .. import recording_keyring


@pytest.fixture
def threads(tmp_path: Path, keyring_log: Path) -> Iterator[ThreadsEmulator]:
    emu = ThreadsEmulator("galatea").start()
    (tmp_path / "tactful.yaml").write_text(  # the working directory of every test
        f"platforms:\n  threads:\n    account: galatea\n    base_url: {emu.base_url}\n")
    recording_keyring.store("threads", "galatea", "access_token", emu.token)
    yield emu
    threading.Thread(target=emu.stop, daemon=True).start()  # see test_threads.py


def test_a_reply_by_url_goes_out_once(cli, threads: ThreadsEmulator) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "threads", "bob", "--kind", "reply", "--they", "hi").code == 0
    url = threads.add_post("alice", "@galatea what do you think?")

    first = cli("send", "threads", "--reply-to", url, "--text", "@alice I agree")
    again = cli("send", "threads", "--reply-to", url, "--text", "@alice I agree")

    assert first.code == 0, first.err
    assert again.code == 5, again.err
    [posted] = threads.sent()
    assert (posted["reply_to"], posted["text"]) == (url, "@alice I agree")
    assert posted["url"] in first.out
    assert recording_keyring.reads() == ["threads/galatea/access_token"]


def test_a_do_not_engage_author_stops_before_the_token_is_read(  # type: ignore[no-untyped-def]
        cli, threads: ThreadsEmulator) -> None:
    assert cli("dne", "threads", "mallory", "on").code == 0
    url = threads.add_post("mallory", "@galatea hey")

    result = cli("send", "threads", "--reply-to", url, "--text", "hello")

    assert result.code == 3, result.err
    assert recording_keyring.reads() == []
    assert threads.requests == []


def test_a_do_not_engage_author_found_by_the_one_read_is_never_answered(  # type: ignore[no-untyped-def]
        cli, threads: ThreadsEmulator) -> None:
    assert cli("dne", "threads", "mallory", "on").code == 0
    media_id = threads.media_id(threads.add_post("mallory", "no mention, just a post"))

    result = cli("send", "threads", "--reply-to", media_id, "--text", "hello")

    assert result.code == 3, result.err
    assert "(author)" in result.err
    assert [r.path for r in threads.requests] == [f"/v1.0/{media_id}"]
    assert threads.writes() == []


def test_a_post_replied_to_by_url_is_already_replied_by_its_media_id(  # type: ignore[no-untyped-def]
        cli, threads: ThreadsEmulator) -> None:
    assert cli("remember", "threads", "bob", "--kind", "reply", "--they", "hi").code == 0
    url = threads.add_post("alice", "@galatea what do you think?")
    assert cli("send", "threads", "--reply-to", url, "--text", "@alice I agree").code == 0
    by_id = cli("send", "threads", "--reply-to", threads.media_id(url),
                "--text", "@alice I agree")
    assert by_id.code == 5, by_id.err
    assert "already replied" in by_id.err
    assert len(threads.sent()) == 1
