"""The nightly sync: carry the engagement log into memory (docs/log.md), 22:30 persona time by
default. What `tactful sync-log` does, as a routine; a dry run only counts what it would read."""

from __future__ import annotations

from tactful.core.memory import synclog
from tactful.core.schedule.routine import Result, Run


def sync_log(run: Run) -> Result:
    context = run.context
    home = context.home
    home.require_readable()
    if run.dry_run:
        return Result("dry run: the sync changes only memory, so it did nothing")
    report = synclog.sync(home, context.people, home.engagement_log)
    context.after_memory_change()
    counts = {"events": report.events, "added": report.people.added,
              "merged": report.people.merged, "journal": report.journal.added,
              "bad_lines": len(report.bad), "failed": len(report.failed)}
    summary = (f"{_n(report.events, 'event', 'events')} read, "
               f"{_n(report.people.added, 'entry', 'entries')} added, "
               f"{report.people.merged} merged, {report.journal.added} journal posts added")
    if report.failed:
        # Each failure names a file and line, never words; the next run retries them.
        for failure in report.failed:
            run.log.emit("sync.failed", reason=failure[:120])
        return Result(summary + f"; {len(report.failed)} people wait for the next sync",
                      exit_code=4, counts=counts)
    return Result(summary, counts=counts)


def _n(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"
