"""/forget, /delete and /export (docs/companion.md): what the user controls, done honestly.

- `forget` clears both notes AND the session files (history, composed prompt) AND the held
  messages: clearing only the notes would leave the model everything in its history. The user
  row stays, so the limits, the pause and the block still apply.
- `delete` removes everything held for the user: the session folder, every database row
  (metadata, message times, check-ins, held messages, summaries, the invite code), then
  VACUUMs the database so no free page keeps their words.
- `export` is a small Markdown file with both notes: what the companion remembers, in the
  form the user can read.

Choices made here:
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
from typing import TYPE_CHECKING

from tactful.core.companion.session import Session, chat_ids_on_disk
from tactful.core.companion.store import CompanionStore

if TYPE_CHECKING:
    from tactful.core.companion.gateway import ChatPlatform
    from tactful.core.memory.traces import Trace

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


def erase_person(chats: ChatPlatform, root: Path, platform: str, handle: str,
                 person_id: str | None = None, *, database: str | None = None) -> int:
    """`tactful forget`'s part in the companion on one chat platform: the person's private chat
    with every bot is deleted as /delete deletes it; in a group, what they wrote that still
    waits for an answer goes, and so does their name as the group's last writer (a group's
    history is everyone's: it stays). A private chat is theirs when it is with the user named
    by the handle (their username, or their numeric id) or by the stable id in their file.
    With `database` (many workers), the stores are the bots' schemas there. Returns how many
    private chats went."""
    folder = root / "companion"
    if platform != chats.name or (database is None and not folder.is_dir()):
        return 0
    ids = {int(x) for x in (handle, person_id) if x is not None and x.isdigit()}
    if database is not None:
        from tactful.core.companion.postgres import PostgresStore, bots

        found = bots(database)
    else:
        found = sorted(p.name for p in folder.iterdir() if (p / "companion.sqlite").is_file())
    erased = 0
    for bot in found:
        store = CompanionStore(root, bot) if database is None else \
            PostgresStore(root, bot, database, check=False)
        try:
            erased += _erase_in(store, chats, root, bot, handle, ids)
        finally:
            store.close()
    return erased


def _erase_in(store: CompanionStore, chats: ChatPlatform, root: Path, bot: str, handle: str,
              ids: set[int]) -> int:
    erased = 0
    for user in store.users():
        person = chats.person_of(user.chat_id)
        if person is not None and (person in ids or user.handle == handle):
            delete(store, root, bot, user.chat_id)
            erased += 1
        elif person is None:
            theirs = [p.message_id for p in store.pending(user.chat_id)
                      if p.handle == handle or p.user_id in ids]
            if theirs:
                store.drop_pending(user.chat_id, theirs)
            if user.handle == handle:
                store.clear_handle(user.chat_id)  # the group's last writer was them
            if theirs or user.handle == handle:
                store.vacuum()
    return erased


def erase_trace(root: Path, trace: Trace) -> int:
    """`tactful forget`'s sweep of every chat of every bot for what names or quotes the
    forgotten person (another user telling the companion about them, their words in a group's
    history, a note that names them): those lines go, the chats stay."""
    folder = root / "companion"
    if not folder.is_dir():
        return 0
    gone = 0
    for bot in sorted(p.name for p in folder.iterdir() if p.is_dir()):
        for chat_id in chat_ids_on_disk(root, bot):
            gone += Session(root, bot, chat_id).forget_named(trace.names_them)
    return gone


def register_for_forget(chats: ChatPlatform, database: str | None = None) -> None:
    """Register the companion's store on this chat platform with memory's forget (the
    application does this, for every companion a plugin offers, when it forgets); `database`:
    the PostgreSQL one of many workers (`companion.database`)."""
    from functools import partial

    from tactful.core.memory import forgetting

    forgetting.register_store(f"{chats.name} companion chats deleted",
                              partial(erase_person, chats, database=database))
    forgetting.register_traced_store("companion chat lines blanked", erase_trace)
