"""One outgoing message as it moves through the gate: the request, and what each step found.

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
from tactful.core.send.adapter import Adapter, Author, Party, PostRef


@dataclass(frozen=True)
class SendRequest:
    """What a sender asks for. `text` is final: what is checked is exactly what is sent."""

    platform: str
    text: str
    to: str | None = None  # the named target's handle (a chat on Telegram)
    reply_to: str | None = None  # a post reference as the user wrote it
    dry_run: bool = False  # offline: no credential, no request; the outbox says what went unseen
    preview: bool = False  # reads with read credentials and runs every guard; never posts
    again: bool = False  # send even though the ledger has a record (an explicit override)
    # A sender's own idempotency keys (the companion: one per inbound message it answers);
    # the gate turns them into ledger keys, no sender computes one.
    inbound_keys: tuple[str, ...] = ()
    thread: str | None = None  # the thread root, when the caller knows it (a fetched mention)
    aliases: tuple[str, ...] = ()  # other spellings of `reply_to` (its URL when given its id)
    # Accounts the sender knows this message reaches besides the target and the text's
    # @mentions: the companion's chat user by id and by username.
    parties: tuple[Party, ...] = ()
    action: str | None = None  # the kind to record (e.g. "dm"); None: worked out from the rest
    # A private conversation (the companion): the gate keeps no text of it anywhere (ledger,
    # log, outbox) and writes no person entry; the sender remembers by its own rules.
    private: bool = False
    # Delivered as these parts (the companion paces a reply as several messages): each is
    # measured against the platform's limit, and `text` is all of them.
    parts: tuple[str, ...] = ()
    # The public URL of an image to post with the text (Instagram needs one for a post); only
    # an adapter that says `takes_images` accepts it (docs/sending.md).
    image: str | None = None


@dataclass
class Attempt:
    request: SendRequest
    adapter: Adapter
    home: Home
    people: People
    settings: MemorySettings
    at: datetime
    post: PostRef | None = None  # the post replied to, parsed offline
    action: str = "post"  # an entry kind (README): reply, mention, dm, post
    to: str | None = None  # normalized handle of the named target
    mentions: list[str] = field(default_factory=list)  # handles @mentioned in the text
    quoted: list[PostRef] = field(default_factory=list)  # posts the text links to (quotes)
    thread: str | None = None  # the thread root, once known
    author: Author | None = None  # found by the one read of the post replied to
    quoted_authors: list[Author] = field(default_factory=list)  # found by reads, online
    resolved: dict[str, str | None] = field(default_factory=dict)  # handle → id, by a read
    verdicts: dict[str, Verdict] = field(default_factory=dict)  # handle → check verdict
    checked: set[tuple[str | None, str | None]] = field(default_factory=set)  # (handle, id)
    unchecked: list[str] = field(default_factory=list)  # what an offline run could not see
    keys: list[str] = field(default_factory=list)  # the ledger keys: one per spelling
    online: bool = False  # the reads are done: every party is as resolved as it gets

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

    def parties(self) -> list[Party]:
        """Every account this message touches, with the role that brought it in: the target,
        the author (named in the reference, or found by the read), the thread's other
        authors, the authors of quoted posts, the sender's own, and every @mention. A handle
        the platform resolved carries its id."""
        found: list[Party] = []
        post = self.post
        author = self.author
        candidates: list[Party] = [Party("target", self.to, None)]
        if post is not None:
            candidates.append(Party("author named in the reference", post.handle,
                                    post.author_id))
        if author is not None:
            candidates.append(Party("author", author.handle, author.id))
            candidates += list(author.parties)
        for ref in self.quoted:
            candidates.append(Party("author of a quoted post", ref.handle, ref.author_id))
        for quoted in self.quoted_authors:
            candidates.append(Party("author of a quoted post", quoted.handle, quoted.id))
        candidates += list(self.request.parties)
        candidates += [Party("mention", m, None) for m in self.mentions]
        for party in candidates:
            if party.handle is None and party.id is None:
                continue
            party_id = party.id
            if party_id is None and party.handle is not None:
                party_id = self.resolved.get(party.handle)
            if party.handle is not None and party.id is None and \
                    party.handle == (author.handle if author else None):
                party_id = author.id if author else party_id
            key = (party.handle, party_id)
            if any((p.handle, p.id) == key for p in found):
                continue
            found.append(Party(party.role, party.handle, party_id))
        return found
