"""/forget, /delete and /export (SPEC §15): what the user controls, done honestly.

- `forget` clears both notes AND the session files (history, composed prompt) AND the held
  messages: clearing only the notes would leave the model everything in its history. The user
  row stays, so the limits, the pause and the block still apply.
- `delete` removes everything held for the user: the session folder, every database row
  (metadata, message times, check-ins, held messages, summaries, the invite code), then
  VACUUMs the database so no free page keeps their words.
- `export` is a small Markdown file with both notes: what the companion remembers, in the
  form the user can read.

Choices where SPEC is silent:
- The caller runs these under its per-chat lock (no turn of this chat in flight); a memory
  pass racing them writes nothing, because it checks the session did not change.
- /forget VACUUMs too (`clear_pending`): with secure_delete a deleted row is already zeroed,
  and the rebuild makes sure nothing else holds it.
- Deleting a file frees its blocks but does not overwrite them; what this promises is that no
  file under the home holds the words, which is what tactful can keep. Disk encryption is the
  operator's part.
- The export is in English, with "(nothing yet)" for an empty note, and names no one but what
  the notes say.
"""

from __future__ import annotations

from pathlib import Path

from tactful.core.companion.session import Session
from tactful.core.companion.store import CompanionStore

EMPTY = "(nothing yet)"


def forget(store: CompanionStore, home: Path, bot: str, chat_id: int) -> None:
    """Clear both notes, the history, the composed prompt and the held messages."""
    # The whole folder goes (notes are cleared too): a crashed write's temp file in it would
    # otherwise keep their words.
    Session(home, bot, chat_id).remove()
    store.clear_pending(chat_id)


def delete(store: CompanionStore, home: Path, bot: str, chat_id: int) -> None:
    """Remove the session folder and every row of this user, then VACUUM."""
    Session(home, bot, chat_id).remove()
    store.delete_user(chat_id)


def export(home: Path, bot: str, chat_id: int) -> bytes:
    """Both notes as a small Markdown file (UTF-8)."""
    notes = Session(home, bot, chat_id).notes()
    text = ("# What I remember about you\n\n"
            "## Memory\n\n" + (notes.memory or EMPTY) + "\n\n"
            "## How you like to be talked to\n\n" + (notes.style or EMPTY) + "\n")
    return text.encode("utf-8")
