"""Regressions from a second review (the companion's queued messages, /timezone, config check,
dry runs): each test reproduced one bug when it was written; its comment says what the bug was
and how it was fixed."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from .conftest import BATCH_CONFIG

BATCH = BATCH_CONFIG.format(max_per_run=10)


# ---- 1. MEDIUM: `config check` refuses a routine platform that `tactful run` accepts --------
# A routine's `platform:` is plain text in the schema and the batch replier normalizes it at
# run time (`normalize_platform`: strip + lower), so `platform: X` runs fine on x. The new
# reference check compares the raw text with the adapter names (`routine.platform not in
# adapters`) and exits 2: "routines.r.platform: no adapter is installed for 'X'" — the check
# refuses a config that works.
# Fix: normalize before comparing (`routine.platform.strip().lower()`, or call
# `normalize_platform(routine.platform, tuple(adapters))` and turn its BadInput into the
# ConfigError), so the check agrees with the run.

def test_config_check_accepts_a_routine_platform_the_run_accepts(cli, tmp_path: Path,
                                                                 home: Path) -> None:
    config = tmp_path / "tactful.yaml"
    config.write_text("routines:\n  r:\n    kind: batch-reply\n    platform: X\n"
                      "    responder: template\n")
    (home / "people").mkdir(parents=True)
    run = cli("--config", str(config), "routine", "run", "r", "--dry-run")
    assert run.code == 0, run.err  # the routine itself is fine with it
    check = cli("--config", str(config), "config", "check")
    assert check.code == 0, check.err


# ---- 2. LOW: a dry run counts (and logs) the flagged item as skipped twice -------------------
# In a dry run `_flagged_waiting` skips the do-not-engage item (counts["skipped"] += 1, a
# batch.skipped event) but, being a dry run, does not settle it; the run now goes on, so the
# loop meets the same item again and `_one` skips it again: "2 skipped" and two batch.skipped
# events for one item, and the summary still says "skipped it and stopped" while it went on.
# Fix: in a dry run, remember the post id `_flagged_waiting` already judged and skip it in the
# loop without counting (or do not call `_flagged_waiting` at all in a dry run: the loop's own
# judgement finds the item and returns 3, which the dry run already notes).

def test_a_dry_run_counts_the_flagged_item_once(cli, tmp_path: Path, recorder: Path,
                                                home: Path) -> None:
    from tactful.core.inbound.inbox import Inbox
    from tactful.core.send.adapter import Author, Inbound, PostRef

    config = tmp_path / "tactful.yaml"
    config.write_text(BATCH)
    cli("dne", "recorder", "mallory", "on")
    inbox = Inbox(home)
    inbox.add("recorder", [
        Inbound(post=PostRef("recorder", str(n), f"https://recorder.example/p/{n}"),
                author=Author(handle=who), text="hello",
                at=datetime(2026, 11, 30, 9, n, tzinfo=UTC))
        for n, who in ((1, "mallory"), (2, "alice"))], "2")
    inbox.close()
    dry = cli("--config", str(config), "routine", "run", "reply", "--dry-run")
    assert dry.code == 0, dry.err
    skipped = [json.loads(line) for line in dry.err.splitlines() if line.startswith("{")
               and json.loads(line)["event"] == "batch.skipped"]
    assert len(skipped) == 1, skipped
    assert "1 skipped" in dry.out, dry.out
