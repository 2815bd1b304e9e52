"""Reading the log: the shortcuts of a long read give exactly the events the plain parse gives."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import pytest

from tactful.core.memory import engagement
from tactful.core.memory.engagement import LogReader, parse_line

TZ = ZoneInfo("America/New_York")

URLS = [
    "https://x.com/galatea/status/1000", "http://example.social/x/status/1?a=b#c",
    "https://a", "https://a.b-c.d/", "https://host/path/with/%20escape", "https://h/~!$&'()*+,;=",
    "HTTPS://x.com/1", "Http://x.com/1", "https://", "http:///path", "https://x.com/a b",
    "https://x.com/\ttab", "https://x.com/\x7f", "https://x.com/é", "https://é.com/",
    "https://[::1]/x", "https://user:pw@host/", "https://host:8080/x", "ftp://x.com/1",
    "https:x.com", " https://x.com/1", "https://x.com/1\n", "https://x.com/1\u00a0",
    "https://x.com?q", "https://x.com#f", "mailto:a@b.c", "https//x.com", "https://./",
]


def by_urlsplit(value: str) -> bool:
    """The URL rule of docs/log.md as urlsplit alone reads it."""
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc) and \
        not any(ch.isspace() for ch in value)


@pytest.mark.parametrize("url", URLS)
def test_a_url_is_judged_as_urlsplit_judges_it(url: str) -> None:
    assert engagement._url(url) == by_urlsplit(url)


def test_handles_and_platforms_remembered_across_lines_give_the_same_events(
        tmp_path: Path) -> None:
    """A read normalizes each spelling once; every line still gets what a lone parse gives,
    refusals included (each with its own line and message)."""
    base = {"time": "2026-10-01T09:00:00-04:00", "action": "reply", "text": "hi",
            "url": None, "id": None}
    spellings = [("x", "@Ada"), ("X", "ada"), (" x ", "ADA"), ("x", "bad handle"),
                 ("x", "bad handle"), ("telegram", "0700"), ("telegram", "700"),
                 ("nowhere", "ada"), ("nowhere", "ada"), ("x", "a@b.co"), ("bluesky", "Ada"),
                 ("x", "@"), ("x", "..ada"), ("facebook", "ada"), ("x", "0700")]
    lines = [json.dumps({**base, "platform": platform, "handle": handle})
             for platform, handle in spellings]
    log = tmp_path / "engagement.jsonl"
    log.write_text("".join(line + "\n" for line in lines), encoding="utf-8")

    read = list(LogReader(log, TZ))
    alone = [parse_line(line.encode(), number, TZ) for number, line in enumerate(lines, 1)]

    assert read == alone
    assert sum(isinstance(item, engagement.BadLine) for item in read) >= 6  # refusals stay
    assert [item.handle for item in read[:3]] == ["ada"] * 3  # type: ignore[union-attr]


def test_a_url_urlsplit_cannot_read_is_one_bad_line_and_the_next_line_is_read(
        tmp_path: Path) -> None:
    base = {"time": "2026-10-01T09:00:00-04:00", "platform": "x", "handle": "ada",
            "action": "reply", "text": "hi"}
    log = tmp_path / "engagement.jsonl"
    log.write_text(json.dumps({**base, "url": "https://[unclosed/1"}) + "\n"
                   + json.dumps({**base, "url": "https://x.com/2"}) + "\n", encoding="utf-8")

    bad, good = list(LogReader(log, TZ))

    assert isinstance(bad, engagement.BadLine) and bad.line == 1 and "url" in bad.problem
    assert isinstance(good, engagement.Event) and good.url == "https://x.com/2"
