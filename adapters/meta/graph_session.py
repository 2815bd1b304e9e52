"""A Graph API session over httpx: what Threads, Instagram and Facebook sessions share.

Every request carries the token in an `Authorization: Bearer` header, never in the URL, so no
log line and no error message can show it; no message text is ever logged either. httpx never
retries on its own, and nothing here retries a write: a failure after the request that makes a
post visible was handed over says `maybe_sent=True` and leaves the decision to the ledger.

A failed request becomes the one tactful error of core/send/answers.py (docs/sending.md, "One
answer per HTTP answer"). Meta's facts are said here once (`means`): the Graph API answers most
failures HTTP 400 and says what they are in `error.code` (4, 17, 32, 613 and 80000–80099: rate
limits; 102, 190: the token; 10, 200–299: permissions; 1, 2 and `is_transient`: Meta's side),
answers a missing object and an unreadable one alike (400, code 100), and says how long to
wait in `X-App-Usage` / `X-Business-Use-Case-Usage` (read by the shared mapping). The
container publishing of Threads and Instagram (create, wait until processed, publish) is
`await_container`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from tactful.adapters.meta.graph import (
    AUTH_CODES,
    MISSING_CODE,
    PERMISSION_CODE,
    RATE_LIMIT_CODES,
    TRANSIENT_CODES,
    encode_cursor,
)
from tactful.core.errors import TactfulError
from tactful.core.send.adapter import Forbidden, Inbound, Page
from tactful.core.send.answers import Answer, clip, error_for

PAGE_MAX = 100  # the most items one Graph list request returns


class GraphSession:
    """One token, one httpx client, every failure mapped. Subclasses add the platform."""

    platform = "graph"
    product = "Meta"  # how messages name the platform's owner: "Threads says …"

    def __init__(self, root: str, token: str, timeout: float) -> None:
        self._timeout = timeout
        self._client = httpx.Client(
            base_url=root,
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(timeout),
            follow_redirects=False,
            # A proxy from the environment must never capture traffic meant for a loopback
            # emulator; the real platform still honours the operator's proxy settings.
            trust_env=not is_loopback(root),
        )

    def close(self) -> None:
        self._client.close()

    # ---- one request, every failure mapped ---------------------------------------------

    def _call(self, method: str, path: str, *, params: dict[str, str] | None = None,
              data: dict[str, str] | None = None, handed_over: bool = False,
              missing: str | None = None, unreadable: str | None = None) -> dict[str, Any]:
        """One request; the JSON object it answers, or a tactful error (never an httpx one).

        `handed_over` marks the request that makes a post visible: a failure that leaves its
        outcome unknown (5xx, a timeout after sending) then says maybe_sent=True. `missing`
        and `unreadable` are for reads of one object, which the Graph API refuses with HTTP
        400, code 100 whether the object does not exist or cannot be read with this token:
        `missing` names the object, so that refusal is "not found" (404); `unreadable` is for
        an object known to exist, so that refusal is a refusal to show it (403), in its words."""
        what = f"{method} {path.split('?')[0]}"
        try:
            response = self._client.request(method, path, params=params, data=data)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout,
                httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise error_for(Answer(self.platform, None, write=handed_over, failure="connect",
                                   what=what, detail=type(exc).__name__)) from exc
        except httpx.TimeoutException as exc:
            raise error_for(Answer(self.platform, None, write=handed_over, failure="timeout",
                                   what=what, waited=self._timeout)) from exc
        except httpx.HTTPError as exc:
            raise error_for(Answer(self.platform, None, write=handed_over, failure="broken",
                                   what=what, detail=type(exc).__name__)) from exc
        body = _json(response)
        if response.status_code >= 400 or (isinstance(body, dict) and "error" in body):
            raise error_for(self._answer(response, body, what, handed_over=handed_over,
                                         missing=missing, unreadable=unreadable))
        if not isinstance(body, dict):
            raise self._odd(f"{what}: the answer was not a JSON object", write=handed_over)
        return body

    def _list(self, path: str, params: dict[str, str]) -> list[dict[str, Any]]:
        """The `data` of one page of a Graph list (no paging: callers bound what they read)."""
        body = self._call("GET", path, params=params)
        data = body.get("data")
        return [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []

    def _answer(self, response: httpx.Response, body: Any, what: str, *, handed_over: bool,
                missing: str | None, unreadable: str | None) -> Answer:
        error = error_of(body)
        status = response.status_code
        meant = means(status, error)
        hint = ""
        if (meant or status) in (400, 404) and code_of(error) in (None, MISSING_CODE):
            if unreadable is not None:
                meant, hint = 403, unreadable
            elif missing is not None:
                meant = 404
                hint = (f"{self.product} says the same of an object this token may not read; "
                        "check the reference")
        message = error.get("message")
        return Answer(self.platform, status, write=handed_over, headers=dict(response.headers),
                      detail=message if isinstance(message, str) else "", code=code_of(error),
                      means=meant, what=what, missing=missing, hint=hint)

    def _odd(self, detail: str, *, write: bool = False) -> TactfulError:
        """An answer that came but cannot be used: the one mapping's "unreadable"."""
        return error_for(Answer(self.platform, None, write=write, failure="unreadable",
                                detail=detail))

    def _id(self, body: Mapping[str, Any], what: str, *, maybe_sent: bool) -> str:
        value = body.get("id")
        if isinstance(value, str) and value:
            return value
        raise self._odd(f"{what} answered without an id", write=maybe_sent)

    # ---- container publishing (Threads, Instagram) ---------------------------------------

    def _await_container(self, container: str, *, checks: int, interval: float,
                         sleep: Callable[[float], None], field: str = "status") -> None:
        """Ask until Meta finished processing a media container. Still in progress after
        every check: publish anyway; Meta refuses an unready container with an error, and
        that refusal publishes nothing. `field` is where the state is said (`status` on
        Threads, `status_code` on Instagram)."""
        fields = "status,error_message" if field == "status" else field
        for attempt in range(checks):
            body = self._call("GET", f"/{container}", params={"fields": fields})
            status = str(body.get(field, "")).upper()
            if status == "FINISHED":
                return
            if status in ("ERROR", "EXPIRED"):
                why = clip(str(body.get("error_message") or status.lower()))
                raise Forbidden(self.platform, f"{self.product} could not process the post "
                                f"({why})")
            if attempt + 1 < checks:
                sleep(interval)


# ---- answers --------------------------------------------------------------------------------

def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def error_of(body: Any) -> dict[str, Any]:
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else {}


def code_of(error: Mapping[str, Any]) -> int | None:
    code = error.get("code")
    if isinstance(code, bool):
        return None
    if isinstance(code, int):
        return code
    if isinstance(code, str) and code.isdigit():
        return int(code)
    return None


def means(status: int, error: Mapping[str, Any]) -> int | None:
    """The status a Graph API error code stands for. An error object in a 2xx answer is a
    refusal (400)."""
    code = code_of(error) or 0
    if code in RATE_LIMIT_CODES or 80000 <= code < 80100:
        return 429
    if code in AUTH_CODES:
        return 401
    if code == PERMISSION_CODE or 200 <= code <= 299:
        return 403
    if code in TRANSIENT_CODES or error.get("is_transient") is True:
        return 503
    return 400 if status < 400 else None


# ---- inbound pages -----------------------------------------------------------------------

def page_of(found: list[Inbound], floor: tuple[int, frozenset[str]] | None,
            since: str | None, wanted: int) -> Page:
    """Without a cursor the newest `wanted`; with one, the oldest `wanted` after it, and the
    cursor past the last one delivered."""
    found.sort(key=lambda item: (item.at, item.post.id))
    if floor is None:
        chosen = found[-wanted:]
    else:
        at, seen = floor
        chosen = [item for item in found if _after(item.at, item.post.id, at, seen)][:wanted]
    if not chosen:
        return Page((), since)
    last = int(chosen[-1].at.timestamp())
    ids = [item.post.id for item in chosen if int(item.at.timestamp()) == last]
    if floor is not None and floor[0] == last:
        ids.extend(floor[1])  # still the same second: remember what was delivered before
    return Page(tuple(chosen), encode_cursor(last, ids))


def _after(when: datetime, object_id: str, at: int, seen: frozenset[str]) -> bool:
    second = int(when.timestamp())
    return second > at or (second == at and object_id not in seen)


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
