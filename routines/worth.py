"""“Worth a follow?”: whether an inbound post deserves a reply at all (docs/routines.md).

A chain of small judges, each looking at one thing, in order; the first "no" ends it. A post
is worth a reply only when nothing says no **and** something gives a reason to engage. The
built-in judges:

1. my own account; someone asking to be left alone (flagged do-not-engage by the caller);
2. someone who tried to give instructions, now (judged on the text as it arrived, before the
   inbox scrubbed it) or before (their `prompt-injection` flag);
3. rudeness and bigotry, in the post and in their recent posts (read with read credentials in
   real runs and previews, when the adapter can: `Session.recent_posts`);
4. spam, engagement farms, crypto shills, ragebait (phrase lists from `engagement:`), in the
   post, and as the bulk of their recent posts;
5. a bot that already had its one reply in this thread (memory's record; the send gate holds
   the same line for every sender);
6. the operator's judges, from plugins (`register_guards`: an object with a `worth(case)`
   method, which the send gate ignores);
7. a reason to engage: a question, someone I already know, a greeting or thanks, or something
   said to me in more than a word or two. None → "no reason to engage" (a bare "beep", "lol").

Each decision has a reason: a label for the log and the batch output, never their words.
Whether the author may be reached at all (do-not-engage) is the send gate's, not judged here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tactful.core.config.values import EngagementConfig
from tactful.core.memory import check as checks
from tactful.core.memory.injection import injection_reason
from tactful.core.memory.recording import INJECTION_FLAG
from tactful.core.send.adapter import Inbound

LEAVE_ALONE = "asked to be left alone"
RECENT_LIMIT = 10  # their recent posts read per author
SUBSTANCE_WORDS = 3  # "something said to me": more than a word or two


@dataclass(frozen=True)
class Skip:
    reason: str  # a label for the log: never their words
    flag_dne: bool = False


@dataclass(frozen=True)
class Engage:
    reason: str  # why a reply is worth it: a label, never their words


@dataclass(frozen=True)
class Case:
    """What the judges see of one inbound post."""

    item: Inbound
    verdict: checks.Verdict
    lists: EngagementConfig
    own: frozenset[str]
    instructs: str | None = None  # why the text as it arrived reads like instructions
    recent: tuple[str, ...] | None = None  # their recent posts; None: not read (a dry run)


Judge = Callable[[Case], Skip | Engage | None]


@dataclass(frozen=True)
class Decision:
    """The chain's answer: worth it or not, the deciding reason, and who decided."""

    worth: bool
    reason: str
    by: str
    flag_dne: bool = False

    @property
    def skip(self) -> Skip | None:
        return None if self.worth else Skip(self.reason, self.flag_dne)


def _phrase(text: str, phrases: Iterable[str]) -> bool:
    folded = " ".join(text.casefold().split())
    for phrase in phrases:
        words = " ".join(phrase.casefold().split())
        if words and re.search(rf"(?<!\w){re.escape(words)}(?!\w)", folded):
            return True
    return False


# Insults aimed at the reader, and contempt for people as a group. Kept short and specific:
# a blunt disagreement ("this is wrong", "bad take") is not rudeness.
_RUDE = re.compile(
    r"\b(?:you(?:'re| are|r)?|u r|ur)\s+(?:such\s+)?(?:an?\s+)?(?:absolute\s+|total\s+|fucking\s+)?"
    r"(?:idiot|moron|imbecile|clown|loser|stupid|dumb(?:ass)?|pathetic|retard(?:ed)?|"
    r"worthless|trash|garbage|joke)\b"
    r"|\b(?:shut\s+(?:the\s+fuck\s+)?up|stfu|fuck\s+(?:you|off)|screw\s+you|go\s+die|"
    r"kill\s+yourself|kys|piss\s+off|nobody\s+asked\s+you)\b",
    re.IGNORECASE)
_GROUPS = (r"(?:women|men|girls|gays?|lesbians|trans(?:\s+people)?|immigrants|migrants|"
           r"refugees|foreigners|jews|muslims|christians|blacks|whites|asians|mexicans|"
           r"arabs|africans|indians|chinese|disabled\s+people|poor\s+people|those\s+people)")
_BIGOTRY = re.compile(
    rf"\b{_GROUPS}\s+(?:are|r)\s+(?:all\s+|just\s+|nothing\s+but\s+)?(?:animals|vermin|"
    r"subhuman|parasites|savages|cockroaches|rats|a\s+disease|a\s+plague|inferior|filth)\b"
    rf"|\b{_GROUPS}\s+(?:should|must|need\s+to)\s+(?:all\s+)?(?:be\s+)?(?:deported|banned|"
    r"eliminated|exterminated|wiped\s+out|gassed|sterili[sz]ed|locked\s+up)\b"
    r"|\bgo\s+back\s+to\s+(?:your\s+(?:own\s+)?country|where\s+you\s+came\s+from)\b"
    rf"|\b{_GROUPS}\s+(?:don'?t|do\s+not)\s+belong\s+(?:here|in\s+this\s+country)\b"
    r"|\b(?:women|girls)\s+(?:belong|should\s+stay)\s+in\s+the\s+kitchen\b",
    re.IGNORECASE)
_QUESTION = re.compile(r"\?|^\s*(?:how|what|why|when|where|which|who|can|could|would|"
                       r"should|do|does|did|is|are|any\s+(?:tips|ideas))\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]{2,}")
_GREETING = re.compile(r"^\W*(?:hi|hello|hey|hiya|howdy|gm|good\s+(?:morning|afternoon|evening)|"
                       r"thanks?|thank\s+you|congrats\w*)\b", re.IGNORECASE)


def _most(texts: Sequence[str], test: Callable[[str], bool], share: float) -> bool:
    hits = sum(1 for t in texts if test(t))
    return hits >= 2 and hits >= share * len(texts)


def _matcher(phrases: Iterable[str]) -> Callable[[str], bool]:
    return lambda text: _phrase(text, phrases)


def own_account(case: Case) -> Skip | None:
    return Skip("my own account") if case.item.author.handle in case.own else None


def leave_alone(case: Case) -> Skip | None:
    return Skip(LEAVE_ALONE, flag_dne=True) if _phrase(case.item.text,
                                                         case.lists.leave_alone) else None


def instructions(case: Case) -> Skip | None:
    if case.instructs is not None or injection_reason(case.item.text) is not None:
        return Skip("tried to give instructions")
    person = case.verdict.person
    if person is not None and person.flag(INJECTION_FLAG) is not None:
        return Skip("tried to give instructions before")
    return None


def manners(case: Case) -> Skip | None:
    if _BIGOTRY.search(case.item.text):
        return Skip("bigotry")
    if _RUDE.search(case.item.text):
        return Skip("rude")
    recent = case.recent or ()
    if recent and _most(recent, lambda t: bool(_BIGOTRY.search(t)), 0.2):
        return Skip("bigotry in their recent posts")
    if recent and _most(recent, lambda t: bool(_RUDE.search(t)), 1 / 3):
        return Skip("rude in their recent posts")
    return None


def junk(case: Case) -> Skip | None:
    lists = case.lists
    for reason, phrases in (("spam", lists.spam), ("engagement farm", lists.engagement_farm),
                            ("crypto shill", lists.crypto_shill), ("ragebait", lists.ragebait)):
        if _phrase(case.item.text, phrases):
            return Skip(reason)
        if case.recent and _most(case.recent, _matcher(phrases), 0.5):
            return Skip(f"{reason} in their recent posts")
    return None


def bot_once(case: Case) -> Skip | None:
    person, item = case.verdict.person, case.item
    is_bot = item.author.is_bot or (person is not None and person.kind == "bot")
    thread = item.thread or item.author.thread
    if not is_bot or person is None or thread is None:
        return None
    if any(e.direction == "outbound" and e.thread == thread for e in person.entries) or any(
            e.direction == "outbound" and e.thread == thread for e in person.compacted):
        return Skip("bot already answered in this thread")
    return None


def reason_to_engage(case: Case) -> Engage | Skip:
    text = case.item.text
    if _QUESTION.search(text):
        return Engage("asks a question")
    person = case.verdict.person
    if person is not None and (person.relationship != "stranger"
                               or person.kind == "owner" or person.collaborator):
        known = person.kind if person.kind == "owner" else person.relationship
        return Engage(f"someone I know ({known})")
    if _GREETING.search(text):
        return Engage("greets or thanks me")
    if len(_WORD.findall(text)) >= SUBSTANCE_WORDS:
        return Engage("says something to me")
    return Skip("no reason to engage")


BUILT_IN: tuple[tuple[str, Judge], ...] = (
    ("own account", own_account),
    ("leave alone", leave_alone),
    ("instructions", instructions),
    ("manners", manners),
    ("junk", junk),
    ("bot once per thread", bot_once),
)


def plugin_judges(registered: dict[str, tuple[str, Any]]) -> list[tuple[str, Judge]]:
    """The operator's judges among the registered guards: objects with a `worth` method."""
    found = []
    for name, (_, guard) in sorted(registered.items()):
        judge = getattr(guard, "worth", None)
        if callable(judge):
            found.append((name, judge))
    return found


def decide(case: Case, extra: Sequence[tuple[str, Judge]] = ()) -> Decision:
    """Run the chain: the first "no" decides; else the first reason to engage (a plugin's
    own reason counts), else there is none."""
    engage: tuple[str, Engage] | None = None
    for name, judge in [*BUILT_IN, *extra]:
        try:
            answer = judge(case)
        except Exception as exc:  # noqa: BLE001 — a judge that breaks says no: fail closed
            return Decision(False, f"judge {name!r} failed ({type(exc).__name__})", name)
        if isinstance(answer, Skip):
            return Decision(False, answer.reason, name, answer.flag_dne)
        if isinstance(answer, Engage) and engage is None:
            engage = (name, answer)
    if engage is None:
        found = reason_to_engage(case)
        engage = ("reason to engage", found) if isinstance(found, Engage) else None
        if engage is None:
            return Decision(False, found.reason, "reason to engage")
    return Decision(True, engage[1].reason, engage[0])


def judge(item: Inbound, verdict: checks.Verdict, lists: EngagementConfig,
          own: set[str]) -> Skip | None:
    """None when the post is worth a reply; else why not (the built-in chain, nothing read)."""
    return decide(Case(item, verdict, lists, frozenset(own))).skip
