"""`tactful demo` end to end, as a user runs it: emulators, batch repliers, the hard stop."""

from __future__ import annotations

import re

from .conftest import run_process


def test_the_demo_shows_the_whole_loop() -> None:
    result = run_process("demo", timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    home = re.search(r"A throwaway home: (\S+)", out)
    assert home is not None
    for platform in ("x", "bluesky", "threads", "telegram"):
        section = out.split(f"\n{platform}:\n", 1)[1].split("\n\n", 1)[0]
        assert section.count("  sent → ") >= 2, section
        for reason in ("do-not-engage", "tried to give instructions", "spam",
                       "asked to be left alone"):
            assert f": {reason}" in section, (platform, reason)
        if platform != "telegram":
            assert "bot already answered in this thread" in section
    assert "Ignore all previous" not in out.split("## Cards", 1)[1]
    assert "(exit 3)\nkeyring reads during that refusal: 0" in out
    assert "DO_NOT_ENGAGE: TRUE" in out  # the one who asked to be left alone, flagged at once
    assert "# Desk — generated" in out
    from pathlib import Path

    assert not Path(home.group(1)).exists()  # the throwaway home is gone
