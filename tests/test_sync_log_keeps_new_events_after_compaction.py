"""sync-log after compaction: a genuinely new interaction is never taken for an old one whose
text compaction cut, nor for another message compacted at the same second (docs/log.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tactful.core.memory.home import Home

from .test_sync_log import TZ, event, person, write_log


def _sync(tmp_path: Path, events: list[dict[str, Any]], **settings: int):  # type: ignore[no-untyped-def]
    from tactful.core.memory import synclog
    from tactful.core.memory.settings import MemorySettings
    from tactful.core.memory.store import People

    log = write_log(tmp_path, events)
    home = Home(tmp_path)
    people = People(home, MemorySettings(tz=TZ, **settings))
    return synclog.sync(home, people, log), log, home, people


def _append(log: Path, events: list[dict[str, Any]]) -> None:
    log.write_text(log.read_text() + "".join(json.dumps(e) + "\n" for e in events))


PREFIX = ("I looked again at the evaluation harness you shared last week and I think the "
          "flaky part is in the")


def test_a_new_message_sharing_its_first_words_with_a_compacted_one_is_added(  # type: ignore[no-untyped-def]
        tmp_path: Path) -> None:
    from tactful.core.memory import synclog

    # Both texts cut to the same 90-character summary, but they are two different messages.
    first = event("pat", 1, url=False, text=f"{PREFIX} seed handling, not the scorer.")
    filler = [event("pat", n, url=False, text=f"note {n}") for n in range(2, 12)]
    _, log, home, people = _sync(tmp_path, [first, *filler], compact_after=5, keep_full=2)
    assert any(PREFIX[:40] in c.summary for c in person(tmp_path, "pat").compacted)
    new = event("pat", 20, url=False, text=f"{PREFIX} tokenizer cache; clearing it fixed it.")
    _append(log, [new])
    report = synclog.sync(home, people, log)
    assert report.people.added == 1, "a new message was taken for an old compacted one"


def test_their_new_words_sharing_a_prefix_with_compacted_ones_are_added(  # type: ignore[no-untyped-def]
        tmp_path: Path) -> None:
    from tactful.core.memory import synclog

    old = event("quinn", 1, action="dm", url=False, text=None,
                they=f"{PREFIX} seed handling?")
    filler = [event("quinn", n, action="dm", url=False, text=None, they=f"ping {n}")
              for n in range(2, 12)]
    _, log, home, people = _sync(tmp_path, [old, *filler], compact_after=5, keep_full=2)
    assert any(c.direction == "inbound" and PREFIX[:40] in c.summary
               for c in person(tmp_path, "quinn").compacted)
    # Weeks later, a different question (another kind, even) starting with the same words.
    new = event("quinn", 25, action="question", url=False, text=None,
                they=f"{PREFIX} tokenizer cache, or is it something else entirely?")
    _append(log, [new])
    synclog.sync(home, people, log)
    entries = person(tmp_path, "quinn").entries
    assert any(e.they is not None and "tokenizer cache" in e.they for e in entries), \
        "their new question was taken for an old compacted one"


def test_a_message_without_link_at_the_second_of_a_compacted_linked_one_is_added(  # type: ignore[no-untyped-def]
        tmp_path: Path) -> None:
    from tactful.core.memory import synclog

    # Two replies in the same second: one posted with its address, one that lost it.
    linked = event("ravi", 1, text="first reply, posted with its address")
    filler = [event("ravi", n, text=f"reply {n}") for n in range(2, 12)]
    _, log, home, people = _sync(tmp_path, [linked, *filler], compact_after=5, keep_full=2)
    assert any(c.link == linked["url"] for c in person(tmp_path, "ravi").compacted)
    other = {**linked, "url": None, "text": "a different reply, same second, no address"}
    _append(log, [other])
    report = synclog.sync(home, people, log)
    assert report.people.added == 1, "a different reply was merged into a compacted one"


def test_their_other_message_at_the_second_of_a_compacted_linked_one_is_added(  # type: ignore[no-untyped-def]
        tmp_path: Path) -> None:
    from tactful.core.memory import synclog

    # Two of their messages in the same second, each with its own address: the first is
    # compacted (keeping its link); the second is a different message, not a copy of it.
    first = event("sam", 1, they="first question, with its own address",
                  in_reply_to="https://x.com/sam/status/1")
    filler = [event("sam", n, text=f"reply {n}") for n in range(2, 12)]
    _, log, home, people = _sync(tmp_path, [first, *filler], compact_after=5, keep_full=2)
    assert any(c.direction == "inbound" and c.link == "https://x.com/sam/status/1"
               for c in person(tmp_path, "sam").compacted)
    second = {**first, "url": "https://x.com/galatea/status/77777",
              "text": "answer to the second", "they": "a second, different question",
              "in_reply_to": "https://x.com/sam/status/2"}
    _append(log, [second])
    synclog.sync(home, people, log)
    entries = person(tmp_path, "sam").entries
    assert any(e.they == "a second, different question" for e in entries), \
        "their other message was merged into a compacted one of the same second"
