"""What the Graph API emulators (Instagram, Facebook) share: Meta's wire conventions on loopback.

Built on `adapters/emulation.py` (the loopback server, the request log, queued errors). Held
once here: the token check (a Bearer header, or `access_token` in the query as Meta also takes
it; missing or wrong: 401, code 190), any version path prefix (`/v23.0/…`, or none, as Meta's
servers take it), error bodies `{"error": {"message", "type", "code", "error_subcode",
"fbtrace_id"}}`, `fields` checked against what the node has (an unknown one: 400, code 100),
list pages (`limit`, `after`, newest first), Graph timestamps, and `rate_limit_next`, which
queues Meta's rate-limit answer with its usage headers. Standard library only.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tactful.adapters.emulation import Emulator, Reply, Request

_VERSION = re.compile(r"^/v[0-9]{1,3}(?:\.[0-9]{1,3})?(?=/)")


class GraphError(Exception):
    """An error answer, raised from deep in a handler up to `answer`."""

    def __init__(self, status: int, message: str, code: int = 100, *,
                 subcode: int | None = None, kind: str = "OAuthException") -> None:
        super().__init__(message)
        error: dict[str, Any] = {"message": message, "type": kind, "code": code,
                                 "fbtrace_id": "AemulatorTrace"}
        if subcode is not None:
            error["error_subcode"] = subcode
        self.reply = Reply(status, {"error": error})


def missing(node: str) -> GraphError:
    """What Meta answers for an object that does not exist or that this token may not read."""
    return GraphError(400, f"Unsupported get request. Object with ID '{node}' does not exist, "
                      "cannot be loaded due to missing permissions, or does not support this "
                      "operation", 100, subcode=33)


class GraphEmulator(Emulator):
    """Subclasses implement `route(method, node, edge, params)`; writes are POSTs."""

    name = "graph"

    def __init__(self, *, token: str, clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        self.token = token
        self._clock = clock
        self._state = threading.RLock()
        self._serial = 0
        self._last_at = 0

    def route(self, method: str, node: str, edge: str, params: dict[str, str]) -> Any:
        raise NotImplementedError

    def is_write(self, request: Request) -> bool:
        return request.method in ("POST", "DELETE")

    def answer(self, request: Request) -> Reply:
        try:
            params = dict(request.query)
            if request.method == "POST" and request.body:
                params.update(request.form())
            authorize(request, params, self.token)
            path = _VERSION.sub("", request.path)
            parts = path.strip("/").split("/")
            if not parts[0]:
                raise GraphError(400, "Unsupported request: no object named", 100)
            with self._state:
                return Reply(200, self.route(request.method, parts[0], "/".join(parts[1:]),
                                             params))
        except GraphError as error:
            return error.reply

    # ---- what tests use ---------------------------------------------------------------------

    def rate_limit_next(self, *, code: int = 4, minutes: int = 7,
                        match: Callable[[Request], bool] | None = None) -> None:
        """Answer the next matching request as Meta does when a rate limit is reached: HTTP 400
        (the real API answers 400, not 429), the code (4 app, 17 user, 32 page, 613 custom) and
        the usage headers, the business one saying when access comes back."""
        usage = {"call_count": 100, "total_cputime": 12, "total_time": 30}
        self.fail_next(400, {"error": {"message": f"(#{code}) Application request limit reached",
                                       "type": "OAuthException", "code": code,
                                       "is_transient": True, "fbtrace_id": "AemulatorTrace"}},
                       {"X-App-Usage": json.dumps(usage),
                        "X-Business-Use-Case-Usage": json.dumps({"0": [{
                            "type": "pages", **usage,
                            "estimated_time_to_regain_access": minutes}]})},
                       match=match)

    # ---- shared state -------------------------------------------------------------------------

    def _tick(self) -> int:
        """The time of a new object: unix seconds, strictly increasing."""
        self._last_at = max(int(self._clock()), self._last_at + 1)
        return self._last_at

    def _next(self) -> int:
        self._serial += 1
        return self._serial

def authorize(request: Request, params: Mapping[str, str], token: str) -> None:
    """The token from a Bearer (or OAuth) header, else the `access_token` parameter; 190 when
    it is missing or wrong."""
    header = request.headers.get("authorization", "")
    scheme, _, credential = header.partition(" ")
    given = credential.strip() if scheme.lower() in ("bearer", "oauth") else ""
    given = given or params.get("access_token", "")
    if not given:
        raise GraphError(401, "An active access token must be used to query this endpoint", 190)
    if given != token:
        raise GraphError(401, "Invalid OAuth access token - Cannot parse access token", 190,
                         subcode=463)


def fields(params: Mapping[str, str], known: frozenset[str], node_type: str) -> list[str]:
    """The `fields` asked for; an unknown one is refused as Meta refuses it."""
    names = [name.strip() for name in params.get("fields", "").split(",") if name.strip()]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise GraphError(400, f"(#100) Tried accessing nonexisting field ({unknown[0]}) on node "
                         f"type ({node_type})", 100)
    return names


def chosen(full: Mapping[str, Any], names: Sequence[str], default: Sequence[str]) -> dict[str, Any]:
    """The node as answered: `id` and the fields asked for (or the node's defaults)."""
    wanted = list(names) or list(default)
    return {"id": full["id"], **{k: full[k] for k in wanted if k in full and k != "id"}}


def integer(params: Mapping[str, str], key: str) -> int | None:
    raw = params.get(key)
    if raw is None:
        return None
    if not raw.isdigit():
        raise GraphError(400, f"(#100) Param {key} must be an integer", 100)
    return int(raw)


def page(items: Sequence[dict[str, Any]], params: Mapping[str, str]) -> dict[str, Any]:
    """One page of an already sorted list, as Graph pages it."""
    start = integer(params, "after") or 0
    limit = max(1, min(integer(params, "limit") or 25, 100))
    window = list(items[start:start + limit])
    paging: dict[str, Any] = {"cursors": {"before": str(start),
                                          "after": str(start + len(window))}}
    if start + limit < len(items):
        paging["next"] = f"emulator://next?after={start + limit}"
    return {"data": window, "paging": paging}


def graph_time(at: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(at))
