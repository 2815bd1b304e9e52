"""The retention sweep (docs/companion.md): history goes `history_days` after their last message.

Run at start-up and every few hours. For every chat whose user last wrote `history_days` ago or
more, the session is reset: `history.jsonl` and `prompt.md` are deleted and the next message
starts a new session built from the notes. The notes stay: they are what the user controls
(/memory, /forget, /export, /delete). Only the user's own messages count: the bot's messages,
check-ins included, never extend the window.

Choices made here:
- "Older than" is inclusive: at exactly `history_days` after their last message, it goes.
- A user who never wrote (only the bot did) counts from `started_at`.
- A session folder the database does not know (the database was lost, or a /delete stopped
  half-way) is judged by the newest user line in its own history; with none, it is reset.
- In chats still active, single lines older than `history_days` are dropped too, so a user who
  writes every day does not keep a transcript that only grows (history is also capped at
  `session.HISTORY_CAP` lines).
- The sweep also prunes the store's message times and old summaries (`CompanionStore.prune`).
- The return value counts chats whose session was reset and had something to delete, so a
  sweep over long-idle chats reports 0 the second time.
"""

from __future__ import annotations

from contextlib import suppress
from datetime import datetime, timedelta
from pathlib import Path

from tactful.core.companion.session import HISTORY, PROMPT, Session, chat_ids_on_disk
from tactful.core.companion.store import CompanionStore


def sweep(store: CompanionStore, home: Path, bot: str, now: datetime, *,
          history_days: int) -> int:
    """Reset every session idle `history_days` or more; returns how many were reset."""
    cutoff = now - timedelta(days=history_days)
    idle = set(store.idle_chats(cutoff))
    reset = 0
    for chat_id in chat_ids_on_disk(home, bot):
        session = Session(home, bot, chat_id)
        if chat_id in idle or (store.user(chat_id) is None and _orphan_idle(session, cutoff)):
            if _has_session_files(session):
                session.reset()
                reset += 1
        elif session.drop_before(cutoff):
            # The composed prompt quotes the history it was made from: it goes with it.
            with suppress(FileNotFoundError):
                (session.folder / PROMPT).unlink()
    store.prune(now)
    return reset


def _orphan_idle(session: Session, cutoff: datetime) -> bool:
    last = max((turn.at for turn in session.history() if turn.role == "user"), default=None)
    return last is None or last <= cutoff


def _has_session_files(session: Session) -> bool:
    return any((session.folder / name).exists() for name in (HISTORY, PROMPT))
