"""The X session: tweepy.Client (API v2) behind the tactful Session contract.

Every tweepy or requests failure becomes a tactful error here: `_answer` reads the facts (the
status, the headers, X's words, how the transport failed) and the one mapping of
core/send/answers.py decides (docs/sending.md, "One answer per HTTP answer"); nothing of the
SDK escapes a method. X's own facts stay here: what a 403 means, which X says only in words
(reply restrictions, app-only auth, duplicate content), and which 24-hour allowance a 429
used up. Writes are never retried: requests' transport is mounted with retries off, and
tweepy's own wait-and-retry on a 429 stays off.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import requests
import tweepy
import urllib3
from requests.adapters import HTTPAdapter

from tactful.adapters.x.adapter import PLATFORM, post_url
from tactful.adapters.x.adapter import mentions as find_mentions
from tactful.core.errors import BadInput, ConfigError, MissingCredential, Refused, TactfulError
from tactful.core.memory.handles import normalize_handle
from tactful.core.send.adapter import (
    Author,
    Inbound,
    Page,
    Party,
    PostRef,
    Sent,
)
from tactful.core.send.answers import Answer, error_for

T = TypeVar("T")

# tweepy, requests-oauthlib and oauthlib write request bodies (the post's text) and auth headers
# (credentials) at DEBUG; tactful never logs either, whatever level the root logger is at.
for _name in ("tweepy", "requests_oauthlib", "oauthlib"):
    logging.getLogger(_name).setLevel(logging.INFO)

# What the author read asks for: the post's author, and everyone a reply to it reaches.
AUTHOR_EXPANSIONS = ("author_id", "entities.mentions.username", "in_reply_to_user_id",
                     "referenced_tweets.id", "referenced_tweets.id.author_id")
AUTHOR_TWEET_FIELDS = ("author_id", "conversation_id", "entities", "in_reply_to_user_id",
                       "referenced_tweets")
MENTION_SET = "in the thread's mention set"
PARENT_AUTHOR = "parent author"
REFERENCE_ROLES = {"replied_to": PARENT_AUTHOR, "quoted": "quoted author",
                   "retweeted": "reposted author"}
API_HOST = "https://api.twitter.com"  # tweepy hard-codes it; the transport below may move it
MENTIONS_PAGE = 100  # the most X returns in one request to the mentions timeline
_X_USERNAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


class _Transport(HTTPAdapter):
    """Every request to the X API: a timeout always, no retries, and an optional new server.

    tweepy passes no timeout and cannot be given another host, so both are applied here, where
    requests hands the prepared request to the network. The OAuth 1.0a signature was already
    made for api.twitter.com; the emulator does not check it, and the real platform is never
    rewritten.
    """

    def __init__(self, base_url: str | None, timeout: float) -> None:
        super().__init__(max_retries=0)  # a retried POST could post twice
        self._base = urlsplit(base_url) if base_url else None
        self._timeout = (min(timeout, 5.0), timeout)  # (connect, read) seconds

    def send(self, request: requests.PreparedRequest, stream: bool = False,
             timeout: Any = None, verify: Any = True, cert: Any = None,
             proxies: Any = None) -> requests.Response:
        if self._base is not None and request.url:
            parts = urlsplit(request.url)
            request.url = urlunsplit((self._base.scheme, self._base.netloc,
                                      self._base.path.rstrip("/") + parts.path,
                                      parts.query, ""))
        return super().send(request, stream=stream, timeout=timeout or self._timeout,
                            verify=verify, cert=cert, proxies=proxies)


def _check_base_url(base_url: str | None) -> None:
    if base_url is None:
        return
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
        raise ConfigError(f"platforms.x.base_url: expected an http(s) URL such as "
                          f"http://127.0.0.1:8080, found {base_url[:80]!r}; fix or remove it")


class XSession:
    """A connected X account. Reads use the app bearer token until `enable_posting`."""

    def __init__(self, bearer_token: str, *, base_url: str | None = None,
                 timeout: float = 10.0) -> None:
        _check_base_url(base_url)
        self._base_url = base_url
        self._timeout = timeout
        self._bearer = bearer_token
        self._user_keys: dict[str, str] | None = None
        self._own: str | None = None  # the persona's user id, found once, if needed
        self._client = self._make_client()

    def _make_client(self) -> tweepy.Client:
        keys = self._user_keys or {}
        client = tweepy.Client(bearer_token=self._bearer, wait_on_rate_limit=False,
                               consumer_key=keys.get("consumer_key"),
                               consumer_secret=keys.get("consumer_secret"),
                               access_token=keys.get("access_token"),
                               access_token_secret=keys.get("access_token_secret"))
        if self._base_url is not None:
            # Proxy settings from the environment are chosen for api.twitter.com (before the
            # transport moves the request): a loopback emulator must not go through them.
            client.session.trust_env = False
        client.session.mount(API_HOST, _Transport(self._base_url, self._timeout))
        return client

    def _call(self, what: str, call: Callable[[], T], *, write: bool = False) -> T:
        try:
            return call()
        except TactfulError:
            raise
        except Exception as exc:  # every SDK failure becomes a tactful error, mapped below
            raise translate(exc, what, write=write, user_auth=self._user_auth,
                            timeout=self._timeout) from exc

    @property
    def _user_auth(self) -> bool:
        return self._user_keys is not None

    # ---- reads ----------------------------------------------------------------------------
    # Each public method runs its request *and* the reading of the answer inside `_call`, so an
    # answer of an unexpected shape also becomes a tactful error, never an AttributeError.

    def author(self, post: PostRef) -> Author:
        return self._call("looking up the post's author", lambda: self._author(post))

    def _author(self, post: PostRef) -> Author:
        """One request (GET /2/tweets/{id}) names the author and, with the expansions, every
        account the reply reaches by being in this thread (see `_parties`)."""
        answer = self._client.get_tweet(
            post.id, expansions=list(AUTHOR_EXPANSIONS), tweet_fields=list(AUTHOR_TWEET_FIELDS),
            user_fields=["username", "name"], user_auth=self._user_auth)
        tweet, users = answer.data, answer.includes.get("users") or []
        if tweet is None:
            raise _missing_post(post, answer.errors)
        user = next((u for u in users if u.id == tweet.author_id), None)
        if user is None:
            raise _odd_answer("the post came without its author")
        thread = str(tweet.conversation_id or tweet.id)
        referenced = answer.includes.get("tweets") or []
        return Author(handle=normalize_handle(user.username, PLATFORM), id=str(user.id),
                      display_name=user.name, thread=thread,
                      url=post_url(str(tweet.id), user.username),
                      parties=_parties(tweet, users, referenced, answer.errors or []))

    def resolve(self, handle: str) -> str | None:
        """The user id of a username with one request (GET /2/users/by/username/{name});
        None only when X answers resource-not-found. A failed read raises (RateLimited,
        Unauthorized, PlatformDown), and so does an answer without the user or a "not found"."""
        name = normalize_handle(handle, PLATFORM)
        if len(name) > 15 or not set(name) <= _X_USERNAME_CHARS:
            return None  # not an X username at all: no account can have it

        def lookup() -> str | None:
            answer = self._client.get_user(username=name, user_auth=self._user_auth)
            if answer.data is not None:
                return str(answer.data.id)
            errors = [e for e in answer.errors or [] if isinstance(e, dict)]
            if any(str(e.get("type", "")).endswith("resource-not-found") for e in errors):
                return None  # X says no account has this username
            # No user and no "not found" (suspended, withheld, an odd answer): the account
            # may exist, so this is no answer at all, never "unknown".
            said = "; ".join(str(e.get("detail") or e.get("title") or "") for e in errors)
            raise Refused(f"x: X did not say whose handle @{name} is "
                          f"({said[:160] or 'no detail'}), so it cannot be checked; "
                          "nothing was sent")

        return self._call("looking up a handle", lookup)

    def fetch_inbound(self, since: str | None, limit: int) -> Page:
        if since is not None and not (since.isascii() and since.isdigit()):
            raise BadInput(f"x: inbound cursor {since[:40]!r} is not a post id; pass the cursor "
                           "a previous fetch returned, or none to start from the latest")
        if limit < 1:
            raise BadInput(f"x: fetch limit {limit} must be at least 1")
        own_id = self._own_id()
        return self._call("reading mentions", lambda: self._mentions(own_id, since, limit))

    def _mentions(self, own_id: str, since: str | None, limit: int) -> Page:
        # X answers newest first. From a cursor, ask for a full page and keep its oldest
        # `limit`, so the next fetch starts right after them and nothing inside the page is
        # skipped; without a cursor, only the latest are wanted.
        size = MENTIONS_PAGE if since is not None else max(5, min(limit, MENTIONS_PAGE))
        answer = self._client.get_users_mentions(
            own_id, since_id=since, max_results=size, expansions=["author_id"],
            tweet_fields=["author_id", "conversation_id", "created_at", "entities"],
            user_fields=["username", "name"], user_auth=self._user_auth)
        users = {u.id: u for u in answer.includes.get("users") or []}
        tweets = sorted((t for t in answer.data or [] if str(t.author_id) != own_id),
                        key=lambda t: t.id)
        kept = tweets[:limit] if since is not None else tweets[-limit:]
        items = [item for t in kept if (item := _inbound(t, users.get(t.author_id)))]
        cursor = str(kept[-1].id) if kept else since
        return Page(items=tuple(items), cursor=cursor)

    def _own_id(self) -> str:
        """The persona's own user id: one request (GET /2/users/me), the first time only."""
        if self._own is None:
            def me() -> str:
                answer = self._client.get_me(user_auth=self._user_auth)
                if answer.data is None:
                    raise _odd_answer("X did not say which account the credentials are of")
                return str(answer.data.id)

            self._own = self._call("finding the persona's own account", me)
        return self._own

    # ---- the write --------------------------------------------------------------------------

    def enable_posting(self, credentials: Mapping[str, str]) -> None:
        fields = ("consumer_key", "consumer_secret", "access_token", "access_token_secret")
        missing = [f for f in fields if not credentials.get(f)]
        if missing:
            raise MissingCredential(f"x: no credential {missing[0]!r} was given; store it with: "
                                    f"tactful credentials set x {missing[0]}")
        self._user_keys = {f: credentials[f] for f in fields}
        self._client.session.close()
        self._client = self._make_client()

    def send(self, text: str, *, reply_to: PostRef | None, to: str | None,
             mentions: Mapping[str, str | None]) -> Sent:
        # X makes mentions from "@name" in the text itself; `mentions` needs no facets here.
        if self._user_keys is None:
            raise TactfulError("x: send was called before enable_posting: the posting "
                               "credentials were never given (a bug in the caller)")
        if reply_to is None and to is not None and normalize_handle(to, PLATFORM) not in \
                find_mentions(text):
            # The guards checked this exact text: adding "@to" here would post something else.
            raise BadInput(f"x: a post to @{to} reaches them only as a mention; put @{to} in "
                           "--text, or pass --reply-to to answer one of their posts")
        in_reply_to = reply_to.id if reply_to is not None else None

        def post() -> Sent:
            answer = self._client.create_tweet(text=text, in_reply_to_tweet_id=in_reply_to,
                                               user_auth=True)
            data = answer.data if isinstance(answer.data, dict) else {}
            post_id = str(data.get("id") or "")
            if not post_id.isdigit():
                # X took the post (2xx) but did not say its id: it is out, id unknown.
                raise _odd_answer("X accepted the post but returned no id", maybe_sent=True)
            return Sent(id=post_id, url=post_url(post_id))

        what = f"replying to post {in_reply_to}" if in_reply_to else "posting"
        return self._call(what, post, write=True)

    def close(self) -> None:
        self._client.session.close()


def _inbound(tweet: tweepy.Tweet, user: tweepy.User | None) -> Inbound | None:
    if user is None:
        return None  # X withheld the author (suspended, protected): nothing to answer
    handle = normalize_handle(user.username, PLATFORM)
    post_id = str(tweet.id)
    thread = str(tweet.conversation_id or tweet.id)
    url = post_url(post_id, user.username)
    named = [m.get("username", "") for m in (tweet.entities or {}).get("mentions", [])]
    found = [normalize_handle(n, PLATFORM) for n in named if n] or find_mentions(tweet.text)
    return Inbound(
        post=PostRef(platform=PLATFORM, id=post_id, url=url, handle=handle),
        author=Author(handle=handle, id=str(user.id), display_name=user.name, thread=thread,
                      url=url),
        text=tweet.text, at=tweet.created_at or datetime.now(UTC), thread=thread,
        mentions=tuple(dict.fromkeys(found)))


def _parties(tweet: tweepy.Tweet, users: list[tweepy.User], referenced: list[tweepy.Tweet],
             errors: list[dict[str, Any]]) -> tuple[Party, ...]:
    """Everyone besides the author that a reply to `tweet` reaches, from one answer.

    On X a reply's mention set starts with the author of the post it answers and every
    account that post mentions (its entities.mentions: X keeps them in the reply's leading
    @names, so each is notified); the account that post itself replies to, and the author of
    a post it quotes or reposts, are in its thread too. Handles and ids come from
    includes.users; an account X left out (suspended, protected) keeps what the post says.
    A referenced post X reports deleted (`errors`, resource-not-found) has no author left to
    reach; one X withholds without saying so refuses, since its author cannot be checked."""
    gone = {str(e.get("resource_id") or e.get("value")) for e in errors
            if isinstance(e, dict) and e.get("resource_type") == "tweet"
            and str(e.get("type", "")).endswith("resource-not-found")}
    by_id = {str(u.id): u for u in users}
    by_name = {str(u.username).lower(): u for u in users}
    found: dict[tuple[str, str | None, str | None], Party] = {}

    def add(role: str, *, user_id: object = None, username: object = None) -> None:
        user = by_id.get(str(user_id)) if user_id is not None else None
        if user is None and isinstance(username, str):
            user = by_name.get(username.lower())
        name = user.username if user is not None else username
        handle = normalize_handle(name, PLATFORM) if isinstance(name, str) and name else None
        ident = str(user.id) if user is not None else (str(user_id) if user_id else None)
        if handle is None and ident is None:
            raise _odd_answer(f"the post names a {role} without a username or id")
        found.setdefault((role, handle, ident), Party(role, handle=handle, id=ident))

    for mention in (tweet.entities or {}).get("mentions") or []:
        if isinstance(mention, dict):
            add(MENTION_SET, user_id=mention.get("id"), username=mention.get("username"))
    if tweet.in_reply_to_user_id is not None:
        add(PARENT_AUTHOR, user_id=tweet.in_reply_to_user_id)
    authors = {str(t.id): t.author_id for t in referenced}
    for ref in tweet.referenced_tweets or []:
        role = REFERENCE_ROLES.get(str(ref.type))
        if role is None:
            continue
        author_id = authors.get(str(ref.id))
        if author_id is not None:
            add(role, user_id=author_id)
        elif role != PARENT_AUTHOR and str(ref.id) not in gone:
            # (the parent's author is in_reply_to_user_id already; a deleted post has none)
            raise Refused(f"x: the post {ref.type.replace('_', ' ')} post {ref.id}, and X "
                          "did not say who wrote that (protected or withheld), so they cannot "
                          "be checked; nothing was sent")
    return tuple(found.values())


def _missing_post(post: PostRef, errors: list[dict[str, Any]]) -> TactfulError:
    """X answers a post it will not show with 200 and only `errors`: the one mapping decides,
    on the status X's error type stands for (not-authorized-for-resource: 403, else 404)."""
    first = errors[0] if errors and isinstance(errors[0], dict) else {}
    kind = str(first.get("type", ""))
    hidden = kind.endswith("not-authorized-for-resource")
    return error_for(Answer(
        PLATFORM, 200, means=403 if hidden else 404, code=kind.rsplit("/", 1)[-1] or None,
        detail=str(first.get("detail") or first.get("title") or ""),
        what="looking up the post", missing=f"post {post.id}",
        hint=f"post {post.id} is protected or hidden from this app" if hidden else
        "it does not exist or was deleted; check the --reply-to link"))


def _odd_answer(detail: str, *, maybe_sent: bool = False) -> TactfulError:
    """An answer tweepy read but tactful cannot use; `maybe_sent` for the write X took."""
    return error_for(Answer(PLATFORM, None, failure="unreadable", write=maybe_sent,
                            detail=detail))


# ---- what X answered, as tactful errors -------------------------------------------------------

_POSTING_KEYS = "consumer_key, consumer_secret, access_token, access_token_secret"


def translate(exc: Exception, what: str, *, write: bool, user_auth: bool,
              timeout: float) -> TactfulError:
    """The tactful error for a failure of tweepy or requests while doing `what`: the facts are
    read here, the decision is the one mapping's (core/send/answers.py)."""
    return error_for(_answer(exc, what, write=write, user_auth=user_auth, timeout=timeout))


def _answer(exc: Exception, what: str, *, write: bool, user_auth: bool,
            timeout: float) -> Answer:
    if isinstance(exc, tweepy.HTTPException):
        status = _status(exc)
        headers = dict(exc.response.headers) if exc.response is not None else {}
        detail, hint = _detail(exc), ""
        if status == 429:
            detail = _limit_name(headers) or detail
        elif status == 401:
            which = f"the posting keys ({_POSTING_KEYS})" if write or user_auth \
                else "bearer_token"
            hint = f"check {which}"
        elif status == 403:
            hint = _forbidden_hint(detail, what, write=write)
        elif 400 <= status < 500:
            hint = "check the text (see docs/adapters/x.md) and the --reply-to post"
        if not status:
            return Answer(PLATFORM, None, write=write, failure="unreadable", what=what,
                          detail=detail)
        return Answer(PLATFORM, status, write=write, headers=headers, detail=detail,
                      what=what, hint=hint)
    if isinstance(exc, requests.exceptions.JSONDecodeError):  # an answer, not JSON
        return Answer(PLATFORM, None, write=write, failure="unreadable", what=what,
                      detail="the answer is not JSON")
    if isinstance(exc, requests.exceptions.ConnectTimeout) or _never_connected(exc):
        return Answer(PLATFORM, None, write=write, failure="connect", what=what,
                      detail=type(exc).__name__)
    if isinstance(exc, requests.exceptions.Timeout):
        return Answer(PLATFORM, None, write=write, failure="timeout", what=what,
                      waited=timeout)
    if isinstance(exc, requests.exceptions.RequestException):
        return Answer(PLATFORM, None, write=write, failure="broken", what=what,
                      detail=type(exc).__name__)
    return Answer(PLATFORM, None, write=write, failure="unreadable", what=what,
                  detail=type(exc).__name__)


def _never_connected(exc: Exception) -> bool:
    """Connection refused or no such host: the request never left this machine."""
    if not isinstance(exc, requests.exceptions.ConnectionError) or not exc.args:
        return False
    reason = getattr(exc.args[0], "reason", None)
    return isinstance(reason, urllib3.exceptions.NewConnectionError)


def _status(exc: tweepy.HTTPException) -> int:
    return int(getattr(exc.response, "status_code", 0))


def _detail(exc: tweepy.HTTPException) -> str:
    """X's own words about a refusal, on one short line (they never quote the post's text)."""
    words = "; ".join(str(m) for m in exc.api_messages)
    if not words:
        try:
            body = exc.response.json()
        except ValueError:
            body = None
        if isinstance(body, dict):
            words = str(body.get("detail") or body.get("title") or "")
    words = " ".join(words.split())
    return (words[:160] + "…" if len(words) > 160 else words) or "no detail"


def _forbidden_hint(detail: str, what: str, *, write: bool) -> str:
    """What X's 403 means, which X says only in words (X's facts, kept here)."""
    lowered = detail.lower()
    if "authentication" in lowered and ("application-only" in lowered
                                        or "unsupported" in lowered):
        return (f"{what} needs user-context credentials and the app bearer token is not one: "
                f"store the posting keys ({_POSTING_KEYS})")
    if "duplicate" in lowered:
        return "X refuses duplicate content: this exact text was already posted"
    if write and what.startswith("replying"):
        return ("X does not allow this reply. X restricts replies: the author may limit who "
                "can reply, and on the lower API tiers a reply is allowed only to a post that "
                "mentions or quotes the persona")
    return ""


def _limit_name(headers: Mapping[str, str]) -> str:
    if headers.get("x-user-limit-24hour-remaining", "").strip() == "0":
        return "the account's 24-hour allowance is used up"
    if headers.get("x-app-limit-24hour-remaining", "").strip() == "0":
        return "the app's 24-hour allowance is used up"
    return ""
