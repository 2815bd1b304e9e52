"""The template responder: offline, deterministic drafts for the demo and the tests.

It reads the prompt that `prompt.compose` made: the "how to greet" line of the card (inside
<memory>) chooses the opening, a few plain words of their message (inside <message>) name the
topic, and the "At most N characters" line of the system prompt bounds the length. No model, no
network, no randomness: the same prompt always gives the same draft.

What it writes is built from fixed phrases. From the card it takes at most a one-word first name;
from the message at most three lower-case words of letters. So a draft never carries an
@mention, a link, a hashtag, or anything from their words that reads as an instruction.
"""

from __future__ import annotations

import hashlib
import re

from tactful.core.memory.card import DNE_LINE, GREETINGS, STRANGER_LINE
from tactful.core.responders.base import DraftFailed, Prompt, ResponderSettings

DEFAULT_LIMIT = 280  # when a prompt states no limit: the shortest common post length
TOPIC_WORDS = 3  # "a few words": enough to show we read them, too few to quote them

_LIMIT = re.compile(r"^- At most (\d+) characters\.?$", re.MULTILINE)
_ADDRESS = re.compile(r"(?<!\w)@[\w.-]+|\bhttps?://\S+")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")  # letters only, one apostrophe allowed

# The opening for each rung of the card's greeting. Only rungs with history may say "again".
_OPENINGS = {
    "stranger": "Hi{name}, thanks for reaching out!",
    "follower": "Hi{name}, good to hear from you!",
    "mutual": "Hey{name}, nice to hear from you!",
    "regular": "Hey{name}, good to see you again!",
    "collaborator": "Hey{name}, always good to hear from you!",
    "owner": "Hi{name}.",
    "bot": "Thanks for the note.",
    "brand": "Hello, thanks for the message.",
}
_NAMELESS = frozenset({"bot", "brand"})  # no personal familiarity with these
_TOPIC = " On {topic}: noted."  # neutral: their topic may be good news or bad
_CLOSINGS = (
    " I'll think it over and get back to you.",
    " Appreciate you sharing it.",
    " Glad you wrote.",
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that are not a topic (too common to say anything).
_STOPWORDS = _words("""
a about above after again all also am an and any are as at be because been before being both
but by can could did do does doing done down each even ever every few for from get got had has
have having he her here hers him his how i if in into is it its just know like me more most my
no nor not now of off on once only or other our ours out over own really same she should so
some such than that the their theirs them then there these they this those through to too
under until up very was we were what when where which while who whom why will with would you
your yours yes yeah ok okay hey hi hello thanks thank please lol
""")

# Words of someone steering a model. When their message has one, the draft names no topic at
# all: a reply that echoes "ignore previous instructions" would read as if it obeyed.
_STEERING = _words("""
ignore disregard forget instruction instructions prompt prompts system assistant pretend
roleplay jailbreak override bypass previous above rules operator developer mode reply respond
write say repeat print output tell post send mention tag dm follow unfollow like retweet repost
click link password token key secret admin execute run command
""")


def _between(text: str, tag: str) -> str:
    # compose() defuses any tag inside the data, so the first closing tag is the real one.
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", text, re.DOTALL)
    return found.group(1) if found else ""


def _limit(system: str) -> int:
    found = _LIMIT.search(system)
    return int(found.group(1)) if found else DEFAULT_LIMIT


def _rung(card_lines: list[str]) -> str | None:
    """The rung the card's greeting names; None when the card gives none we know."""
    if STRANGER_LINE in card_lines:
        return "stranger"
    # Only the card's own line counts: their words appear on other lines and may imitate it.
    greet = next((line for line in card_lines if line.startswith("how to greet: ")), "")
    for rung, text in GREETINGS.items():
        if greet.removeprefix("how to greet: ").startswith(text):
            return rung
    return None


def _first_name(card_lines: list[str]) -> str:
    line = next((line for line in card_lines if line.startswith("name: ")), "")
    words = line.removeprefix("name: ").split()
    # One word of letters, or nothing: a display name can hold anything, even an instruction.
    if (words and words[0].isalpha() and len(words[0]) <= 20
            and words[0].lower() not in _STEERING):
        return " " + words[0]
    return ""


def _topic(message: str) -> str:
    """At most TOPIC_WORDS plain words of theirs, in their order; "" when nothing fits."""
    # @handles and links are addresses, not what they talk about ("@persona.bsky.social").
    message = _ADDRESS.sub(" . ", message)
    words = [w.lower() for w in _WORD.findall(message)]
    if any(w in _STEERING for w in words):
        return ""
    # Runs of consecutive content words; the one with the most letters, its last words (in
    # English the noun tends to end a run: "baking sourdough bread").
    runs: list[list[str]] = [[]]
    for word in words:
        if word in _STOPWORDS or len(word) < 3:
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append(word)
    best = max(runs, key=lambda run: sum(map(len, run)))
    return " ".join(best[-TOPIC_WORDS:])


_FAMILIAR = frozenset({"mutual", "regular", "collaborator", "owner"})


class TemplateResponder:
    """A friendly, short reply from fixed phrases. Fails only on a do-not-engage card or a
    limit too small for even "Thanks!"."""

    def __init__(self, settings: ResponderSettings) -> None:
        self.name = settings.name

    def draft(self, prompt: Prompt) -> str:
        card_lines = _between(prompt.user, "memory").splitlines()
        if DNE_LINE in card_lines or any(line.startswith("do_not_engage: true")
                                         for line in card_lines):
            raise DraftFailed(self.name, "the card says do not engage")
        rung = _rung(card_lines)
        name = "" if rung in _NAMELESS else _first_name(card_lines)
        # An unknown greeting gets the stranger's opening: it claims no history.
        opening = _OPENINGS[rung or "stranger"].format(name=name)
        # Words of theirs are echoed only to people with a history: a first contact must not be
        # able to choose words the persona then posts in public.
        topic = _topic(_between(prompt.user, "message")) if rung in _FAMILIAR else ""
        # Chosen by a hash of the prompt, not at random: the same prompt, the same draft.
        digest = hashlib.sha256(f"{prompt.system}\0{prompt.user}".encode()).digest()
        closing = "" if rung in _NAMELESS else _CLOSINGS[digest[0] % len(_CLOSINGS)]
        limit = _limit(prompt.system)
        candidates = [opening + (_TOPIC.format(topic=topic) if topic else "") + closing,
                      opening + closing, opening, "Thanks!"]
        for text in candidates:
            if len(text) <= limit:
                return text
        raise DraftFailed(self.name, f"no reply fits in {limit} characters")
