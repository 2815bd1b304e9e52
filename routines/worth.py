"""“Worth a follow?”: whether an inbound post deserves a reply at all (seed 000, issue 6).

All must hold: not someone who tried to give instructions; not spam, an engagement farm, a
crypto shill or ragebait (phrase lists from `engagement:` in the config). Someone who asks to
be left alone is flagged do-not-engage by the caller at once. Whether the author may be
reached at all (do-not-engage, a bot's one reply per thread) is not judged here: the send
gate decides that, for every sender alike. Each "no" has a reason that goes to the log; the
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


def judge(item: Inbound, verdict: checks.Verdict, lists: EngagementConfig,
          own: set[str]) -> Skip | None:
    """None when the post is worth a reply; else why not."""
    if item.author.handle in own:
        return Skip("my own account")
    if _phrase(item.text, lists.leave_alone):
        return Skip(LEAVE_ALONE, flag_dne=True)
    person = verdict.person
    if injection_reason(item.text) is not None:
        return Skip("tried to give instructions")
    if person is not None and person.flag(INJECTION_FLAG) is not None:
        return Skip("tried to give instructions before")
    for reason, phrases in (("spam", lists.spam), ("engagement farm", lists.engagement_farm),
                            ("crypto shill", lists.crypto_shill), ("ragebait", lists.ragebait)):
        if _phrase(item.text, phrases):
            return Skip(reason)
    return None
