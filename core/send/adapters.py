"""Finding the adapter of a platform through the plugin host (docs/hooks.md).

Built-in and third-party adapters come the same way: an entry point in the group `tactful`
whose plugin registers a factory. The factory runs here, offline; the adapter it makes imports
its SDK only when a session is opened.
"""

from __future__ import annotations

from tactful.core.config.values import Config
from tactful.core.errors import BadInput, TactfulError
from tactful.core.memory import platforms
from tactful.core.memory.handles import PLATFORM_NAME
from tactful.core.plugins import Host
from tactful.core.send.adapter import Adapter, AdapterSettings
from tactful.core.send.credentials import DEFAULT_ACCOUNT


def settings_for(platform: str, config: Config) -> AdapterSettings:
    """The platform's config section, with every option its `Platform` declares: the value
    the file writes, else the declared default."""
    section = config.platform(platform)
    declared = platforms.get(platform, ask_plugins=True)
    options: dict[str, object] = {o.name: o.default
                                  for o in (declared.options if declared else ())}
    options.update(section.options)
    return AdapterSettings(platform=platform, account=section.account or DEFAULT_ACCOUNT,
                           base_url=section.base_url, mode=section.mode, options=options)


def adapter_for(platform: str, config: Config, host: Host) -> Adapter:
    registered = host.collect("register_adapters")
    declared = platforms.get(platform, ask_plugins=True)
    if declared is not None and declared.memory_only and platform not in registered:
        raise BadInput(f"{platform} is a memory-only platform: tactful remembers, checks and "
                       f"flags people there but never sends to it; send on one of "
                       f"{', '.join(sorted(registered)) or 'no platform'} instead")
    if platform not in registered:
        broken = [e for e in host.load_errors if f"plugin {platform!r}" in e]
        if broken:
            raise BadInput(f"no adapter for {platform!r}: {broken[0]}")
        names = ", ".join(sorted(registered)) or "none"
        raise BadInput(f"no adapter is installed for platform {platform!r} (installed: {names}); "
                       "install the plugin that provides it")
    plugin, factory = registered[platform]
    if not PLATFORM_NAME.fullmatch(platform):
        raise BadInput(f"plugin {plugin!r} registers the platform name {platform[:40]!r}, which "
                       "is not a plain lower-case word; it cannot be used")
    try:
        adapter = factory(settings_for(platform, config))
    except TactfulError:
        raise
    except Exception as exc:
        raise TactfulError(f"plugin {plugin!r} failed to make its {platform} adapter: "
                           f"{type(exc).__name__}: {exc}") from exc
    missing = [name for name in ("platform", "text_limit", "read_fields", "post_fields",
                                 "quotas", "direct_kind", "parse_post", "mentions",
                                 "text_length", "open") if not hasattr(adapter, name)]
    if missing:
        raise TactfulError(f"plugin {plugin!r} made a {platform} adapter without "
                           f"{', '.join(missing)}; see docs/hooks.md#register_adapters")
    made: Adapter = adapter
    return made
