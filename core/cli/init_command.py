"""`tactful init [FILE]`: a commented starter config, never written over an existing file.

The starter names the persona and its time zone (the machine's own IANA zone when it can be
read, else UTC: a zone is never left to a silent default), keeps the nightly sync, and shows
every platform and a routine commented out, ready to be switched on. It passes `tactful config
check` as written (a test keeps it so); config/tactful.example.yaml lists every key.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path

from tactful.core.cli.context import Context
from tactful.core.errors import BadInput

STARTER = """\
# tactful.yaml: a starter config written by `tactful init`. Check it with `tactful config check`;
# `tactful doctor` checks credentials too. Every key is optional; config/tactful.example.yaml in
# the project lists them all. Secrets never go here: `tactful credentials set PLATFORM FIELD`.

persona:
  # The name the persona uses, and its IANA time zone (cards, the desk and schedules use it).
  name: {name}
  timezone: {zone}
  # owners: [x:your_own_account]   # the operator's own accounts, as platform:handle

memory:
  home: null                       # null: the user data folder; --home and TACTFUL_HOME win

# One section per platform the persona is on; uncomment the ones you use. `account` picks the
# keyring entries (PLATFORM/ACCOUNT/FIELD); dry_run: true writes to the outbox instead of posting.
platforms:
#  x:
#    account: {name}
#    dry_run: true
#  bluesky:
#    account: {name}.bsky.social
#    dry_run: true

# Routines run by `tactful run` on their cron schedule (minute hour day month weekday).
routines:
  nightly-sync:
    kind: sync-log                 # carry the engagement log into memory
    schedule: "30 22 * * *"        # quoted: a cron line is not YAML
#  reply-x:
#    kind: batch-reply             # read new mentions, skip who is not worth it, reply
#    platform: x
#    responder: template           # offline canned lines: name a model responder for real use
#    schedule: "*/30 9-22 * * *"
#    max_per_run: 5
#    dry_run: true
"""


def local_zone() -> str:
    """The machine's IANA zone ($TZ, else /etc/localtime's link), or UTC."""
    from zoneinfo import available_timezones

    candidates = [os.environ.get("TZ", "").removeprefix(":")]
    with contextlib.suppress(OSError, IndexError):
        candidates.append(str(Path("/etc/localtime").resolve()).split("zoneinfo/", 1)[1])
    known = available_timezones()
    return next((c for c in candidates if c in known), "UTC")


def init(context: Context, args: argparse.Namespace) -> int:
    path = Path(args.path).expanduser()
    if path.exists() or path.is_symlink():
        raise BadInput(f"{path} already exists; tactful init never writes over a config — "
                       "check it with `tactful config check --config "
                       f"{path}`, or name another file")
    if not path.parent.is_dir():
        raise BadInput(f"{path.parent} is not a folder; create it first or name another file")
    text = STARTER.format(name="persona", zone=local_zone())
    try:
        # "x": created here or refused, so a file that appeared meanwhile is never replaced.
        with open(path, "x", encoding="utf-8") as out:
            out.write(text)
    except FileExistsError:
        raise BadInput(f"{path} already exists; tactful init never writes over a config") \
            from None
    except OSError as exc:
        raise BadInput(f"cannot write {path}: {exc.strerror or exc}; name another file") \
            from None
    print(f"wrote {path}: edit the persona's name, then `tactful config check --config {path}`")
    return 0
