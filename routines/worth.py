"""“Worth a follow?”: whether an inbound post deserves a reply at all (seed 000, issue 6).

All must hold: not do-not-engage; not a bot that already had its one reply in this thread; not
someone who tried to give instructions; not spam, an engagement farm, a crypto shill or
ragebait (phrase lists from `engagement:` in the config). Someone who asks to be left alone is
flagged do-not-engage by the caller at once. Each "no" has a reason that goes to the log; the
reasons are labels, never the words that triggered them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from tactful.core.config.values import EngagementConfig
from tactful.core.memory import check as checks
from tactful.core.memory.injection import injection_reason
from tactful.core.memory.recording import INJECTION_FLAG
from tactful.core.send.adapter import Inbound
from tactful.core.send.ledger import Ledger

LEAVE_ALONE = "asked to be left alone"


@dataclass(frozen=True)
class Skip:
    reason: str  # a label for the log: never their words
    flag_dne: bool = False


def _phrase(text: str, phrases: Iterable[str]) -> bool:
    folded = " ".join(text.casefold().split())
    for phrase in phrases:
        words = " ".join(phrase.casefold().split())
        if words and re.search(rf"(?<!\w){re.escape(words)}(?!\w)", folded):
            return True
    return False


def judge(item: Inbound, verdict: checks.Verdict, ledger: Ledger,
          lists: EngagementConfig, own: set[str]) -> Skip | None:
    """None when the post is worth a reply; else why not."""
    handle = item.author.handle
    if handle in own:
        return Skip("my own account")
    if verdict.status == checks.DNE:
        return Skip("do-not-engage")
    if verdict.status == checks.UNREADABLE:
        return Skip("memory unavailable for this person")
    if _phrase(item.text, lists.leave_alone):
        return Skip(LEAVE_ALONE, flag_dne=True)
    person = verdict.person
    is_bot = item.author.is_bot or (person is not None and person.kind == "bot")
    thread = item.thread or item.post.id
    if is_bot and (ledger.replied_in_thread(item.post.platform, handle, thread) is not None
                   or (person is not None and any(
                       e.direction == "outbound" and e.thread == thread
                       for e in person.entries))):
        return Skip("bot already answered in this thread")
    if injection_reason(item.text) is not None:
        return Skip("tried to give instructions")
    if person is not None and person.flag(INJECTION_FLAG) is not None:
        return Skip("tried to give instructions before")
    for reason, phrases in (("spam", lists.spam), ("engagement farm", lists.engagement_farm),
                            ("crypto shill", lists.crypto_shill), ("ragebait", lists.ragebait)):
        if _phrase(item.text, phrases):
            return Skip(reason)
    return None
