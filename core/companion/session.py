"""One chat's session folder, `<home>/companion/<bot>/<chat-id>/` (docs/companion.md).

It holds what a turn needs and nothing else: `history.jsonl` (recent messages, one JSON object a
line: role `user` or `bot`, text, time in UTC), `prompt.md` (the last composed system prompt),
and the two notes, `memory.md` and `style.md`. No process lives between messages, so every
turn reads these afresh.

Choices made here:
- The folder name is the chat id in decimal and nothing else: a chat id must be an `int` (not a
  bool, not a string), and a bot name is 1–64 of `A-Z a-z 0-9 _ -`. Anything else is refused
  before a path is built, so no id can climb out of the home.
- Writers hold a lock so a read-modify-write of history cannot lose a line. The locks are 64
  shared stripes in `<bot>/.locks/` (chosen by a hash of the chat id), not one file per chat: a
  per-chat lock file would outlive `/delete` and name the chat, and one inside the chat folder
  would be removed while another writer waits on it. A stripe is held for milliseconds, never
  two at once, so sharing one costs nothing.
- History keeps at most `HISTORY_CAP` lines (the oldest go first); the memory pass reads 40 and
  a turn fewer, so more would only be raw conversation kept for nothing.
- Each note is capped at `NOTE_LIMIT` characters; a longer one is cut at the last line break or
  space before the cap (the memory pass refuses such output before it gets here).
- Every file is replaced atomically (`write_atomic`), so a crash leaves the old file or the new
  one. Folders are made 0700 and files 0600: only the bot's user may read a chat.
- `HistoryWriter` (the gateway's, docs/companion.md "Throughput") appends the turns of many
  chats in one round with the same promise, written beside, fsynced, renamed, the folder
  fsynced, but with the fsyncs of a round in parallel threads: the filesystem's journal then
  commits them together instead of one after the other. Stripes are taken one at a time, never
  across an fsync; a history replaced by someone else between the read and the rename is
  rewritten under its lock the usual way, and one whose folder went (an erasure) is not brought
  back.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from tactful.core.errors import BadInput
from tactful.core.memory.atomic import fsync_folder, locked, temp_prefix, write_atomic

HISTORY, PROMPT, MEMORY, STYLE = "history.jsonl", "prompt.md", "memory.md", "style.md"
HISTORY_CAP = 200  # lines of history kept per chat
NOTE_LIMIT = 2_000  # characters per note
LOCK_STRIPES = 64

Role = Literal["user", "bot"]
ROLES: tuple[Role, ...] = ("user", "bot")
_BOT_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True)
class Turn:
    role: Role
    text: str
    at: datetime  # aware, UTC


@dataclass(frozen=True)
class Notes:
    memory: str  # names, people, plans, worries
    style: str  # how they like to be talked to


def bot_folder(home: Path, bot: str) -> Path:
    """`<home>/companion/<bot>`; refuses a bot name that could be a path trick."""
    if not isinstance(bot, str) or not _BOT_NAME.fullmatch(bot):
        raise BadInput("a companion bot name must be 1-64 letters, digits, '_' or '-'; "
                       "check the bot's username in the config")
    return home / "companion" / bot


def chat_folder(home: Path, bot: str, chat_id: int) -> Path:
    """`<home>/companion/<bot>/<chat-id>`; the chat id must be an integer (groups: negative)."""
    if type(chat_id) is not int:
        raise BadInput("a chat id must be an integer; the session folder was not touched")
    return bot_folder(home, bot) / str(chat_id)


def utc_text(value: datetime) -> str:
    """The one stored form of a time: UTC, ISO 8601, always with microseconds, so that two
    stored times compare as strings the way they compare as times."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("companion times must be timezone-aware")
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def make_private_dirs(folder: Path) -> None:
    """Create `folder` and any missing parents as 0700 (umask permitting nothing wider)."""
    missing: list[Path] = []
    current = folder
    while not current.exists():
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        with suppress(FileExistsError):
            path.mkdir(mode=0o700)


class Session:
    """The files of one chat. Creates nothing until something is written."""

    def __init__(self, home: Path, bot: str, chat_id: int) -> None:
        self.folder = chat_folder(home, bot, chat_id)
        self.chat_id = chat_id
        bucket = int.from_bytes(hashlib.sha256(str(chat_id).encode()).digest()[:4], "big")
        self._lock_path = (bot_folder(home, bot) / ".locks" /
                           f"stripe-{bucket % LOCK_STRIPES:02d}.lock")

    @contextmanager
    def _locked(self) -> Iterator[None]:
        make_private_dirs(self._lock_path.parent)
        with locked(self._lock_path):
            yield

    def _write(self, name: str, data: str, *, durable: bool = True) -> None:
        make_private_dirs(self.folder)
        write_atomic(self.folder / name, data, durable=durable)

    def _read(self, name: str) -> str:
        try:
            return (self.folder / name).read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""

    def _unlink(self, *names: str) -> None:
        for name in names:
            with suppress(FileNotFoundError):
                os.unlink(self.folder / name)

    # ---- history ----------------------------------------------------------------------------

    def append(self, role: Role, text: str, at: datetime) -> None:
        """Add one message to the history, keeping the last `HISTORY_CAP`."""
        self.extend([(role, text, at)])

    def extend(self, turns: list[tuple[Role, str, datetime]]) -> None:
        """Add several messages in one write (a whole turn: one rewrite, one fsync)."""
        new = history_lines(turns)
        with self._locked():
            self._write(HISTORY, self._appended(new))

    def _appended(self, new: list[str]) -> str:
        lines = self._read(HISTORY).splitlines()
        lines.extend(new)
        return "\n".join(lines[-HISTORY_CAP:]) + "\n"

    def history(self) -> list[Turn]:
        """Every readable line, oldest first; a torn or foreign line is skipped, not fatal."""
        turns: list[Turn] = []
        for raw in self._read(HISTORY).splitlines():
            turn = _parse_line(raw)
            if turn is not None:
                turns.append(turn)
        return turns

    def recent(self, n: int) -> list[Turn]:
        """The last `n` messages, oldest first."""
        if n <= 0:
            return []
        return self.history()[-n:]

    def drop_before(self, cutoff: datetime) -> int:
        """Remove history lines at or before `cutoff` (the sweep's per-line retention);
        returns how many went. Lines that do not parse go too: nothing unreadable is kept."""
        with self._locked():
            raw = self._read(HISTORY).splitlines()
            kept = [line for line in raw
                    if (turn := _parse_line(line)) is not None and turn.at > cutoff]
            if len(kept) == len(raw):
                return 0
            if kept:
                self._write(HISTORY, "\n".join(kept) + "\n")
            else:
                self._unlink(HISTORY)
            return len(raw) - len(kept)

    # ---- the prompt and the notes -----------------------------------------------------------

    def write_prompt(self, text: str) -> None:
        # Derived from the notes and history, rewritten every turn: not worth an fsync.
        with self._locked():
            self._write(PROMPT, text, durable=False)

    def prompt(self) -> str:
        return self._read(PROMPT)

    def notes(self) -> Notes:
        return Notes(memory=self._read(MEMORY).strip(), style=self._read(STYLE).strip())

    def fingerprint(self) -> str:
        """A digest of the history and both notes: the memory pass takes it before drafting and
        writes only if it is unchanged, so a /forget or a new message mid-pass wins."""
        digest = hashlib.sha256()
        for name in (HISTORY, MEMORY, STYLE):
            try:
                data = (self.folder / name).read_bytes()
            except FileNotFoundError:
                digest.update(b"\x00absent\x00")
                continue
            digest.update(len(data).to_bytes(8, "big"))
            digest.update(data)
        return digest.hexdigest()

    def write_notes(self, memory: str, style: str, *, expect: str | None = None) -> bool:
        """Replace both notes (each capped at `NOTE_LIMIT`). With `expect` (a `fingerprint()`),
        write only if the session is unchanged since; returns whether anything was written."""
        with self._locked():
            if expect is not None and self.fingerprint() != expect:
                return False
            self._write(MEMORY, cap_note(memory) + "\n")
            self._write(STYLE, cap_note(style) + "\n")
            return True

    # ---- clearing ---------------------------------------------------------------------------

    def reset(self) -> None:
        """Delete the history and the composed prompt; the notes stay. The next message starts
        a new session built from the notes."""
        if not self.folder.exists():
            return
        with self._locked():
            self._unlink(HISTORY, PROMPT)

    def clear_notes(self) -> None:
        if not self.folder.exists():
            return
        with self._locked():
            self._unlink(MEMORY, STYLE)

    def forget_named(self, names: Callable[[str], bool]) -> int:
        """What names or quotes someone forgotten (`names` says): history lines and note lines
        naming them go, and the composed prompt (rebuilt next turn) if it names them, as do
        leftover files of a crashed write that name them. Returns how many lines or files
        went. The rest of the chat stays."""
        if not self.folder.exists():
            return 0
        gone = 0
        with self._locked():
            raw = self._read(HISTORY).splitlines()
            kept = [line for line in raw if not names(line)]
            if len(kept) != len(raw):
                gone += len(raw) - len(kept)
                if kept:
                    self._write(HISTORY, "\n".join(kept) + "\n")
                else:
                    self._unlink(HISTORY)
            for note in (MEMORY, STYLE):
                lines = self._read(note).splitlines()
                rest = [line for line in lines if not names(line)]
                if len(rest) != len(lines):
                    gone += len(lines) - len(rest)
                    self._write(note, "\n".join(rest) + "\n")
            for name in sorted(os.listdir(self.folder)):
                if name in (HISTORY, MEMORY, STYLE):
                    continue
                with suppress(OSError):
                    if names((self.folder / name).read_text(encoding="utf-8", errors="replace")):
                        os.unlink(self.folder / name)
                        gone += 1
        return gone

    def remove(self) -> None:
        """The whole folder, whatever is in it."""
        if not self.folder.exists():
            return
        with self._locked():
            shutil.rmtree(self.folder, ignore_errors=True)


def history_lines(turns: list[tuple[Role, str, datetime]]) -> list[str]:
    if any(role not in ROLES for role, _, _ in turns):
        raise ValueError("a history role is 'user' or 'bot'")
    return [json.dumps({"role": role, "text": text, "time": utc_text(at)}, ensure_ascii=False)
            for role, text, at in turns]


@dataclass
class _Append:
    session: Session
    lines: list[str]
    done: asyncio.Future[None]


class HistoryWriter:
    """History appends of many chats, made durable in rounds (see the module's notes): a turn
    awaits `extend`, which returns once its lines are on disk, as `Session.extend` would."""

    def __init__(self, fsync_threads: int = 32) -> None:
        self._queue: list[_Append] = []
        self._task: asyncio.Task[None] | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="history")
        self._fsyncs = ThreadPoolExecutor(max_workers=fsync_threads,
                                          thread_name_prefix="history-fsync")
        self.rounds = 0  # rounds written: the bench counts them

    async def extend(self, session: Session, turns: list[tuple[Role, str, datetime]]) -> None:
        loop = asyncio.get_running_loop()
        item = _Append(session, history_lines(turns), loop.create_future())
        self._queue.append(item)
        if self._task is None or self._task.done() or self._task.get_loop() is not loop:
            self._task = loop.create_task(self._rounds())
        await item.done

    async def _rounds(self) -> None:
        loop = asyncio.get_running_loop()
        while self._queue:
            await asyncio.sleep(0)  # one more loop turn: the ready turns add their lines
            batch, self._queue = self._queue, []
            try:
                failures = await loop.run_in_executor(self._thread, self._write, batch)
            except Exception as exc:  # noqa: BLE001 — the round broke: nobody's lines are sure
                failures = [exc] * len(batch)
            except BaseException:  # cancelled (the loop ends): the waiting turns end with it
                for item in batch:
                    item.done.cancel()
                raise
            self.rounds += 1
            for item, failure in zip(batch, failures, strict=True):
                if item.done.done():
                    continue
                if failure is None:
                    item.done.set_result(None)
                else:
                    item.done.set_exception(failure)

    def _write(self, batch: list[_Append]) -> list[BaseException | None]:
        """One round, in the writer's thread: each chat's new history written beside (under
        its stripe, briefly), every temp file fsynced in parallel, each renamed into place
        (under its stripe again), every folder fsynced in parallel."""
        chats: dict[Path, list[int]] = {}
        for n, item in enumerate(batch):
            chats.setdefault(item.session.folder, []).append(n)
        failures: list[BaseException | None] = [None] * len(batch)
        staged: dict[Path, tuple[Session, list[str], str, int | None]] = {}
        for folder, members in chats.items():
            session = batch[members[0]].session
            lines = [line for n in members for line in batch[n].lines]
            try:
                staged[folder] = (session, lines, *self._stage(session, lines))
            except Exception as exc:  # noqa: BLE001 — this chat's turns get the error
                for n in members:
                    failures[n] = exc
        for folder, error in zip(staged, self._fsyncs.map(_fsync_path, [
                temp for _, _, temp, _ in staged.values()]), strict=True):
            if error is not None:
                _discard(staged.pop(folder)[2])
                for n in chats[folder]:
                    failures[n] = error
        renamed: list[Path] = []
        for folder, (session, lines, temp, inode) in staged.items():
            try:
                if self._rename(session, lines, temp, inode):
                    renamed.append(folder)
            except Exception as exc:  # noqa: BLE001
                for n in chats[folder]:
                    failures[n] = exc
        for folder, error in zip(renamed, self._fsyncs.map(_fsync_path, renamed),
                                 strict=True):
            if error is not None:
                for n in chats[folder]:
                    failures[n] = error
        return failures

    @staticmethod
    def _stage(session: Session, lines: list[str]) -> tuple[str, int | None]:
        with session._locked():
            make_private_dirs(session.folder)
            inode = _inode(session.folder / HISTORY)
            data = session._appended(lines).encode("utf-8")
            fd, temp = tempfile.mkstemp(prefix=temp_prefix(HISTORY), dir=session.folder)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
            except BaseException:
                _discard(temp)
                raise
        return temp, inode

    @staticmethod
    def _rename(session: Session, lines: list[str], temp: str, inode: int | None) -> bool:
        """Put the staged file in place; False when the chat's folder went meanwhile."""
        with session._locked():
            if not session.folder.is_dir():
                _discard(temp)
                return False  # erased meanwhile: nothing comes back
            if _inode(session.folder / HISTORY) != inode:
                # Rewritten by someone else since it was read: their version stays, and these
                # lines are added to it the one-by-one way, fsynced under the lock.
                _discard(temp)
                session._write(HISTORY, session._appended(lines))
                return False
            os.replace(temp, session.folder / HISTORY)
        return True

    def close(self) -> None:
        self._thread.shutdown(wait=True)
        self._fsyncs.shutdown(wait=True)


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return None


def _fsync_path(path: str | Path) -> BaseException | None:
    """fsync a file or a folder by its path; the error, if any, instead of raising."""
    try:
        if Path(path).is_dir():
            fsync_folder(Path(path))
            return None
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        return exc
    return None


def _discard(temp: str) -> None:
    with suppress(OSError):
        os.unlink(temp)


def cap_note(text: str) -> str:
    """`text` stripped and at most `NOTE_LIMIT` characters, cut at a line break or space."""
    text = text.strip()
    if len(text) <= NOTE_LIMIT:
        return text
    head = text[:NOTE_LIMIT]
    cut = max(head.rfind("\n"), head.rfind(" "))
    return (head[:cut] if cut > NOTE_LIMIT // 2 else head).rstrip()


def _parse_line(raw: str) -> Turn | None:
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    role, text, time = data.get("role"), data.get("text"), data.get("time")
    if role not in ROLES or not isinstance(text, str) or not isinstance(time, str):
        return None
    try:
        at = datetime.fromisoformat(time)
    except ValueError:
        return None
    if at.tzinfo is None:
        return None
    return Turn(role="user" if role == "user" else "bot", text=text, at=at.astimezone(UTC))


def chat_ids_on_disk(home: Path, bot: str) -> list[int]:
    """The chat ids that have a session folder (the sweep also visits folders the database
    has lost)."""
    root = bot_folder(home, bot)
    try:
        names = os.listdir(root)
    except FileNotFoundError:
        return []
    ids: list[int] = []
    for name in names:
        if re.fullmatch(r"-?[0-9]{1,20}", name) and str(int(name)) == name \
                and (root / name).is_dir():
            ids.append(int(name))
    return sorted(ids)
