"""One answer per HTTP answer: what a platform said about a request, as the one tactful error.

Every adapter's session extracts the same few facts from a failed request (the HTTP status, or
how the transport failed; whether the request was the write that hands a post over; the
headers; the platform's own words and error code) and asks `error_for` for the decision, so the
same answer means the same thing on every platform: the same error class, exit code, batch
behaviour and ledger outcome (the table in docs/sending.md, "One answer per HTTP answer").
Platform facts stay in the adapters, which say them through `means` (a Graph API code 17 at
HTTP 400 *means* 429), `missing` and `hint`; nothing here knows a platform or imports an SDK.

The rule:
- 429 → RateLimited, with the wait parsed once from the headers (`retry_after`);
- 401 → Unauthorized;
- 403 and 451 → Forbidden;
- 404 and 410 → BadInput naming what was not found; 400, 422 and every other 4xx → BadInput
  naming what was refused (the platform answered and took nothing);
- 408, 5xx, a timeout, a connection that broke after the request left, an answer that could
  not be read → PlatformDown, with `maybe_sent` for a write (below);
- a connection that was never made → PlatformDown, never `maybe_sent`.

`maybe_sent`, precisely: True only when the request was a `write` (the request that makes a
post visible) and it may have reached the platform without the platform saying it refused it:
a 5xx other than 501, a 408, a timeout waiting for the answer, a connection that broke after
the request was handed to it, a 2xx/3xx answer that could not be read. A connect error
(refused, no such host, connect timeout, no free connection in the pool) never is: the
request never left this machine. A 4xx other than 408 never is: the platform answered that it
refused it. A 501 never is: the server does not implement the request, so it took nothing.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import Any, Literal

from tactful.core.errors import BadInput, TactfulError
from tactful.core.send.adapter import Forbidden, PlatformDown, RateLimited, Unauthorized

# How a request failed when no HTTP answer came (`Answer.status` is None):
#   "connect"    the connection was never made (refused, DNS, connect timeout, pool timeout):
#                the request never left this machine
#   "timeout"    the request left, and no answer came in time
#   "broken"     the request left, and the connection failed before a whole answer came
#   "unreadable" an answer came that could not be read (garbled, of an unexpected shape)
Failure = Literal["connect", "timeout", "broken", "unreadable"]

_RESET = re.compile(r"^(?P<family>[a-z0-9-]*limit[a-z0-9-]*)-reset$")
_EPOCH_FLOOR = 1_000_000_000.0  # a reset above this is a Unix time, below it seconds from now
_USAGE_HEADERS = ("x-business-use-case-usage", "x-app-usage", "x-ad-account-usage")
_DETAIL_SIZE = 200


@dataclass(frozen=True)
class Answer:
    """What an adapter could learn from one failed request, whatever its library."""

    platform: str
    # The HTTP status of the answer; None when no answer came (then `failure` says why).
    status: int | None
    # The request is the one that hands a post over (create a tweet, a record, publish a
    # Threads container, sendMessage): had the platform taken it, the post would be out.
    write: bool = False
    failure: Failure | None = None  # when `status` is None
    headers: Mapping[str, str] = field(default_factory=dict)
    detail: str = ""  # the platform's own words, short; never a post's text nor a secret
    code: str | int | None = None  # the platform's error code or name, as it said it
    # The status a platform's error code stands for, when it says more than the HTTP status
    # (Threads: Graph code 17 at HTTP 400 is a rate limit, 429; Bluesky: ExpiredToken at 400
    # is a refused session, 401). The adapter knows its platform; the decision is made here.
    means: int | None = None
    what: str = ""  # what was being done: "replying to post 123", "GET /me"
    missing: str | None = None  # what a 404 names: "post https://x.com/ada/status/1"
    hint: str = ""  # how to fix it, in the adapter's words: "check bearer_token"
    waited: float | None = None  # for a timeout: the seconds waited


def error_for(answer: Answer) -> TactfulError:
    """The one tactful error for a failed request (see the module's rule)."""
    status = answer.means if answer.means is not None else answer.status
    platform = answer.platform
    if status is None or status < 400:
        return _down(answer, status)
    said = _said(answer, status)
    if status == 429:
        return RateLimited(platform, retry_after(answer.headers), _with_hint(said, answer))
    if status == 401:
        return Unauthorized(platform, _with_hint(said, answer))
    if status in (403, 451):
        return Forbidden(platform, _with_hint(said, answer))
    if status == 408 or status >= 500:
        return _down(answer, status)
    if status in (404, 410):
        thing = answer.missing or "what was asked for"
        head = f"{platform}: {thing} was not found"
    else:
        head = f"{platform}: the platform refused the request as invalid"
    return BadInput(_with_hint(f"{head} ({said}); nothing was sent", answer))


def maybe_sent(answer: Answer) -> bool:
    """Whether a failed request may still have put the post out (the module's definition)."""
    status = answer.means if answer.means is not None else answer.status
    if not answer.write:
        return False
    if status is None:
        return answer.failure != "connect"
    if status < 400:
        return True  # the platform answered yes, in a way that could not be read
    return status == 408 or (status >= 500 and status != 501)


def retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds until the platform takes requests again, from an answer's headers: the longest
    wait any of them names (retrying earlier than one of them allows is refused again), or
    None when none says.

    - `Retry-After`: seconds, or an HTTP date (RFC 9110);
    - `<family>-reset` for every rate-limit family (`x-rate-limit`, `x-user-limit-24hour`,
      `x-app-limit-24hour` on X; `ratelimit` on Bluesky; `x-ratelimit`): a Unix time when
      above 10^9, otherwise seconds from now; counted unless `<family>-remaining` says
      requests are left in that family (the family that is used up decides);
    - Meta's usage headers (`X-Business-Use-Case-Usage`, `X-App-Usage`):
      `estimated_time_to_regain_access`, in minutes.
    """
    now = time.time() if now is None else now
    lowered = {str(k).lower(): str(v).strip() for k, v in headers.items()}
    waits: list[float] = []
    given = lowered.get("retry-after")
    if given:
        seconds = _number(given)
        if seconds is None:
            seconds = _until_date(given, now)
        if seconds is not None:
            waits.append(seconds)
    for name, value in lowered.items():
        found = _RESET.match(name)
        if found is None:
            continue
        remaining = _number(lowered.get(f"{found['family']}-remaining", ""))
        if remaining is not None and remaining > 0:
            continue  # this family still has requests left: it is not what refused
        reset = _number(value)
        if reset is not None:
            waits.append(reset - now if reset > _EPOCH_FLOOR else reset)
    for name in _USAGE_HEADERS:
        if name in lowered:
            waits.extend(60.0 * m for m in _regain_minutes(lowered[name]))
    waits = [max(0.0, w) for w in waits if math.isfinite(w)]
    return max(waits) if waits else None


def clip(text: object, size: int = _DETAIL_SIZE) -> str:
    """Words for a message: on one line, at most `size` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= size else flat[:size] + "…"


# ---- wording ------------------------------------------------------------------------------------

def _down(answer: Answer, status: int | None) -> PlatformDown:
    while_ = f" while {answer.what}" if answer.what else ""
    detail = clip(answer.detail) if answer.detail else ""
    if status is not None and status >= 400:
        said = f"HTTP {status}{_code(answer)}{while_}" + (f": {detail}" if detail else "")
        if status == 501:
            said += " (the server does not implement this request)"
        wait = retry_after(answer.headers)
        if wait is not None:
            said += f"; it asks to retry in {wait:.0f} s"
    else:
        failure = answer.failure if status is None else "unreadable"
        if failure == "connect":
            head = "could not connect"
        elif failure == "timeout":
            head = (f"no answer within {answer.waited:g} s" if answer.waited is not None
                    else "no answer in time")
        elif failure == "unreadable":
            head = "unexpected answer" + (f" (HTTP {status})" if status is not None else "")
        else:
            head = "the connection failed"
        said = head + while_ + (f": {detail}" if detail else "")
    return PlatformDown(answer.platform, _with_hint(said, answer), maybe_sent=maybe_sent(answer))


def _said(answer: Answer, status: int) -> str:
    """"HTTP 400 (code 100) while posting: the platform's words"."""
    shown = answer.status if answer.status is not None else status
    text = f"HTTP {shown}{_code(answer)}"
    if answer.what:
        text += f" while {answer.what}"
    if answer.detail:
        text += f": {clip(answer.detail)}"
    return text


def _code(answer: Answer) -> str:
    return f" (code {answer.code})" if answer.code not in (None, "") else ""


def _with_hint(text: str, answer: Answer) -> str:
    return f"{text}; {answer.hint}" if answer.hint else text


def _number(raw: str) -> float | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _until_date(raw: str, now: float) -> float | None:
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # an HTTP date is always GMT
        when = when.replace(tzinfo=UTC)
    return when.timestamp() - now


def _regain_minutes(raw: str) -> list[float]:
    """Every `estimated_time_to_regain_access` in a Meta usage header (JSON: an object, or an
    object of lists of objects keyed by business id)."""
    try:
        usage: Any = json.loads(raw)
    except ValueError:
        return []
    entries: list[Any] = [usage]
    if isinstance(usage, dict):
        for value in usage.values():
            entries.extend(value if isinstance(value, list) else [value])
    found: list[float] = []
    for entry in entries:
        if isinstance(entry, dict):
            minutes = entry.get("estimated_time_to_regain_access")
            if isinstance(minutes, int | float) and not isinstance(minutes, bool) \
                    and minutes > 0:
                found.append(float(minutes))
    return found
