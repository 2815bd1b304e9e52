"""The built-in routine kinds, registered like any plugin's: `sync-log` and `batch-reply`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tactful.core.hookspecs import RegisterRoutines, hookimpl

if TYPE_CHECKING:
    from tactful.core.schedule.routine import Result, Run


def _sync_log(run: Run) -> Result:
    from tactful.routines.nightly_sync import sync_log

    return sync_log(run)


def _batch_reply(run: Run) -> Result:
    from tactful.routines.batch_reply import batch_reply

    return batch_reply(run)


@hookimpl
def register_routines(register: RegisterRoutines) -> None:
    register("sync-log", _sync_log)
    register("batch-reply", _batch_reply)
