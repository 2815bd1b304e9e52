"""Making the responder a routine or the companion names (`responders.<name>`)."""

from __future__ import annotations

from tactful.core.config.values import Config, ResponderConfig
from tactful.core.errors import BadInput
from tactful.core.plugins import Host
from tactful.core.responders.base import Responder, ResponderSettings
from tactful.core.send import credentials

DEFAULT = "template"


def responder_for(name: str | None, config: Config, host: Host, *, where: str,
                  read_key: bool = True) -> Responder:
    """`where` names the config key that chose it, for the message when it is wrong.
    `read_key` False (a dry run): the responder never gets its API key from the keyring, so a
    model that needs one drafts nothing rather than a dry run reading a credential."""
    chosen = name or DEFAULT
    if chosen in config.responders:
        settings = config.responders[chosen]
    elif chosen == DEFAULT:
        settings = ResponderConfig()
    else:
        raise BadInput(f"{config.where(where)}: no responder {chosen!r} in the config (configured: "
                       f"{', '.join(sorted(config.responders)) or 'none'})")
    kinds = host.collect("register_responders")
    if settings.kind not in kinds:
        raise BadInput(f"{config.where(f'responders.{chosen}.kind')}: no responder kind "
                       f"{settings.kind!r} is "
                       f"installed (installed: {', '.join(sorted(kinds)) or 'none'})")
    factory = kinds[settings.kind][1]
    made: Responder = factory(ResponderSettings(
        name=chosen, config=settings,
        api_key=lambda: credentials.get("responder", chosen, "api_key") if read_key else None))
    return made
