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
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from tactful.core.errors import BadInput
from tactful.core.memory.atomic import locked, write_atomic

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
        if any(role not in ROLES for role, _, _ in turns):
            raise ValueError("a history role is 'user' or 'bot'")
        new = [json.dumps({"role": role, "text": text, "time": utc_text(at)},
                          ensure_ascii=False) for role, text, at in turns]
        with self._locked():
            lines = self._read(HISTORY).splitlines()
            lines.extend(new)
            self._write(HISTORY, "\n".join(lines[-HISTORY_CAP:]) + "\n")

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
