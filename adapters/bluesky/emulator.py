"""A Bluesky PDS + AppView on 127.0.0.1, for tests and `tactful demo`. Standard library only.

It speaks the XRPC wire format atproto's Client uses (`/xrpc/<nsid>`, JSON) for the methods
tactful calls: createSession, refreshSession, getProfile, getPosts, getPostThread,
resolveHandle, createRecord (posts) and listNotifications. It refuses what a real server would
refuse where it matters to us, and a little more (400 unless noted):
- a missing or unknown access token (401 AuthenticationRequired), a wrong app password (401);
- a reply whose root or parent is not an existing post with that cid, or whose root is not
  the parent's thread root;
- a facet outside the text's UTF-8 bytes, or a mention facet whose bytes are not exactly
  "@handle" of the DID it names;
- a text over 300 graphemes or 3000 bytes.

Handles are domain names on Bluesky: a bare name such as "alice" is taken as
"alice.bsky.social", as the bsky.social sign-up makes it, so `persona` is the full handle.
Seeded posts get mention facets for "@handle" of known users, as the app would make them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote, urlsplit

from tactful.adapters.emulation import Emulator, Reply, Request

POST = "app.bsky.feed.post"
WEB = "https://bsky.app"
DEFAULT_DOMAIN = "bsky.social"
_TID_ALPHABET = "234567abcdefghijklmnopqrstuvwxyz"
_WRITES = frozenset({"com.atproto.repo.createRecord", "com.atproto.repo.putRecord",
                     "com.atproto.repo.deleteRecord", "com.atproto.repo.applyWrites"})
_MENTION = re.compile(r"(?:^|(?<=[\s(]))@([a-zA-Z0-9.-]+)\b", re.ASCII)


@dataclass
class _User:
    did: str
    handle: str
    display_name: str | None
    is_bot: bool


@dataclass
class _Post:
    uri: str
    cid: str
    rkey: str
    author: str  # DID
    record: dict[str, Any]
    indexed_at: str
    by_api: bool = False  # created through createRecord (what tactful sent)
    replies_disabled: bool = False  # a threadgate on this (root) post shuts everyone out


def _error(status: int, name: str, message: str) -> Reply:
    return Reply(status, {"error": name, "message": message})


def _bad(message: str, name: str = "InvalidRequest") -> Reply:
    return _error(400, name, message)


def _b64(data: dict[str, Any]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _graphemes(text: str) -> int:
    """Bluesky's count, approximated independently of the adapter's own counter."""
    count, joined = 0, False
    flags = 0
    for char in text:
        code = ord(char)
        if joined:
            joined = False
            continue
        if code == 0x200D:
            joined = True
            continue
        if unicodedata.category(char) in ("Mn", "Mc", "Me") or 0xFE00 <= code <= 0xFE0F \
                or 0x1F3FB <= code <= 0x1F3FF or 0xE0020 <= code <= 0xE007F:
            continue
        if 0x1F1E6 <= code <= 0x1F1FF:
            flags += 1
            if flags % 2 == 0:
                continue
        else:
            flags = 0
        count += 1
    return count


class BlueskyEmulator(Emulator):
    """Seed users and posts, point the adapter's base_url at `base_url`, read `sent()`."""

    name = "bluesky"

    def __init__(self, persona: str = "persona", *, password: str | None = None,
                 clock: Callable[[], datetime] | None = None) -> None:
        """`password`: the app password createSession accepts; None accepts any non-empty one.
        `clock`: what indexedAt and createdAt read (tests freeze it to make ties)."""
        super().__init__()
        self.password = password
        self._persona_name = persona
        self._clock = clock
        self._last_tid = 0
        self.reset()

    def reset(self) -> None:
        """Forget every user, post, session, request and queued failure, as if just made
        (the server keeps running: one emulator can serve many tests)."""
        with self._lock:
            self.clock: Callable[[], datetime] = self._clock or (lambda: datetime.now(UTC))
            self._users: dict[str, _User] = {}  # by DID
            self._posts: dict[str, _Post] = {}  # by at:// URI (DID form), in creation order
            self._access: set[str] = set()
            self._refresh: set[str] = set()
            self._stalls.clear()
            self.requests.clear()
            self._queued.clear()
            self.persona_did = self.add_user(self._persona_name)
            self.persona = self._users[self.persona_did].handle

    # ---- seeding --------------------------------------------------------------------------------

    @staticmethod
    def canonical(handle: str) -> str:
        name = handle.removeprefix("@").lower()
        return name if "." in name else f"{name}.{DEFAULT_DOMAIN}"

    def add_user(self, handle: str, *, display_name: str | None = None,
                 is_bot: bool = False) -> str:
        """Add (or update) an account; returns its DID, derived from the first handle."""
        name = self.canonical(handle)
        with self._lock:
            existing = self._by_handle(name)
            if existing is not None:
                existing.display_name = display_name or existing.display_name
                existing.is_bot = is_bot or existing.is_bot
                return existing.did
            digest = base64.b32encode(hashlib.sha256(name.encode()).digest()).decode().lower()
            did = f"did:plc:{digest[:24]}"
            self._users[did] = _User(did, name, display_name, is_bot)
            return did

    def rename_user(self, handle: str, new_handle: str) -> str:
        """Change an account's handle; its DID stays. Returns the new handle."""
        with self._lock:
            user = self._user(handle)
            user.handle = self.canonical(new_handle)
            return user.handle

    def add_post(self, handle: str, text: str, *, reply_to: str | None = None,
                 quote: str | None = None, replies_disabled: bool = False) -> str:
        """A post by `handle` (added if unknown); returns its https://bsky.app URL.
        `reply_to`: a URL or at:// URI of an existing post, whoever wrote it: the new post's
        record.reply names that post as parent and its thread's root as root, as the app
        makes them. `quote`: a post this one quotes (an app.bsky.embed.record embed).
        `replies_disabled`: a threadgate on this post that lets nobody reply (the AppView
        then says viewer.replyDisabled)."""
        with self._lock:
            did = self.add_user(handle)
            record: dict[str, Any] = {"$type": POST, "text": text,
                                      "createdAt": self._now(), "langs": ["en"]}
            if reply_to is not None:
                parent = self._find(reply_to)
                if parent is None:
                    raise ValueError(f"reply_to {reply_to!r} names no post of this emulator")
                root = parent.record.get("reply", {}).get("root") or \
                    {"uri": parent.uri, "cid": parent.cid}
                record["reply"] = {"root": root, "parent": {"uri": parent.uri, "cid": parent.cid}}
            if quote is not None:
                quoted = self._find(quote)
                if quoted is None:
                    raise ValueError(f"quote {quote!r} names no post of this emulator")
                record["embed"] = {"$type": "app.bsky.embed.record",
                                   "record": {"uri": quoted.uri, "cid": quoted.cid}}
            facets = self._mention_facets(text)
            if facets:
                record["facets"] = facets
            post = self._store(did, record)
            post.replies_disabled = replies_disabled
            return self.url(post.uri)

    def sent(self) -> list[dict[str, Any]]:
        """What the persona posted through the API, in order."""
        with self._lock:
            out = []
            for post in self._posts.values():
                if not post.by_api:
                    continue
                reply = post.record.get("reply")
                mentions = [self._users[f["did"]].handle
                            for facet in post.record.get("facets", [])
                            for f in facet.get("features", [])
                            if f.get("$type") == "app.bsky.richtext.facet#mention"
                            and f.get("did") in self._users]
                out.append({
                    "text": post.record["text"],
                    "reply_to": self.url(reply["parent"]["uri"]) if reply else None,
                    "root": self.url(reply["root"]["uri"]) if reply else None,
                    "mentions": mentions,
                    "facets": post.record.get("facets", []),
                    "id": post.uri,
                    "url": self.url(post.uri),
                })
            return out

    def url(self, uri: str) -> str:
        """The public URL of a post, with the author's current handle (as the app shows)."""
        post = self._posts[uri]
        return f"{WEB}/profile/{self._users[post.author].handle}/post/{post.rkey}"

    def did_of(self, handle: str) -> str:
        return self._user(handle).did

    @staticmethod
    def method(nsid: str) -> Callable[[Request], bool]:
        """A `match` for fail_next/stall_next: requests to this XRPC method."""
        return lambda request: request.path == f"/xrpc/{nsid}"

    def calls(self, nsid: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path == f"/xrpc/{nsid}"]

    # ---- the server -------------------------------------------------------------------------

    def is_write(self, request: Request) -> bool:
        return request.path.removeprefix("/xrpc/") in _WRITES

    def answer(self, request: Request) -> Reply:
        nsid = request.path.removeprefix("/xrpc/")
        handler = _HANDLERS.get(nsid)
        if handler is None or not request.path.startswith("/xrpc/"):
            return _error(501, "MethodNotImplemented", f"Method Not Implemented: {nsid}")
        method, needs_auth, run = handler
        if request.method != method:
            return _bad(f"{nsid} takes {method}")
        if needs_auth:
            refused = self._check_auth(request)
            if refused is not None:
                return refused
        with self._lock:
            return run(self, request)

    def _check_auth(self, request: Request) -> Reply | None:
        header = request.headers.get("authorization", "")
        if not header.startswith("Bearer "):
            return _error(401, "AuthenticationRequired", "Authentication Required")
        if header.removeprefix("Bearer ") not in self._access:
            return _error(401, "AuthenticationRequired", "Token could not be verified")
        return None

    # -- com.atproto.server

    def _create_session(self, request: Request) -> Reply:
        body = _json(request)
        identifier, password = body.get("identifier"), body.get("password")
        if not isinstance(identifier, str) or not isinstance(password, str):
            return _bad("identifier and password are required")
        user = self._by_handle(self.canonical(identifier)) if not identifier.startswith("did:") \
            else self._users.get(identifier)
        allowed = bool(password) if self.password is None else password == self.password
        if user is None or user.did != self.persona_did or not allowed:
            return _error(401, "AuthenticationRequired", "Invalid identifier or password")
        return Reply(200, self._tokens(user))

    def _refresh_session(self, request: Request) -> Reply:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        if token not in self._refresh:
            return _bad("Token has been revoked", "ExpiredToken")
        self._refresh.discard(token)
        return Reply(200, self._tokens(self._users[self.persona_did]))

    def _tokens(self, user: _User) -> dict[str, Any]:
        # Three base64url segments with a future `exp`: the client reads exp to know when to
        # refresh; nobody checks the signature. No didDoc, so the client stays on this server.
        now = int(time.time())
        header = _b64({"typ": "at+jwt", "alg": "ES256K"})

        def jwt(scope: str, lifetime: int) -> str:
            payload = {"scope": scope, "sub": user.did, "aud": "did:web:emulator.invalid",
                       "iat": now, "exp": now + lifetime, "jti": secrets.token_hex(8)}
            return f"{header}.{_b64(payload)}.emulator"

        access, refresh = jwt("com.atproto.appPass", 7200), jwt("com.atproto.refresh", 86400)
        self._access.add(access)
        self._refresh.add(refresh)
        return {"did": user.did, "handle": user.handle, "accessJwt": access,
                "refreshJwt": refresh, "active": True}

    # -- reads

    def _get_profile(self, request: Request) -> Reply:
        user = self._actor(request.query.get("actor", ""))
        if user is None:
            return _bad("Profile not found")
        return Reply(200, {**self._profile(user), "followersCount": 0, "followsCount": 0,
                           "postsCount": sum(p.author == user.did for p in self._posts.values())})

    def _get_posts(self, request: Request) -> Reply:
        # Like the real AppView: at:// URIs are looked up as given, handles are not resolved.
        # (The base Request keeps one value per query key: one URI per call here.)
        uri = request.query.get("uris", "")
        post = self._posts.get(uri)
        return Reply(200, {"posts": [self._view(post)] if post else []})

    def _get_post_thread(self, request: Request) -> Reply:
        uri = request.query.get("uri", "")
        post = self._find(uri)  # getPostThread resolves a handle in the URI (the AppView does)
        if post is None:
            return _bad(f"Post not found: {uri}", "NotFound")
        height = int(request.query.get("parentHeight", "80") or 0)
        thread: dict[str, Any] = {"$type": "app.bsky.feed.defs#threadViewPost",
                                  "post": self._view(post), "replies": []}
        node, current = thread, post
        for _ in range(height):
            parent_ref = current.record.get("reply", {}).get("parent")
            parent = self._posts.get(parent_ref["uri"]) if parent_ref else None
            if parent is None:
                break
            node["parent"] = {"$type": "app.bsky.feed.defs#threadViewPost",
                              "post": self._view(parent)}
            node, current = node["parent"], parent
        return Reply(200, {"thread": thread})

    def _resolve_handle(self, request: Request) -> Reply:
        user = self._by_handle(request.query.get("handle", "").lower())
        if user is None:
            return _bad("Unable to resolve handle")
        return Reply(200, {"did": user.did})

    def _list_notifications(self, request: Request) -> Reply:
        try:
            limit = int(request.query.get("limit", "50"))
        except ValueError:
            return _bad("limit must be an integer")
        if not 1 <= limit <= 100:
            return _bad("limit must be between 1 and 100")
        # newest first; posts indexed at the same instant, latest created first
        keyed = sorted(((post.indexed_at, n), item) for n, post in enumerate(self._posts.values())
                       if (item := self._notification(post)) is not None)[::-1]
        cursor = request.query.get("cursor")
        if cursor:
            at, _, seq = cursor.partition("::")
            if not seq.isdigit():
                return _bad("malformed cursor")
            keyed = [(key, item) for key, item in keyed if key < (at, int(seq))]
        page = keyed[:limit]
        body: dict[str, Any] = {"notifications": [item for _, item in page]}
        if len(keyed) > limit:
            last_at, last_seq = page[-1][0]
            body["cursor"] = f"{last_at}::{last_seq}"
        return Reply(200, body)

    def _notification(self, post: _Post) -> dict[str, Any] | None:
        """A post addressed to the persona, as a notification: a reply to one of its posts,
        else a mention of it (the reasons tactful asks for)."""
        if post.author == self.persona_did:
            return None
        parent_ref = post.record.get("reply", {}).get("parent")
        parent = self._posts.get(parent_ref["uri"]) if parent_ref else None
        if parent is not None and parent.author == self.persona_did:
            reason, subject = "reply", parent.uri
        elif self.persona_did in _mentioned(post.record):
            reason, subject = "mention", None
        else:
            return None
        item = {"uri": post.uri, "cid": post.cid, "author": self._profile(self._users[post.author]),
                "reason": reason, "record": post.record, "isRead": False,
                "indexedAt": post.indexed_at, "labels": []}
        if subject:
            item["reasonSubject"] = subject
        return item

    # -- the write

    def _create_record(self, request: Request) -> Reply:
        body = _json(request)
        repo, collection, record = body.get("repo"), body.get("collection"), body.get("record")
        persona = self._users[self.persona_did]
        if repo not in (persona.did, persona.handle):
            return _bad(f"Could not find repo: {repo}" if repo else "repo is required")
        if collection != POST:
            return _bad(f"this emulator only creates {POST} records")
        if not isinstance(record, dict) or record.get("$type") != POST:
            return _bad("Invalid app.bsky.feed.post record: Record/$type must be "
                        f"{POST}", "InvalidRecord")
        text = record.get("text")
        if not isinstance(text, str) or not isinstance(record.get("createdAt"), str):
            return _bad("Invalid app.bsky.feed.post record: Record must have the properties "
                        '"text" and "createdAt"', "InvalidRecord")
        if _graphemes(text) > 300 or len(text.encode("utf-8")) > 3000:
            return _bad("Invalid app.bsky.feed.post record: Record/text must not be longer "
                        "than 300 graphemes", "InvalidRecord")
        problem = self._reply_problem(record.get("reply")) or \
            self._facet_problem(text, record.get("facets"))
        if problem:
            return _bad(problem, "InvalidRecord")
        post = self._store(self.persona_did, record, by_api=True)
        return Reply(200, {"uri": post.uri, "cid": post.cid,
                           "commit": {"cid": _cid(post.uri + "commit"), "rev": post.rkey},
                           "validationStatus": "valid"})

    def _reply_problem(self, reply: Any) -> str | None:
        if reply is None:
            return None
        refs = {}
        for side in ("root", "parent"):
            ref = reply.get(side) if isinstance(reply, dict) else None
            if not isinstance(ref, dict):
                return f"Record/reply/{side} must be a strong ref (uri and cid)"
            post = self._posts.get(str(ref.get("uri")))
            if post is None or post.cid != ref.get("cid"):
                return f"Record/reply/{side} names no existing post with that uri and cid"
            refs[side] = post
        parent_root = refs["parent"].record.get("reply", {}).get("root", {}).get("uri") \
            or refs["parent"].uri
        if refs["root"].uri != parent_root:
            return "Record/reply/root is not the root of the parent's thread"
        return None

    def _facet_problem(self, text: str, facets: Any) -> str | None:
        if facets is None:
            return None
        data = text.encode("utf-8")
        for n, facet in enumerate(facets if isinstance(facets, list) else [None]):
            index = facet.get("index") if isinstance(facet, dict) else None
            start = index.get("byteStart") if isinstance(index, dict) else None
            end = index.get("byteEnd") if isinstance(index, dict) else None
            if not isinstance(start, int) or not isinstance(end, int) \
                    or not 0 <= start < end <= len(data):
                return f"Record/facets/{n}/index is not a byte range inside the text"
            for feature in facet.get("features") or []:
                if feature.get("$type") != "app.bsky.richtext.facet#mention":
                    continue
                user = self._users.get(feature.get("did", ""))
                covered = data[start:end].decode("utf-8", errors="replace").lower()
                if user is None or covered != f"@{user.handle}":
                    return (f"Record/facets/{n}: the mention's bytes {start}..{end} are not "
                            "'@handle' of the DID it names")
        return None

    # ---- state ----------------------------------------------------------------------------------

    def _now(self) -> str:
        at = self.clock().astimezone(UTC)
        return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"

    def _tid(self) -> str:
        # base32-sortable microseconds since the epoch, shifted left by a 10-bit clock id
        micros = max(int(self.clock().timestamp() * 1_000_000), self._last_tid + 1)
        self._last_tid = micros
        value = (micros << 10) & ((1 << 63) - 1)
        return "".join(_TID_ALPHABET[(value >> (5 * (12 - i))) & 31] for i in range(13))

    def _store(self, did: str, record: dict[str, Any], *, by_api: bool = False) -> _Post:
        rkey = self._tid()
        uri = f"at://{did}/{POST}/{rkey}"
        post = _Post(uri, _cid(uri + json.dumps(record, sort_keys=True)), rkey, did, record,
                     self._now(), by_api)
        self._posts[uri] = post
        return post

    def _mention_facets(self, text: str) -> list[dict[str, Any]]:
        facets = []
        for match in _MENTION.finditer(text):
            user = self._by_handle(match.group(1).lower())
            if user is None:
                continue
            start = len(text[:match.start()].encode("utf-8"))
            end = start + len(match.group(0).encode("utf-8"))
            facets.append({"index": {"byteStart": start, "byteEnd": end}, "features": [
                {"$type": "app.bsky.richtext.facet#mention", "did": user.did}]})
        return facets

    def _by_handle(self, handle: str) -> _User | None:
        return next((u for u in self._users.values() if u.handle == handle), None)

    def _user(self, handle: str) -> _User:
        user = self._by_handle(self.canonical(handle))
        if user is None:
            raise KeyError(f"no user {handle!r} in this emulator")
        return user

    def _actor(self, actor: str) -> _User | None:
        return self._users.get(actor) if actor.startswith("did:") else \
            self._by_handle(actor.lower())

    def _find(self, ref: str) -> _Post | None:
        """A post by https://bsky.app URL or at:// URI, with a handle or a DID."""
        if ref.startswith("at://"):
            actor, _, rest = ref.removeprefix("at://").partition("/")
            collection, _, rkey = rest.partition("/")
            if collection != POST:
                return None
        else:
            parts = urlsplit(ref).path.split("/")
            if len(parts) < 5 or parts[1] != "profile" or parts[3] != "post":
                return None
            actor, rkey = unquote(parts[2]), parts[4]
        user = self._actor(actor)
        return self._posts.get(f"at://{user.did}/{POST}/{rkey}") if user else None

    def _profile(self, user: _User) -> dict[str, Any]:
        profile: dict[str, Any] = {"did": user.did, "handle": user.handle, "labels": []}
        if user.display_name:
            profile["displayName"] = user.display_name
        if user.is_bot:  # the "bot" self-label the app shows as an automated account
            profile["labels"] = [{"src": user.did, "uri": f"at://{user.did}/app.bsky.actor."
                                  "profile/self", "val": "bot", "cts": self._now()}]
        return profile

    def _view(self, post: _Post) -> dict[str, Any]:
        root_uri = post.record.get("reply", {}).get("root", {}).get("uri", post.uri)
        root = self._posts.get(root_uri)
        viewer: dict[str, Any] = {}
        if root is not None and root.replies_disabled and root.author != self.persona_did:
            viewer["replyDisabled"] = True
        return {"$type": "app.bsky.feed.defs#postView", "uri": post.uri, "cid": post.cid,
                "author": self._profile(self._users[post.author]), "record": post.record,
                "indexedAt": post.indexed_at, "replyCount": 0, "repostCount": 0,
                "likeCount": 0, "quoteCount": 0, "labels": [], "viewer": viewer}


def _cid(seed: str) -> str:
    # the shape of a CIDv1 (dag-cbor, sha-256) in base32: "bafyrei" and 52 more characters
    digest = base64.b32encode(hashlib.sha256(seed.encode()).digest()).decode().lower()
    return "bafyrei" + digest.rstrip("=")[:52]


def _json(request: Request) -> dict[str, Any]:
    try:
        body = request.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _mentioned(record: dict[str, Any]) -> set[str]:
    return {f.get("did") for facet in record.get("facets", []) for f in facet.get("features", [])
            if f.get("$type") == "app.bsky.richtext.facet#mention"}


_Handler = tuple[str, bool, Callable[[BlueskyEmulator, Request], Reply]]
_HANDLERS: dict[str, _Handler] = {
    "com.atproto.server.createSession": ("POST", False, BlueskyEmulator._create_session),
    "com.atproto.server.refreshSession": ("POST", False, BlueskyEmulator._refresh_session),
    "app.bsky.actor.getProfile": ("GET", True, BlueskyEmulator._get_profile),
    "app.bsky.feed.getPosts": ("GET", True, BlueskyEmulator._get_posts),
    "app.bsky.feed.getPostThread": ("GET", True, BlueskyEmulator._get_post_thread),
    "com.atproto.identity.resolveHandle": ("GET", False, BlueskyEmulator._resolve_handle),
    "app.bsky.notification.listNotifications": ("GET", True,
                                                BlueskyEmulator._list_notifications),
    "com.atproto.repo.createRecord": ("POST", True, BlueskyEmulator._create_record),
}
