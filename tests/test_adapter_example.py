"""The worked third-party adapter in docs/adapter-example.md, installed from the page itself
and sent through against a loopback Pigeon."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tactful.adapters.emulation import Emulator, Reply, Request

from . import recording_keyring

PAGE = Path(__file__).parent.parent / "docs" / "adapter-example.md"


class Pigeon(Emulator):
    name = "pigeon"

    def __init__(self) -> None:
        super().__init__()
        self.posts: dict[str, dict[str, str | None]] = {
            "42": {"author": "Alice", "author_id": "p-1", "thread": "40"},
            "43": {"author": "Mallory", "author_id": "p-666", "thread": "43"}}
        self.made: list[dict[str, object]] = []

    def is_write(self, request: Request) -> bool:
        return request.method == "POST"

    def answer(self, request: Request) -> Reply:
        if request.headers.get("authorization") != "Bearer pigeon-token":
            return Reply(401, {"error": "who are you"})
        if request.method == "GET" and request.path.startswith("/posts/"):
            post = self.posts.get(request.path.rsplit("/", 1)[1])
            return Reply(200, post) if post else Reply(404, {"error": "no such post"})
        if request.method == "POST" and request.path == "/posts":
            body = request.json()
            self.made.append(body)
            return Reply(201, {"id": str(100 + len(self.made))})
        return Reply(404, {"error": "no such endpoint"})


@pytest.fixture
def pigeon_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keyring_log: Path) -> Path:
    page = PAGE.read_text()
    site = tmp_path / "site"
    for block in re.findall(r"```python\n(.*?)```", page, re.DOTALL):
        first, _, _ = block.partition("\n")
        target = site / first.removeprefix("# ").strip()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block)
    (site / "tactful_pigeon" / "__init__.py").write_text("")
    project = tomllib.loads(re.findall(r"```toml\n(.*?)```", page, re.DOTALL)[0])
    dist = site / "tactful_pigeon-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tactful-pigeon\nVersion: 0.1.0\n")
    points = project["project"]["entry-points"]["tactful"]
    (dist / "entry_points.txt").write_text(
        "[tactful]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()))
    monkeypatch.syspath_prepend(str(site))
    (tmp_path / "home" / "people").mkdir(parents=True)
    return tmp_path


def test_the_worked_example_sends_and_refuses(cli, pigeon_installed: Path, home: Path) -> None:
    with Pigeon() as server:
        config = pigeon_installed / "tactful.yaml"
        config.write_text(f"platforms:\n  pigeon:\n    base_url: {server.base_url}\n")
        missing = cli("--config", str(config), "send", "pigeon", "--reply-to", "42",
                      "--text", "hi")
        assert missing.code == 2 and "tactful credentials set pigeon token" in missing.err
        recording_keyring.store("pigeon", "default", "token", "pigeon-token")

        sent = cli("--config", str(config), "send", "pigeon",
                   "--reply-to", "https://pigeon.example/p/42", "--text", "here you go @bob")
        assert sent.code == 0, sent.err
        assert sent.out.strip() == "sent reply to pigeon/@alice: https://pigeon.example/p/101"
        assert server.made == [{"text": "here you go @bob", "reply_to": "42"}]
        assert (home / "people" / "pigeon" / "alice.md").exists()

        assert cli("dne", "pigeon", "mallory", "on").code == 0
        refused = cli("--config", str(config), "send", "pigeon", "--reply-to", "43",
                      "--text", "hello")
        assert refused.code == 3
        assert cli("check", "pigeon", "mallory").code == 3
        unnamed = cli("--config", str(config), "send", "pigeon", "--to", "bob", "--text", "hi")
        assert unnamed.code == 2 and "the text has no @bob" in unnamed.err
        server.fail_next(429, {"error": "slow down"}, {"retry-after": "30"})
        limited = cli("--config", str(config), "send", "pigeon", "--text", "a post")
        assert limited.code == 5 and "retry in 30 s" in limited.err
        assert len(server.writes()) == 2  # one post, one refused attempt; no blind retry
