"""What an adapter is: the contract between the send pipeline and one platform.

An adapter is split in two so that the guards can run before anything is imported or read:
- `Adapter` works offline and imports no SDK: it parses a post reference, finds the @mentions
  in a text the way its platform does, measures text against the platform's limit, and names
  the credential fields it needs.
- `Session` is what `Adapter.open(credentials)` returns once every guard has passed and the
  credentials were read. Only it talks to the network (and imports the SDK).

Sessions are synchronous: the pipeline is one straight line of steps, and an adapter whose
library is asynchronous (aiogram) runs its own event loop inside its methods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable

from tactful.core.errors import BadInput, Refused, TactfulError


@dataclass(frozen=True)
class PostRef:
    """A post on one platform, parsed offline from a URL or an id."""

    platform: str
    id: str  # X tweet id, Bluesky at:// URI, Threads media id, Telegram "<chat_id>/<message_id>"
    url: str | None = None  # the public URL, when one can be built without a read
    handle: str | None = None  # the author's handle when the reference names it (a URL may)
    # The author's stable id when the reference names it (a Bluesky at://did:… URI, a private
    # Telegram chat's id): checked offline, before any credential, like a handle.
    author_id: str | None = None


@dataclass(frozen=True)
class Party:
    """Someone a reply reaches besides its author and the @mentions of its own text, found by
    the read of the post replied to: the thread's root and parent authors, the accounts that
    stay in a reply's mention set, the author of a quoted post. Every one is checked."""

    role: str  # said in a refusal: "thread root author", "parent author", "quoted author", …
    handle: str | None = None  # normalized, when the platform gave it
    id: str | None = None  # the platform's stable id, when it gave it


@dataclass(frozen=True)
class Author:
    """Who wrote a post, found with one read."""

    handle: str  # normalized (docs/memory.md)
    id: str | None = None  # the platform's stable id
    display_name: str | None = None
    is_bot: bool = False  # the platform says so (Telegram); memory may say so too (kind: bot)
    thread: str | None = None  # the root of the thread the post belongs to
    url: str | None = None  # the post's public URL
    parties: tuple[Party, ...] = ()  # everyone else the reply reaches by being in this thread


@dataclass(frozen=True)
class Sent:
    """A post that went out."""

    id: str
    url: str | None = None


@dataclass(frozen=True)
class Inbound:
    """A post addressed to the persona, for the batch routines."""

    post: PostRef
    author: Author
    text: str
    at: datetime
    thread: str | None = None
    mentions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Page:
    """One fetch of inbound posts and the cursor to fetch the next ones from."""

    items: Sequence[Inbound] = ()
    cursor: str | None = None


@runtime_checkable
class Session(Protocol):
    """A connected adapter. Every method that reads makes exactly one request unless it says so."""

    def author(self, post: PostRef) -> Author:
        """The author of `post` (and the thread it belongs to), with a single read."""
        ...

    def resolve(self, handle: str) -> str | None:
        """The stable id of a handle with one read, or None when the platform says no account
        has it. A read that fails raises (PlatformDown, RateLimited, …): the gate then refuses,
        never treats the handle as unknown. Called only when `Adapter.resolves_handles`."""
        ...

    def send(self, text: str, *, reply_to: PostRef | None, to: str | None,
             mentions: Mapping[str, str | None]) -> Sent:
        """Post `text`: a reply to `reply_to` when given (threaded the platform's way), else a
        post addressed to `to` (a chat on Telegram) or a plain post. `mentions` maps every
        handle found in the text to its stable id where known (Bluesky makes facets of them)."""
        ...

    def fetch_inbound(self, since: str | None, limit: int) -> Page:
        """What was addressed to the persona after cursor `since` (None: the latest)."""
        ...

    def enable_posting(self, credentials: Mapping[str, str]) -> None:
        """Add the posting credentials (`Adapter.post_fields`), read only once every check
        passed, the author check included. Never called in a dry run."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class Adapter(Protocol):
    """One platform, offline. Made by the factory a plugin registers with `register_adapters`."""

    platform: str
    text_limit: int  # as the platform counts (`text_length`)
    # Keyring fields (user name <platform>/<account>/<field>). Reading needs `read_fields`
    # (the author lookup); posting also needs `post_fields`, read after the author was checked.
    read_fields: tuple[str, ...]
    post_fields: tuple[str, ...]
    # The most posts of an action the platform allows in a rolling 24 hours, e.g. Threads
    # {"post": 250, "reply": 1000}; the pipeline refuses before sending once reached.
    quotas: Mapping[str, int]
    direct_kind: str  # the entry kind of a post to `--to` without a reply: "mention" or "dm"
    # Optional, default False: `Session.resolve` turns any handle into its stable id, so the
    # gate resolves every party it only knows by handle (a renamed account is caught by id).
    # Optional, default False: `fetch_inbound` needs the posting keys too (X reads mentions in
    # user context); the batch replier then calls `enable_posting` before it fetches.
    # Optional, default False: `takes_images`: `Session.send` takes the keyword `image` (a
    # public URL, given only when the sender has one: `tactful send --image`).
    # Optional: `check_request(action, *, image)` raises BadInput, offline, for what the
    # platform cannot carry (Instagram: a post without an image) (docs/sending.md).

    def parse_post(self, raw: str) -> PostRef:
        """A post URL or id → PostRef; BadInput naming the reference when it does not parse."""
        ...

    def mentions(self, text: str) -> list[str]:
        """Every handle @mentioned in `text`, normalized, in order, each once."""
        ...

    def text_length(self, text: str) -> int: ...

    def open(self, credentials: Mapping[str, str]) -> Session:
        """Connect with the `read_fields` credentials (imports the SDK here, never above)."""
        ...


@dataclass(frozen=True)
class AdapterSettings:
    """What the factory of an adapter is given: its platform's config section, resolved."""

    platform: str
    account: str
    base_url: str | None = None
    mode: str | None = None
    # The platform's declared options (`Platform.options`): the config's values, filled by
    # the host with the declared defaults (core/send/adapters.py).
    options: Mapping[str, object] = field(default_factory=dict)

    def option(self, name: str) -> object:
        """An option the platform declares, the one way adapters read them: the value given,
        else the default its `Platform` declares (docs/hooks.md#register_platforms)."""
        if name in self.options:
            return self.options[name]
        from tactful.core.memory import platforms

        declared = platforms.facts(self.platform).option(name)
        if declared is None:
            raise TactfulError(f"{self.platform}: the adapter reads the option {name!r}, which "
                               "its platform does not declare (Platform.options)")
        return declared.default

    def number(self, name: str) -> float:
        """A number option, e.g. `settings.number("timeout")` (seconds per request)."""
        value = self.option(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BadInput(f"platforms.{self.platform}.{name}: expected a number, found "
                           f"{type(value).__name__}; fix the config")
        return float(value)


# ---- what a platform can answer, as tactful errors (README: exit codes) ----------------------

class RateLimited(Refused):
    """The platform said to slow down (HTTP 429). Exit 5; nothing is retried blindly."""

    def __init__(self, platform: str, retry_after: float | None, detail: str = "") -> None:
        self.platform = platform
        self.retry_after = retry_after
        when = (f"retry in {retry_after:.0f} s" if retry_after is not None
                else "retry later")
        extra = f" ({detail})" if detail else ""
        super().__init__(f"{platform}: rate limited{extra}; nothing was sent; {when}")


class Forbidden(Refused):
    """The platform refused this post (reply restrictions, missing permission). Exit 5."""

    def __init__(self, platform: str, detail: str) -> None:
        self.platform = platform
        super().__init__(f"{platform}: the platform refused the post: {detail}; nothing was sent")


class AuthorUnknown(BadInput):
    """The platform cannot name who wrote this message at all (a Telegram group message can
    only be read as it arrives). Only then may a reply rely on the target named with `--to`;
    any other failed author read refuses."""


class Unauthorized(BadInput):
    """The stored credentials were refused. Exit 2, with the command that replaces them."""

    def __init__(self, platform: str, detail: str = "") -> None:
        self.platform = platform
        extra = f" ({detail})" if detail else ""
        super().__init__(f"{platform}: the credentials were refused{extra}; store working ones "
                         f"with `tactful credentials set {platform} FIELD` (see "
                         f"`tactful credentials check {platform}`)")


class PlatformDown(TactfulError):
    """The platform failed (5xx, timeout, connection refused). Exit 5: a refusal, not a bug.

    `maybe_sent` is True when the failure came after the post was handed over, so whether it
    went out is unknown: the ledger then keeps its `pending` record and a rerun refuses."""

    exit_code = 5

    def __init__(self, platform: str, detail: str, *, maybe_sent: bool = False) -> None:
        self.platform = platform
        self.maybe_sent = maybe_sent
        super().__init__(f"{platform}: the platform failed: {detail}")
