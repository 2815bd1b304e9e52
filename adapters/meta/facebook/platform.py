"""What tactful's core must know of Facebook without loading its plugin or httpx: a person is
their numeric user id (the Graph API names a commenter only by `from.id` and a display name,
and names are not unique), so handles are ids only, and "0700" is "700"; the account is the
Page's numeric id. The entry of the static table (`[project.entry-points."tactful.platforms"]`);
it imports nothing but memory's `Platform`.
"""

from __future__ import annotations

from tactful.core.memory.platforms import Option, Platform

# `platforms.<name>.timeout`: a hung platform must not hang a batch
TIMEOUT = Option("timeout", 10.0, above=0, at_most=120, help="seconds per request")

# `account` is the Page id, all digits (quoted in YAML, which would read a number).
PLATFORM = Platform("facebook", numeric_ids=True, handles_are_ids=True, options=(TIMEOUT,),
                    account_pattern=r"[0-9]{1,25}",
                    account_hint='write the Page\'s numeric id, quoted, e.g. "104000000000001" '
                                 "(Page settings → Page transparency)")
