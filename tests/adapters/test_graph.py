"""The Graph family's shared base: Meta's error codes, usage headers and API roots mean the same
on Threads, Instagram and Facebook (httpx against each emulator on 127.0.0.1), and the three
sub-packages share the base without importing one another."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tactful.adapters.emulation import Emulator, Request
from tactful.adapters.meta import graph
from tactful.adapters.meta.facebook.adapter import FacebookAdapter
from tactful.adapters.meta.facebook.emulator import FacebookEmulator
from tactful.adapters.meta.instagram.adapter import InstagramAdapter
from tactful.adapters.meta.instagram.emulator import InstagramEmulator
from tactful.adapters.meta.threads.adapter import ThreadsAdapter
from tactful.adapters.meta.threads.emulator import ThreadsEmulator
from tactful.core.errors import TactfulError
from tactful.core.send.adapter import (
    AdapterSettings,
    Forbidden,
    PlatformDown,
    RateLimited,
    Session,
    Unauthorized,
)

META = Path(__file__).resolve().parents[2] / "adapters" / "meta"


@dataclass(frozen=True)
class Family:
    name: str
    start: Callable[[], Any]
    open: Callable[[Any, str], Session]
    read: Callable[[Any, Session], object]  # one read of someone's post or comment

    def __str__(self) -> str:
        return self.name


def _threads_read(emu: ThreadsEmulator, session: Session) -> object:
    ref = ThreadsAdapter(AdapterSettings("threads", "galatea")).parse_post(
        emu.media_id(emu.add_post("ada", "hi")))
    return session.author(ref)


FAMILY = [
    Family("threads", lambda: ThreadsEmulator("galatea").start(),
           lambda e, base: ThreadsAdapter(AdapterSettings("threads", "galatea", base_url=base),
                                          timeout=5.0).open({"access_token": e.token}),
           _threads_read),
    Family("instagram", lambda: InstagramEmulator("galatea").start(),
           lambda e, base: InstagramAdapter(AdapterSettings("instagram", "galatea",
                                                            base_url=base),
                                            timeout=5.0).open({"access_token": e.token}),
           lambda e, s: s.author(InstagramAdapter(AdapterSettings("instagram", "galatea"))
                                 .parse_post(e.add_comment("ada", "hi")))),
    Family("facebook", lambda: FacebookEmulator().start(),
           lambda e, base: FacebookAdapter(AdapterSettings("facebook", e.page_id,
                                                           base_url=base),
                                           timeout=5.0).open({"access_token": e.token}),
           lambda e, s: s.author(FacebookAdapter(AdapterSettings("facebook", e.page_id))
                                 .parse_post(e.add_comment("100000000000011", "hi")))),
]


@pytest.fixture
def running() -> Iterator[list[Emulator]]:
    started: list[Emulator] = []
    yield started
    for emulator in started:
        threading.Thread(target=emulator.stop, daemon=True).start()


def _reading(family: Family, running: list[Emulator], *, status: int = 400,
             error: dict[str, Any] | None = None,
             headers: dict[str, str] | None = None) -> TactfulError:
    """The error one read of `family` ends in when the emulator answers `error` to it."""
    emulator = family.start()
    running.append(emulator)
    session = family.open(emulator, emulator.base_url)
    try:
        if error is not None:
            emulator.fail_next(status, {"error": {"type": "OAuthException",
                                                  "fbtrace_id": "AbCdEf", **error}},
                               headers, match=lambda r: r.method == "GET")
        with pytest.raises(TactfulError) as caught:
            family.read(emulator, session)
        return caught.value
    finally:
        session.close()


@pytest.mark.parametrize("code", [4, 17, 32, 613, 80001])
@pytest.mark.parametrize("family", FAMILY, ids=str)
def test_meta_rate_limit_codes_are_rate_limits_at_http_400(
        family: Family, code: int, running: list[Emulator]) -> None:
    error = _reading(family, running, error={"message": "limit reached", "code": code})
    assert isinstance(error, RateLimited), f"{type(error).__name__}: {error}"
    assert error.exit_code == 5 and f"code {code}" in str(error)


@pytest.mark.parametrize("family", FAMILY, ids=str)
def test_the_usage_headers_say_when_to_retry(family: Family, running: list[Emulator]) -> None:
    usage = json.dumps({"104": [{"type": "pages", "call_count": 100,
                                 "estimated_time_to_regain_access": 12}]})
    error = _reading(family, running, error={"message": "Page request limit reached",
                                             "code": 32},
                     headers={"X-Business-Use-Case-Usage": usage,
                              "X-App-Usage": json.dumps({"call_count": 100})})
    assert isinstance(error, RateLimited)
    assert error.retry_after == 720.0 and "retry in 720 s" in str(error)


@pytest.mark.parametrize(("code", "kind", "exit_code"), [
    (190, Unauthorized, 2), (102, Unauthorized, 2), (10, Forbidden, 5), (200, Forbidden, 5),
    (2, PlatformDown, 5), (1, PlatformDown, 5)])
@pytest.mark.parametrize("family", FAMILY, ids=str)
def test_graph_codes_mean_the_same_on_every_meta_platform(
        family: Family, code: int, kind: type[TactfulError], exit_code: int,
        running: list[Emulator]) -> None:
    error = _reading(family, running, error={"message": "said", "code": code,
                                             "error_subcode": 463})
    assert type(error) is kind, f"{type(error).__name__}: {error}"
    assert error.exit_code == exit_code
    assert getattr(error, "platform", None) == family.name


@pytest.mark.parametrize("family", FAMILY, ids=str)
def test_a_wrong_token_is_the_emulator_s_190_and_names_the_fix(
        family: Family, running: list[Emulator]) -> None:
    emulator = family.start()
    running.append(emulator)
    emulator.token = "another-token"  # the session is opened with this one …
    session = family.open(emulator, emulator.base_url)
    emulator.token = "the-right-one"  # … which the platform no longer takes
    try:
        with pytest.raises(Unauthorized, match=f"tactful credentials set {family.name}"):
            family.read(emulator, session)
    finally:
        session.close()


@pytest.mark.parametrize("prefix", ["/v21.0", "/v1.0", "/v23"])
@pytest.mark.parametrize("family", FAMILY[1:], ids=str)
def test_any_version_prefix_in_base_url_is_kept(family: Family, prefix: str,
                                                running: list[Emulator]) -> None:
    emulator = family.start()
    running.append(emulator)
    session = family.open(emulator, emulator.base_url + prefix + "/")
    try:
        family.read(emulator, session)
    finally:
        session.close()
    assert [r.path.startswith(prefix + "/") for r in emulator.requests] == \
        [True] * len(emulator.requests)


@pytest.mark.parametrize(("base", "root"), [
    (None, "https://graph.facebook.com/v23.0"),
    ("http://127.0.0.1:9", "http://127.0.0.1:9/v23.0"),
    ("https://proxy.example/meta/v19.0/", "https://proxy.example/meta/v19.0"),
    ("https://proxy.example/meta", "https://proxy.example/meta/v23.0"),
])
def test_the_api_root_adds_a_version_only_when_base_url_names_none(base: str | None,
                                                                   root: str) -> None:
    assert graph.api_root(base, "https://graph.facebook.com", "v23.0") == root


@pytest.mark.parametrize("token", ["", "  ", "tok en", "tök", "to\nk"])
def test_a_token_that_cannot_go_in_a_header_is_refused_unshown(token: str) -> None:
    with pytest.raises(TactfulError) as caught:
        graph.token_of("instagram", "galatea", {"access_token": token})
    assert "tactful credentials set instagram access_token" in str(caught.value)
    if token.strip():
        assert token.strip() not in str(caught.value)


def test_the_emulators_answer_meta_s_error_shape(running: list[Emulator]) -> None:
    emulator = InstagramEmulator().start()
    running.append(emulator)
    import httpx

    answer = httpx.get(f"{emulator.base_url}/v23.0/999", headers={
        "Authorization": f"Bearer {emulator.token}"})
    error = answer.json()["error"]
    assert answer.status_code == 400
    assert (error["code"], error["type"]) == (100, "OAuthException")
    assert {"message", "fbtrace_id", "error_subcode"} <= set(error)
    assert [r for r in emulator.requests if isinstance(r, Request)]


def test_the_meta_sub_packages_never_import_one_another() -> None:
    """The house rule sees the family as one adapter (tactful.adapters.meta); inside it, each
    platform may import the family's shared modules and never a sibling platform."""
    platforms = sorted(p.name for p in META.iterdir() if (p / "plugin.py").exists())
    assert platforms == ["facebook", "instagram", "threads"]
    crossings = []
    for name in platforms:
        for path in (META / name).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                targets = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                for target in targets:
                    parts = target.split(".")
                    if parts[:3] == ["tactful", "adapters", "meta"] and len(parts) > 3 \
                            and parts[3] in platforms and parts[3] != name:
                        crossings.append(f"{path.name}: {target}")
    assert crossings == []


@pytest.mark.parametrize(("name", "reference"), [
    ("instagram", "https://www.instagram.com/p/C8xYzAbCdEf/c/17890123456789012/"),
    ("facebook", "104000000000001_500"),
])
def test_the_host_collects_each_plugin_and_its_offline_path_imports_no_sdk(
        name: str, reference: str) -> None:
    from tactful.core.plugins import Host
    from tactful.core.send.adapter import Adapter

    owner, factory = Host().collect("register_adapters")[name]
    assert owner == name
    assert isinstance(factory(AdapterSettings(name, "104000000000001")), Adapter)
    code = (
        "import json, sys\n"
        f"import tactful.adapters.meta.{name}.plugin as p\n"
        "from tactful.core.send.adapter import AdapterSettings\n"
        f"made = p.make_adapter(AdapterSettings({name!r}, '104000000000001'))\n"
        f"made.parse_post({reference!r})\n"
        "made.mentions('@a @[1]'); made.text_length('a')\n"
        "heavy = ('httpx', 'httpcore', 'anyio', 'tweepy', 'atproto', 'aiogram')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in heavy)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, check=True)
    assert json.loads(result.stdout) == []
