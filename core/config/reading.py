"""Read one config file: bytes, UTF-8, YAML with positions, no secrets, the schema.

Every failure becomes one ConfigError line naming the file, the line and the key.
"""

from __future__ import annotations

import re
import stat
from dataclasses import replace
from pathlib import Path

from ..errors import ConfigError
from .schema import PLATFORMS, read_config
from .values import RESPONDER_KINDS, Config
from .yamlpos import ListAt, Located, MapAt, Problem, is_null, line_of_offset, parse

MAX_BYTES = 1 << 20  # a config is a few kilobytes; anything near this is the wrong file


def read_file(path: Path, shown: str, missing_hint: str) -> Config:
    text = _read_text(path, shown, missing_hint)
    try:
        tree = parse(text)
        if tree is None or is_null(tree):
            return Config(source=path)
        _refuse_secrets(tree, "")
        config = read_config(tree, path.parent)
        _check_responder_kinds(config)
    except Problem as problem:
        raise ConfigError(_format(shown, problem)) from None
    return replace(config, source=path)


def _read_text(path: Path, shown: str, missing_hint: str) -> str:
    try:
        mode = path.stat().st_mode
        if stat.S_ISDIR(mode):
            raise _fail(f"{shown}: is a folder, not a file; point to the YAML file itself")
        if not stat.S_ISREG(mode):
            raise _fail(f"{shown}: not a regular file; point to a YAML file")
        with open(path, "rb") as file:
            data = file.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise _fail(f"{shown}: no such config file; {missing_hint}") from None
    except PermissionError:
        hint = f"make it readable, e.g. chmod u+r {shown}"
        raise _fail(f"{shown}: cannot read the config file (permission denied); {hint}") from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise _fail(f"{shown}: cannot read the config file ({reason}); check the path") from None
    if len(data) > MAX_BYTES:
        raise _fail(
            f"{shown}: larger than {MAX_BYTES // 1024} KiB, too large for a config file; "
            "check that this is the right file"
        )
    return _decode(data, shown)


def _decode(data: bytes, shown: str) -> str:
    try:
        return data.decode("utf-8-sig")  # a leading byte order mark is harmless: drop it
    except UnicodeDecodeError as exc:
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            found = "UTF-16"
        else:
            found = f"byte 0x{data[exc.start]:02x}"
        before = data[: exc.start].decode("utf-8")  # valid: the first bad byte is at exc.start
        line = line_of_offset(before, len(before))
        raise _fail(
            f"{shown}:{line}: expected UTF-8 text, found {found}; save the file as UTF-8"
        ) from None


# ---- against the plugins ---------------------------------------------------------------------

def _check_responder_kinds(config: Config) -> None:
    """A responder kind a plugin registers (`register_responders`) is as good as a built-in
    one. The plugins are asked only when the file names a kind that is not built in, so a
    config of built-in kinds is read without loading them (`tactful check` stays fast); they
    are loaded as the application loads them, without those `plugins.disabled` names."""
    unknown = {name: r.kind for name, r in config.responders.items()
               if r.kind not in RESPONDER_KINDS}
    if not unknown:
        return
    from tactful.core.plugins import host  # only for a kind that is not built in

    found = host()
    found.disable(config.plugins.disabled)
    kinds = sorted({*RESPONDER_KINDS, *found.collect("register_responders")})
    for name, kind in sorted(unknown.items()):
        if kind in kinds:
            continue
        from .schema import did_you_mean

        key = f"responders.{name}.kind"
        hint = did_you_mean(kind, kinds) or "install the plugin that registers it"
        raise Problem(config.lines.get(key), key,
                      f"expected a responder kind installed (one of: {', '.join(kinds)}), "
                      f"found {kind[:40]!r}", hint)


# ---- secrets -----------------------------------------------------------------------------------

# A key names what it holds by its last word: `bot_token`, `consumer_secret`, `apiKey` hold secrets,
# while `token_count` or `max_tokens` (a responder's limit) do not. Keys are split into words
# whether written in snake, kebab or camel case; a last word ending in one of these words
# (`accesstoken`) or a last pair such as api key is a secret.
_SECRET_WORDS = (
    "password",
    "passwords",
    "passwd",
    "passphrase",
    "token",
    "secret",
    "secrets",
    "bearer",
    "apikey",
    "privatekey",
    "accesskey",
    "credential",
    "credentials",
)
_SECRET_PAIRS = frozenset(
    {("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key")}
)


def _key_words(key: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key).lower())


def is_secret_key(key: str) -> bool:
    words = _key_words(key)
    if not words:
        return False
    return words[-1].endswith(_SECRET_WORDS) or tuple(words[-2:]) in _SECRET_PAIRS


def _refuse_secrets(node: Located, path: str) -> None:
    """Secrets live only in the keyring (docs/credentials.md): refuse the key anywhere, unechoed."""
    if isinstance(node, MapAt):
        for entry in node.entries:
            key_path = f"{path}.{entry.key}" if path else entry.key
            if is_secret_key(entry.key):
                command = f"tactful credentials set {_platform_of(key_path)} {_field_of(entry.key)}"
                raise Problem(
                    entry.key_line,
                    key_path,
                    "expected no secrets in the config file, found a secret key (value not shown)",
                    f"store it in the keyring instead with: {command}; then delete this line",
                )
            _refuse_secrets(entry.value, key_path)
    elif isinstance(node, ListAt):
        for i, item in enumerate(node.items):
            _refuse_secrets(item, f"{path}[{i}]")


def _field_of(key: str) -> str:
    return "_".join(_key_words(key)) or "FIELD"


def _platform_of(key_path: str) -> str:
    parts = key_path.split(".")
    if len(parts) > 2 and parts[0] == "platforms" and parts[1] in PLATFORMS:
        return parts[1]
    return "PLATFORM"


# ---- messages ----------------------------------------------------------------------------------

# Anything that could break the line or hide in it: controls, line and paragraph separators,
# invisible format characters. A config message is always exactly one line.
_UNSHOWABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]"
)


def _one_line(text: str) -> str:
    def escape(match: re.Match[str]) -> str:
        char = match.group()
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char, f"\\u{ord(char):04x}")

    return _UNSHOWABLE.sub(escape, text)


def _format(shown: str, problem: Problem) -> str:
    where = f"{shown}:{problem.line}" if problem.line is not None else shown
    parts = [where, problem.path, problem.what] if problem.path else [where, problem.what]
    message = ": ".join(parts)
    if problem.hint:
        message += f"; {problem.hint}"
    return _one_line(message)


def _fail(message: str) -> ConfigError:
    return ConfigError(_one_line(message))
