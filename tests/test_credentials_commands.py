"""`tactful credentials list|delete|check` across the whole config (docs/credentials.md):
names of fields only, never values; a keyless responder is never reported missing."""

from __future__ import annotations

import json
from pathlib import Path

from . import recording_keyring

CONFIG = """\
platforms:
  recorder: {account: galatea}
responders:
  canned: {kind: template}
  hosted: {kind: openai, base_url: "https://api.example.com/v1", model: m}
  local: {kind: openai, base_url: "http://127.0.0.1:8080/v1", model: m}
  script: {kind: command, command: [cat]}
"""


def test_check_without_a_platform_checks_every_platform_and_keyed_responder(  # type: ignore[no-untyped-def]
        cli, recorder: Path, tmp_path: Path) -> None:
    (tmp_path / "tactful.yaml").write_text(CONFIG)
    recording_keyring.store("recorder", "galatea", "read_token", "r")
    result = cli("credentials", "check", "--json")
    assert result.code == 2
    rows = {(r["platform"], r["account"], r["field"]): r
            for r in json.loads(result.out)["credentials"]}
    assert set(rows) == {("recorder", "galatea", "read_token"),
                         ("recorder", "galatea", "post_token"),
                         ("responder", "hosted", "api_key"), ("responder", "local", "api_key")}
    assert rows[("recorder", "galatea", "read_token")]["stored"] is True
    assert rows[("responder", "local", "api_key")]["needed"] is False  # a local server
    assert json.loads(result.out)["missing"] == 2
    text = cli("credentials", "check")
    assert "responder/local/api_key: not stored (optional for a local server)" in text.out
    assert "responder/hosted/api_key: MISSING" in text.out
    assert "canned" not in text.out and "script" not in text.out  # no key to miss
    assert "tactful credentials set recorder post_token --account galatea" in text.err


def test_list_names_stored_fields_and_delete_removes_one(  # type: ignore[no-untyped-def]
        cli, recorder: Path, keyring_log: Path) -> None:
    listed = cli("credentials", "list")
    assert listed.code == 0 and listed.out == "recorder/default: read_token, post_token\n"
    assert "r-token" not in listed.out
    assert json.loads(cli("credentials", "list", "--json").out)["stored"] == [
        {"platform": "recorder", "account": "default", "field": "read_token"},
        {"platform": "recorder", "account": "default", "field": "post_token"}]
    deleted = cli("credentials", "delete", "recorder", "post_token")
    assert deleted.code == 0 and "deleted recorder/default/post_token" in deleted.out
    assert ("delete", "tactful", "recorder/default/post_token") in recording_keyring.accesses()
    assert cli("credentials", "list").out == "recorder/default: read_token\n"
    again = cli("credentials", "delete", "recorder", "post_token")
    assert again.code == 2 and "nothing is stored" in again.err
    assert cli("credentials", "delete", "recorder", "password").code == 2
    assert cli("credentials", "check", "recorder").code == 2
