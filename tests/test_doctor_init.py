"""`tactful doctor` (config, plugins, memory, credentials, and with --reach each base_url
against a real emulator on loopback) and `tactful init` (a starter config that passes
`config check`, never written over an existing file)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tactful.core import plugins

from .conftest import tree


@pytest.fixture
def x_emulator(plugin_host: plugins.Host) -> Iterator[Any]:
    """The X plugin's own emulator, started through the host as the demo starts it."""
    world = plugin_host.collect("register_emulators")["x"][1]()
    try:
        yield world.emulator
    finally:
        world.emulator.stop()


def test_doctor_finds_what_is_wrong_and_says_each_fix(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, keyring_log: Path, x_emulator: Any) -> None:
    (tmp_path / "tactful.yaml").write_text(
        f"platforms:\n  x:\n    account: galatea\n    base_url: {x_emulator.base_url}\n"
        "responders:\n  down:\n    kind: openai\n    base_url: http://127.0.0.1:9/v1\n"
        "    model: m\n")
    (tmp_path / "home" / "people").mkdir(parents=True)
    result = cli("doctor", "--reach", "--json")
    assert result.code == 2, result.err
    data = json.loads(result.out)
    failed = {(c["check"], c["detail"].split(" ")[0]): c for c in data["checks"] if not c["ok"]}
    passed = [c["detail"] for c in data["checks"] if c["ok"]]
    assert any(d.startswith(f"platforms.x.base_url {x_emulator.base_url} answers")
               for d in passed)
    reach = failed[("reach", "responders.down.base_url")]
    assert "does not answer" in reach["detail"] and "start the server" in reach["fix"]
    missing = [c for c in data["checks"] if c["check"] == "credentials" and not c["ok"]]
    assert missing and all(c["fix"].startswith("tactful credentials set x ") for c in missing)
    assert any("readable and writable" in d for d in passed)
    text = cli("doctor")  # without --reach: nothing is requested of any server
    assert "reach" not in text.out and "FAIL credentials: x/galatea/" in text.out
    assert text.out.rstrip().endswith("problems found")


def test_doctor_all_good_and_a_broken_config_first(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    good = cli("doctor")
    assert good.code == 0 and good.out.endswith("all good\n")
    (tmp_path / "tactful.yaml").write_text("persona:\n  timzone: UTC\n")
    bad = cli("doctor")
    assert bad.code == 2 and "FAIL config:" in bad.out and "tactful.yaml:2" in bad.out


def test_init_writes_a_starter_that_passes_config_check_and_never_overwrites(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    written = cli("init")
    assert written.code == 0, written.err
    config = tmp_path / "tactful.yaml"
    text = config.read_text()
    assert text.startswith("# tactful.yaml: a starter config") and "timezone:" in text
    checked = cli("config", "check", "--json")
    assert checked.code == 0, checked.err
    assert json.loads(checked.out)["source"] == str(config)
    # Uncommenting the example platform keeps it valid: the starter is a real starting point.
    config.write_text(text.replace("#  x:\n#    account: persona\n#    dry_run: true",
                                   "  x:\n    account: persona\n    dry_run: true"))
    assert json.loads(cli("config", "check", "--json").out)["platforms"] == ["x"]
    before = tree(tmp_path)
    again = cli("init")
    assert again.code == 2 and "already exists" in again.err
    assert tree(tmp_path) == before
    assert cli("init", str(tmp_path / "no-such-folder" / "t.yaml")).code == 2
