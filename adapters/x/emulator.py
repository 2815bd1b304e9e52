"""A small X API v2 on 127.0.0.1, for the tests and `tactful demo`. Standard library only.

It speaks the wire format tweepy.Client uses (JSON in, JSON out, the v2 error shapes) for the
endpoints tactful calls, and refuses what X would refuse where it matters to us: a missing or
wrong Authorization header (401), posting with the app's bearer token (403), a reply to a post
that does not exist, text over 280 as X weighs it, unknown fields or keys (400), and a reply to
a post whose author let only the people it mentions reply (403). OAuth 1.0a signatures are not
checked (the adapter signs for api.twitter.com and its transport moves the request here).

    with XEmulator(persona="persona") as x:
        x.add_user("ada", display_name="Ada")
        post = x.add_post("ada", "hi @persona")        # https://x.com/ada/status/<id>
        ... AdapterSettings(platform="x", account="default", base_url=x.base_url) ...
        x.sent()                                        # what the persona posted
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tactful.adapters.emulation import Emulator, Reply, Request

_USERNAME = re.compile(r"[A-Za-z0-9_]{1,15}")
_DIGITS = re.compile(r"[1-9][0-9]{0,18}")
_REF = re.compile(r"(?:https?://(?:www\.|mobile\.)?(?:x|twitter)\.com/"
                  r"(?:i/web|i|[A-Za-z0-9_]{1,15})/status/)?([1-9][0-9]{0,18})/?")

# What X's v2 endpoints accept as fields and expansions (a subset: what a client may ask for).
TWEET_FIELDS = frozenset({
    "attachments", "author_id", "context_annotations", "conversation_id", "created_at",
    "edit_controls", "edit_history_tweet_ids", "entities", "geo", "id", "in_reply_to_user_id",
    "lang", "note_tweet", "possibly_sensitive", "public_metrics", "referenced_tweets",
    "reply_settings", "source", "text", "withheld"})
USER_FIELDS = frozenset({
    "created_at", "description", "entities", "id", "location", "most_recent_tweet_id", "name",
    "pinned_tweet_id", "profile_image_url", "protected", "public_metrics", "url", "username",
    "verified", "verified_type", "withheld"})
EXPANSIONS = frozenset({
    "attachments.media_keys", "attachments.poll_ids", "author_id", "edit_history_tweet_ids",
    "entities.mentions.username", "geo.place_id", "in_reply_to_user_id",
    "referenced_tweets.id", "referenced_tweets.id.author_id", "pinned_tweet_id",
    "most_recent_tweet_id"})
CREATE_KEYS = frozenset({
    "text", "reply", "quote_tweet_id", "media", "poll", "reply_settings", "geo", "nullcast",
    "for_super_followers_only", "direct_message_deep_link", "community_id"})

# twitter-text's mention grammar, which X's entities follow (kept apart from the adapter's own
# finder on purpose: the tests compare the two).
_MENTION = re.compile(
    "(?:^|(?<=[^A-Za-z0-9_!#$%&*@\uff20])|(?<=(?<![A-Za-z0-9_+~.-])[rR][tT])"
    "|(?<=(?<![A-Za-z0-9_+~.-])[rR][tT]:))"
    "[@\uff20]([A-Za-z0-9_]{1,20})(/[A-Za-z][A-Za-z0-9_-]{0,24})?")
_MENTION_END = re.compile(
    "[@\uff20\xc0-\xd6\xd8-\xf6\xf8-\xff\u0100-\u024f\u0253\u0254\u0256\u0257\u0259\u025b"
    "\u0263\u0268\u026f\u0272\u0289\u028b\u02bb\u0300-\u036f\u1e00-\u1eff]|://")
_URL = re.compile(r"https?://[^\s]+")
_LIGHT = ((0x0000, 0x10FF), (0x2000, 0x200D), (0x2010, 0x201F), (0x2032, 0x2037))


def weighted_length(text: str) -> int:
    """X's weighted length: 1 for light code points, 2 for others, 23 for a link."""
    text = unicodedata.normalize("NFC", text)
    plain = _URL.sub("", text)
    weight = sum(1 if any(lo <= ord(c) <= hi for lo, hi in _LIGHT) else 2 for c in plain)
    return weight + 23 * len(_URL.findall(text))


def extract_mentions(text: str) -> list[tuple[str, int, int]]:
    """(username, start, end) of each mention as X's entities give them; lists are not."""
    found = []
    for match in _MENTION.finditer(text):
        if match.group(2) or _MENTION_END.match(text, match.end()):
            continue
        found.append((match.group(1), match.start(), match.end()))
    return found


@dataclass
class _User:
    id: str
    username: str
    name: str
    is_bot: bool  # kept for the uniform seeding API; X's API has no field that says so
    protected: bool = False  # its posts are hidden from the app (not-authorized-for-resource)


@dataclass
class _Post:
    id: str
    author_id: str
    text: str
    created_at: str
    conversation_id: str
    in_reply_to: str | None = None
    in_reply_to_user_id: str | None = None
    mentions: list[tuple[str, int, int]] = field(default_factory=list)
    reply_settings: str = "everyone"
    quoted: str | None = None  # the id of the post this one quotes


def _problem(status: int, title: str, detail: str, kind: str = "about:blank",
             **extra: Any) -> Reply:
    return Reply(status, {"title": title, "detail": detail, "type": kind, "status": status,
                          **extra})


def _invalid(message: str, parameter: str) -> Reply:
    return Reply(400, {
        "errors": [{"parameters": {parameter: []}, "message": message}],
        "title": "Invalid Request", "detail": "One or more parameters to your request was invalid.",
        "type": "https://api.twitter.com/2/problems/invalid-request"})


def _not_found(kind: str, parameter: str, value: str) -> Reply:
    # X answers a missing resource with 200 and only `errors`.
    return Reply(200, {"errors": [{
        "value": value, "detail": f"Could not find {kind} with {parameter}: [{value}].",
        "title": "Not Found Error", "resource_type": kind, "parameter": parameter,
        "resource_id": value, "type": "https://api.twitter.com/2/problems/resource-not-found"}]})


class XEmulator(Emulator):
    name = "x"

    def __init__(self, persona: str = "persona", *, bearer_token: str | None = None,
                 consumer_key: str | None = None, access_token: str | None = None) -> None:
        """`bearer_token`, `consumer_key`, `access_token`: when given, requests must carry
        exactly these (401 otherwise); when None, any value is accepted."""
        super().__init__()
        self.persona = persona
        self.bearer_token = bearer_token
        self.consumer_key = consumer_key
        self.access_token = access_token
        self._users: dict[str, _User] = {}  # by lower-cased username
        self._posts: dict[str, _Post] = {}
        self._posted: list[str] = []  # ids the persona posted through the API, in order
        self._next_user = 1_500_000_001
        self._next_post = 1_860_000_000_000_000_001
        self.persona_id = self.add_user(persona, display_name=persona.capitalize())

    # ---- seeding (the uniform API every platform emulator offers) -------------------------

    def add_user(self, handle: str, *, display_name: str | None = None,
                 is_bot: bool = False) -> str:
        """A user; returns the stable id (the same one again for a known handle)."""
        username = handle.removeprefix("@")
        if not _USERNAME.fullmatch(username):
            raise ValueError(f"not an X username: {handle!r} (1-15 of A-Z a-z 0-9 _)")
        with self._lock:
            known = self._users.get(username.lower())
            if known is not None:
                return known.id
            user = _User(str(self._next_user), username, display_name or username, is_bot)
            self._next_user += 1
            self._users[username.lower()] = user
            return user.id

    def add_post(self, handle: str, text: str, *, reply_to: str | None = None,
                 quote: str | None = None, reply_settings: str = "everyone") -> str:
        """A post by `handle` (made a user if new); returns its public URL. `reply_to` is such
        a URL (or a bare id), whoever wrote it: the post joins that conversation and replies
        to its author (in_reply_to_user_id). `quote` is a post this one quotes. Every
        `@name` in `text` is a mention entity, as X makes them. `reply_settings=
        "mentionedUsers"` lets only the people the post mentions reply, as X's conversation
        settings do."""
        self.add_user(handle)
        with self._lock:
            author = self._users[handle.removeprefix("@").lower()]
            parent = self._post_for(reply_to) if reply_to is not None else None
            quoted = self._post_for(quote) if quote is not None else None
            return self._url(self._create(author, text, parent, reply_settings, quoted))

    def rename_user(self, handle: str, new_handle: str) -> str:
        """Change an account's username; its id stays (as on X). Returns the new username."""
        username = new_handle.removeprefix("@")
        if not _USERNAME.fullmatch(username):
            raise ValueError(f"not an X username: {new_handle!r}")
        with self._lock:
            user = self._users.pop(handle.removeprefix("@").lower())
            user.username = username
            self._users[username.lower()] = user
            return username

    def delete_post(self, reference: str) -> None:
        """Delete a post: a read of it, or of a post that references it, finds it gone."""
        with self._lock:
            del self._posts[self._post_for(reference).id]

    def protect(self, handle: str) -> None:
        """Make an account protected: its posts are hidden from the app from now on."""
        with self._lock:
            self._users[handle.removeprefix("@").lower()].protected = True

    def sent(self) -> list[dict[str, Any]]:
        """What the persona posted through the API, in order."""
        with self._lock:
            out = []
            for post_id in self._posted:
                post = self._posts[post_id]
                parent = self._posts.get(post.in_reply_to or "")
                out.append({
                    "id": post.id, "url": self._url(post), "text": post.text,
                    "reply_to": self._url(parent) if parent else None,
                    "mentions": list(dict.fromkeys(n.lower() for n, _, _ in post.mentions)),
                    "conversation_id": post.conversation_id})
            return out

    # ---- the platform ---------------------------------------------------------------------

    def is_write(self, request: Request) -> bool:
        return request.method == "POST" and request.path.rstrip("/") == "/2/tweets"

    def answer(self, request: Request) -> Reply:
        auth = self._auth(request)
        if isinstance(auth, Reply):
            return auth
        path = request.path.rstrip("/")
        with self._lock:
            if request.method == "POST" and path == "/2/tweets":
                return self._create_tweet(request, auth)
            if request.method == "GET":
                if path == "/2/users/me":
                    return self._me(auth)
                if match := re.fullmatch(r"/2/tweets/([^/]+)", path):
                    return self._get_tweet(request, match.group(1))
                if match := re.fullmatch(r"/2/users/by/username/([^/]+)", path):
                    return self._get_user(request, match.group(1))
                if match := re.fullmatch(r"/2/users/([^/]+)/mentions", path):
                    return self._mentions(request, match.group(1))
        return _problem(404, "Not Found Error", "Sorry, that page does not exist.")

    def _auth(self, request: Request) -> str | Reply:
        """"app" (a bearer token) or "user" (OAuth 1.0a), or the 401 X would answer."""
        header = request.headers.get("authorization", "")
        unauthorized = _problem(401, "Unauthorized", "Unauthorized")
        if header.startswith("Bearer "):
            token = header.removeprefix("Bearer ").strip()
            ok = token and (self.bearer_token is None or token == self.bearer_token)
            return "app" if ok else unauthorized
        if header.startswith("OAuth "):
            params = dict(re.findall(r'(\w+)="([^"]*)"', header))
            needed = ("oauth_consumer_key", "oauth_token", "oauth_signature", "oauth_nonce")
            if not all(params.get(k) for k in needed):
                return unauthorized
            if self.consumer_key is not None and params["oauth_consumer_key"] != \
                    self.consumer_key:
                return unauthorized
            if self.access_token is not None and params["oauth_token"] != self.access_token:
                return unauthorized
            return "user"
        return unauthorized

    def _create_tweet(self, request: Request, auth: str) -> Reply:
        if auth != "user":
            return _unsupported_auth()
        try:
            body = request.json()
        except ValueError:
            return _invalid("Request body is not valid JSON", "body")
        if not isinstance(body, dict):
            return _invalid("Request body must be a JSON object", "body")
        unknown = sorted(set(body) - CREATE_KEYS)
        if unknown:
            return _invalid(f"$.{unknown[0]} is not defined in the schema", unknown[0])
        text = body.get("text")
        if not isinstance(text, str) or not text.strip():
            return _invalid("$.text: a non-empty text is required", "text")
        if weighted_length(text) > 280:
            return _invalid("$.text: the text is longer than 280 (weighted)", "text")
        parent = None
        if "reply" in body:
            reply = body["reply"]
            target = reply.get("in_reply_to_tweet_id") if isinstance(reply, dict) else None
            if not isinstance(target, str) or not _DIGITS.fullmatch(target):
                return _invalid("$.reply.in_reply_to_tweet_id: a post id string is required",
                                "reply.in_reply_to_tweet_id")
            parent = self._posts.get(target)
            if parent is None:
                return _invalid("$.reply.in_reply_to_tweet_id: no such post",
                                "reply.in_reply_to_tweet_id")
            if not self._may_reply(parent):
                return _problem(403, "Forbidden", (
                    "Reply to this conversation is not allowed because you have not been "
                    "mentioned or otherwise engaged by the author of the post you are "
                    "replying to."))
        quoted = None
        if "quote_tweet_id" in body:
            quoted = self._posts.get(str(body["quote_tweet_id"]))
            if quoted is None:
                return _invalid("$.quote_tweet_id: no such post", "quote_tweet_id")
        post = self._create(self._users[self.persona.lower()], text, parent, "everyone", quoted)
        self._posted.append(post.id)
        return Reply(201, {"data": {"id": post.id, "text": post.text,
                                    "edit_history_tweet_ids": [post.id]}})

    def _may_reply(self, parent: _Post) -> bool:
        if parent.reply_settings == "everyone" or parent.author_id == self.persona_id:
            return True
        return any(n.lower() == self.persona.lower() for n, _, _ in parent.mentions)

    def _me(self, auth: str) -> Reply:
        if auth != "user":
            return _unsupported_auth()
        return Reply(200, {"data": self._user_json(self._users[self.persona.lower()], set())})

    def _get_tweet(self, request: Request, post_id: str) -> Reply:
        fields = self._fields(request)
        if isinstance(fields, Reply):
            return fields
        if not _DIGITS.fullmatch(post_id):
            return _invalid(f"The `id` query parameter value [{post_id[:30]}] is not valid",
                            "id")
        post = self._posts.get(post_id)
        if post is None:
            return _not_found("tweet", "id", post_id)
        if self._user_by_id(post.author_id).protected:
            return _not_authorized(post_id)
        return Reply(200, self._tweets_json([post], fields, single=True))

    def _get_user(self, request: Request, username: str) -> Reply:
        fields = self._fields(request)
        if isinstance(fields, Reply):
            return fields
        if not _USERNAME.fullmatch(username):
            return _invalid(f"The `username` query parameter value [{username[:30]}] does not "
                            "match ^[A-Za-z0-9_]{1,15}$", "username")
        user = self._users.get(username.lower())
        if user is None:
            return _not_found("user", "username", username)
        return Reply(200, {"data": self._user_json(user, fields[2])})

    def _mentions(self, request: Request, user_id: str) -> Reply:
        fields = self._fields(request)
        if isinstance(fields, Reply):
            return fields
        since = request.query.get("since_id")
        if since is not None and not _DIGITS.fullmatch(since):
            return _invalid("The `since_id` query parameter value is not valid", "since_id")
        size = request.query.get("max_results", "10")
        if not size.isdigit() or not 5 <= int(size) <= 100:
            return _invalid("The `max_results` query parameter value is not between 5 and 100",
                            "max_results")
        user = next((u for u in self._users.values() if u.id == user_id), None)
        if user is None:
            return _not_found("user", "id", user_id)
        found = [p for p in self._posts.values()
                 if p.author_id != user.id and (since is None or int(p.id) > int(since))
                 and (p.in_reply_to_user_id == user.id
                      or any(n.lower() == user.username.lower() for n, _, _ in p.mentions))]
        found.sort(key=lambda p: int(p.id), reverse=True)
        page = found[:int(size)]
        if not page:
            return Reply(200, {"meta": {"result_count": 0}})
        answer = self._tweets_json(page, fields, single=False)
        answer["meta"] = {"result_count": len(page), "newest_id": page[0].id,
                          "oldest_id": page[-1].id}
        if len(found) > len(page):
            answer["meta"]["next_token"] = f"page-{page[-1].id}"
        return Reply(200, answer)

    # ---- building blocks ----------------------------------------------------------------------

    def _fields(self, request: Request) -> tuple[set[str], set[str], set[str]] | Reply:
        """(expansions, tweet.fields, user.fields) asked for, or the 400 for an unknown one."""
        asked = []
        for name, known in (("expansions", EXPANSIONS), ("tweet.fields", TWEET_FIELDS),
                            ("user.fields", USER_FIELDS)):
            values = {v for v in request.query.get(name, "").split(",") if v}
            unknown = sorted(values - known)
            if unknown:
                return _invalid(f"The `{name}` query parameter value [{unknown[0][:30]}] is "
                                "not one of the allowed values", name)
            asked.append(values)
        return asked[0], asked[1], asked[2]

    def _tweets_json(self, posts: list[_Post], fields: tuple[set[str], set[str], set[str]],
                     *, single: bool) -> dict[str, Any]:
        """The answer with `data`, and `includes` and `errors` as the expansions ask: the
        users (authors, mentioned accounts, replied-to accounts, authors of referenced posts)
        once each, authors first, and the referenced posts; a referenced post that is gone or
        hidden is an entry of `errors`, as X reports it."""
        expansions, tweet_fields, user_fields = fields
        data = [self._tweet_json(p, tweet_fields) for p in posts]
        answer: dict[str, Any] = {"data": data[0] if single else data}
        users: dict[str, _User] = {}
        tweets: dict[str, _Post] = {}
        errors: list[dict[str, Any]] = []
        for post in posts:
            if "author_id" in expansions:
                users.setdefault(post.author_id, self._user_by_id(post.author_id))
        for post in posts:
            if "entities.mentions.username" in expansions:
                for name, _, _ in post.mentions:
                    user = self._users.get(name.lower())
                    if user is not None:
                        users.setdefault(user.id, user)
            if "in_reply_to_user_id" in expansions and post.in_reply_to_user_id:
                users.setdefault(post.in_reply_to_user_id,
                                 self._user_by_id(post.in_reply_to_user_id))
            for _, ref_id in self._references(post):
                referenced = self._posts.get(ref_id)
                if referenced is None:
                    if expansions & {"referenced_tweets.id", "referenced_tweets.id.author_id"}:
                        errors.append(_not_found("tweet", "referenced_tweets.id",
                                                 ref_id).body["errors"][0])
                    continue
                if self._user_by_id(referenced.author_id).protected:
                    if expansions & {"referenced_tweets.id", "referenced_tweets.id.author_id"}:
                        errors.append(_not_authorized(ref_id).body["errors"][0])
                    continue
                if "referenced_tweets.id" in expansions:
                    tweets.setdefault(referenced.id, referenced)
                if "referenced_tweets.id.author_id" in expansions:
                    users.setdefault(referenced.author_id,
                                     self._user_by_id(referenced.author_id))
        includes: dict[str, Any] = {}
        if users:
            includes["users"] = [self._user_json(u, user_fields) for u in users.values()]
        if tweets:
            includes["tweets"] = [self._tweet_json(t, tweet_fields) for t in tweets.values()]
        if includes:
            answer["includes"] = includes
        if errors:
            answer["errors"] = errors
        return answer

    @staticmethod
    def _references(post: _Post) -> list[tuple[str, str]]:
        """(type, id) of the posts `post` references, as referenced_tweets lists them."""
        refs = []
        if post.quoted:
            refs.append(("quoted", post.quoted))
        if post.in_reply_to:
            refs.append(("replied_to", post.in_reply_to))
        return refs

    def _tweet_json(self, post: _Post, fields: set[str]) -> dict[str, Any]:
        out: dict[str, Any] = {"id": post.id, "text": post.text,
                               "edit_history_tweet_ids": [post.id]}
        optional: dict[str, Any] = {
            "author_id": post.author_id, "conversation_id": post.conversation_id,
            "created_at": post.created_at, "reply_settings": post.reply_settings}
        if post.in_reply_to:
            optional["in_reply_to_user_id"] = post.in_reply_to_user_id
        if self._references(post):
            optional["referenced_tweets"] = [{"type": kind, "id": ref_id}
                                             for kind, ref_id in self._references(post)]
        if post.mentions:
            optional["entities"] = {"mentions": [self._entity(n, s, e)
                                                 for n, s, e in post.mentions]}
        out.update({k: v for k, v in optional.items() if k in fields})
        return out

    def _entity(self, username: str, start: int, end: int) -> dict[str, Any]:
        entity: dict[str, Any] = {"start": start, "end": end, "username": username}
        user = self._users.get(username.lower())
        if user is not None:
            entity["id"] = user.id
        return entity

    def _user_json(self, user: _User, fields: set[str]) -> dict[str, Any]:
        out: dict[str, Any] = {"id": user.id, "name": user.name, "username": user.username}
        if "protected" in fields:
            out["protected"] = False
        return out

    def _user_by_id(self, user_id: str) -> _User:
        return next(u for u in self._users.values() if u.id == user_id)

    def _create(self, author: _User, text: str, parent: _Post | None,
                reply_settings: str, quoted: _Post | None = None) -> _Post:
        post_id = str(self._next_post)
        self._next_post += 1
        post = _Post(id=post_id, author_id=author.id, text=text,
                     created_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                     conversation_id=parent.conversation_id if parent else post_id,
                     in_reply_to=parent.id if parent else None,
                     in_reply_to_user_id=parent.author_id if parent else None,
                     mentions=extract_mentions(text), reply_settings=reply_settings,
                     quoted=quoted.id if quoted else None)
        self._posts[post_id] = post
        return post

    def _post_for(self, reference: str) -> _Post:
        match = _REF.fullmatch(reference.strip())
        post = self._posts.get(match.group(1)) if match else None
        if post is None:
            raise ValueError(f"no such post in the X emulator: {reference!r}")
        return post

    def _url(self, post: _Post) -> str:
        return f"https://x.com/{self._user_by_id(post.author_id).username}/status/{post.id}"


def _not_authorized(post_id: str) -> Reply:
    # A post of a protected account: 200 with only `errors`, as X answers.
    return Reply(200, {"errors": [{
        "value": post_id, "detail": f"Sorry, you are not authorized to see the Tweet with "
        f"id: [{post_id}].", "title": "Authorization Error", "resource_type": "tweet",
        "parameter": "id", "resource_id": post_id,
        "type": "https://api.twitter.com/2/problems/not-authorized-for-resource"}]})


def _unsupported_auth() -> Reply:
    return _problem(403, "Unsupported Authentication", (
        "Authenticating with OAuth 2.0 Application-Only is forbidden for this endpoint.  "
        "Supported authentication types are [OAuth 1.0a User Context, OAuth 2.0 User "
        "Context]."), "https://api.twitter.com/2/problems/unsupported-authentication")


__all__ = ["XEmulator", "extract_mentions", "weighted_length"]
