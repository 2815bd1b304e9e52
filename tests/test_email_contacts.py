"""Memory-only platforms: e-mail contacts are remembered, checked, flagged, linked and forgotten
like anyone, named by a slug the operator chooses (never by their address), and tactful never
sends to them. A plugin can declare a memory-only platform of its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tactful.core import plugins
from tactful.core.hookspecs import RegisterPlatforms, hookimpl
from tactful.core.memory.platforms import Platform

SLUG = "ada_lovelace"


@pytest.fixture
def ada(cli: Any, home: Path) -> None:
    """Ada met by e-mail, and on X as @ada, linked as one person."""
    assert cli("remember", "email", SLUG, "--kind", "dm", "--they", "asked about the talk",
               "--display-name", "Ada Lovelace").code == 0
    assert cli("remember", "x", "ada", "--kind", "reply", "--they", "hi").code == 0
    linked = cli("link", f"email:{SLUG}", "x:@ada", "--proof", "https://example.org/ada")
    assert linked.code == 0, linked.err


@pytest.mark.parametrize("command", ["remember", "check", "card", "dne"])
def test_an_address_is_never_a_handle_and_the_message_says_to_choose_a_slug(
        cli: Any, home: Path, command: str) -> None:
    extra = {"remember": ["--kind", "dm"], "dne": ["on"]}.get(command, [])
    done = cli(command, "email", "Ada@Example.org", *extra)
    assert done.code == 2
    assert "is an e-mail address, which is never a name" in done.err
    assert "a slug you choose instead, e.g. ada_lovelace" in done.err
    assert not (home / "people" / "email").exists() or \
        not any((home / "people" / "email").iterdir())


def test_an_email_contact_is_remembered_carded_and_forgotten_under_the_slug(
        cli: Any, home: Path, ada: None) -> None:
    assert (home / "people" / "email" / f"{SLUG}.md").is_file()
    card = cli("card", "email", SLUG)
    assert card.code == 0 and "Ada Lovelace" in card.out
    assert "ref: x/ada" in (home / "people" / "email" / f"{SLUG}.md").read_text()
    assert cli("check", "email", SLUG).code == 0
    forgotten = cli("forget", "email", SLUG)
    assert forgotten.code == 0, forgotten.err
    assert not (home / "people" / "email" / f"{SLUG}.md").exists()


def test_flagged_by_email_refuses_the_linked_social_account(cli: Any, ada: None) -> None:
    assert cli("dne", "email", SLUG, "on").code == 0
    for handle in ("ada", "@ADA"):
        checked = cli("check", "x", handle)
        assert checked.code == 3, checked.out
        assert f"linked as the same person from email/{SLUG}" in checked.out


def test_flagged_on_the_social_account_refuses_the_email_contact(cli: Any, ada: None) -> None:
    assert cli("dne", "x", "ada", "on").code == 0
    checked = cli("check", "email", SLUG)
    assert checked.code == 3, checked.out
    assert "linked as the same person from x/ada" in checked.out


def test_send_to_a_memory_only_platform_exits_2_saying_why(cli: Any, home: Path) -> None:
    (home / "people").mkdir(parents=True)
    done = cli("send", "email", "--text", "hello")
    assert done.code == 2
    assert "email is a memory-only platform" in done.err
    assert "never sends to it" in done.err


def test_a_memory_only_platform_has_no_config_section(cli: Any, tmp_path: Path) -> None:
    config = tmp_path / "tactful.yaml"
    config.write_text("persona:\n  name: p\nplatforms:\n  email:\n    dry_run: true\n")
    done = cli("--config", str(config), "config", "check")
    assert done.code == 2
    assert f"{config}:4: platforms.email: " in done.err
    assert "memory-only platform" in done.err and "delete the section" in done.err


class _Ledgerbook:
    """A plugin that declares a memory-only platform of its own (no adapter)."""

    @hookimpl
    def register_platforms(self, register: RegisterPlatforms) -> None:
        register("ledgerbook", Platform("ledgerbook", memory_only=True))


def test_a_plugin_can_declare_a_memory_only_platform(
        cli: Any, home: Path, plugin_host: plugins.Host) -> None:
    plugin_host.manager.register(_Ledgerbook(), name="ledgerbook-plugin")
    assert cli("remember", "ledgerbook", "grace", "--kind", "dm").code == 0
    assert (home / "people" / "ledgerbook" / "grace.md").is_file()
    assert cli("dne", "ledgerbook", "grace", "on").code == 0
    assert cli("check", "ledgerbook", "grace").code == 3
    sent = cli("send", "ledgerbook", "--text", "hello")
    assert sent.code == 2
    assert "ledgerbook is a memory-only platform" in sent.err
