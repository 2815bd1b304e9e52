"""`tactful send` through each real library against its emulator: the flagged-account runs of
the seed (exit 3, nothing written on the platform, no credential read), a reply that lands and
is remembered, and a dry run that makes no request at all."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tactful.adapters.bluesky.emulator import BlueskyEmulator
from tactful.adapters.emulation import Emulator
from tactful.adapters.meta.instagram.emulator import InstagramEmulator
from tactful.adapters.meta.threads.emulator import ThreadsEmulator
from tactful.adapters.telegram.emulator import TelegramEmulator
from tactful.adapters.x.emulator import XEmulator

from .. import recording_keyring


@dataclass(frozen=True)
class Platform:
    name: str
    make: Callable[[], Any]
    fields: Callable[[Any], dict[str, str]]
    handle: Callable[[str], str] = lambda h: h  # how a test name is written on the platform


PLATFORMS = [
    Platform("x", XEmulator, lambda e: {
        "bearer_token": "b", "consumer_key": "ck", "consumer_secret": "cs",
        "access_token": "at", "access_token_secret": "ats"}),
    Platform("bluesky", BlueskyEmulator, lambda e: {"app_password": "app-pass"},
             handle=lambda h: f"{h}.bsky.social"),
    Platform("threads", ThreadsEmulator, lambda e: {"access_token": e.token}),
    Platform("telegram", TelegramEmulator, lambda e: {"token": e.token}),
    # Comments on the persona's newest photo: `post` below makes one.
    Platform("instagram", InstagramEmulator, lambda e: {"access_token": e.token}),
]


@dataclass
class Setup:
    platform: Platform
    emulator: Any
    config: Path
    home: Path

    def h(self, name: str) -> str:
        return self.platform.handle(name)

    def post(self, by: str, text: str) -> str:
        """A post addressed to the persona (Threads finds a post by URL only among those)."""
        return str(self.emulator.add_post(by, f"@{self.emulator.persona} {text}"))


@pytest.fixture(params=PLATFORMS, ids=[p.name for p in PLATFORMS])
def setup(request: pytest.FixtureRequest, tmp_path: Path, keyring_log: Path) -> Iterator[Setup]:
    platform: Platform = request.param
    with platform.make() as emulator:
        account = emulator.persona
        for field, value in platform.fields(emulator).items():
            recording_keyring.store(platform.name, account, field, value)
        config = tmp_path / "tactful.yaml"
        # A Telegram post here is in the user's private chat: allowed for these tests (the
        # default, public interactions only, is tested below).
        private = "    allow_private: true\n" if platform.name == "telegram" else ""
        config.write_text(f"platforms:\n  {platform.name}:\n    account: {account}\n"
                          f"    base_url: {emulator.base_url}\n{private}")
        home = tmp_path / "home"
        (home / "people").mkdir(parents=True)
        yield Setup(platform, emulator, config, home)


def _send(cli, setup: Setup, *argv: str):  # type: ignore[no-untyped-def]
    return cli("--config", str(setup.config), "send", setup.platform.name, *argv)


def test_a_reply_to_a_flagged_author_exits_3_and_reads_nothing(cli, setup: Setup) -> None:
    mallory = setup.h("mallory")
    setup.emulator.add_user(mallory)
    post = setup.post(mallory, "hello persona")
    assert cli("dne", setup.platform.name, mallory, "on").code == 0
    argv = ["--reply-to", post, "--text", "thanks!"]
    if setup.platform.name in ("telegram", "instagram"):
        # A chat reference or a comment id names no one: the target is named by hand.
        argv += ["--to", mallory]
    result = _send(cli, setup, *argv)
    assert result.code == 3, result.err
    assert setup.emulator.writes() == []
    assert setup.emulator.requests == []
    assert recording_keyring.reads() == []


def test_a_reply_that_mentions_a_flagged_account_exits_3(cli, setup: Setup) -> None:
    alice, mallory = setup.h("alice"), setup.h("mallory")
    setup.emulator.add_user(alice)
    setup.emulator.add_user(mallory)
    post = setup.post(alice, "what do you think?")
    cli("dne", setup.platform.name, mallory, "on")
    result = _send(cli, setup, "--reply-to", post, "--text", f"ask @{mallory}, they know")
    assert result.code == 3, result.err
    assert "(mention)" in result.err
    assert setup.emulator.requests == []
    assert recording_keyring.reads() == []


def test_a_reply_lands_threaded_and_is_remembered(cli, setup: Setup) -> None:
    alice = setup.h("alice")
    setup.emulator.add_user(alice, display_name="Alice")
    post = setup.post(alice, "how does the desk work?")
    result = _send(cli, setup, "--reply-to", post, "--text", "it is rebuilt after every write")
    assert result.code == 0, result.err
    [sent] = setup.emulator.sent()
    assert sent["text"] == "it is rebuilt after every write"
    assert sent["reply_to"] == post
    person = (setup.home / "people" / setup.platform.name / f"{alice}.md").read_text()
    assert "it is rebuilt after every write" in person
    [event] = [json.loads(x) for x in (setup.home / "engagement.jsonl").read_text().splitlines()]
    assert event["handle"] == alice and event["action"] == "reply"
    again = _send(cli, setup, "--reply-to", post, "--text", "it is rebuilt after every write")
    assert again.code == 5 and len(setup.emulator.sent()) == 1


def test_a_dry_run_makes_no_request(cli, setup: Setup) -> None:
    alice = setup.h("alice")
    post = setup.post(alice, "hi")
    result = _send(cli, setup, "--reply-to", post, "--text", "hello back", "--dry-run")
    assert result.code == 0, result.err
    assert setup.emulator.requests == []
    assert recording_keyring.reads() == []
    assert (setup.home / "outbox" / "dry-run.jsonl").exists()


def test_a_429_is_exit_5_with_the_retry_time_and_no_second_try(cli, setup: Setup) -> None:
    alice = setup.h("alice")
    post = setup.post(alice, "hi")
    setup.emulator.fail_next(429, None if setup.platform.name == "telegram" else
                             {"error": "slow down"}, {"retry-after": "37"},
                             match=lambda r: r in _writes_of(setup.emulator, r))
    result = _send(cli, setup, "--reply-to", post, "--to", alice, "--text", "hello")
    assert result.code == 5, result.err
    assert "rate limited" in result.err and "37" in result.err
    assert len(setup.emulator.writes()) <= 1 and setup.emulator.sent() == []


def _writes_of(emulator: Emulator, request: Any) -> list[Any]:
    return [request] if emulator.is_write(request) else []


def test_a_private_chat_in_persona_mode_is_refused_by_default_before_any_read(
        cli, tmp_path: Path, keyring_log: Path) -> None:
    with TelegramEmulator() as emulator:
        recording_keyring.store("telegram", emulator.persona, "token", emulator.token)
        config = tmp_path / "tactful.yaml"
        config.write_text(f"platforms:\n  telegram:\n    account: {emulator.persona}\n"
                          f"    base_url: {emulator.base_url}\n")
        (tmp_path / "home" / "people").mkdir(parents=True)
        user = emulator.add_user("alice")
        post = str(emulator.add_post("alice", "hello persona"))  # in her private chat
        for argv in (["--reply-to", post], ["--to", user]):
            result = cli("--config", str(config), "send", "telegram", *argv, "--text", "hi!")
            assert result.code == 5, result.err
            assert "public interactions" in result.err and "allow_private: true" in result.err
        assert emulator.requests == [] and recording_keyring.reads() == []
        # A group is public: a post there goes out.
        emulator.add_group("book club", username="bookclub")
        sent = cli("--config", str(config), "send", "telegram", "--to", "bookclub",
                   "--text", "hi all")
        assert sent.code == 0, sent.err
