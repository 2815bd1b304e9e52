"""The built-in responders plugin: registers the three kinds, and nothing more.

Loading this module must stay cheap (docs/hooks.md): each factory imports its responder when a
responder of that kind is first built, so `tactful check` never imports httpx through here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tactful.core.hookspecs import RegisterResponders, hookimpl

if TYPE_CHECKING:
    from tactful.core.responders.base import Responder, ResponderSettings


def make_template(settings: ResponderSettings) -> Responder:
    from tactful.core.responders.template import TemplateResponder

    return TemplateResponder(settings)


def make_command(settings: ResponderSettings) -> Responder:
    from tactful.core.responders.command import CommandResponder

    return CommandResponder(settings)


def make_openai(settings: ResponderSettings) -> Responder:
    from tactful.core.responders.openai import OpenAIResponder

    return OpenAIResponder(settings)


@hookimpl
def register_responders(register: RegisterResponders) -> None:
    register("template", make_template)
    register("command", make_command)
    register("openai", make_openai)
