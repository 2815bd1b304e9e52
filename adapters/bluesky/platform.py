"""What tactful's core must know of Bluesky without loading its plugin or atproto.

The entry of the static table (`[project.entry-points."tactful.platforms"]`): handles are
domain names and keep their dots, and those under bsky.social, the default domain of the
sign-up, compare as the bare name when automatic links look for the same person elsewhere
(`ada.bsky.social` and x's `ada`). It imports nothing but memory's `Platform`.
"""

from __future__ import annotations

from tactful.core.memory.platforms import Option, Platform

# `platforms.<name>.timeout`: a hung platform must not hang a batch
TIMEOUT = Option("timeout", 10.0, above=0, at_most=120, help="seconds per request")

# `account` is what Bluesky logs in with: a full handle (a domain name), a DID or the e-mail
# address of the account; a bare name would be refused at login.
PLATFORM = Platform("bluesky", short_handle_suffix=".bsky.social",
                    options=(TIMEOUT,),
                    account_pattern=r"did:[a-z]+:[A-Za-z0-9._:%-]+|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+"
                                    r"|[^@\s]+@[^@\s]+",
                    account_hint="write the persona's full handle with its domain, e.g. "
                                 "galatea.bsky.social, or its DID")
