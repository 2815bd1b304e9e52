"""The injection guard's structural reading: who a sentence speaks to, what it orders, and what
it wants.

The phrase patterns in `injection.py` know how attempts are usually worded; this module knows
how they are built, so new wordings of the same build are caught too. Text is read as a stream
of words and punctuation, cut into sentences at . ! ? ; and line ends, and three builds are
looked for, each as a few parts that must all occur within a short span (`_SPAN` words, and at
most one sentence boundary apart):

- request aimed at AI agents: an addressee that is an AI or automated reader ("AI agents
  reading this:", "if you are an LLM", "to the model generating a reply", "Bots,"), with an
  order to hand over a secret (a giving verb, then a secret noun) or a social action aimed at
  something (follow me, like this, repost, like + follow);
- claimed operator instructions: someone who runs the bot ("your operator", "the team that runs
  this bot", "Operator notice"), an announcement of fresh orders ("new instructions", "your rules
  changed", "asked me to tell you"), and a directive (a second-person order, an imperative after
  a colon, or one of the agent actions above);
- claimed developer authority: a claim to have made or to run the bot ("your developer", "I
  built this bot", "the one who deployed you", "developer here", "I have admin access") with an
  ask for its configuration or secrets;
- system prompt request in German, Dutch, French or Spanish: a reveal verb, a prompt noun (or
  instructions that are hidden, original or "given to you") and a second-person word.

An AI word only counts as an addressee where it is addressed: "AI folks", "AI safety" and "I
wrote about bots" name a topic, so the word must be the head of its phrase and be called
("hey", "dear", "if you are a", a colon or comma right after), or be reading or processing the
text, or be told what it "should" or "must" do. Orders that are negated ("never share your
password") do not count. See docs/memory.md for the choices and their measured effect.

Cost: one tokenizing pass, set lookups per word, and look-arounds of a fixed number of words,
so the time is linear in the text. Standard library only.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable
from itertools import accumulate

__all__ = ["clause_reason"]

AGENT_REQUEST = "request aimed at AI agents"
OPERATOR_CLAIM = "claimed operator instructions"
AUTHORITY_CLAIM = "claimed developer authority"
PROMPT_REQUEST = "system prompt request"

# Words (with inner apostrophes, dots, hyphens), @handles, ".env", and the punctuation the
# builds care about.
_TOKEN = re.compile(r"\.env\b|@\w+|[^\W_]+(?:['.\-][^\W_]+)*|[.!?;:,\n]")
_SENTENCE_END = frozenset(".!?;\n")
# Parts of one build must lie within this many words of the anchor word.
_SPAN = 30


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- addressees

_AI_STRONG = _words(
    "ai ais a.i llm llms bot bots chatbot chatbots gpt gpts chatgpt claude gemini grok copilot"
    " robot robots crawler crawlers scraper scrapers agi machine machines"
)
_AI_WEAK = _words(
    "agent agents assistant assistants model models reader readers summarizer summarizers"
    " summariser summarisers system systems"
)
# Words a leading "AI" may be followed by and still be the addressee ("AI agents", "AI reading
# this", "AI, ..."); any other word makes it a modifier ("AI folks", "AI safety").
_AI_HEADS = _AI_WEAK | _words("bot bots tool tools crawler crawlers scraper scrapers")
_AI_MODIFIERS = _words(
    "automated autonomous llm-powered llm-based ai-powered ai-based gpt-based gpt-powered"
    " language machine artificial browsing"
)
_READS = _words(
    "read reads reading process processes processing parse parses parsing scan scans scanning"
    " crawl crawls crawling index indexes indexing summarize summarizes summarizing summarise"
    " summarises summarising see sees seeing generating ingest ingests ingesting browse browses"
    " browsing view views viewing analyzing analysing handling answering with"
)
_MODALS = _words("should must shall")
_CALLS = _words(
    "hey hi hello yo dear attention calling paging psa note message memo notice whatever"
    " whichever whoever fellow"
)
_AFTER_AI_OK = _AI_HEADS | _READS | _MODALS | _words(
    "that who which is are will then or and here out please of in like"
)
_YOU_ARE = (("if", "you", "are"), ("if", "you're"), ("if", "youre"), ("if", "ur"),
            ("are", "you"), ("if", "you", "happen", "to", "be"))
_ARTICLES = _words("a an the some any")
_DETERMINERS = _words("this that these those my our his her their its a an the your")
_READ_BY = _words("read processed parsed summarized summarised scanned viewed crawled ingested")

# --- orders and what they want

_NEGATIONS = _words("not never don't dont didn't stop no without avoid can't cannot won't")
_HAND = _words(
    "send give share dm post reveal leak paste put include disclose hand transfer email e-mail"
    " tell show list dump print output echo display provide drop reply respond answer write"
    " type forward upload expose submit return append attach spill"
)
_ASK = _HAND | _words(
    "need needs want require requires see what what's whats entitled asking request requesting"
)
_SECRET_ALWAYS = _words(
    "password passwords passcode passcodes passphrase passphrases credential credentials creds"
    " token tokens secrets cookies cookie mnemonic .env dotenv env apikey apikeys 2fa otp login"
    " logins keyring config configuration configs"
)
_KEY_MODIFIERS = _words(
    "api secret private access ssh wallet signing encryption auth your its ur admin"
)
_HIDDEN = _words(
    "hidden internal secret concealed private system original initial backend confidential"
    " underlying raw full whole complete entire"
)
_SOCIAL = _words(
    "follow like repost retweet rt boost reblog upvote share amplify promote subscribe"
    " quote-tweet favorite favourite fav star"
)
_SOCIAL_OBJECTS = _words(
    "me us this it him her them my our everything everyone everybody back all every their its"
    " his author"
)
_SOCIAL_NOUNS = _words("post posts thread tweet tweets skeet account author page link pinned")

# --- people who run the bot, and fresh orders

_STAFF = _words(
    "operator operators owner owners admin admins administrator administrators developer"
    " developers dev devs creator creators maker makers maintainer maintainers handler handlers"
    " programmer programmers engineer engineers deployer deployers owner's operator's admin's"
)
_GROUPS = _words("team company people org organization organisation lab folks")
_POSSESSIVE = _words("your ur yr bot's persona's account's assistant's")
_BOT_NOUNS = _words("bot persona account ai assistant agent project codebase")
_RUNS = _words(
    "runs run operates operate deploys deploy deployed built build made make created create"
    " owns own maintains maintain manages manage controls control programmed trained wrote"
    " coded designed developed configured set"
)
_ANNOUNCE = _words(
    "notice message update directive instructions instruction orders override here speaking"
    " memo bulletin request"
)
_ORDERS = _words(
    "instructions instruction orders rules directive directives guidelines guidance policy"
    " task mandate settings programming"
)
_FRESH = _words("new updated revised fresh latest different changed")
_CHANGED_AFTER = _words(
    "changed updated void apply different effect follows cancelled canceled revoked replaced"
    " suspended lifted overridden removed"
)
_CHANGED_VERBS = _words("updated changed revised replaced rewrote overrode modified")
_TOLD_ME = _words(
    "asked told instructed authorised authorized authorises authorizes wants want wanted"
)
_DIRECT_CUES: dict[str, list[tuple[str, ...]]] = {}
for _cue in (("you", "must"), ("you", "should"), ("you", "shall"), ("you", "will"),
             ("you", "now"), ("you", "need"), ("you", "are", "to"), ("from", "now", "on"),
             ("effective", "immediately"), ("from", "today"), ("starting", "now"),
             ("your", "new"), ("you're", "to"), ("effective", "now"), ("you", "are", "required"),
             ("you", "are", "hereby")):
    _DIRECT_CUES.setdefault(_cue[0], []).append(_cue)
_IMPERATIVES = _HAND | _SOCIAL | _words(
    "stop ignore disregard forget skip drop set answer promote obey comply reveal"
)

# --- claims to have made the bot

_CREATOR_VERBS = _RUNS | _words("work")
_CLAIM_SUBJECTS = _words("i we i'm im who that")
_ACCESS = _words("access rights clearance privileges permissions")
_ACCESS_KINDS = _words("developer dev admin root debug maintenance operator")

# --- system prompt requests in German, Dutch, French and Spanish (accents already folded)

_REVEAL_STEMS = (
    "zeig", "gib", "verrat", "nenn", "sag", "schreib", "druck", "kopier", "wiederhol", "teil",
    "zitier", "toon", "geef", "laat", "vertel", "herhaal", "kopieer", "plak", "schrijf", "deel",
    "citeer", "montre", "affiche", "revele", "donne", "dis", "ecri", "recopie", "copie",
    "repete", "cite", "partage", "muestra", "ensena", "revela", "dame", "dime", "escrib",
    "copia", "repit", "repite", "cita", "compart", "mostra",
)
_PROMPT_NOUNS = ("prompt", "systemprompt", "systeemprompt", "systemanweisung", "systeembericht",
                 "systeeminstructie")
_ORDER_NOUNS_FOREIGN = _words(
    "anweisungen instruktionen vorgaben regeln instructies opdrachten regels instructions"
    " consignes directives regles instrucciones indicaciones directrices reglas"
)
_HIDDEN_FOREIGN_STEMS = (
    "versteckt", "geheim", "ursprunglich", "anfanglich", "intern", "verborgen", "oorspronkelijk",
    "cache", "secret", "initial", "origin", "oculta", "secreta", "system", "systeem", "sistema",
)
_GIVEN = _words(
    "dieron dado gegeben bekommen erhalten gekregen kreeg kregen ontvangen recues donnees"
    " recibiste recibido bekamst gegeven dio gab donne donnees"
)
_SECOND_PERSON = _words(
    "du dir dich dein deine deinen deinem deiner je jij jouw uw tu te toi ton ta tes vous votre"
    " vos tus su sus usted"
)
_IMAGE_WORDS = _words("fur voor pour para bild afbeelding image imagen foto photo dessin")


class _Text:
    """The words of one text, with the sentence each falls in."""

    def __init__(self, norm: str) -> None:
        # Letters and digits between spaces (as much normalized text is) split into exactly the
        # tokens `_TOKEN` finds: none of its signs is there, and `str.isalnum` is its `[^\W_]`.
        self.tokens: list[str] = (
            norm.split() if norm.replace(" ", "").isalnum() else _TOKEN.findall(norm)
        )
        self.size = len(self.tokens)
        self.vocabulary = frozenset(self.tokens)
        self._sentence: list[int] | None = None
        self._secrets: list[int] | None = None
        self._where: dict[str, list[int]] | None = None

    # Both are made when a build first needs them: most texts lack a word of every build, and
    # `has` answers from the vocabulary alone.
    @property
    def sentence(self) -> list[int]:
        """The sentence of each word: how many sentence ends come before it."""
        sentence = self._sentence
        if sentence is None:
            sentence = self._sentence = list(
                accumulate((t in _SENTENCE_END for t in self.tokens), initial=0)
            )
        return sentence

    @property
    def where(self) -> dict[str, list[int]]:
        """The positions of each word."""
        where = self._where
        if where is None:
            where = {}
            for i, token in enumerate(self.tokens):
                positions = where.get(token)
                if positions is None:
                    where[token] = [i]
                else:
                    positions.append(i)
            self._where = where
        return where

    def secret_after(self, i: int, n: int) -> int:
        """The first secret noun among the n words after i, or -1."""
        if self._secrets is None:
            where = self.where
            found = [where[w] for w in _SECRET_WORDS.intersection(self.vocabulary)]
            found += [p for w, p in where.items() if w.startswith(("config.", "config_"))]
            self._secrets = sorted(i for ps in found for i in ps if _secret(self, i))
        k = bisect_left(self._secrets, i + 1)
        if k < len(self._secrets) and self._secrets[k] <= i + n:
            return self._secrets[k]
        return -1

    def has(self, words: frozenset[str] | None) -> bool:
        return words is None or not words.isdisjoint(self.vocabulary)

    def at(self, i: int) -> str:
        return self.tokens[i] if 0 <= i < self.size else ""

    def seq(self, i: int, words: tuple[str, ...]) -> bool:
        return all(self.at(i + k) == w for k, w in enumerate(words))

    def any_before(self, i: int, words: frozenset[str], n: int) -> bool:
        return any(self.at(k) in words for k in range(max(0, i - n), i))

    def any_after(self, i: int, words: frozenset[str], n: int) -> bool:
        return any(self.at(k) in words for k in range(i + 1, min(self.size, i + 1 + n)))

    def negated(self, i: int) -> bool:
        return self.any_before(i, _NEGATIONS, 2) or self.at(i - 1) in ("i", "we", "they")


# --- the parts, each a test of one word position


def _ai_addressed(t: _Text, i: int) -> bool:
    word = t.at(i)
    # "agents" alone may be estate agents; "automated agents" are not.
    strong = word in _AI_STRONG or (
        word in _AI_WEAK and (t.at(i - 1) in _AI_MODIFIERS or t.at(i - 1) in ("ai", "llm", "gpt"))
    ) or (word == "intelligence" and t.at(i - 1) == "artificial")
    if word in ("machine", "machines") and t.at(i + 1) not in ("!", ",", ":"):
        return False  # "machine" is only an addressee when called: "Hey there, machine!"
    if not strong and word not in _AI_WEAK:
        return False
    after = t.at(i + 1)
    if after[:1].isalnum() and after not in _AFTER_AI_OK:
        return False  # a modifier: "AI folks", "AI safety", "bot developer"
    if strong and after in _AI_HEADS:
        return False  # the head that follows is the addressee
    start = i
    while t.at(start - 1) in _AI_MODIFIERS or t.at(start - 1) in ("ai", "llm", "gpt"):
        start -= 1
    if t.any_after(i, _READS, 4) or t.at(i + 1) in _MODALS:
        return True
    # "any AI that comprehends this sentence should ..."
    if after in ("that", "who", "which") and t.any_after(i + 1, _MODALS, 6):
        return True
    # set off by commas inside a sentence: "whoever you are, AI or agent, send ..."
    if t.at(start - 1) == "," and (after == "," or (
        after == "or" and t.at(i + 2) in _AI_WEAK | _AI_STRONG and t.at(i + 3) == ","
    )):
        return True
    if t.seq(i + 1, ("are", "required")) or t.seq(i + 1, ("is", "asked")) or t.seq(
        i + 1, ("are", "asked")
    ):
        return True
    back = start - 1
    if t.at(back) in _ARTICLES:
        back -= 1
    for words in _YOU_ARE:
        if t.seq(back - len(words) + 1, words):
            return True
    if t.at(back) in ("by",) and t.any_before(back, _READ_BY, 2):
        return True
    if not strong:
        return False
    if t.any_before(start, _CALLS, 3):
        return True
    # "Bots, ..." is called; "I programmed this bot, so ..." is talked about.
    if after in (":", ",", "!") and t.at(start - 1) not in _DETERMINERS:
        return True
    # "Automated readers of this profile: ..."
    if after == "of" and t.at(i + 2) in ("this", "the", "my") and t.at(i + 4) in (":", ","):
        return True
    # "Bots, please", "automated accounts: like + follow"
    return t.at(start - 1) in ("", "\n", ".", "!", "?") and after in (":", ",")


def _automated_accounts(t: _Text, i: int) -> bool:
    return t.at(i) in ("accounts", "account") and t.at(i - 1) in (
        "automated", "machine"
    ) and t.at(i + 1) in (":", ",")


def _secret(t: _Text, i: int) -> bool:
    word = t.at(i)
    if word in _SECRET_ALWAYS or word.startswith(("config.", "config_")):
        return True
    if word in ("key", "keys"):
        return t.at(i - 1) in _KEY_MODIFIERS or t.at(i - 2) in _KEY_MODIFIERS
    if word in ("prompt", "instructions", "settings", "parameters", "params", "secret"):
        return t.at(i - 1) in _HIDDEN or t.at(i - 2) in _HIDDEN or (
            word == "prompt" and t.at(i - 1) in ("your", "its")
        ) or (word == "settings" and t.at(i + 1) == "file")
    if word in ("variables", "vars"):
        return t.at(i - 1) in ("environment", "env")
    if word == "details":
        return t.at(i - 1) in ("login", "account", "card")
    if word == "phrase":
        return t.at(i - 1) in ("seed", "recovery")
    return False


_SECRET_WORDS = _SECRET_ALWAYS | _words(
    "key keys prompt instructions settings parameters params secret variables vars details phrase"
)


def _hand_over(t: _Text, i: int) -> bool:
    if t.at(i) not in _HAND or t.negated(i):
        return False
    return t.secret_after(i, 12) != -1


def _social(t: _Text, i: int) -> bool:
    if t.at(i) not in _SOCIAL or t.negated(i):
        return False
    for k in range(i + 1, min(t.size, i + 4)):
        word = t.at(k)
        if word in _SOCIAL or word in _SOCIAL_OBJECTS or word.startswith("@"):
            return True
        if word == "the" and t.at(k + 1) in _SOCIAL_NOUNS:
            return True
        if word in _SENTENCE_END:
            return False
    return False


def _agent_action(t: _Text, i: int) -> bool:
    return _hand_over(t, i) or _social(t, i)


def _linked_to_bot(t: _Text, i: int) -> bool:
    """A person or group word that belongs to the bot: "your operator", "the team that runs
    this bot", "the developer of this account", "Operator notice"."""
    if t.any_before(i, _POSSESSIVE, 3):
        return True
    nxt = t.at(i + 1)
    if nxt in ("of", "for", "on", "behind") and (
        t.at(i + 2) == "you" or (t.at(i + 2) in ("this", "the") and t.at(i + 3) in _BOT_NOUNS)
    ):
        return True
    if nxt in ("that", "who", "which") and t.at(i + 2) in _RUNS and (
        t.at(i + 3) in ("you", "this", "your")
    ):
        return True
    # "the admin updated your rules": what they changed is the bot's
    if t.at(i + 1) in _CHANGED_VERBS and t.at(i + 2) in ("your", "ur"):
        return True
    # "Per the operator, your new instructions are ...": the orders named are the bot's
    if any(t.at(k) in ("your", "ur") and t.at(k + 1) in _ORDERS | _FRESH for k in range(i, i + 6)):
        return True
    return t.seq(i + 1, ("responsible", "for", "you")) or t.seq(
        i + 1, ("in", "charge", "of", "you")
    )


def _staff(t: _Text, i: int) -> bool:
    word = t.at(i)
    if word in _STAFF:
        if _linked_to_bot(t, i):
            return True
        # "Operator notice:", "[Operator message]", "directive from operator", "owner's orders"
        return t.at(i + 1) in _ANNOUNCE or (
            t.at(i - 1) == "from" and t.at(i - 2) in _ANNOUNCE
        ) or (word.endswith("'s") and t.at(i + 1) in _ORDERS)
    if word in _GROUPS:
        return _linked_to_bot(t, i) or (word == "team" and t.at(i - 1) in ("dev", "developer"))
    return False


def _fresh_orders(t: _Text, i: int) -> bool:
    word = t.at(i)
    # "Operator notice:", "Owner's orders", "directive from operator": the staff word itself
    # announces them
    if word in _ANNOUNCE and word not in ("here", "speaking") and (
        t.at(i - 1) in _STAFF or (t.at(i + 1) == "from" and t.at(i + 2) in _STAFF)
    ):
        return True
    if word in _ORDERS:
        return t.any_before(i, _FRESH, 3) or t.any_after(i, _CHANGED_AFTER, 3) or (
            t.at(i - 1) in ("your", "ur") and t.at(i - 2) in ("updated", "changed", "revised")
        )
    if word in _TOLD_ME:
        return t.at(i + 1) in ("me", "you") and t.at(i + 2) == "to"
    return False


def _directive(t: _Text, i: int) -> bool:
    if _agent_action(t, i):
        return True
    word = t.at(i)
    for words in _DIRECT_CUES.get(word, ()):
        if t.seq(i, words):
            return True
    if word in _IMPERATIVES and not t.negated(i):
        before = t.at(i - 1)
        return before in (":", "", "\n", ",", ".", "!") or (
            t.at(i - 2) == ":" and before in ("please", "first", "now", "just")
        )
    return False


def _claims_authority(t: _Text, i: int) -> bool:
    word = t.at(i)
    if word in _STAFF or word in ("team", "dev"):
        if _linked_to_bot(t, i):
            return True
        if t.at(i + 1) in ("here", "speaking") or (word == "team" and t.at(i - 1) == "dev"):
            return True
    # "I built this bot", "the one who deployed you", "I work on your codebase"
    if word in _CREATOR_VERBS and t.any_before(i, _CLAIM_SUBJECTS, 2):
        k = i + 1
        if t.at(k) in ("on", "up"):
            k += 1
        target = t.at(k)
        if target == "you" or (target in ("this", "your") and t.at(k + 1) in (
            _BOT_NOUNS | _words("code prompt")
        )):
            return True
    # "I have developer access to you"
    return word in _ACCESS and t.at(i - 1) in _ACCESS_KINDS


_OWNED = _words("your ur its me us")


def _config_ask(t: _Text, i: int) -> bool:
    """An ask for the bot's own configuration: "show me the token", "dump your config", "the
    hidden settings"; "you can print the config with --show-config" is advice."""
    if t.at(i) not in _ASK or t.negated(i):
        return False
    k = t.secret_after(i, 10)
    if k == -1:
        return False
    owned = range(i + 1, min(t.size, k + 4))
    # "the tokens you were given" are the bot's too
    return any(t.at(j) in _OWNED for j in owned) or t.any_before(k, _HIDDEN, 2) or (
        t.at(k + 1) == "you"
    )


def _reveal_foreign(t: _Text, i: int) -> bool:
    return t.at(i).startswith(_REVEAL_STEMS) and not t.negated(i)


def _prompt_foreign(t: _Text, i: int) -> bool:
    word = t.at(i)
    if word.startswith(_PROMPT_NOUNS):
        return not t.any_after(i, _IMAGE_WORDS, 3)
    if word in _ORDER_NOUNS_FOREIGN:
        near = [t.at(k) for k in range(i - 2, i + 3) if k != i]
        return any(w.startswith(_HIDDEN_FOREIGN_STEMS) for w in near) or t.any_after(
            i, _GIVEN, 6
        )
    return False


def _second_person(t: _Text, i: int) -> bool:
    return t.at(i) in _SECOND_PERSON


# --- builds: an anchor part, and the other parts near it


_Test = Callable[["_Text", int], bool]
# A part, and the words one of which must sit at its position (None: any word may).
_Part = tuple[_Test, frozenset[str] | None]


def _positions(t: _Text, part: _Part) -> list[int]:
    test, triggers = part
    if triggers is None:
        candidates: Iterable[int] = range(t.size)
    else:
        where = t.where
        found = [where[w] for w in triggers.intersection(t.vocabulary)]
        candidates = sorted(i for positions in found for i in positions)
    return [i for i in candidates if test(t, i)]


def _near(t: _Text, anchor: int, positions: list[int]) -> bool:
    lo = bisect_left(positions, anchor - _SPAN)
    for k in range(lo, len(positions)):
        p = positions[k]
        if p > anchor + _SPAN:
            return False
        if abs(t.sentence[p] - t.sentence[anchor]) <= 1:
            return True
    return False


def _build(t: _Text, anchor: _Part, *others: _Part) -> bool:
    for part in (anchor, *others):
        if not t.has(part[1]):
            return False
    anchors = _positions(t, anchor)
    if not anchors:
        return False
    parts = []
    for other in others:
        found = _positions(t, other)
        if not found:
            return False
        parts.append(found)
    return any(all(_near(t, a, found) for found in parts) for a in anchors)


def _addressee(t: _Text, i: int) -> bool:
    return _ai_addressed(t, i) or _automated_accounts(t, i)


def _foreign_reveal_words(t: _Text) -> frozenset[str]:
    return frozenset(w for w in t.vocabulary if w.startswith(_REVEAL_STEMS))


def _foreign_prompt_words(t: _Text) -> frozenset[str]:
    return frozenset(
        w for w in t.vocabulary if w.startswith(_PROMPT_NOUNS) or w in _ORDER_NOUNS_FOREIGN
    )


_ADDRESSEE: _Part = (
    _addressee, _AI_STRONG | _AI_WEAK | _words("accounts account intelligence")
)
_AGENT_ACTION: _Part = (_agent_action, _HAND | _SOCIAL)
_STAFF_PART: _Part = (_staff, _STAFF | _GROUPS)
_FRESH_ORDERS: _Part = (_fresh_orders, _ORDERS | _TOLD_ME | _ANNOUNCE)
_DIRECTIVE: _Part = (
    _directive, _HAND | _SOCIAL | _IMPERATIVES | _words("you from effective starting your you're")
)
_AUTHORITY: _Part = (
    _claims_authority, _STAFF | _CREATOR_VERBS | _ACCESS | _words("team dev")
)
_CONFIG_ASK: _Part = (_config_ask, _ASK)
_SECOND_PERSON_PART: _Part = (_second_person, _SECOND_PERSON)


def clause_reason(norm: str) -> str | None:
    """The reason for the first build found in normalized text, or None."""
    t = _Text(norm)
    if t.size < 3:
        return None
    if _build(t, _STAFF_PART, _FRESH_ORDERS, _DIRECTIVE):
        return OPERATOR_CLAIM
    if _build(t, _ADDRESSEE, _AGENT_ACTION):
        return AGENT_REQUEST
    if _build(t, _AUTHORITY, _CONFIG_ASK):
        return AUTHORITY_CLAIM
    # The reveal verbs are stems; the words that start with one are found once per distinct
    # word, not once per occurrence, and only when a second-person word (the build's anchor,
    # without which `_build` answers False) is there.
    if t.has(_SECOND_PERSON) and _build(
        t,
        _SECOND_PERSON_PART,
        (_reveal_foreign, _foreign_reveal_words(t)),
        (_prompt_foreign, _foreign_prompt_words(t)),
    ):
        return PROMPT_REQUEST
    return None
