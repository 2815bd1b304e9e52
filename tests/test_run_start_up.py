"""`tactful run` says what will go wrong before it goes wrong (docs/scheduling.md): a routine
whose platform lacks a credential is named with the field and the fix, once (at start-up, not
at every fire); a companion without a model responder warns that real people get canned lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import BATCH_CONFIG
from .test_scheduler import Running

FIX = "store it with: tactful credentials set recorder read_token"


def test_a_missing_credential_is_said_once_with_the_field_and_the_fix(
        tmp_path: Path, recorder: Path, keyring_log: Path) -> None:
    keyring_log.write_text("{}")  # no credential at all
    config = tmp_path / "tactful.yaml"
    config.write_text(BATCH_CONFIG.format(max_per_run=5).replace(
        "    pause: 0", '    pause: 0\n    schedule: "* * * * *"'))
    # A frozen clock on a minute boundary: the routine fires at once, and meets the gap again.
    running = Running(config, env={"TACTFUL_NOW": "2026-03-08T12:00:00+00:00"})
    try:
        said = running.wait_for("cannot run")
        running.wait_for('"routine.finished"')
        code = running.terminate()
    finally:
        running.close()
    assert code == 0
    assert said.startswith("tactful: routine reply cannot run: recorder: no credential "
                           "'read_token'") and said.rstrip().endswith(FIX)
    assert "".join(running.seen).count("cannot run") == 1
    events = [json.loads(line) for line in running.seen if line.startswith("{")]
    needs = [e for e in events if e["event"] == "routine.needs_credential"]
    assert [e["fix"] for e in needs] == ["tactful credentials set recorder read_token"]
    assert events.index(needs[0]) < [e["event"] for e in events].index("scheduler.start")
    finished = next(e for e in events if e["event"] == "routine.finished")
    assert finished["exit_code"] == 2
    assert not [e for e in events if e["event"] == "routine.failed"]


def test_a_companion_without_a_model_responder_warns_at_start_up(
        tmp_path: Path, keyring_log: Path) -> None:
    config = tmp_path / "tactful.yaml"
    config.write_text("platforms:\n  telegram:\n    account: pal_bot\n    mode: companion\n"
                      "    base_url: http://127.0.0.1:9\n"
                      "routines:\n  nightly-sync: {kind: sync-log, enabled: false}\n")
    done = subprocess.run([sys.executable, "-m", "tactful", "--config", str(config), "run"],
                          capture_output=True, text=True, timeout=60, check=False,
                          stdin=subprocess.DEVNULL)
    # No token is stored, so the companion cannot start; the warning came first all the same.
    assert done.returncode != 0
    warning = [line for line in done.stderr.splitlines() if "companion mode" in line]
    assert warning == ["tactful: warning: telegram runs in companion mode with the template "
                       "responder: real people get canned lines; set companion.responder to a "
                       "configured model responder (docs/companion.md)"]
