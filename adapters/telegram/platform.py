"""What tactful's core must know of Telegram without loading its plugin or aiogram.

`PLATFORM` is the entry of the static table (`[project.entry-points."tactful.platforms"]`),
read by memory the first time it needs Telegram: handles of digits are user ids (a user
without a username is known by their id, "0700" is "700"), and the config's
`platforms.telegram.mode` is `persona` or `companion`. `CHATS` is what the companion's gateway
must know of Telegram chats. This module imports nothing but memory's `Platform`.
"""

from __future__ import annotations

from tactful.core.memory.platforms import Option, Platform

# `platforms.<name>.timeout`: a hung platform must not hang a batch
TIMEOUT = Option("timeout", 10.0, above=0, at_most=120, help="seconds per request")

NAME = "telegram"
# The Bot API limits a message to 4096 characters as Telegram counts them: UTF-16 code units,
# so an emoji outside the Basic Multilingual Plane (🙂) counts two. Counting code points would
# let long emoji text pass the gate and Telegram refuse it.
TEXT_LIMIT = 4096
TEXT_UNIT = "UTF-16 code units"


def text_length(text: str) -> int:
    """The length of a message as Telegram counts it (`TEXT_UNIT`)."""
    return len(text.encode("utf-16-le")) // 2

# `account` names the stored token (keyring user telegram/<account>/token): the bot's
# username, written without the @ of a mention.
PLATFORM = Platform(NAME, numeric_ids=True, modes=("persona", "companion"),
                    options=(TIMEOUT,),
                    account_pattern=r"[^@]\S*",
                    account_hint="write the bot's username without the @, e.g. galatea_bot")


class Chats:
    """Telegram chats, as the companion's gateway sees them (its `ChatPlatform`)."""

    name = NAME
    max_length = TEXT_LIMIT  # in TEXT_UNIT: measure with `length`

    def length(self, text: str) -> int:
        return text_length(text)

    def person_of(self, chat_id: int) -> int | None:
        """A private chat's id is its user's id (positive); groups, supergroups and channels
        have negative ids and are no person."""
        return chat_id if chat_id > 0 else None

    def invite_link(self, bot: str, code: str) -> str:
        """t.me/<bot>?start=<code>: Telegram hands `code` to the bot with the first /start."""
        return f"https://t.me/{bot}?start={code}"


CHATS = Chats()
