"""The engagement log, `<home>/engagement.jsonl`: one JSON object per send (docs/log.md).

Whatever sends appends here; `sync-log` carries the events into person files and the journal.

Writing (`append`): the event is checked by the same rules the reader applies, its free text
passes the privacy gate (the scrubber on every text field, the injection guard on their side
and mine: a field that reads like instructions is dropped and the event says `withheld`), and
the line goes out in one `write` on an `O_APPEND` descriptor, under the log's lock, then fsync.
A torn last line left by a crash is closed with a newline first, so it stays one bad line
instead of swallowing the new event.

Reading (`LogReader`): yields an `Event` for every good line and a `BadLine` (with its line
number) for every line that is not JSON, not an object, misses a required key or carries a bad
value; a bad line never stops the lines after it. A last line without its newline is reported
as torn and not consumed, so the next run reads it once it is whole. Unknown keys are kept in
`Event.extra`: other tools may append lines too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from tactful.core.errors import BadInput
from tactful.core.memory.atomic import append_line, open_regular
from tactful.core.memory.clock import read_time
from tactful.core.memory.handles import normalize_handle, normalize_id, normalize_platform
from tactful.core.memory.home import Home, unwritable
from tactful.core.memory.person import ENTRY_KINDS

REQUIRED = ("time", "platform", "handle", "action")
_OPTIONAL_TEXT = ("text", "url", "in_reply_to", "thread", "they", "withheld")
_KNOWN = frozenset((*REQUIRED, *_OPTIONAL_TEXT, "id", "dry_run", "redacted"))
_FREE_TEXT = ("text", "they")  # gated; the other known keys are validated instead
# The action that is mine alone: it goes to the journal and needs no handle.
MY_POST = "post"

LOCK = Path(".locks") / "engagement.lock"
CHUNK = 1 << 20

Progress = Callable[[int], None]


class Digest(Protocol):
    """What the reader needs of a hash: `hashlib.sha256()` fits."""

    def update(self, data: bytes, /) -> None: ...


@dataclass(frozen=True)
class Event:
    """One good line of the log, normalized. Text fields are as the log holds them."""

    line: int
    at: datetime
    platform: str
    handle: str | None  # None only for my own post
    action: str
    text: str | None = None
    they: str | None = None
    url: str | None = None
    in_reply_to: str | None = None
    thread: str | None = None
    person_id: str | None = None
    dry_run: bool = False
    redacted: tuple[str, ...] = ()
    withheld: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def mine(self) -> bool:
        """My own post: it belongs in the journal, not in anyone's file."""
        return self.action == MY_POST


@dataclass(frozen=True)
class BadLine:
    """A line that is not a usable event. `problem` never quotes message text."""

    line: int
    problem: str
    torn: bool = False


# --------------------------------------------------------------------------- parsing

# `\s` of a str pattern is exactly `str.isspace` (both are Py_UNICODE_ISSPACE), in C: a log of
# 100,000 events spent a fifth of its parsing testing URLs one character at a time.
_SPACE = re.compile(r"\s")


# The shape nearly every logged URL has: http(s), a plain host, then printable ASCII. For such
# a value `urlsplit` gives scheme http(s) and a non-empty netloc and cannot raise (no brackets,
# nothing outside ASCII), so the answer is known without it; anything else asks `urlsplit`.
_PLAIN_URL = re.compile(r"https?://[A-Za-z0-9.-]+(?:[/?#][!-~]*)?")


def _url(value: str) -> bool:
    if _PLAIN_URL.fullmatch(value) is not None:
        return True
    try:
        parts = urlsplit(value)
    except ValueError:  # an unclosed IPv6 bracket, say: a bad line, not a failed sync
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc) and \
        _SPACE.search(value) is None


def _time(value: Any, tz: tzinfo) -> datetime | None:
    # As `--at` reads it: a bare time is the persona's; year 9999 is no time at all (it would
    # overflow in every zone east of UTC, later, somewhere).
    parsed = read_time(value, tz)
    return parsed.replace(microsecond=0) if parsed is not None else None


class Names:
    """Platforms and handles as one read of the log normalized them: a log names the same few
    platforms and the same people over and over, and each spelling is normalized once per
    read. Only names that normalize are kept (a refusal is worked out again, with its
    message); kept for one read only, so a platform registered or removed since counts."""

    __slots__ = ("handles", "platforms")

    def __init__(self) -> None:
        self.platforms: dict[str, str] = {}
        self.handles: dict[tuple[str, str], str] = {}

    def platform(self, raw: str) -> str:
        found = self.platforms.get(raw)
        if found is None:
            found = self.platforms[raw] = normalize_platform(raw)
        return found

    def handle(self, raw: str, platform: str) -> str:
        key = (raw, platform)
        found = self.handles.get(key)
        if found is None:
            found = self.handles[key] = normalize_handle(raw, platform)
        return found


def parse_event(record: Any, line: int, tz: tzinfo, names: Names | None = None) -> Event | BadLine:
    """Check one decoded JSON value against the log's keys (docs/log.md). `names`: the
    normalizations of this read so far."""
    if names is None:
        names = Names()
    if not isinstance(record, dict):
        return BadLine(line, "not a JSON object")
    action = record.get("action")
    required = [k for k in REQUIRED if k not in record
                and not (k == "handle" and action == MY_POST)]
    if required:
        return BadLine(line, f"missing required key{'s' if len(required) > 1 else ''}: "
                             + ", ".join(required))
    if action not in ENTRY_KINDS:
        return BadLine(line, f"action: expected one of {', '.join(ENTRY_KINDS)}")
    at = _time(record["time"], tz)
    if at is None:
        return BadLine(line, "time: expected an ISO 8601 time with offset")
    raw_platform = record["platform"]
    if not isinstance(raw_platform, str):
        return BadLine(line, "platform: expected a string")
    try:
        platform = names.platform(raw_platform)
    except BadInput as exc:
        return BadLine(line, str(exc))
    handle = None
    raw_handle = record.get("handle")
    if action != MY_POST or raw_handle is not None:
        if not isinstance(raw_handle, str):
            return BadLine(line, "handle: expected a string")
        try:
            handle = names.handle(raw_handle, platform)
        except BadInput as exc:
            return BadLine(line, str(exc))
    texts: dict[str, str | None] = {}
    for key in _OPTIONAL_TEXT:
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            return BadLine(line, f"{key}: expected a string or null")
        texts[key] = value if value else None
    url = texts["url"]
    if url is not None and not _url(url):
        return BadLine(line, "url: expected an http(s) URL or null")
    raw_id = record.get("id")
    person_id = None
    if raw_id is not None:
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
            return BadLine(line, "id: expected a string, a number or null")
        try:
            person_id = normalize_id(str(raw_id))
        except BadInput as exc:
            return BadLine(line, str(exc))
    dry_run = record.get("dry_run", False)
    if dry_run is None:
        dry_run = False
    if not isinstance(dry_run, bool):
        return BadLine(line, "dry_run: expected true or false")
    redacted = record.get("redacted") or []
    if not isinstance(redacted, list) or not all(isinstance(k, str) for k in redacted):
        return BadLine(line, "redacted: expected a list of kinds")
    return Event(
        line=line, at=at, platform=platform, handle=handle, action=action,
        text=texts["text"], they=texts["they"], url=url, in_reply_to=texts["in_reply_to"],
        thread=texts["thread"], person_id=person_id, dry_run=dry_run,
        redacted=tuple(sorted(set(redacted))), withheld=texts["withheld"],
        extra={k: v for k, v in record.items() if k not in _KNOWN},
    )


def parse_line(raw: bytes, line: int, tz: tzinfo,
               names: Names | None = None) -> Event | BadLine | None:
    """One line of bytes (without its newline); None for a blank line."""
    if not raw.strip():
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return BadLine(line, "not valid UTF-8")
    try:
        record = json.loads(text)
    except ValueError as exc:
        # The decoder's own words name a position, never the content.
        where = f" at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        return BadLine(line, f"not JSON{where}")
    return parse_event(record, line, tz, names)


class LogReader:
    """Reads the log from a byte offset, line by line, keeping count of where it stands.

    `offset` and `lines` always describe the end of the last whole line read, and `digest`
    (when given) has seen exactly the bytes up to `offset`: what a checkpoint needs.
    """

    def __init__(self, path: Path, tz: tzinfo, *, start: int = 0, lines: int = 0,
                 digest: Digest | None = None, progress: Progress | None = None) -> None:
        self.path = path
        self.tz = tz
        self.offset = start
        self.lines = lines
        self.digest = digest
        self.progress = progress
        self.names = Names()

    def __iter__(self) -> Iterator[Event | BadLine]:
        with open_regular(self.path) as log:  # a FIFO or device: NotRegularFile, never a hang
            log.seek(self.offset)
            pending = b""
            while chunk := log.read(CHUNK):
                data = pending + chunk
                cut = data.rfind(b"\n") + 1
                pending = data[cut:]
                if self.digest is not None:
                    self.digest.update(data[:cut])
                for raw in data[:cut].split(b"\n")[:-1]:
                    self.lines += 1
                    self.offset += len(raw) + 1
                    item = parse_line(raw, self.lines, self.tz, self.names)
                    if item is not None:
                        yield item
                if self.progress is not None:
                    self.progress(self.offset)
        if pending.strip():
            yield BadLine(self.lines + 1,
                          "torn last line (no newline: a crash mid-write, or a writer still "
                          "busy); left for the next run", torn=True)


def read(path: Path, tz: tzinfo) -> Iterator[Event | BadLine]:
    """Every line of the log from the top: events and bad lines, in order."""
    return iter(LogReader(path, tz))


# --------------------------------------------------------------------------- writing

def _gated(record: dict[str, Any]) -> dict[str, Any]:
    """The privacy gate over the free text of one event, before it is written (docs/memory.md)."""
    # Imported here: the scrubber's patterns are paid for only by a writer.
    from tactful.core.memory.injection import injection_reason
    from tactful.core.memory.recording import THEIR_SIDE_LIMIT
    from tactful.core.memory.scrub import scrub
    from tactful.core.memory.text import cut, one_line

    out = dict(record)
    kinds: set[str] = set(record.get("redacted") or [])
    withheld: str | None = record.get("withheld")
    for key, value in record.items():
        if (key in _KNOWN and key not in _FREE_TEXT) or not isinstance(value, str):
            continue
        reason = injection_reason(value) if key in _FREE_TEXT else None
        if reason is not None:
            withheld = withheld or reason
            out[key] = None
            continue
        scrubbed = scrub(value)
        kinds.update(scrubbed.kinds)
        # Their side is a paraphrase, capped; my text is kept whole (newlines too) so the
        # sync can match it, scrubbed like everything else.
        out[key] = cut(one_line(scrubbed.text), THEIR_SIDE_LIMIT) if key == "they" \
            else scrubbed.text
    if kinds:
        out["redacted"] = sorted(kinds)
    if withheld is not None:
        out["withheld"] = withheld
    return out


def append(home: Home, event: Mapping[str, Any], tz: tzinfo) -> dict[str, Any]:
    """Append one event to the home's log; returns the record as written.

    `event` holds the keys of docs/log.md (`time` may be a datetime); a bad event raises BadInput
    and nothing is written. Unknown keys are kept (and scrubbed when they hold text).
    """
    record = dict(event)
    if isinstance(record.get("time"), datetime):
        record["time"] = record["time"].isoformat()
    checked = parse_event(record, 0, tz)
    if isinstance(checked, BadLine):
        raise BadInput(f"engagement event: {checked.problem}")
    record.update(time=checked.at.isoformat(), platform=checked.platform,
                  handle=checked.handle, id=checked.person_id, dry_run=checked.dry_run)
    for key in ("text", "url", "in_reply_to", "thread"):
        record.setdefault(key, None)
    line = json.dumps(_gated(record), ensure_ascii=False, separators=(", ", ": ")) + "\n"
    path = home.engagement_log
    home.prepare_folder(home.root)
    try:
        append_line(path, home.root / LOCK, line.encode("utf-8"), what="the engagement log")
    except OSError as exc:
        raise unwritable(path, exc) from exc
    written: dict[str, Any] = json.loads(line)
    return written
