"""sync-log: carry the engagement log into person files and the journal (docs/log.md).

Every event becomes an outbound entry in its person's file (kind = the action, my text, the
link, the thread); when the log has their side (`they`, a paraphrase of what I answered), that
becomes an inbound entry of its own, so the ladder and the card know they reached me (see
docs/log.md). My own posts go to the journal.
Dry runs sent nothing and are skipped; so are all events of a forgotten handle or id, whatever
their dates (a log cannot prove new contact; see docs/log.md).

Idempotent by matching, not by bookkeeping: an event is the same as an entry that carries its
URL; with no URL on the event, the same as an entry of the same kind with the same full text
(after the privacy gate, which both went through); with no text either, the same as a bare
entry of the same kind at the same second. A match fills what the entry lacks and adds nothing.
So running twice, re-reading a rewritten log from the top, or racing `tactful remember` on the
same person (each person is changed under its lock, read fresh) never adds an entry twice.

The checkpoint, `<home>/.sync-state.json`, only saves time: per log, its device and inode, the
offset of the last whole line read, the line count there, a SHA-256 of every byte before it,
and the log's size, mtime and ctime then. A log read to its end and not written since (same
file, size, mtime and ctime) is not read at all. When the log merely grew, only the new bytes
are read; when it shrank, was replaced or was edited before the offset, the sync starts over
from the top and the matching keeps it honest.
It is written after the person files and the journal, so a crash in between costs a re-match.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, tzinfo
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING, Any

from tactful.core.errors import MemoryUnavailable
from tactful.core.memory import journal, tombstones
from tactful.core.memory.atomic import (
    NotRegularFile,
    locked,
    open_regular,
    read_regular,
    write_atomic,
)
from tactful.core.memory.compaction import SUMMARY_PART
from tactful.core.memory.engagement import CHUNK, BadLine, Event, LogReader
from tactful.core.memory.home import Home, Unwritable, unwritable
from tactful.core.memory.person import CompactEntry, Entry, Person
from tactful.core.memory.store import People, Written
from tactful.core.memory.text import cut, one_line

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from tactful.core.memory.recording import Screened

# recording.INJECTION_FLAG, spelled here: importing recording compiles the privacy gate, which a
# rerun over an unchanged log never needs.
INJECTION_FLAG = "prompt-injection"
# recording.MY_SIDE_LIMIT and THEIR_SIDE_LIMIT, for the same reason (a test holds them equal).
MY_SIDE_LIMIT = 4096
THEIR_SIDE_LIMIT = 300
STATE = ".sync-state.json"
STILL_NS = 1_000_000_000  # a log unwritten this long before it was read may skip the next read
STATE_VERSION = 1
LOCK = Path(".locks") / "sync-log.lock"

# (phase, done, total): "reading" counts bytes, "people" and "journal" count items.
Progress = Callable[[str, int, int], None]


@dataclass
class Tally:
    added: int = 0
    merged: int = 0
    present: int = 0
    forgotten: int = 0
    changed: bool = False

    def __iadd__(self, other: Tally) -> Tally:
        self.added += other.added
        self.merged += other.merged
        self.present += other.present
        self.forgotten += other.forgotten
        return self


@dataclass
class Report:
    """What one sync did, counted. Never carries message text."""

    log: Path
    resumed: bool = False  # read only what was appended since the last run
    events: int = 0
    people: Tally = field(default_factory=Tally)
    journal: Tally = field(default_factory=Tally)
    people_written: int = 0
    bad: list[BadLine] = field(default_factory=list)
    forgotten: int = 0
    dry_runs: int = 0
    failed: list[str] = field(default_factory=list)
    checkpoint_error: str | None = None
    missing: bool = False


# --------------------------------------------------------------------------- one person

class _Pending:
    """One event waiting for its person. The privacy gate runs at most once, and only when
    the event needs its text: an event whose URL is already on file is never gated. What the
    gate makes of the event (`me`, `they`, `redacted`, `withheld`) is worked out on the first
    read of any of them; later reads are plain attribute reads (matching reads them for every
    event, often several times)."""

    __slots__ = ("_their_redacted", "event", "me", "redacted", "screens", "they", "thread",
                 "withheld")

    # The gate's fields are unset slots until first read: then `__getattr__` gates the event.
    me: str | None
    they: str | None
    redacted: tuple[str, ...]
    withheld: str | None

    def __init__(self, event: Event, screens: _Screens) -> None:
        self.event = event
        self.screens = screens
        self.thread = one_line(event.thread) or None if event.thread else None

    def __getattr__(self, name: str) -> Any:
        if name not in _GATED:
            raise AttributeError(name)
        self._gate()
        return object.__getattribute__(self, name)

    def _gate(self) -> None:
        """What `remember` makes of my text and their side (`recording.Gate`, one for each),
        from the screening of each text (docs/log.md: every text passes the same gate as
        `remember`): a withheld text stores neither side; the first reason stands."""
        ev, screens = self.event, self.screens
        reason = ev.withheld
        me = they = None
        kinds: set[str] = set(ev.redacted)
        theirs: tuple[str, ...] = ()
        if ev.text:
            screened = screens.get(ev.text)
            if screened.withheld is not None:
                reason = reason or screened.withheld
            else:
                me = cut(screened.text or "", MY_SIDE_LIMIT)
                kinds.update(screened.redacted)
        if ev.they:
            screened = screens.get(ev.they)
            if screened.withheld is not None:
                reason = reason or screened.withheld
            else:
                they = cut(screened.text or "", THEIR_SIDE_LIMIT)
                kinds.update(screened.redacted)
                theirs = tuple(sorted(set(screened.redacted)))
        if reason is not None:
            me = they = None
        self.me, self.they, self.withheld = me or None, they or None, reason
        self.redacted = tuple(sorted(kinds))
        self._their_redacted = theirs

    def entry(self) -> Entry:
        ev = self.event
        return Entry(at=ev.at, kind=ev.action, direction="outbound", me=self.me,
                     link=ev.url, thread=self.thread, redacted=list(self.redacted),
                     withheld=f"{INJECTION_FLAG} ({self.withheld}); content not stored"
                     if self.withheld else None)

    @property
    def their_link(self) -> str | None:
        """What I answered, when the log names it by URL: their post, their entry's link."""
        target = self.event.in_reply_to
        return target if target and target.startswith(("http://", "https://")) else None

    def inbound(self) -> Entry | None:
        """Their side, when the log has it: what they said to me, as an inbound entry."""
        if self.they is None:
            return None
        ev = self.event
        return Entry(at=ev.at, kind=inbound_kind(ev), direction="inbound", they=self.they,
                     link=self.their_link, thread=self.thread,
                     redacted=list(self._their_redacted))


_GATED = frozenset({"me", "they", "redacted", "withheld", "_their_redacted"})


# The privacy gate is much of a first sync's work (about a hundred microseconds per text). Each
# distinct text is screened once per sync (a log repeats itself: the same thanks, the same
# answer to many), and when thousands are known to be needed ahead (people not on file yet,
# my posts) they are screened in helper processes, one per core beside this one, while the log
# is still being read and the people already screened are carried; this process screens too
# whenever it would otherwise wait for them.
PARALLEL_FROM = 4000
CARRY_THREADS = 8  # people written at once (their fsyncs overlap; the work takes turns)
_CHUNK_TEXTS = 500


# One helper per core, a little behind this process in the scheduler's queue: this process
# alone parses the log and writes every file (the sync's critical path), and two helpers at its
# own priority would take a third of its core; together they weigh about what it weighs, so it
# keeps a core to itself, and on a machine busy with other work they still get their share.
# Whatever they do not get to, this process screens itself (`_Screens._take`).
HELPER_NICE = 3


def _helper_start() -> None:
    with contextlib.suppress(OSError):
        os.nice(HELPER_NICE)


def _screen_all(texts: list[str]) -> list[Screened]:
    from tactful.core.memory.recording import screen

    return [screen(text) for text in texts]


class _Chunk:
    __slots__ = ("future", "number", "taken_back", "texts")

    def __init__(self, number: int) -> None:
        self.number = number
        self.texts: list[str] = []
        self.future: Future[list[Screened]] | None = None
        self.taken_back = False  # screened in the command instead (see `_Screens._take`)


class _Screens:
    """The gate's screening of every distinct text of one sync (`recording.screen`), each
    worked out once: in this process when first needed, or ahead, in helper processes, for
    the texts `want` names once there are PARALLEL_FROM of them. The verdicts are the same
    either way; a helper that fails only means its texts are screened here."""

    def __init__(self) -> None:
        self.done: dict[str, Screened] = {}
        self.ahead: dict[str, _Chunk] = {}
        self.chunks: list[_Chunk] = [_Chunk(0)]
        self.pool: ProcessPoolExecutor | None = None
        self.unsent = 0  # texts wanted ahead and not sent to a helper yet
        self.next_send = 0  # the first chunk not sent yet
        self.untaken = 0  # chunks from here on were screened here (taken back from the queue)
        self.lock = threading.Lock()  # people are carried on several threads
        self.refused = False  # no helper processes to be had (or not safe to fork)

    @property
    def parallel(self) -> bool:
        return self.pool is not None

    def want(self, text: str | None) -> None:
        """This text will be needed: screen it ahead when there are enough of them."""
        if not text or self.refused or text in self.done or text in self.ahead:
            return
        chunk = self.chunks[-1]
        chunk.texts.append(text)
        self.ahead[text] = chunk
        self.unsent += 1
        if len(chunk.texts) >= _CHUNK_TEXTS:
            self.chunks.append(_Chunk(len(self.chunks)))
            self._send(everything=False)

    def finish_wanting(self) -> None:
        """Every text needed ahead is named: send what is left, the last chunk too."""
        self._send(everything=True)

    def _send(self, *, everything: bool) -> None:
        if self.pool is None:
            if self.refused or self.unsent < PARALLEL_FROM:
                return  # too few to be worth the helpers: each is screened when needed
            self._start()
            if self.pool is None:
                return
        while self.next_send < len(self.chunks):
            chunk = self.chunks[self.next_send]
            if not everything and len(chunk.texts) < _CHUNK_TEXTS:
                return  # still filling
            if chunk.texts:
                try:
                    chunk.future = self.pool.submit(_screen_all, chunk.texts)
                except (OSError, RuntimeError):
                    return  # a broken pool: what was not sent is screened here
                self.unsent -= len(chunk.texts)
            self.next_send += 1
            self.untaken = self.next_send

    def _start(self) -> None:
        cores = os.cpu_count() or 1
        # A fork copies locks another thread may hold: only a process with one thread forks.
        if cores < 2 or threading.active_count() > 1:
            self.refused = True
            return
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        try:
            self.pool = ProcessPoolExecutor(max_workers=min(cores, 8),
                                            mp_context=multiprocessing.get_context("fork"),
                                            initializer=_helper_start)
        except (OSError, RuntimeError):
            self.refused = True  # each text is screened here when first needed

    def ready_after(self, texts: Iterable[str | None]) -> int:
        """The last chunk these texts wait for (-1: none), so people whose texts are screened
        first are carried first."""
        return max((chunk.number for text in texts if text
                    if (chunk := self.ahead.get(text)) is not None), default=-1)

    def get(self, text: str) -> Screened:
        found = self.done.get(text)
        if found is not None:
            return found
        chunk = self.ahead.get(text)
        if chunk is not None and chunk.future is not None:
            self._take(chunk)
            found = self.done.get(text)
            if found is not None:
                return found
        from tactful.core.memory.recording import screen

        found = self.done[text] = screen(text)
        return found

    def _take(self, chunk: _Chunk) -> None:
        """The verdicts of a chunk sent ahead, into `done`. This process never sits idle while
        screening work waits: a chunk no helper has started yet is taken back and screened
        here, and while a helper is busy with this one, the last chunk no helper has started
        is screened here meanwhile (docs/log.md, "Speed"). The verdicts are the same. People
        are carried on several threads: a chunk is taken back by one thread only; another
        that needs one of its texts meanwhile screens that text alone."""
        future = chunk.future
        while future is not None and not future.done():
            if self._claim(chunk):
                self._screen_here(chunk)  # no helper had started it
                return
            if chunk.taken_back:
                return  # another thread screens it: `get` screens the text it needs
            if not self._take_back_last():
                break  # every chunk left is in a helper's hands: wait for this one
        if future is None or future.cancelled():
            return  # only a thread taking it back cancels a chunk: that thread screens it
        verdicts = None
        with contextlib.suppress(Exception):  # a helper died: screened here, the same
            verdicts = future.result()
        if verdicts is not None:
            self.done.update(zip(chunk.texts, verdicts, strict=True))
            return
        with self.lock:
            mine, chunk.taken_back = not chunk.taken_back, True
        if mine:  # by one thread; another screens only the text it needs
            self._screen_here(chunk)

    def _claim(self, chunk: _Chunk) -> bool:
        """Take a chunk back from the helpers' queue, for this thread alone; False when a
        helper has started it or another thread took it back."""
        with self.lock:
            future = chunk.future
            if chunk.taken_back or future is None or not future.cancel():
                return False
            chunk.taken_back = True
            return True

    def _take_back_last(self) -> bool:
        """Screen here the last chunk sent that no helper has started; False when there is
        none (helpers take chunks in order, so the ones not started are the last ones)."""
        while self.untaken > 0:
            with self.lock:
                number = self.untaken = max(self.untaken - 1, 0)
            chunk = self.chunks[number]
            future = chunk.future
            if chunk.taken_back or future is None or future.done():
                continue
            if self._claim(chunk):
                self._screen_here(chunk)
                return True
            if not chunk.taken_back:
                with self.lock:
                    self.untaken = max(self.untaken, number + 1)
                return False  # a helper is at it, and at every chunk before it
        return False

    def _screen_here(self, chunk: _Chunk) -> None:
        from tactful.core.memory.recording import screen

        for text in chunk.texts:
            if text not in self.done:
                self.done[text] = screen(text)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None


def inbound_kind(event: Event) -> str:
    """How they reached me, read from my answer: a dm answers a dm; a reply inside a thread
    answers their reply; anything else answers a mention."""
    if event.action == "dm":
        return "dm"
    if event.action == "question":
        return "question"
    if event.thread and event.in_reply_to and event.thread not in event.in_reply_to:
        return "reply"
    return "mention"


Target = Entry | CompactEntry


class _Matcher:
    """The matching rules over one person's entries, with an index so each lookup is O(1).

    Compaction cuts an entry's text to a summary, so whatever an event matched while the
    entry was whole it must still match once the entry is compacted: a re-sync from the top
    rewrites no file (docs/log.md). A compacted entry is found by its link, by its moment and
    kind (one with a link only when its summary keeps the event's text: a copy of it that lost
    its link), or, for the same text said again at another moment, by the text its summary
    keeps, when the summary keeps it whole (a cut text cannot tell two messages apart: a
    possible duplicate on a re-sync is better than a new message taken for an old one)."""

    def __init__(self, person: Person) -> None:
        self.by_link: dict[str, Target] = {}
        self.by_text: dict[tuple[str, str], list[Entry]] = {}
        self.by_moment: dict[tuple[datetime, str], list[Target]] = {}
        self.by_their_text: dict[str, Entry] = {}
        # Compacted entries with a link, by moment and kind: another message at that second is
        # them only when the summary keeps its text.
        self.linked_moment: dict[tuple[datetime, str], list[CompactEntry]] = {}
        self.compacted = person.compacted
        for older in person.compacted:
            if older.link is not None:
                self.by_link.setdefault(older.link, older)
                self.linked_moment.setdefault((older.at, older.kind), []).append(older)
            else:
                # Compaction cut the text; the moment and kind still name the interaction.
                self.by_moment.setdefault((older.at, older.kind), []).append(older)
        for entry in person.entries:
            self.add(entry)

    def add(self, entry: Entry) -> None:
        if entry.direction == "inbound" and entry.they is not None:
            self.by_their_text.setdefault(entry.they, entry)
        if entry.link is not None:
            self.by_link.setdefault(entry.link, entry)
        if entry.me is not None:
            self.by_text.setdefault((entry.kind, entry.me), []).append(entry)
        elif entry.link is None:
            self.by_moment.setdefault((entry.at, entry.kind), []).append(entry)

    def _compacted_saying(self, part: str, direction: str, kind: str) -> CompactEntry | None:
        """The first compacted entry whose summary keeps this cut text (compaction.summarize
        writes `me: <cut>` and `they: "<cut>"`, joined by ' / ')."""
        return next((older for older in self.compacted
                     if older.direction == direction and older.kind == kind
                     and _keeps(older.summary, part)), None)

    def _linked_saying(self, moment: tuple[datetime, str], part: str,
                       direction: str) -> CompactEntry | None:
        """A compacted entry with a link at this moment whose summary keeps this text: the
        same message, logged once without its link."""
        return next((older for older in self.linked_moment.get(moment, ())
                     if older.direction == direction and _keeps(older.summary, part)), None)

    def find(self, pending: _Pending) -> Target | None:
        ev = pending.event
        if ev.url is not None:
            hit = self.by_link.get(ev.url)
            if hit is not None:
                return hit
            me = pending.me
            if me is None:
                return None
            # The same reply remembered by hand before its link was known.
            return next((e for e in self.by_text.get((ev.action, me), ()) if e.link is None),
                        None)
        me = pending.me
        if me is not None:
            same_text = self.by_text.get((ev.action, me))
            if same_text:
                return same_text[0]
            if not self.compacted:
                return None  # the rest looks for a compacted entry (a first sync has none)
            older = [c for c in self.by_moment.get((ev.at, ev.action), ())
                     if isinstance(c, CompactEntry)]
            # Mine first: their side of a dm compacted at the same second is not my answer.
            mine = next((c for c in older if c.direction == "outbound"), None)
            if mine is not None:
                return mine
            part = one_line(f"me: {cut(me, SUMMARY_PART)}")
            linked = self._linked_saying((ev.at, ev.action), part, "outbound")
            if linked is not None:
                return linked
            if cut(me, SUMMARY_PART) == me:
                # The same text said at another moment matched its first entry, since
                # compacted; only a text the summary keeps whole can be told apart.
                same = self._compacted_saying(part, "outbound", ev.action)
                if same is not None:
                    return same
            return older[0] if older else None
        return next(iter(self.by_moment.get((ev.at, ev.action), ())), None)

    def find_inbound(self, pending: _Pending, answer: Target | None) -> Target | None:
        """Their side already on file: in the entry my answer merged into (one entry holding
        both sides, as `remember` writes it), an entry with the link of what I answered, an
        inbound entry with the same paraphrase, or, once compaction cut the paraphrase, a
        compacted inbound entry of the same moment and kind, or one keeping the same cut
        paraphrase."""
        if isinstance(answer, Entry) and answer.they is not None:
            return answer
        link = pending.their_link
        if link is not None and link in self.by_link:
            return self.by_link[link]
        they = pending.they
        if they is not None and they in self.by_their_text:
            return self.by_their_text[they]
        # Compaction cut their words; the moment and the kind still name their entry.
        moment = (pending.event.at, inbound_kind(pending.event))
        hit = next((c for c in self.by_moment.get(moment, ())
                    if isinstance(c, CompactEntry) and c.direction == "inbound"), None)
        if hit is not None or they is None:
            return hit
        part = one_line(f'they: "{cut(they, SUMMARY_PART)}"')
        if link is None:  # a link of its own that differs names another message
            linked = self._linked_saying(moment, part, "inbound")
            if linked is not None:
                return linked
        if cut(they, SUMMARY_PART) != they:
            return None  # cut: cannot be told from another message that starts the same
        return self._compacted_saying(part, "inbound", moment[1])


def _keeps(summary: str, part: str) -> bool:
    """Whether a compacted summary keeps this part (compaction.summarize writes `me: <cut>`
    and `they: "<cut>"`, joined by ' / ') as a whole part, not inside another."""
    at = summary.find(part)
    while at >= 0:
        end = at + len(part)
        if (at == 0 or summary.startswith(" / ", at - 3)) and (
                end == len(summary) or summary.startswith(" / ", end)):
            return True
        at = summary.find(part, at + 1)
    return False


def _fill(target: Target, pending: _Pending) -> bool:
    """Fill what the entry lacks from the event; nothing on file is ever replaced."""
    changed = False
    if target.link is None and pending.event.url is not None:
        target.link, changed = pending.event.url, True
    if target.thread is None and pending.thread is not None:
        target.thread, changed = pending.thread, True
    if isinstance(target, Entry) and target.withheld is None and pending.withheld is None:
        filled = False
        if target.me is None and pending.me is not None:
            target.me, filled = pending.me, True
        if target.they is None and pending.they is not None and target.direction == "inbound":
            target.they, filled = pending.they, True
        if filled:
            target.redacted = sorted(set(target.redacted) | set(pending.redacted))
            changed = True
    return changed


class _AllForgotten(Exception):
    """Raised inside a change to write nothing: every event predates a fresh tombstone."""

    def __init__(self, count: int) -> None:
        super().__init__(count)
        self.count = count


class _Stones:
    """Tombstones, re-read only when the file changed (a `forget` may run during the sync)."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self.path = home.root / tombstones.FILE  # stat-ed for every person carried
        self.signature: tuple[int, int, int] | None = None
        self.stones: dict[str, datetime] = {}
        self.current()

    def current(self) -> dict[str, datetime]:
        try:
            st = self.path.stat()
            signature: tuple[int, int, int] | None = (st.st_ino, st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            signature = None
        if signature != self.signature:
            self.stones = tombstones.load(self.home) if signature else {}
            self.signature = signature
        return self.stones


def _apply(person: Person, pending: list[_Pending], stones: _Stones, *, under_lock: bool) -> Tally:
    from tactful.core.memory.recording import flag

    tally = Tally()
    current = stones.current()
    # No tombstones, no one forgotten: the hashes are not worked out for nothing.
    alive = [p for p in pending
             if not tombstones.forgotten(current, person.platform, person.handle,
                                         p.event.person_id)] if current else pending
    tally.forgotten = len(pending) - len(alive)
    if under_lock and not alive:
        raise _AllForgotten(tally.forgotten)
    matcher = _Matcher(person)
    for item in alive:
        ev = item.event
        if ev.person_id is not None and person.id is None:
            person.id, tally.changed = ev.person_id, True
        target = matcher.find(item)
        theirs = item.inbound() if item.withheld is None else None
        if theirs is not None and matcher.find_inbound(item, target) is None:
            person.entries.append(theirs)
            matcher.add(theirs)
            tally.added += 1
            tally.changed = True
        if target is None:
            entry = item.entry()
            person.entries.append(entry)
            matcher.add(entry)
            tally.added += 1
        elif _fill(target, item):
            if isinstance(target, Entry):
                matcher.add(target)
            tally.merged += 1
        else:
            tally.present += 1
            if item.withheld is not None and person.flag(INJECTION_FLAG) is None:
                # Already on file, but an attempt to instruct is flagged however it arrived.
                flag(person, INJECTION_FLAG, item.withheld, ev.at)
                tally.changed = True
            continue
        if item.withheld is not None:
            flag(person, INJECTION_FLAG, item.withheld, ev.at)
        tally.changed = True
    return tally


def _carry(people: People, platform: str, handle: str, pending: list[_Pending],
           stones: _Stones, *, fresh: bool = False) -> tuple[Tally, bool]:
    """Apply one person's events in one change; returns the tally and whether it wrote.
    `fresh`: they had no file when the log was read, so there is nothing to probe (a file
    made since is read under the lock all the same)."""
    existing = None if fresh else people.load(platform, handle)
    if existing is not None:
        # A read without the lock decides whether a write is needed at all: entries are only
        # ever added, so "all present" stays true (and `change` re-checks under the lock).
        probe = _apply(existing, pending, stones, under_lock=False)
        if not probe.changed:
            return probe, False
    try:
        _, tally = people.change(platform, handle,
                                 lambda person: _apply(person, pending, stones, under_lock=True))
    except _AllForgotten as gone:
        return Tally(forgotten=gone.count), False
    return tally, True


# --------------------------------------------------------------------------- checkpoint

def _load_state(home: Home) -> dict[str, Any]:
    try:
        data = json.loads(read_regular(home.root / STATE).decode("utf-8"))
    except (OSError, ValueError, NotRegularFile):
        return {}  # a cache: unreadable means "start from the top"
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION \
            or not isinstance(data.get("logs"), dict):
        return {}
    return data


def _resume(log: Path, stat: os.stat_result,
            mark: Any) -> tuple[int, int, hashlib._Hash] | None:
    """(offset, lines, digest so far) when the log only grew since `mark`; else None."""
    if not isinstance(mark, dict):
        return None
    offset, lines, sha = mark.get("offset"), mark.get("lines"), mark.get("sha256")
    if not (isinstance(offset, int) and isinstance(lines, int) and isinstance(sha, str)):
        return None
    if (mark.get("device"), mark.get("inode")) != (stat.st_dev, stat.st_ino) \
            or not 0 <= offset <= stat.st_size:
        return None
    digest = hashlib.sha256()
    remaining = offset
    with open_regular(log) as f:
        while remaining:
            chunk = f.read(min(CHUNK, remaining))
            if not chunk:
                return None
            digest.update(chunk)
            remaining -= len(chunk)
    if digest.hexdigest() != sha:
        return None
    return offset, lines, digest


def _untouched(log: Path, mark: Any) -> bool:
    """Whether the log is exactly as the last sync left it, read to its end: the same file,
    the same size, and neither its mtime nor its ctime moved. Any write to the file moves
    both, and the ctime cannot be set back (setting the mtime moves it too), so this needs
    no hash of the prefix: a rerun over an unchanged log costs one stat."""
    if not isinstance(mark, dict):
        return False
    try:
        found = log.stat()
    except OSError:
        return False
    recorded = (mark.get("device"), mark.get("inode"), mark.get("size"), mark.get("mtime_ns"),
                mark.get("ctime_ns"))
    return S_ISREG(found.st_mode) and mark.get("offset") == found.st_size and recorded == (
        found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


def _save_state(home: Home, state: dict[str, Any], key: str, found: _Read) -> None:
    stat, reader = found.stat, found.reader
    logs = dict(state.get("logs") or {})
    mark: dict[str, Any] = {"device": stat.st_dev, "inode": stat.st_ino,
                            "offset": reader.offset, "lines": reader.lines,
                            "sha256": found.digest.hexdigest()}
    if found.checked_ns - stat.st_ctime_ns > STILL_NS:
        # File times are coarse: a write in the same tick as the one before the stat could
        # leave them as they were. A log still for a while when it was read cannot.
        mark.update(size=stat.st_size, mtime_ns=stat.st_mtime_ns, ctime_ns=stat.st_ctime_ns)
    logs[key] = mark
    write_atomic(home.root / STATE,
                 json.dumps({"version": STATE_VERSION, "logs": logs}, indent=1) + "\n")


# --------------------------------------------------------------------------- the sync

def sync(home: Home, people: People, log: Path, *, progress: Progress | None = None) -> Report:
    """Carry the log into memory. A person (or journal month) whose memory cannot be used —
    a file that does not parse, a FIFO or folder in its place, its lock held by a stuck
    process — is reported in `failed` (their events wait, the checkpoint is not advanced);
    a home that refuses writes (`Unwritable`), or any other memory failure, raises."""
    tz = people.settings.tz
    report = Report(log=log)
    home.prepare_folder(home.root)
    lock = home.root / LOCK
    where = lock  # what is being written, for the message when the home is read-only
    try:
        # Two syncs at once would only do the work twice.
        with locked(lock, what="the running sync-log"):
            where = home.root
            _sync_locked(home, people, log, report, progress, tz)
    except OSError as exc:
        raise unwritable(where, exc) from exc
    return report


@dataclass
class _Read:
    """What one pass over the log found, grouped for carrying."""

    stat: os.stat_result
    reader: LogReader
    digest: hashlib._Hash
    buckets: dict[tuple[str, str], list[_Pending]] = field(default_factory=dict)
    posts: list[Event] = field(default_factory=list)
    # Whether each person had a file when the log was read.
    fresh: dict[tuple[str, str], bool] = field(default_factory=dict)
    # The clock when `stat` was taken: how long the log had been still by then.
    checked_ns: int = field(default_factory=time.time_ns)


def _read_log(home: Home, log: Path, mark: Any, report: Report, stones: _Stones,
              screens: _Screens, progress: Progress | None, tz: tzinfo) -> _Read | None:
    try:
        stat = log.stat()
    except FileNotFoundError:
        report.missing = True
        return None
    checked = time.time_ns()
    if not S_ISREG(stat.st_mode):
        raise NotRegularFile(log, stat.st_mode)  # a FIFO would hang the read: refuse it
    try:
        resumed = _resume(log, stat, mark)
        if resumed is None:
            digest: hashlib._Hash = hashlib.sha256()
            reader = LogReader(log, tz, digest=digest)
        else:
            offset, lines, digest = resumed
            reader = LogReader(log, tz, start=offset, lines=lines, digest=digest)
            report.resumed = True
        size = stat.st_size
        if progress is not None:
            reader.progress = lambda done: progress("reading", done, max(size, done))
        found = _Read(stat, reader, digest, checked_ns=checked)
        fresh = found.fresh
        for item in reader:
            if isinstance(item, BadLine):
                report.bad.append(item)
                continue
            report.events += 1
            if item.dry_run:
                report.dry_runs += 1  # a dry run sent nothing: no one was talked to
            elif item.mine:
                post = _unname(item, stones.stones)
                found.posts.append(post)
                screens.want(post.text)
            elif item.handle is not None:
                if stones.stones and tombstones.forgotten(stones.stones, item.platform,
                                                          item.handle, item.person_id):
                    report.forgotten += 1
                    continue
                key = (item.platform, item.handle)
                pending = found.buckets.get(key)
                if pending is None:
                    pending = found.buckets[key] = []
                    fresh[key] = not home.person_path(*key).exists()
                event = _unname(item, stones.stones)
                pending.append(_Pending(event, screens))
                if fresh[key]:
                    # Someone not on file yet needs every text gated (nothing to match it
                    # to): screened ahead, while the rest of the log is read. Others only
                    # need the texts of events not already there, found one by one.
                    screens.want(event.text)
                    screens.want(event.they)
    except OSError as exc:
        raise MemoryUnavailable(f"cannot read the engagement log {log}: "
                                f"{exc.strerror or exc}; fix its permissions") from exc
    return found


def _unname(event: Event, stones: dict[str, datetime]) -> Event:
    """Someone else's event (or my post) that names a forgotten person keeps no field that
    names them: an old log must not bring their name back into another's file."""
    if not stones:
        return event
    def keep(value: str | None) -> str | None:
        return None if tombstones.names_buried(stones, event.platform, value) else value

    return replace(event, text=keep(event.text), they=keep(event.they), url=keep(event.url),
                   in_reply_to=keep(event.in_reply_to), thread=keep(event.thread))


def _sync_locked(home: Home, people: People, log: Path, report: Report,
                 progress: Progress | None, tz: tzinfo) -> None:
    state = _load_state(home)
    key = str(log.resolve())
    mark = state.get("logs", {}).get(key)
    if _untouched(log, mark):
        report.resumed = True  # read to its end last time, and not written since
        return
    stones = _Stones(home)
    screens = _Screens()
    written: dict[tuple[str, str], Written] = {}
    try:
        found = _read_log(home, log, mark, report, stones, screens, progress, tz)
        if found is None:
            return
        screens.finish_wanting()
        with people.batch() as written:  # durable once at the end, before the checkpoint
            _carry_all(home, people, found, report, progress, stones, screens, tz)
    finally:
        screens.close()
    if written:
        _index_written(home, people, written)
    if report.failed:
        return  # the next run re-reads from the last checkpoint and matches again
    try:
        _save_state(home, state, key, found)
    except OSError as exc:
        report.checkpoint_error = f"{home.root / STATE}: {exc.strerror or exc}"


def _index_written(home: Home, people: People, written: dict[tuple[str, str], Written]) -> None:
    """Hand the people just written to the index, so the desk that follows finds it up to date
    instead of parsing every file it names again (docs/log.md, "Speed"). The index is derived:
    if this fails, the next reader catches it up from the files, as it always can."""
    from tactful.core.memory import index

    with contextlib.suppress(Exception):  # nothing about the index may fail a sync
        index.take_written(home, people.settings, written)


def _carry_all(home: Home, people: People, found: _Read, report: Report,
               progress: Progress | None, stones: _Stones, screens: _Screens,
               tz: tzinfo) -> None:
    buckets, posts = found.buckets, found.posts
    order = sorted(buckets.items())
    if screens.parallel:
        # While the helpers screen, carry first the people whose texts are screened first.
        order.sort(key=lambda bucket: screens.ready_after(
            text for item in bucket[1] for text in (item.event.text, item.event.they)))
    # People are carried on a few threads: each file is fsynced before it takes its name (a
    # crash leaves no empty file), and those waits overlap instead of adding up. Each person is
    # still one `People.change` under their own lock; the counts are kept here, in order.
    from concurrent.futures import ThreadPoolExecutor

    def carry(bucket: tuple[tuple[str, str], list[_Pending]]) -> tuple[Tally, bool]:
        (platform, handle), pending = bucket
        return _carry(people, platform, handle, pending, stones,
                      fresh=found.fresh.get((platform, handle), False))

    with ThreadPoolExecutor(max_workers=CARRY_THREADS) as threads:
        futures = [threads.submit(carry, bucket) for bucket in order]
        try:
            for number, (((platform, handle), pending), future) in enumerate(
                    zip(order, futures, strict=True), 1):
                try:
                    tally, wrote = future.result()
                except Unwritable:
                    raise  # the home refuses writes: nothing else can be carried either
                except MemoryUnavailable as exc:
                    # A file that does not parse, a FIFO where the file should be, a lock held
                    # by a stuck process: this person's events wait (exit 4); the others are
                    # carried.
                    report.failed.append(f"{exc} — {len(pending)} events for "
                                         f"{platform}/@{handle} wait for the next sync")
                    continue
                report.people += tally
                report.forgotten += tally.forgotten
                report.people_written += wrote
                if progress is not None:
                    progress("people", number, len(buckets))
        finally:
            for future in futures:
                future.cancel()  # after a failure that stops the sync: start no one else

    if posts:
        if progress is not None:
            progress("journal", 0, len(posts))
        entries = [journal.gated(at=ev.at, kind="post", text=ev.text, link=ev.url,
                                 platform=ev.platform, thread=ev.thread, redacted=ev.redacted,
                                 withheld=ev.withheld, screen=screens.get) for ev in posts]
        try:
            done = journal.record(home, tz, entries, match_text=True)
        except Unwritable:
            raise
        except MemoryUnavailable as exc:  # a month file that does not parse, or is a FIFO
            report.failed.append(f"{exc} — {len(posts)} posts wait for the next sync")
        else:
            report.journal += Tally(added=done.added, merged=done.merged, present=done.present)
        if progress is not None:
            progress("journal", len(posts), len(posts))
