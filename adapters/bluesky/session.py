"""A Bluesky session: atproto's synchronous Client, logged in with the account's app password.

Imported only by `BlueskyAdapter.open`, so atproto (and httpx, pydantic) load only after every
guard passed. The client is synchronous (httpx), so no event loop is involved. Every SDK error
is turned into a tactful error at the one place that calls the SDK (`_calling`): `_answer` reads
the facts (status, headers, the XRPC error name, how the transport failed) and the one mapping
of core/send/answers.py decides (docs/sending.md, "One answer per HTTP answer").

Bluesky's own facts stay here: an expired or invalid token is answered HTTP 400 and means a
refused session (401: a `resolve` that meets it raises Unauthorized, never "no such handle");
`NotFound` at 400 is a post that is not there (404); resolveHandle's 400 `InvalidRequest` is
"no account has this handle" (None, not an error); a 404 or 501 means base_url is no PDS.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import httpx
from atproto_client import Client, models
from atproto_client import exceptions as sdk
from atproto_client.client.session import Session as SdkSession
from atproto_client.client.session import SessionEvent
from atproto_client.models.common import XrpcError
from atproto_client.request import Request
from atproto_client.utils import facet_detection

from tactful.adapters.bluesky.adapter import (
    INVALID_HANDLE,
    PLATFORM,
    TEXT_LIMIT,
    TEXT_MAX_BYTES,
    count_graphemes,
    is_did,
    mention_spans,
    post_url,
    split_post_uri,
)
from tactful.core.errors import BadInput, Refused
from tactful.core.memory.handles import normalize_handle
from tactful.core.send.adapter import (
    Author,
    Forbidden,
    Inbound,
    Page,
    Party,
    PlatformDown,
    PostRef,
    Sent,
)
from tactful.core.send.answers import Answer, Failure, error_for

if TYPE_CHECKING:
    from tactful.adapters.bluesky.adapter import BlueskyAdapter

log = logging.getLogger(__name__)

PAGE_SIZE = 100  # the most listNotifications returns at once
MAX_PAGES = 10  # fetch_inbound reads at most this many pages, so it always ends
INBOUND_REASONS = ("mention", "reply")
_TOKEN_ERRORS = frozenset({"ExpiredToken", "InvalidToken", "AuthenticationRequired"})
_NO_SUCH_HANDLE = "InvalidRequest"  # resolveHandle's 400 for a handle no account has
ROOT_AUTHOR = "thread root author"
# Failures that happen before a request leaves this machine: the post surely did not go out.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@dataclass(frozen=True)
class _Post:
    """A post that was read: who wrote it and what a reply to it must carry."""

    uri: str  # at://DID/app.bsky.feed.post/RKEY
    cid: str
    root_uri: str
    root_cid: str
    author: Author
    reply_disabled: bool  # a threadgate shuts the persona out of this thread


class BlueskySession:
    """Implements tactful.core.send.adapter.Session for Bluesky."""

    def __init__(self, adapter: BlueskyAdapter, client: Client, login: SdkSession) -> None:
        self._adapter = adapter
        self._client = client
        self.did = login.did
        self.handle = login.handle
        self._posts: dict[str, _Post] = {}  # by the reference given and by the at:// URI read
        self._dids: dict[str, str | None] = {}  # handle -> DID, as resolved in this session

    @classmethod
    def connect(cls, adapter: BlueskyAdapter, app_password: str) -> BlueskySession:
        """Log in with one request (createSession); the profile lookup is skipped."""
        settings = adapter.settings
        timeout = settings.number("timeout")
        # base_url None is bsky.social; the client appends /xrpc. A createSession answer with
        # a DID document moves the client to the account's own PDS.
        client = Client(base_url=settings.base_url, request=Request(timeout=timeout))
        logins: list[SdkSession] = []

        def remember(event: SessionEvent, session: SdkSession) -> None:
            logins.append(session)

        client.on_session_change(remember)
        try:
            with _calling("logging in (createSession)", account=settings.account):
                client.login(settings.account, app_password, fetch_bsky_profile=False)
            if not logins:  # the client always reports a new session; defensive
                raise PlatformDown(PLATFORM, "the login answered without a session")
        except BaseException:
            client.request.close()  # no session comes of it: free its connections now
            raise
        return cls(adapter, client, logins[-1])

    # ---- reads --------------------------------------------------------------------------------

    def author(self, post: PostRef) -> Author:
        """The author, with one request, and as `parties` the thread root author whenever the
        post is a reply (Bluesky notifies a reply's root and parent authors; the parent is
        the post answered, whose author this is). The root's URI names its author by DID
        only, and memory may know them by handle only: a second read (getProfile) names
        them by both."""
        found = self._read(post).author
        return replace(found, parties=tuple(self._named(p) for p in found.parties))

    def _named(self, party: Party) -> Party:
        if party.handle is not None or party.id is None:
            return party
        with _calling("looking up the thread root's author (getProfile)"):
            profile = self._client.get_profile(party.id)
        if profile.handle == INVALID_HANDLE:
            raise Refused(f"{PLATFORM}: the thread's root author ({party.id}) has a handle that "
                          "no longer verifies, so memory cannot tell who it is; nothing was "
                          "sent")
        return replace(party, handle=normalize_handle(profile.handle, PLATFORM))

    def _read(self, post: PostRef) -> _Post:
        """One request: getPosts for a DID reference, getPostThread for a handle reference
        (getPosts does not resolve handles in at:// URIs; getPostThread does, server-side)."""
        known = self._posts.get(post.id)
        if known is not None:
            return known
        actor, _ = split_post_uri(post.id)
        if is_did(actor):
            with _calling("looking up the post (getPosts)"):
                found = self._client.get_posts([post.id]).posts
            if not found:
                raise BadInput(f"{PLATFORM}: post {post.url or post.id} was not found (deleted, "
                               "or hidden by a block); check the reference")
            view = found[0]
        else:
            with _calling("looking up the post (getPostThread)", missing=post.url or post.id):
                thread = self._client.get_post_thread(post.id, depth=0, parent_height=0).thread
            if isinstance(thread, models.AppBskyFeedDefs.BlockedPost):
                raise Forbidden(PLATFORM, f"post {post.url or post.id} is hidden by a block")
            if not isinstance(thread, models.AppBskyFeedDefs.ThreadViewPost):
                raise BadInput(f"{PLATFORM}: post {post.url or post.id} was not found; "
                               "check the reference")
            view = thread.post
        known = self._remember(view)
        self._posts[post.id] = known
        return known

    def _remember(self, view: models.AppBskyFeedDefs.PostView) -> _Post:
        reply = getattr(view.record, "reply", None)
        root_uri, root_cid = (reply.root.uri, reply.root.cid) if reply else (view.uri, view.cid)
        viewer = view.viewer
        known = _Post(view.uri, view.cid, root_uri, root_cid,
                      _author(view.author, view.uri, root_uri),
                      bool(viewer and viewer.reply_disabled))
        self._posts[view.uri] = known
        return known

    def resolve(self, handle: str) -> str | None:
        """The DID of `handle` with one request (com.atproto.identity.resolveHandle), None
        when Bluesky says no account has it (400 InvalidRequest). Any other failure raises
        (RateLimited, Unauthorized, PlatformDown, BadInput): never None for a failed read."""
        name = normalize_handle(handle, PLATFORM)
        if name in self._dids:
            return self._dids[name]
        did: str | None
        with _calling("resolving a handle (resolveHandle)"):
            try:
                did = self._client.resolve_handle(name).did
            except sdk.BadRequestError as error:
                if _error_name(error) != _NO_SUCH_HANDLE:
                    raise  # the session's or the server's fault, not the handle's: mapped
                did = None  # 400 InvalidRequest ("Unable to resolve handle"): no such account
        if did is not None and not is_did(did):
            raise PlatformDown(PLATFORM, "resolveHandle answered with something that is not a "
                               "DID")
        self._dids[name] = did
        return did

    # ---- the write ----------------------------------------------------------------------------

    def enable_posting(self, credentials: Mapping[str, str]) -> None:
        # Nothing to add: the app password that logged in already allows posting (post_fields
        # is empty, and the pipeline calls this only for adapters that have some).
        return None

    def send(self, text: str, *, reply_to: PostRef | None, to: str | None,
             mentions: Mapping[str, str | None]) -> Sent:
        if reply_to is None and to is not None:
            target = normalize_handle(to, PLATFORM)
            if target not in {span.handle for span in mention_spans(text)}:
                # the text was checked as it is: tactful never edits it afterwards
                raise BadInput(f"{PLATFORM}: a post to {target} must @mention them: put "
                               f"@{target} in the text; nothing was sent")
        graphemes, size = count_graphemes(text), len(text.encode("utf-8"))
        if graphemes > TEXT_LIMIT or size > TEXT_MAX_BYTES:
            raise BadInput(f"{PLATFORM}: the post is {graphemes} graphemes / {size} bytes; "
                           f"Bluesky allows {TEXT_LIMIT} / {TEXT_MAX_BYTES}: shorten it; "
                           "nothing was sent")
        reply = None
        if reply_to is not None:
            parent = self._read(reply_to)  # no request when author() already read it
            if parent.reply_disabled:
                raise Forbidden(PLATFORM, "the thread's author limits who may reply "
                                "(threadgate), and the persona is not among them")
            reply = models.AppBskyFeedPost.ReplyRef(
                root=models.ComAtprotoRepoStrongRef.Main(uri=parent.root_uri,
                                                         cid=parent.root_cid),
                parent=models.ComAtprotoRepoStrongRef.Main(uri=parent.uri, cid=parent.cid))
        facets = self._facets(text, mentions)
        with _calling("posting (createRecord)", write=True):
            created = self._client.send_post(text, profile_identify=self.did, reply_to=reply,
                                             facets=facets or None)
        _, rkey = split_post_uri(created.uri)
        return Sent(id=created.uri, url=post_url(self.handle, rkey))

    def _facets(self, text: str, mentions: Mapping[str, str | None]
                ) -> list[models.AppBskyRichtextFacet.Main]:
        """Mention facets for every @handle that has a DID, plus links and #tags as the app
        makes them (without a facet a link is not clickable)."""
        facets = facet_detection.detect_facets(text)
        for span in mention_spans(text):
            given = mentions.get(span.handle)
            did = given if given and is_did(given) else self.resolve(span.handle)
            if did is None:
                continue  # no such account: the app leaves such text plain too
            facets.append(models.AppBskyRichtextFacet.Main(
                features=[models.AppBskyRichtextFacet.Mention(did=did)],
                index=models.AppBskyRichtextFacet.ByteSlice(byte_start=span.byte_start,
                                                            byte_end=span.byte_end)))
        return sorted(facets, key=lambda facet: facet.index.byte_start)

    # ---- inbound ------------------------------------------------------------------------------

    def fetch_inbound(self, since: str | None, limit: int) -> Page:
        """Mentions and replies indexed after cursor `since`, oldest first, at most `limit`.

        The cursor is tactful's own: the indexedAt of the newest item returned plus the URIs
        returned at that very instant, so an item is neither repeated nor skipped when several
        share a timestamp or `limit` cuts between them. The API's own cursor pages backwards
        in time; it is used only to walk back to `since`, for at most MAX_PAGES pages."""
        if limit <= 0:
            return Page((), since)
        mark = _Mark.parse(since) if since else None
        fresh: dict[str, tuple[datetime, Any]] = {}
        api_cursor: str | None = None
        for page in range(1, MAX_PAGES + 1):
            params = models.AppBskyNotificationListNotifications.Params(
                limit=PAGE_SIZE if mark else min(limit, PAGE_SIZE), cursor=api_cursor,
                reasons=list(INBOUND_REASONS))
            with _calling("reading notifications (listNotifications)"):
                answer = self._client.app.bsky.notification.list_notifications(params)
            reached = False
            for item in answer.notifications:
                try:
                    at = _time(item.indexed_at)
                except ValueError:
                    continue  # a malformed answer is not something to reply to
                if mark is not None and at < mark.at:
                    reached = True
                    break
                if mark is not None and at == mark.at and item.uri in mark.uris:
                    continue
                if item.reason in INBOUND_REASONS:
                    fresh.setdefault(item.uri, (at, item))
            if mark is None or reached or not answer.cursor or not answer.notifications:
                break
            if page == MAX_PAGES:
                log.warning("%s: more than %d notifications since the cursor; older ones "
                            "were not read", PLATFORM, MAX_PAGES * PAGE_SIZE)
            api_cursor = answer.cursor
        chosen = sorted(fresh.values(), key=lambda pair: (pair[0], pair[1].uri))[:limit]
        if not chosen:
            return Page((), since)
        newest = chosen[-1][0]
        uris = {item.uri for at, item in chosen if at == newest}
        if mark is not None and mark.at == newest:
            uris |= mark.uris
        items = [inbound for _, item in chosen if (inbound := self._inbound(item)) is not None]
        return Page(tuple(items), _Mark(newest, frozenset(uris)).encode())

    def _inbound(self, item: Any) -> Inbound | None:
        record = item.record
        text = getattr(record, "text", None)
        if not isinstance(text, str):
            return None  # not a post record: nothing to answer
        if item.author.handle == INVALID_HANDLE:
            log.warning("%s: skipped a notification from %s, whose handle does not verify",
                        PLATFORM, item.author.did)
            return None
        reply = getattr(record, "reply", None)
        root = reply.root.uri if reply else item.uri
        try:
            author = _author(item.author, item.uri, root)
        except PlatformDown:
            log.warning("%s: skipped a notification whose thread root cannot be read",
                        PLATFORM)
            return None
        _, rkey = split_post_uri(item.uri)
        post = PostRef(PLATFORM, item.uri, post_url(author.handle, rkey), author.handle)
        return Inbound(post=post, author=author, text=text, at=_time(item.indexed_at),
                       thread=root, mentions=tuple(self._adapter.mentions(text)))

    def close(self) -> None:
        self._client.request.close()


# ---- helpers ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Mark:
    """fetch_inbound's cursor: a time, and the URIs already returned at exactly that time."""

    at: datetime
    uris: frozenset[str]

    def encode(self) -> str:
        return " ".join([self.at.isoformat(), *sorted(self.uris)])

    @classmethod
    def parse(cls, cursor: str) -> _Mark:
        first, *uris = cursor.split(" ")
        try:
            return cls(_time(first), frozenset(uris))
        except ValueError:
            raise BadInput(f"{PLATFORM}: inbound cursor {cursor[:60]!r} was not made by "
                           "tactful; pass the cursor a previous fetch returned, or none") from None


def _time(value: str) -> datetime:
    at = datetime.fromisoformat(value)
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def _author(profile: Any, uri: str, root: str) -> Author:
    if profile.handle == INVALID_HANDLE:
        # Memory keys people by handle; every unverified account would share this one.
        raise Refused(f"{PLATFORM}: the author of {uri} ({profile.did}) has a handle that no "
                      "longer verifies, so memory cannot tell who it is; nothing was sent")
    handle = normalize_handle(profile.handle, PLATFORM)
    _, rkey = split_post_uri(uri)
    labels = getattr(profile, "labels", None) or []
    return Author(handle=handle, id=profile.did, display_name=profile.display_name or None,
                  is_bot=any(label.val == "bot" for label in labels),  # the self-label
                  thread=root, url=post_url(handle, rkey), parties=_parties(uri, root))


def _parties(uri: str, root: str) -> tuple[Party, ...]:
    """Who else a reply to post `uri` reaches. Bluesky notifies a reply's parent author (the
    author of `uri` itself) and its thread root author: the root's at:// URI names the latter
    (by DID, as records always do), so no read beyond the post's own is needed."""
    if root == uri:
        return ()
    try:
        actor, _ = split_post_uri(root)
    except ValueError:
        raise PlatformDown(PLATFORM, f"the post's thread root {root[:80]!r} is not the at:// "
                           "URI of a post, so its author cannot be checked") from None
    if is_did(actor):
        return (Party(ROOT_AUTHOR, id=actor),)
    try:
        return (Party(ROOT_AUTHOR, handle=normalize_handle(actor, PLATFORM)),)
    except BadInput:
        raise PlatformDown(PLATFORM, f"the post's thread root names its author as "
                           f"{actor[:80]!r}, neither a DID nor a handle") from None


def _error_name(error: sdk.RequestErrorBase) -> str | None:
    content = error.response.content if error.response is not None else None
    return content.error if isinstance(content, XrpcError) else None


def _detail(error: sdk.RequestErrorBase) -> str:
    """The server's message (never a post's text; its error name is the answer's code), or
    the transport failure."""
    content = error.response.content if error.response is not None else None
    if isinstance(content, XrpcError):
        return (content.message or "")[:200]
    if error.response is not None:
        return ""
    cause = error.__cause__
    return type(cause).__name__ if cause is not None else type(error).__name__


def _failure(error: BaseException) -> Failure:
    """How a request failed without an answer, from the httpx exception behind it."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, _NOT_SENT):
            return "connect"
        if isinstance(cause, httpx.TimeoutException | sdk.InvokeTimeoutError):
            return "timeout"
        cause = cause.__cause__
    return "broken"


def _means(status: int | None, name: str | None) -> int | None:
    """The status a Bluesky error name stands for, where it says more than the HTTP status:
    an expired or invalid token is answered 400 and means a refused session (401); NotFound
    at 400 means not found (404); RateLimitExceeded means 429."""
    if name in _TOKEN_ERRORS:
        return 401
    if name == "NotFound" and status == 400:
        return 404
    if name == "RateLimitExceeded":
        return 429
    return None


def _answer(error: BaseException, what: str, *, write: bool, missing: str | None,
            account: str | None) -> Answer:
    if isinstance(error, sdk.RequestErrorBase) and error.response is not None:
        status, name = error.response.status_code, _error_name(error)
        means = _means(status, name)
        hint = ""
        if (means or status) == 401:
            hint = f"the app password of {account!r} was refused" if account \
                else "the session was refused"
        elif status in (404, 501) and means is None:
            hint = "the server does not serve this method: is base_url a Bluesky PDS?"
        return Answer(PLATFORM, status, write=write, headers=dict(error.response.headers),
                      detail=_detail(error), code=name, means=means, what=what,
                      missing=f"post {missing}" if missing and means == 404 else None,
                      hint=hint)
    if isinstance(error, sdk.RequestErrorBase | httpx.TransportError):
        failure = _failure(error)
        return Answer(PLATFORM, None, write=write, failure=failure, what=what,
                      detail=_detail(error) if isinstance(error, sdk.RequestErrorBase)
                      else type(error).__name__)
    # a malformed answer (the SDK could not read it), or an httpx error of another kind
    return Answer(PLATFORM, None, write=write, failure="unreadable", what=what,
                  detail=type(error).__name__)


@contextmanager
def _calling(what: str, *, write: bool = False, missing: str | None = None,
             account: str | None = None) -> Iterator[None]:
    """Turn whatever the SDK raises into the one tactful error for its answer
    (core/send/answers.py); `write`: the request that hands the post over; `missing`: what a
    "not found" names."""
    try:
        yield
    except (sdk.AtProtocolError, httpx.HTTPError, ValueError) as error:
        # ValueError: pydantic's ValidationError, and atproto's JSON parser on a garbled body
        raise error_for(_answer(error, what, write=write, missing=missing,
                                account=account)) from error
