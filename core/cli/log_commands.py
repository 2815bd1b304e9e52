"""`tactful journal` and `tactful sync-log`: my own posts, and the engagement log into memory.

Both print counts and places, never anyone's words (mine included).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tactful.core.cli.args import when
from tactful.core.cli.context import Context
from tactful.core.cli.output import plural
from tactful.core.cli.progress import on_terminal
from tactful.core.errors import BadInput
from tactful.core.memory import journal as journals
from tactful.core.memory import synclog
from tactful.core.memory.clock import on_screen

BAD_LINES_SHOWN = 20


def journal(context: Context, args: argparse.Namespace) -> int:
    if not args.text.strip():
        raise BadInput("the journal entry is empty; give the text of the post or note")
    from tactful.core.memory.recording import check_url

    tz = context.settings.tz
    at = when(context, args.at)
    link = check_url(args.link, "--link") if args.link is not None else None
    entry = journals.gated(at=at, kind="post" if link else "note", text=args.text, link=link)
    done = journals.record(context.home, tz, [entry], match_text=False)
    context.after_memory_change()
    where = f"{journals.FOLDER}/{done.placed[0]}.md"
    if done.present:
        print(f"already in the journal: the post with this link is in {where}; nothing added")
        return 0
    if done.merged:
        print(f"merged into the post with this link in {where}")
        return 0
    parts = [f"journaled {entry.kind} {on_screen(at, tz)} in {where}"]
    if entry.redacted:
        parts.append("redacted: " + ", ".join(entry.redacted))
    if entry.withheld:
        parts.append(f"withheld: looks like instructions; {entry.withheld}")
    print(" — ".join(parts))
    return 0


def _summary(report: synclog.Report) -> str:
    people, posts = report.people, report.journal
    read = "new since the last sync" if report.resumed else "from the top"
    return (f"sync-log: {plural(report.events, 'event')} read ({read}) — "
            f"entries: {people.added} added, {people.merged} merged, "
            f"{people.present} already present; "
            f"journal posts: {posts.added} added, {posts.merged} merged, "
            f"{posts.present} already present; "
            f"skipped: {plural(len(report.bad), 'bad line')}, {report.forgotten} forgotten, "
            f"{plural(report.dry_runs, 'dry run')}; "
            f"{plural(report.people_written, 'person file')} written")


def sync_log(context: Context, args: argparse.Namespace) -> int:
    if args.log:
        log = Path(args.log).expanduser()
        if not log.is_file():
            what = "not a regular file (a FIFO, device or folder is never read)" \
                if log.exists() else "no such file"
            raise BadInput(f"--log {log}: {what}; give the path of an engagement log "
                           "(JSON lines), or leave --log out to use the home's")
    else:
        context.home.require_readable()  # a mistyped home must not read as "nothing to do"
        log = context.home.engagement_log
    progress = on_terminal("sync-log")
    try:
        report = synclog.sync(context.home, context.people, log, progress=progress)
    finally:
        if progress is not None:
            progress.clear()
    if report.missing:
        print(f"sync-log: no engagement log at {log} yet; nothing to carry")
        return 0
    for bad in report.bad[:BAD_LINES_SHOWN]:
        print(f"tactful: {log}:{bad.line}: {bad.problem}; skipped", file=sys.stderr)
    if len(report.bad) > BAD_LINES_SHOWN:
        print(f"tactful: … and {len(report.bad) - BAD_LINES_SHOWN} more bad lines in {log}",
              file=sys.stderr)
    for failure in report.failed:
        print(f"tactful: {failure}", file=sys.stderr)
    if report.checkpoint_error:
        print(f"tactful: warning: the checkpoint was not saved ({report.checkpoint_error}); "
              "the next sync reads the log from the top", file=sys.stderr)
    if report.people_written or report.journal.added or report.journal.merged:
        # Nothing written, nothing new on the desk: a rerun of an unchanged log stays cheap
        # (and `tactful hot` rebuilds the desk when read anyway).
        context.after_memory_change()
    print(_summary(report))
    return 4 if report.failed else 0
