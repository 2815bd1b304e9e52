"""The plugin host: entry points, broken plugins named, duplicates refused, docs complete."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tactful.core import plugins
from tactful.core.errors import ConfigError
from tactful.core.hookspecs import hookimpl

DOCS = Path(__file__).parent.parent / "docs" / "hooks.md"


def test_every_hook_has_a_section_in_the_docs() -> None:
    sections = set(re.findall(r"^## (\w+)$", DOCS.read_text(), re.MULTILINE))
    hooks = set(plugins.hook_names())
    assert hooks, "no hooks found: the test would prove nothing"
    assert hooks <= sections, f"undocumented hooks: {sorted(hooks - sections)}"
    assert sections <= hooks, f"documented hooks that do not exist: {sorted(sections - hooks)}"
    manager_hooks = {name for name in dir(plugins.host().manager.hook) if name.startswith("reg")}
    assert manager_hooks == hooks


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake installed distribution with two plugins, one of which cannot load."""
    dist = tmp_path / "fake_plugins-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-plugins\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[tactful]\ngood = good_plugin\nbroken = broken_plugin\n")
    (tmp_path / "good_plugin.py").write_text(textwrap.dedent("""
        from tactful.core.hookspecs import hookimpl

        @hookimpl
        def register_adapters(register):
            register("fakenet", lambda config: "an adapter")
    """))
    (tmp_path / "broken_plugin.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_a_broken_plugin_is_named_and_the_others_load(installed: Path) -> None:
    host = plugins.Host()
    adapters = host.collect("register_adapters")
    assert adapters["fakenet"][0] == "good"
    assert adapters["fakenet"][1](None) == "an adapter"
    assert len(host.load_errors) == 1
    assert "'broken'" in host.load_errors[0] and "boom at import" in host.load_errors[0]
    host.collect("register_adapters")
    assert len(host.load_errors) == 1  # loaded once


def test_a_duplicate_name_is_refused_naming_both_plugins() -> None:
    class First:
        @hookimpl
        def register_routines(self, register):  # type: ignore[no-untyped-def]
            register("nightly-sync", "first")

    class Second:
        @hookimpl
        def register_routines(self, register):  # type: ignore[no-untyped-def]
            register("nightly-sync", "second")

    host = plugins.Host(loaded=True)
    host.manager.register(First(), name="first")
    host.manager.register(Second(), name="second")
    with pytest.raises(ConfigError, match="'nightly-sync' is registered by both plugin"):
        host.collect("register_routines")


def test_check_and_card_never_make_the_host() -> None:
    probe = ("import sys; from tactful.core.cli.main import main; "
             "main(['check', 'x', 'someone']); main(['card', 'x', 'someone']); "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in "
             "{'pluggy', 'tweepy', 'atproto', 'aiogram', 'httpx', 'keyring'} "
             "or m == 'tactful.core.plugins'))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    assert out == "[]"
