"""One send as it moves through the pipeline: the request, and what each step found out.

Guards read an `Attempt` and raise to refuse; plugin guards (`register_guards`) get the same
object. Nothing in it is secret: credentials never live here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from tactful.core.memory.check import Verdict
from tactful.core.memory.home import Home
from tactful.core.memory.settings import MemorySettings
from tactful.core.memory.store import People
from tactful.core.send.adapter import Adapter, Author, PostRef


@dataclass(frozen=True)
class SendRequest:
    """What a caller asks for. `text` is final: what is checked is exactly what is sent."""

    platform: str
    text: str
    to: str | None = None  # the named target's handle (a chat on Telegram)
    reply_to: str | None = None  # a post reference as the user wrote it
    dry_run: bool = False
    again: bool = False  # send even though the ledger has a record (an explicit override)
    inbound_key: str | None = None  # a caller's own idempotency key (the companion's message)
    thread: str | None = None  # the thread root, when the caller knows it (a fetched mention)
    aliases: tuple[str, ...] = ()  # other spellings of `reply_to` (its URL when given its id)


@dataclass
class Attempt:
    request: SendRequest
    adapter: Adapter
    home: Home
    people: People
    settings: MemorySettings
    at: datetime
    post: PostRef | None = None  # the post replied to, parsed offline
    action: str = "post"  # an entry kind of SPEC §12: reply, mention, dm, post
    to: str | None = None  # normalized handle of the named target
    mentions: list[str] = field(default_factory=list)  # handles @mentioned in the text
    thread: str | None = None  # the thread root, once known
    author: Author | None = None  # found by the one read, when no target was named
    verdicts: dict[str, Verdict] = field(default_factory=dict)  # handle → check verdict
    checked: set[tuple[str, str | None]] = field(default_factory=set)  # (handle, id) done
    keys: list[str] = field(default_factory=list)  # the ledger keys: one per spelling

    @property
    def platform(self) -> str:
        return self.request.platform

    @property
    def text(self) -> str:
        return self.request.text

    @property
    def recipient(self) -> str | None:
        """Whom the post is for: the named target, else the author found by the read."""
        if self.to is not None:
            return self.to
        return self.author.handle if self.author is not None else None

    def targets(self) -> list[tuple[str, str]]:
        """Every account this post touches, with the role that brought it in, each once."""
        found: list[tuple[str, str]] = []
        for handle, role in ((self.to, "target"),
                             (self.post.handle if self.post else None, "author named in URL"),
                             (self.author.handle if self.author else None, "author"),
                             *((m, "mention") for m in self.mentions)):
            if handle is not None and handle not in {h for h, _ in found}:
                found.append((handle, role))
        return found
