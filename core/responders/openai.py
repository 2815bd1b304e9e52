"""The openai responder: one chat completion from any OpenAI-compatible endpoint, over httpx.

`POST {base_url}/chat/completions` with the model and two messages (system, user); the draft is
`choices[0].message.content`, stripped. The API key, when one is stored in the keyring
(`responder/<name>/api_key`), goes in a Bearer header; a local server needs none, and then no
header is sent. One try per draft: a rate limit, a server error, a refusal, a timeout or an
answer that does not parse sends nothing, and the next run tries again.

httpx is imported here, and this module only by the plugin's factory: registering stays cheap.
"""

from __future__ import annotations

import json
import time
from urllib.parse import urlsplit

import httpx

from tactful.core.errors import ConfigError
from tactful.core.responders.base import DraftFailed, Prompt, ResponderSettings

MAX_ANSWER = 1024 * 1024  # bytes of a response body kept; a chat answer is a few KiB


class OpenAIResponder:
    def __init__(self, settings: ResponderSettings) -> None:
        config = settings.config
        self.name = settings.name
        if not config.base_url or not config.model:
            raise ConfigError(f"responders.{self.name}: an openai responder needs base_url and "
                              "model, e.g. base_url: http://127.0.0.1:8080/v1")
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        # For messages: without any user:password@ a URL may carry.
        parts = urlsplit(self.url)
        self.where = f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1]}{parts.path}"
        self.model = config.model
        self.timeout = config.timeout
        self._read_key = settings.api_key
        # Read at the first draft, then kept: one keyring access per responder, not per draft.
        self._key: str | None = None
        self._key_read = False

    def _api_key(self) -> str | None:
        if not self._key_read:
            self._key = self._read_key()
            self._key_read = True
        return self._key

    def draft(self, prompt: Prompt) -> str:
        headers = {"Accept": "application/json"}
        key = self._api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        messages = [{"role": "system", "content": prompt.system},
                    {"role": "user", "content": prompt.user}]
        body: dict[str, object] = {"model": self.model, "messages": messages}
        return _content(self.name, self._post(body, headers))

    def _post(self, body: dict[str, object], headers: dict[str, str]) -> bytes:
        # httpx's timeout bounds each wait; the deadline bounds the whole draft, so a server
        # that trickles its answer byte by byte is cut off too.
        deadline = time.monotonic() + self.timeout
        too_slow = f"no answer from {self.where} within {self.timeout}s"
        # Reasons never carry the response body: an error page may echo the prompt.
        try:
            with httpx.Client(timeout=self.timeout) as client, \
                    client.stream("POST", self.url, json=body, headers=headers) as response:
                _check_status(self.name, response.status_code)
                data = bytearray()
                for chunk in response.iter_bytes():
                    data += chunk
                    if len(data) > MAX_ANSWER:
                        raise DraftFailed(self.name, f"the answer passed {MAX_ANSWER} bytes")
                    if time.monotonic() > deadline:
                        raise DraftFailed(self.name, too_slow)
                return bytes(data)
        except httpx.TimeoutException:
            raise DraftFailed(self.name, too_slow) from None
        except httpx.HTTPError as exc:
            raise DraftFailed(self.name, f"could not reach {self.where} "
                                         f"({type(exc).__name__})") from None


def _check_status(name: str, status: int) -> None:
    if status == 429:
        raise DraftFailed(name, "the endpoint is rate-limiting (HTTP 429); the next run retries")
    if status >= 500:
        raise DraftFailed(name, f"the endpoint failed (HTTP {status})")
    if status in (401, 403):
        raise DraftFailed(name, f"the endpoint refused the API key (HTTP {status}); store one "
                                f"with: tactful credentials set responder api_key --account {name}")
    if status == 404:
        raise DraftFailed(name, f"no such endpoint (HTTP 404); check responders.{name}.base_url "
                                "(it usually ends in /v1)")
    if status >= 400 or status < 200:
        raise DraftFailed(name, f"the endpoint refused the request (HTTP {status})")


def _content(name: str, raw: bytes) -> str:
    try:
        answer = json.loads(raw)
        content = answer["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise DraftFailed(name, "the answer is not a chat completion") from None
    if not isinstance(content, str) or not content.strip():
        raise DraftFailed(name, "the answer is empty")
    return content.strip()
