"""The journal: my own posts and notes, `<home>/journal/<YYYY-MM>.md`, dated (docs/memory.md).

One file per month in the persona's time zone. Its grammar is tactful's own and parsed strictly,
like a person file: a line that fits nowhere is an error naming the file and line, and the file
is then never overwritten.

```markdown
# Journal 2026-10

### 2026-10-29T09:05:00-04:00 · post · x
text: Shipped the eval harness write-up.
link: https://x.com/galatea/status/1
redacted: email
```

Every text passes the same privacy gate as a person's entries (instruction-like text withheld,
secrets scrubbed and noted, a cap). A post is the same post when it carries the same link, or,
with no link on one side, the same full text: that is how `sync-log` merges instead of adding
twice. Writers of one month file hold its lock; the file is replaced atomically.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

from tactful.core.errors import PersonFileCorrupt
from tactful.core.memory.atomic import locked, read_regular, write_atomic
from tactful.core.memory.clock import to_file
from tactful.core.memory.home import Home, unwritable
from tactful.core.memory.text import one_line

if TYPE_CHECKING:
    from tactful.core.memory.recording import Screened

FOLDER = "journal"
KINDS = ("post", "note")
SEP = " · "
# My own text, kept whole up to the same cap as my side of a person's entry, so a post in the
# journal and the same post in the log compare equal after the gate.
TEXT_LIMIT = 4096
FIELDS = ("text", "link", "thread", "redacted", "withheld")

_MONTH = re.compile(r"\d{4}-(0[1-9]|1[0-2])")
_TITLE = re.compile(r"^# Journal (?P<month>\d{4}-\d{2})$")
_PLATFORM = re.compile(r"[a-z0-9_-]{1,40}")


@dataclass
class JournalEntry:
    """One post or note of mine. `text` has passed the privacy gate."""

    at: datetime
    kind: str  # post | note
    text: str | None = None
    platform: str | None = None
    link: str | None = None
    thread: str | None = None
    redacted: list[str] = field(default_factory=list)
    withheld: str | None = None


def gated(*, at: datetime, kind: str, text: str | None, link: str | None = None,
          platform: str | None = None, thread: str | None = None,
          redacted: Iterable[str] = (), withheld: str | None = None,
          screen: Callable[[str], Screened] | None = None) -> JournalEntry:
    """A new entry from raw text: withheld if it reads like instructions, else scrubbed, capped.
    `screen` is the gate's screening (sync-log passes its own, which screens each distinct
    text once); it must give what `recording.screen` gives."""
    from tactful.core.memory.recording import INJECTION_FLAG, Gate
    from tactful.core.memory.recording import screen as screen_one

    gate = Gate()
    clean = gate.take((screen or screen_one)(text), TEXT_LIMIT) if text else None
    reason = withheld or gate.withheld
    return JournalEntry(
        at=at, kind=kind, text=None if reason else clean, platform=platform, link=link,
        thread=one_line(thread) or None if thread else None,
        redacted=sorted(set(redacted) | gate.redacted),
        withheld=f"{INJECTION_FLAG} ({reason}); content not stored" if reason else None)


# --------------------------------------------------------------------------- months and paths

def month_of(at: datetime, tz: tzinfo) -> str:
    return at.astimezone(tz).strftime("%Y-%m")


def _neighbours(month: str) -> list[str]:
    """The month itself, then the one before and the one after."""
    first = date.fromisoformat(month + "-01")
    before = (first - timedelta(days=1)).strftime("%Y-%m")
    after = (first + timedelta(days=32)).strftime("%Y-%m")
    return [month, before, after]


def path_of(home: Home, month: str) -> Path:
    if not _MONTH.fullmatch(month):
        raise ValueError(f"not a month: {month!r}")
    return home.root / FOLDER / f"{month}.md"


def lock_of(home: Home, month: str) -> Path:
    return home.root / ".locks" / FOLDER / f"{month}.lock"


def months(home: Home) -> list[str]:
    """Every month that has a journal file, oldest first."""
    try:
        names = [p.stem for p in (home.root / FOLDER).iterdir() if p.suffix == ".md"]
    except FileNotFoundError:
        return []
    return sorted(n for n in names if _MONTH.fullmatch(n))


# --------------------------------------------------------------------------- writing

def dumps(entries: list[JournalEntry], month: str, tz: tzinfo) -> str:
    out = [f"# Journal {month}"]
    for entry in entries:
        head = f"### {to_file(entry.at, tz)}{SEP}{entry.kind}"
        if entry.platform:
            head += SEP + entry.platform
        out += ["", head]
        if entry.text is not None:
            out.append("text: " + one_line(entry.text))
        if entry.link is not None:
            out.append("link: " + one_line(entry.link))
        if entry.thread is not None:
            out.append("thread: " + one_line(entry.thread))
        if entry.redacted:
            out.append("redacted: " + ", ".join(entry.redacted))
        if entry.withheld is not None:
            out.append("withheld: " + one_line(entry.withheld))
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- reading

def loads(content: str, tz: tzinfo, *, path: Path | str = "<text>",
          month: str | None = None) -> list[JournalEntry]:
    """Parse one month file; every problem raises PersonFileCorrupt with the file and line."""
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    entries: list[JournalEntry] = []
    current: JournalEntry | None = None
    seen: set[str] = set()
    titled = False
    for number, line in enumerate(lines, 1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        if not titled:
            title = _TITLE.match(line)
            if title is None:
                raise PersonFileCorrupt(path, number, "a journal file starts with "
                                                      "'# Journal YYYY-MM'")
            if month is not None and title["month"] != month:
                raise PersonFileCorrupt(path, number, f"the title says {title['month']} but "
                                                      f"the file is {month}.md")
            titled = True
            continue
        if line.startswith("### "):
            current = _heading(line[4:], number, path, tz)
            entries.append(current)
            seen = set()
            continue
        if current is None:
            raise PersonFileCorrupt(path, number, "expected an entry heading "
                                                  "'### TIME · post|note[ · platform]'")
        key, sep, value = line.partition(": ")
        if not sep and line.endswith(":"):
            key, value = line[:-1], ""
        if key not in FIELDS or key in seen:
            raise PersonFileCorrupt(path, number, f"unexpected or repeated line {line[:40]!r}; "
                                                  f"fields are {', '.join(FIELDS)}")
        seen.add(key)
        if key == "redacted":
            current.redacted = [k.strip() for k in value.split(",") if k.strip()]
        else:
            setattr(current, key, value)
    if not titled:
        raise PersonFileCorrupt(path, 1, "a journal file starts with '# Journal YYYY-MM'")
    return entries


def _heading(text: str, number: int, path: Path | str, tz: tzinfo) -> JournalEntry:
    pieces = text.split(SEP)
    if len(pieces) not in (2, 3):
        raise PersonFileCorrupt(path, number, "a heading reads '### TIME · post|note[ · platform]'")
    try:
        at = datetime.fromisoformat(pieces[0].strip())
    except ValueError:
        raise PersonFileCorrupt(path, number, "the heading's time is not ISO 8601") from None
    if at.tzinfo is None:
        at = at.replace(tzinfo=tz)
    if pieces[1] not in KINDS:
        raise PersonFileCorrupt(path, number, f"unknown kind {pieces[1][:20]!r}; "
                                              f"kinds: {', '.join(KINDS)}")
    platform = pieces[2] if len(pieces) == 3 else None
    if platform is not None and not _PLATFORM.fullmatch(platform):
        raise PersonFileCorrupt(path, number, f"platform {platform[:20]!r} is not a platform")
    return JournalEntry(at=at, kind=pieces[1], platform=platform)


def read(home: Home, month: str, tz: tzinfo) -> list[JournalEntry]:
    """The month's entries; none when there is no file. A bad file raises PersonFileCorrupt."""
    path = path_of(home, month)
    try:
        data = read_regular(path)  # a FIFO or folder there: NotRegularFile, never a hang
    except FileNotFoundError:
        return []
    except OSError as exc:
        from tactful.core.errors import MemoryUnavailable

        raise MemoryUnavailable(f"cannot read {path}: {exc.strerror or exc}; "
                                "fix the file or its permissions") from exc
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PersonFileCorrupt(path, data.count(b"\n", 0, exc.start) + 1,
                                "not valid UTF-8") from None
    return loads(content, tz, path=path, month=month)


# --------------------------------------------------------------------------- matching

class _Matcher:
    """Finds the entry a new one is the same post as: same link, else same full text."""

    def __init__(self, entries: list[JournalEntry], match_text: bool) -> None:
        self.match_text = match_text
        self.by_link: dict[str, JournalEntry] = {}
        self.by_text: dict[str, list[JournalEntry]] = {}
        self.by_moment: dict[datetime, list[JournalEntry]] = {}
        for entry in entries:
            self.add(entry)

    def add(self, entry: JournalEntry) -> None:
        if entry.link is not None:
            self.by_link.setdefault(entry.link, entry)
        if entry.text is not None:
            self.by_text.setdefault(entry.text, []).append(entry)
        elif entry.link is None:
            self.by_moment.setdefault(entry.at, []).append(entry)

    def find(self, new: JournalEntry) -> JournalEntry | None:
        if new.link is not None:
            hit = self.by_link.get(new.link)
            if hit is not None or not self.match_text or new.text is None:
                return hit
            # The same post noted by hand before its link was known.
            return next((e for e in self.by_text.get(new.text, ()) if e.link is None), None)
        if not self.match_text:
            return None
        if new.text is not None:
            return next(iter(self.by_text.get(new.text, ())), None)
        # Nothing to match on but the moment (a withheld post with no link).
        return next(iter(self.by_moment.get(new.at, ())), None)


def merge(target: JournalEntry, new: JournalEntry) -> bool:
    """Fill what the entry lacks from `new`; True when anything changed. Nothing is replaced."""
    changed = False
    if target.kind == "note" and new.kind == "post":
        target.kind, changed = "post", True
    for key in ("platform", "link", "thread"):
        if getattr(target, key) is None and getattr(new, key) is not None:
            setattr(target, key, getattr(new, key))
            changed = True
    if target.text is None and target.withheld is None and new.text is not None:
        target.text, changed = new.text, True
        target.redacted = sorted(set(target.redacted) | set(new.redacted))
    return changed


@dataclass
class Recorded:
    """What `record` did, counted, and where. Never carries text."""

    added: int = 0
    merged: int = 0
    present: int = 0
    months: list[str] = field(default_factory=list)  # the month files rewritten
    placed: list[str] = field(default_factory=list)  # the month of each entry, in order


def _target_month(home: Home, new: JournalEntry, tz: tzinfo, match_text: bool,
                  cache: dict[str, _Matcher]) -> str:
    """The month holding the same post (this one or either side), else the post's own month."""
    own = month_of(new.at, tz)
    if new.link is None and not match_text:
        return own
    for month in _neighbours(own):
        if month not in cache:
            cache[month] = _Matcher(read(home, month, tz), match_text)
        if cache[month].find(new) is not None:
            return month
    return own


def record(home: Home, tz: tzinfo, new_entries: Iterable[JournalEntry], *,
           match_text: bool) -> Recorded:
    """Add each entry to its month, or merge it into the same post already there.

    `match_text` (the sync) also matches on the full text when a side has no link; the
    `journal` command matches on the link only, so the same short note can be written twice.
    A month whose entries were all present already is not rewritten.
    """
    done = Recorded()
    hints: dict[str, _Matcher] = {}  # read without the lock: only to choose the month
    by_month: dict[str, list[JournalEntry]] = {}
    for new in new_entries:
        month = _target_month(home, new, tz, match_text, hints)
        by_month.setdefault(month, []).append(new)
        done.placed.append(month)
    folder = home.root / FOLDER
    home.prepare_folder(folder)
    for month in sorted(by_month):
        path = path_of(home, month)
        try:
            with locked(lock_of(home, month), what=f"the journal of {month}"):
                entries = read(home, month, tz)  # fresh, under the lock
                matcher = _Matcher(entries, match_text)
                changed = False
                for new in by_month[month]:
                    target = matcher.find(new)
                    if target is None:
                        position = bisect.bisect_right(entries, new.at, key=lambda e: e.at)
                        entries.insert(position, new)
                        matcher.add(new)
                        done.added += 1
                        changed = True
                    elif merge(target, new):
                        matcher.add(target)
                        done.merged += 1
                        changed = True
                    else:
                        done.present += 1
                if changed:
                    write_atomic(path, dumps(entries, month, tz))
                    done.months.append(month)
        except OSError as exc:
            raise unwritable(path, exc) from exc
    return done
