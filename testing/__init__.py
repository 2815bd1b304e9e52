"""A pytest plugin for the test suites of bots built on tactful (registered under `pytest11`).

The fixture `tactful_world` gives each test a throwaway memory home, a config with every
platform in dry run, and an in-memory keyring; `world.send(...)` goes through the real send
gate (every guard, the ledger, the outbox) and returns what would have been sent, or raises
the gate's refusal (`DoNotEngage` for exit 3, `Refused` for 5, ...). Nothing reaches a network
or the machine's real keyring, home or config: a project's own `./tactful.yaml` and
`$TACTFUL_CONFIG` are ignored inside the fixture.

    def test_my_bot_never_answers_a_flagged_person(tactful_world):
        tactful_world.flag("x", "mallory")
        with pytest.raises(DoNotEngage):
            tactful_world.send("x", "hi @alice, meet @mallory", to="alice")
        reply = tactful_world.send("x", "thanks @alice!", to="alice")
        assert reply.handle == "alice" and tactful_world.outbox() == [reply]
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

PLATFORMS = ("x", "bluesky", "threads", "telegram")


@dataclass(frozen=True)
class Outboxed:
    """One line of the dry-run outbox: what would have been sent."""

    platform: str
    action: str
    text: str
    handle: str | None = None
    reply_to: str | None = None
    mentions: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()  # what the dry run could not check offline
    time: str = ""

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> Outboxed:
        return cls(platform=str(record["platform"]), action=str(record["action"]),
                   text=str(record.get("text") or ""), handle=record.get("handle"),
                   reply_to=record.get("reply_to"),
                   mentions=tuple(record.get("mentions") or ()),
                   unchecked=tuple(record.get("unchecked") or ()),
                   time=str(record.get("time") or ""))


@dataclass
class DryRunWorld:
    """A memory home and a config of its own, every platform in dry run."""

    home: Path
    config: Path
    _lines_read: int = field(default=0, repr=False)

    def tactful(self, *argv: str) -> subprocess.CompletedProcess[str]:
        """Run a tactful command as a real process against this world's home and config."""
        return subprocess.run([sys.executable, "-m", "tactful.core.cli", "--home",
                               str(self.home), "--config", str(self.config), *argv],
                              capture_output=True, text=True, timeout=120, check=False)

    def remember(self, platform: str, handle: str, *, they: str = "hello",
                 kind: str = "reply", person_id: str | None = None) -> None:
        """Someone wrote to the persona: their file gets an inbound entry."""
        from tactful.core.memory import recording
        from tactful.core.memory.handles import normalize_handle, normalize_id

        handle = normalize_handle(handle, platform)
        person_id = normalize_id(person_id) if person_id is not None else None
        self._gate().people.change(platform, handle, lambda person: recording.remember(
            person, kind=kind, direction="inbound", at=self._now(), they=they,
            person_id=person_id))

    def flag(self, platform: str, handle: str, *, person_id: str | None = None) -> None:
        """Remember someone and flag them do-not-engage."""
        from tactful.core.memory import recording
        from tactful.core.memory.handles import normalize_handle

        self.remember(platform, handle, person_id=person_id)
        handle = normalize_handle(handle, platform)
        self._gate().people.change(platform, handle, lambda person: recording.do_not_engage(
            person, True, "test", self._now()))

    def send(self, platform: str, text: str, *, to: str | None = None,
             reply_to: str | None = None) -> Outboxed:
        """Through the real gate, in dry run: the outbox line it wrote, or the refusal raised
        (a `tactful.core.errors.TactfulError`; its `exit_code` is the command's)."""
        from tactful.core.send.attempt import SendRequest
        from tactful.core.send.pipeline import Pipeline

        gate = self._gate()
        try:
            Pipeline(gate).send(SendRequest(platform, text, to=to, reply_to=reply_to,
                                            dry_run=True))
        finally:
            gate.close()
        return self.outbox()[-1]

    def outbox(self) -> list[Outboxed]:
        path = self.home / "outbox" / "dry-run.jsonl"
        if not path.exists():
            return []
        return [Outboxed.of(json.loads(line)) for line in path.read_text().splitlines()
                if line.strip()]

    def _gate(self) -> Any:
        from tactful.core.config.loader import load_config
        from tactful.core.send.gate import Gate

        return Gate.for_home(self.home, config=load_config(self.config))

    def _now(self) -> datetime:
        return datetime.now(UTC)


def _config(home: Path) -> str:
    lines = ["persona:", "  name: test persona", "  timezone: UTC", "memory:",
             f"  home: {json.dumps(str(home))}", "platforms:"]
    for platform in PLATFORMS:
        lines += [f"  {platform}:", "    dry_run: true"]
    return "\n".join(lines) + "\n"


@pytest.fixture
def tactful_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[DryRunWorld]:
    """A throwaway tactful: its own home, config (every platform in dry run) and keyring."""
    import keyring
    from keyring.backend import KeyringBackend

    class _Memory(KeyringBackend):
        priority = 1
        store: dict[tuple[str, str], str]

        def get_password(self, service: str, username: str) -> str | None:
            return self.store.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.store[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            self.store.pop((service, username), None)

    root = tmp_path / "tactful"
    home = root / "home"
    (home / "people").mkdir(parents=True)
    config = root / "tactful.yaml"
    config.write_text(_config(home), encoding="utf-8")
    for name, value in (("TACTFUL_HOME", str(home)), ("TACTFUL_CONFIG", str(config)),
                        ("XDG_CONFIG_HOME", str(root / "xdg-config")),
                        ("XDG_DATA_HOME", str(root / "xdg-data"))):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("TACTFUL_NOW", raising=False)
    monkeypatch.chdir(root)  # a project's ./tactful.yaml is not read
    previous = keyring.get_keyring()
    memory = _Memory()  # type: ignore[no-untyped-call]  # keyring's base is untyped
    memory.store = {}
    keyring.set_keyring(memory)
    try:
        yield DryRunWorld(home=home, config=config)
    finally:
        keyring.set_keyring(previous)
