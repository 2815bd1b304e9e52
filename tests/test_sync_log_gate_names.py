"""sync-log spells a few of the privacy gate's names itself (importing the gate would compile
it for a rerun that never needs it): they must stay the gate's."""

from tactful.core.memory import recording, synclog


def test_sync_log_cuts_texts_at_the_gates_own_limits() -> None:
    assert (synclog.MY_SIDE_LIMIT, synclog.THEIR_SIDE_LIMIT) == (
        recording.MY_SIDE_LIMIT, recording.THEIR_SIDE_LIMIT)


def test_sync_log_flags_injection_under_the_gates_own_flag_name() -> None:
    assert synclog.INJECTION_FLAG == recording.INJECTION_FLAG
