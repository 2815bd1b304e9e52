"""`tactful demo` end to end, as a user runs it: emulators, batch repliers, the hard stop."""

from __future__ import annotations

import re
from pathlib import Path

from tactful.core import plugins

from .conftest import run_process


def test_the_demo_tells_the_whole_loop_in_order(plugin_host: plugins.Host) -> None:
    result = run_process("demo", timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    home = re.search(r"A throwaway home: (\S+)", out)
    assert home is not None
    # Every platform whose plugin offers an emulator, through the host: none named here.
    listed = re.search(r"\d+ platform emulators on 127\.0\.0\.1: (.+)", out)
    assert listed is not None
    started = [part.split(" ")[0] for part in listed.group(1).split(", ")]
    assert started == sorted(plugin_host.collect("register_emulators"))
    first = started[0]
    before, batches = out.split("## A morning of mentions", 1)
    # The stranger's card is shown before anyone answered them, and says so.
    assert 'stranger, first real contact: no "again"' in before.split("their card before", 1)[1]
    for platform in started:
        section = batches.split(f"\n{platform}:\n", 1)[1].split("\n\n", 1)[0]
        replies = re.findall(r"  replied to @(\S+): .+\n      (\S.*)", section)
        assert len(replies) >= 2, section
        # My own posts' addresses (or a private chat), never the post I answered.
        for handle, where in replies:
            assert handle not in where or where.startswith("a private chat"), (handle, where)
        for reason in ("do-not-engage", "tried to give instructions", "spam",
                       "asked to be left alone"):
            assert f": {reason}" in section, (platform, reason)
    hard_stop = out.split("## The hard stop", 1)[1].split("\n## ", 1)[0]
    # Said as what it is, and the refusal sits between the command and its exit code.
    assert "refused on purpose" in hard_stop
    assert re.search(r"\$ tactful send .*\ntactful: refused: .* is do-not-engage .*\n\(exit 3\)"
                     r"\nkeyring reads during that refusal: 0", hard_stop), hard_stop
    cards = out.split("## Cards", 1)[1]
    assert "Ignore all previous" not in cards
    assert "DO_NOT_ENGAGE: TRUE" in cards  # the one who asked to be left alone, flagged at once
    desk = out.split("# Desk — generated", 1)[1]
    mid = desk.split("## Mid-conversation\n", 1)[1].split("\n## ", 1)[0]
    assert "sneaky" not in mid  # who tried to give instructions is nobody to answer
    assert f"{first}/@" in desk
    assert not Path(home.group(1)).exists()  # the throwaway home is gone


def _fake_checkout(tmp_path: Path) -> Path:
    """scripts/demo and a pyproject.toml in a folder of their own, with a .venv whose python
    and tactful only say they were called: the script's own logic, without a real install."""
    import shutil

    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(Path(__file__).parent.parent / "scripts" / "demo", root / "scripts" / "demo")
    (root / "pyproject.toml").write_text("[project]\nname = 'tactful'\n")
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    calls = root / "calls"
    for name in ("python", "tactful"):
        fake = bin_dir / name
        fake.write_text(f'#!/bin/sh\necho "{name} $*" >> "{calls}"\n'
                        'case "$*" in *"pip install"*) echo "Collecting something";'
                        ' echo "Successfully installed tactful-0.1.0";; esac\n')
        fake.chmod(0o755)
    return root


def test_scripts_demo_installs_only_when_pyproject_changed_and_says_so(tmp_path: Path) -> None:
    import subprocess

    root = _fake_checkout(tmp_path)
    calls = root / "calls"

    def demo() -> str:
        done = subprocess.run([str(root / "scripts" / "demo")], capture_output=True, text=True,
                              timeout=60, check=True)
        return done.stdout

    first = demo()
    assert first.startswith("Installing tactful and its libraries")
    assert "Successfully installed tactful-0.1.0" in first
    assert calls.read_text().splitlines()[-1] == "tactful demo"
    assert any("pip install" in line for line in calls.read_text().splitlines())
    calls.write_text("")
    assert demo() == ""  # nothing changed: no install, nothing said, straight to the demo
    assert calls.read_text().splitlines() == ["tactful demo"]
    (root / "pyproject.toml").write_text("[project]\nname = 'tactful'\nversion = '2'\n")
    assert demo().startswith("Installing tactful")
