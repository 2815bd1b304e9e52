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
