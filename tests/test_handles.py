"""Handles and ids: normalization, and refusal of anything that could escape the home."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tactful.core.errors import BadInput
from tactful.core.memory.handles import normalize_handle, normalize_id, normalize_platform
from tactful.core.memory.home import Home

from .conftest import tree


@pytest.mark.parametrize(("raw", "expected"), [
    ("@Example_Dev", "example_dev"),
    ("example_dev", "example_dev"),
    ("Ada.bsky.social", "ada.bsky.social"),
    ("@some-one", "some-one"),
    ("123456789", "123456789"),
])
def test_normalizes(raw: str, expected: str) -> None:
    assert normalize_handle(raw, "x") == expected


BAD_HANDLES = [
    "../x", "a/b", "..", ".", "a\x00b", "a b", " alice", "alice\n", "", "@", "@@alice",
    "ada@example.com", "@ada@example.com", "x" * 10_000, ".hidden", "-rf", "a..b", "trailing.",
    "ünïcode", "ａｄａ", "a\\b", "a\u200fb", "😀", "alice\t", "%2e%2e",
]


@pytest.mark.parametrize("raw", BAD_HANDLES)
def test_refuses(raw: str) -> None:
    with pytest.raises(BadInput) as caught:
        normalize_handle(raw, "x")
    message = str(caught.value)
    assert "\n" not in message and len(message) < 300


def test_email_named_as_such() -> None:
    with pytest.raises(BadInput, match="e-mail"):
        normalize_handle("ada@example.com", "x")


@pytest.mark.parametrize("raw", BAD_HANDLES)
def test_cli_refuses_and_writes_nothing(raw: str, cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    before = tree(home)
    for argv in (["remember", "x", raw, "--kind", "reply", "--they", "hi"],
                 ["check", "x", raw], ["card", "x", raw], ["dne", "x", raw, "on"],
                 ["pin", "x", raw, "text", "--by", "me"]):
        result = cli(*argv)
        assert result.code == 2, (argv, result)
        assert result.err.count("\n") == 1 and result.err.startswith("tactful: ")
    assert tree(home) == before


@given(st.text(max_size=300))
@settings(max_examples=400, deadline=None)
def test_no_handle_escapes_the_home(raw: str) -> None:
    root = Path("/nonexistent/home")
    try:
        handle = normalize_handle(raw, "x")
    except BadInput:
        return
    path = Home(root).person_path("x", handle)
    assert path.parent == root / "people" / "x"
    assert path.name == f"{handle}.md" and not path.name.startswith(".")
    assert "/" not in handle and "\x00" not in handle


def test_platforms() -> None:
    assert normalize_platform("X") == "x"
    with pytest.raises(BadInput, match="unknown platform"):
        normalize_platform("myspace")
    with pytest.raises(BadInput):
        normalize_platform("../x")


@pytest.mark.parametrize("raw", ["1234567890", "did:plc:abc123xyz", "did:web:example.com"])
def test_ids_accepted(raw: str) -> None:
    assert normalize_id(raw) == raw


@pytest.mark.parametrize("raw", ["../1", "a/b", "..", "", "id with space", "x" * 200, ".1"])
def test_ids_refused(raw: str) -> None:
    with pytest.raises(BadInput):
        normalize_id(raw)


def test_the_longest_handle_can_be_written_and_checked(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    longest = "a" * 252
    assert cli("remember", "x", longest, "--kind", "reply", "--they", "hi").code == 0
    assert cli("check", "x", longest).code == 0
    assert cli("remember", "x", "a" * 253, "--kind", "reply").code == 2
