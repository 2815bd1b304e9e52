"""The injection guard: instruction-like text is never stored.

`injection_reason` looks at one field and answers with a short, neutral reason when the text
reads like an attempt to instruct the model that will later read it back ("ignore previous
instructions", requests for the system prompt, role or chat-template markers, hidden
characters), or None for ordinary text. The caller withholds the content and flags the person;
the reason is for the record and never quotes the text.

Precision matters as much as recall here: a false alarm withholds an honest message and puts a
`prompt-injection` flag on a person who did nothing wrong. So the patterns want the shape of an
instruction aimed at a model (an imperative verb, a qualifier such as "previous" or "your", and
a noun such as "instructions"), not just the vocabulary: "I wrote a post about prompt
injection" and "the instructions were unclear" are prose.

Matching runs on a normalized copy (NFKC, casefold, format characters removed, accents folded,
whitespace collapsed) and again on a de-obfuscated copy (digit and symbol look-alikes, Cyrillic
and Greek homoglyphs, and, for the core phrases, all spacing and punctuation removed), so
"IGN0RE  all prev1ous instructions" and "i g n o r e previous instructions" are caught too.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = ["injection_reason"]

OVERRIDE = "instruction override"
PERSONA = "persona override"
PROMPT_REQUEST = "system prompt request"
ROLE_MARKER = "role marker"
TEMPLATE_MARKER = "chat template marker"
INVISIBLE = "invisible characters"

# ---------------------------------------------------------------------------------------------
# Hidden characters, judged on the raw text

_TAG_CANCEL = "\U000e007f"
_BLACK_FLAG = "\U0001f3f4"
# The one legitimate use of tag characters: the England, Scotland and Wales flag emoji.
_FLAG_TAGS = frozenset(
    "".join(chr(0xE0000 + ord(ch)) for ch in name) for name in ("gbeng", "gbsct", "gbwls")
)
# Embeddings and overrides (U+202A-U+202E) and isolates (U+2066-U+2069) reorder what a reader
# sees; in a short public message they only serve to hide or disguise text.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# No visible width and no job in ordinary prose.
_INVISIBLE = frozenset("\u200b\u2060\u2061\u2062\u2063\u2064\u180e\u034f\u115f\u1160\u3164\uffa0")
# Joiners and direction marks do have jobs: ZWJ builds emoji, ZWNJ shapes Persian and Indic
# words, RLM/LRM/ALM place punctuation in right-to-left text. Only in bulk, in a row, or wedged
# inside a Latin word (where they do nothing visible) do they look like hiding.
_SUSPECT = re.compile(
    "[\U000e0000-\U000e007f\u202a-\u202e\u2066-\u2069\u200b-\u200f\u2060-\u2064\u180e\u034f"
    "\u115f\u1160\u3164\uffa0\ufeff\u061c]"
)
_HIDDEN_LIMIT = 4
_MARK_BULK = 24
_HIDDEN_RUN = 3


def _is_latin(text: str, i: int) -> bool:
    return 0 <= i < len(text) and text[i].isascii() and text[i].isalpha()


def _hidden_characters(text: str) -> bool:
    if text.isascii():
        return False
    hidden = marks = run = 0
    last = skip_to = -2
    for m in _SUSPECT.finditer(text):
        i = m.start()
        if i < skip_to:
            continue
        ch = text[i]
        if ch >= "\U000e0000":
            if i and text[i - 1] == _BLACK_FLAG:
                end = text.find(_TAG_CANCEL, i)
                if end != -1 and text[i:end] in _FLAG_TAGS:
                    skip_to = end + 1
                    continue
            return True
        if ch in _BIDI_CONTROLS:
            return True
        run = run + 1 if i == last + 1 else 1
        last = i
        if run >= _HIDDEN_RUN:
            return True
        if ch == "\ufeff":
            hidden += 1 if i else 0  # a byte order mark at the very start is harmless
        elif ch in _INVISIBLE:
            hidden += 1
        else:
            marks += 1
            if _is_latin(text, i - 1) and _is_latin(text, i + 1):
                hidden += 1
        if hidden >= _HIDDEN_LIMIT or marks >= _MARK_BULK:
            return True
    return False


# ---------------------------------------------------------------------------------------------
# Normalization

_QUOTES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "`": "'", "“": '"', "”": '"'})
_ACCENTS = re.compile("[\u0300-\u036f]")
# Format characters that can split a word without showing: soft hyphen, zero-width and
# direction characters, word joiners, byte order mark, tags.
_FORMAT = re.compile(
    "[\u00ad\u034f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
    "\U000e0000-\U000e007f]"
)
_CONTROLS = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def _normalize(text: str) -> tuple[str, bool]:
    """The text as matched (one space between words, lines kept), and whether invisible format
    characters had to be taken out of it."""
    hid = False
    if text.isascii():
        text = text.lower()
    else:
        text = unicodedata.normalize("NFKC", text).casefold().translate(_QUOTES)
        text = _ACCENTS.sub("", unicodedata.normalize("NFD", text))
        stripped = _FORMAT.sub("", text)
        hid = len(stripped) != len(text)
        text = stripped
    if not text.isprintable():
        text = _CONTROLS.sub(" ", text)
    lines = (" ".join(line.split()) for line in text.split("\n"))
    return "\n".join(line for line in lines if line), hid


# Cyrillic and Greek letters that pass for Latin ones once lowercased.
_HOMOGLYPHS = str.maketrans(
    {
        "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o",
        "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j",
        "ѕ": "s", "ԁ": "d", "һ": "h", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ɡ": "g", "ı": "i",
        "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
        "τ": "t", "υ": "u", "χ": "x", "ϲ": "c",
    }
)  # fmt: skip
_LEET = {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i"}
# Only digits and symbols touching a letter are stand-ins; "you are now 30" keeps its number.
_LEET_CHARS = re.compile(r"(?<=[a-z])[013457@$!]|[013457@$!](?=[a-z])")


def _unleet(m: re.Match[str]) -> str:
    return _LEET[m.group(0)]


def _deobfuscate(norm: str) -> str:
    text = norm if norm.isascii() else norm.translate(_HOMOGLYPHS)
    # Twice, so "1gn0r3" resolves: some stand-ins only touch letters through each other.
    for _ in range(2):
        swapped = _LEET_CHARS.sub(_unleet, text)
        if swapped == text:
            break
        text = swapped
    return text


# The squashed form keeps letters only, with i/l/1/| merged, so spacing, punctuation and the
# usual digit swaps all disappear. Its patterns are written in plain spelling and squashed the
# same way.
_SQUASH_MAP = str.maketrans({"l": "i", "|": "i", **_LEET})
_NOT_LETTER = re.compile(r"[^a-z]+")
# Letters spaced out ("i g n o r e") or split by punctuation inside a word ("ig-nore",
# "ignore.previous"): the signs of a disguise that make squashing worth the risk.
_SPLIT_WORDS = re.compile(r"(?:\b[a-z][\s.\-_*·|~]+){3,}[a-z]\b|[a-z][.\-_*·|~]+[a-z]")


def _squash(deobfuscated: str) -> str:
    return _NOT_LETTER.sub("", deobfuscated.translate(_SQUASH_MAP))


# ---------------------------------------------------------------------------------------------
# Patterns, on normalized text (casefolded, accents folded, one space between words)


@dataclass(frozen=True)
class _Pattern:
    reason: str
    # At least one must occur in the text before the regex runs (cheap substring tests).
    needles: tuple[str, ...]
    regex: re.Pattern[str]
    # The match must give an order, not report one: "I always forget your rules".
    imperative: bool = False


# What comes right before a verb that is being reported or negated rather than ordered. "You
# will ignore..." and "you must ignore..." stay orders; "I'd ignore..." is an opinion.
_REPORTED = re.compile(
    r"\b(?:(?:i|we|they|he|she|people)(?:'d|'ll| would| will| might| could| can| just| also)?"
    r"|you|always|often|sometimes|usually|never|not|don't|do not|didn't|can't|cannot|won't"
    r"|shouldn't|wouldn't) $"
)


def _pattern(
    reason: str, needles: tuple[str, ...], source: str, *, imperative: bool = False
) -> _Pattern:
    return _Pattern(reason, needles, re.compile(source), imperative)


def _squashed(reason: str, needles: tuple[str, ...], source: str) -> _Pattern:
    def squash(s: str) -> str:
        return s.replace(" ", "").replace("l", "i")

    return _Pattern(reason, tuple(squash(n) for n in needles), re.compile(squash(source)))


_VERB = r"(?:ignore|disregard|forget|override|overwrite|bypass|discard|abandon)"
_VERBS = ("ignore", "disregard", "forget", "override", "overwrite", "bypass", "discard", "abandon")
_DET = r"(?:all|any|every|each|of|the|your|my|these|those|its|their|our)"
# Words that aim the verb at what the model was told, rather than at rules in general.
_AIM = (
    r"(?:previous|previously|prior|above|earlier|preceding|former|initial|original|existing"
    r"|system|your|pre-?existing|foregoing)"
)
_ORDERS = (
    r"(?:instructions?|prompts?|rules(?! of\b)|directives|directions|guidelines|commands|context"
    r"|constraints|restrictions|programming|guardrails|safeguards|system prompt)"
)
_MODEL_ORDERS = r"(?:instructions?|prompts?|directives|guidelines|system prompt|programming)"
_ADJ = (
    r"(?:full|exact|complete|entire|original|initial|hidden|secret|internal|real|actual|current"
    r"|whole|verbatim|underlying|first|previous|prior|confidential|private|system|developer"
    r"|custom|pre-?)"
)
_SHOW = (
    r"(?:reveal|print|show|display|output|repeat|recite|dump|leak|expose|share|give me|tell me"
    r"|send me|paste|copy|write out|spell out|echo|type out|list|translate|summarize|what is"
    r"|what are|what was|what were|what's|whats)"
)
# The request ends at the noun: "what are your instructions?" but not "what are your
# instructions for the sourdough starter".
_CLAUSE_END = (
    r"(?! (?:for|on|about|regarding|to|of|in|from|with|if|when|at|during|after|before|until"
    r"|so|because|and|or|here|there|this|that|these|those|today|tomorrow|again|please)\b)"
)


# "Print the text above the fold" is about layout.
_NOT_IDIOM = r"(?! (?:the fold|average|ground|water|sea level|board)\b)"


def _foreign(
    verbs: str, every: str, possessive: str, article: str, qualifier: str, nouns: str,
    *, qualifier_after: bool, negation: str,
) -> str:
    """Three shapes per language: verb + qualified noun, verb + 'your' noun, verb + 'all' noun."""
    aimed = (
        rf"(?:{article}\s+|{possessive}\s+)?{nouns}\s+{qualifier}"
        if qualifier_after
        else rf"(?:{article}\s+|{possessive}\s+)?{qualifier}\s+{nouns}"
    )
    return (
        rf"\b{verbs}\s+(?:(?:{every}\s+)?(?:{aimed}|{possessive}\s+{nouns})"
        rf"|{every}\s+{nouns})\b(?!\s+{negation})"
    )


_FOREIGN: tuple[tuple[tuple[str, ...], str], ...] = (
    # Dutch
    (("negeer", "vergeet", "overschrijf"), _foreign(
        r"(?:negeer|vergeet|overschrijf)", r"(?:alle|al)", r"(?:je|jouw|uw)", r"de",
        r"(?:eerdere|vorige|voorgaande|bovenstaande|oude|oorspronkelijke)",
        r"(?:instructies|aanwijzingen|prompts?|regels)",
        qualifier_after=False, negation="niet",
    )),
    # German
    (("ignorier", "vergiss", "vergessen", "missachte", "uberschreibe"), _foreign(
        r"(?:ignoriere|ignorier|ignorieren sie|vergiss|vergessen sie|missachte|uberschreibe)",
        r"alle", r"(?:deine|ihre)", r"(?:die|der)",
        r"(?:vorherigen|vorigen|bisherigen|fruheren|obigen|vorangegangenen|alten"
        r"|ursprunglichen|vorstehenden)",
        r"(?:anweisungen|instruktionen|befehle|vorgaben|anordnungen|prompts?|regeln)",
        qualifier_after=False, negation="nicht",
    )),
    # Spanish
    (("ignor", "olvid", "descarta", "omite"), _foreign(
        r"(?:ignora|ignore|ignoren|olvida|olvide|olviden|descarta|omite)", r"todas",
        r"(?:tus|sus)", r"las",
        r"(?:anteriores|previas|de antes|originales|del sistema)",
        r"(?:instrucciones|indicaciones|ordenes|reglas|directrices)",
        qualifier_after=True, negation="no",
    )),
    # French
    (("ignor", "oubli", "neglige"), _foreign(
        r"(?:ignore[rz]?|oublie[rz]?|neglige[rz]?)", r"toutes", r"(?:tes|vos)", r"les",
        r"(?:precedentes|anterieures|ci-dessus|d'avant|initiales|originales)",
        r"(?:instructions|consignes|directives|indications|regles)",
        qualifier_after=True, negation="pas",
    )),
    # Italian
    (("ignor", "dimentic"), _foreign(
        r"(?:ignora|ignorate|dimentica|dimenticate)", r"tutte", r"(?:le tue|le sue)", r"le",
        r"(?:precedenti|sopra|iniziali|originali)", r"(?:istruzioni|regole|indicazioni)",
        qualifier_after=True, negation="non",
    )),
    # Portuguese
    (("ignor", "esquec"), _foreign(
        r"(?:ignore|ignora|esqueca|esquece)", r"todas", r"(?:suas|tuas)", r"as",
        r"(?:anteriores|previas|acima|iniciais|originais)", r"(?:instrucoes|regras|orientacoes)",
        qualifier_after=True, negation="nao",
    )),
)

_ROLE = _pattern(ROLE_MARKER, ("system", "assistant"), r"(?:^|\n)\s*(?:system|assistant)\s*:")
_WHO = ("you are now", "you're now", "you r now")
_PATTERNS: tuple[_Pattern, ...] = (
    # --- chat templates
    _pattern(TEMPLATE_MARKER, ("<|",), r"<\|[a-z_]{2,40}\|>"),
    _pattern(
        TEMPLATE_MARKER,
        ("inst]", "sys>>", "</s>", "_of_turn>"),
        r"\[/?inst\]|<</?sys>>|</s>|<(?:start|end)_of_turn>",
    ),
    _pattern(
        TEMPLATE_MARKER, ("###",), r"###\s*(?:instruction|instructions|system|response|input)\b"
    ),
    _pattern(
        TEMPLATE_MARKER,
        ("system]", "assistant]", "system>", "sys>", "system_prompt>"),
        r"\[(?:system|assistant)\]|</?(?:system|system_prompt|sys)>",
    ),
    # --- instruction override
    _pattern(
        OVERRIDE,
        _VERBS,
        rf"\b{_VERB} (?:{_DET} ){{0,3}}{_AIM} (?:(?:{_DET}|{_AIM}|\w+) )?{_ORDERS}\b",
        imperative=True,
    ),
    _pattern(
        OVERRIDE,
        _VERBS,
        rf"\b{_VERB} (?:all|any|every) (?:of )?(?:the |your |my )?{_MODEL_ORDERS}\b",
        imperative=True,
    ),
    _pattern(
        OVERRIDE,
        _VERBS,
        rf"\b{_VERB} (?:about )?(?:everything|anything|all(?: of)? (?:that|this))"
        r"(?: (?:that|which))? ?(?:above|before|prior|previously|so far|up to now|until now"
        r"|(?:you|u)(?:'ve| have)? (?:been|were|was) (?:told|given|instructed|taught)"
        r"|i (?:said|told you|wrote)|(?:written|said|stated) (?:above|before))",
        imperative=True,
    ),
    _pattern(
        OVERRIDE,
        _VERBS,
        rf"\b{_VERB} (?:all of )?(?:the|everything|all) above\b[^.!?\n]{{0,40}}?"
        r"\b(?:and|then) (?:instead )?(?:say|print|write|respond|reply|output|tell|translate"
        r"|repeat|answer|act|pretend|return|only)\b",
        imperative=True,
    ),
    _pattern(
        OVERRIDE,
        _VERBS,
        rf"\b{_VERB} (?:{_DET} ){{0,3}}{_ORDERS} (?:above|before this|you were given"
        r"|you(?:'ve| have) been given|given to you|from before|so far)\b",
        imperative=True,
    ),
    _pattern(
        OVERRIDE,
        ("follow",),
        r"\b(?:do not|don't|stop|no longer) follow(?:ing)? (?:any of )?(?:your|the|any)"
        r" (?:previous |prior |above |original |initial |earlier )?"
        r"(?:instructions|rules|guidelines|programming|directives|system prompt)\b",
    ),
    _pattern(
        OVERRIDE,
        ("instruction", "directive", "system prompt", "system message"),
        r"\b(?:new|real|actual|true|secret|hidden|override|admin|developer|system)"
        r" (?:system )?(?:instructions?|directives?|system prompt|system message)\s*:",
    ),
    _pattern(OVERRIDE, ("system",), r"\bsystem (?:prompt|message|instructions?|override)\s*:"),
    _pattern(OVERRIDE, ("end of",), r"\bend of (?:the )?system (?:prompt|instructions|message)\b"),
    _pattern(
        OVERRIDE,
        ("vergiss",),
        r"\bvergiss\s+alles,?\s+was\s+(?:dir\s+)?(?:man\s+dir\s+)?(?:bisher|vorher|zuvor)",
    ),
    _pattern(
        OVERRIDE,
        ("todo lo",),
        r"\b(?:ignora|olvida)\s+todo\s+lo\s+(?:anterior|que\s+te\s+(?:dijeron|han dicho))",
    ),
    _pattern(
        OVERRIDE, ("tout ce",), r"\b(?:ignore|oublie)z?\s+tout\s+ce\s+qui\s+(?:precede|a ete dit)"
    ),
    _pattern(
        OVERRIDE,
        ("negeer",),
        r"\bnegeer\s+alles\s+(?:hierboven|wat\s+(?:je|u)\s+(?:is|werd)\s+gezegd)",
    ),
    *(_pattern(OVERRIDE, needles, source) for needles, source in _FOREIGN),
    # --- persona override
    _pattern(
        PERSONA,
        _WHO,
        r"\byou(?: are|'re| r) now (?:(?:a|an|the|my) )?(?:[\w-]+ ){0,3}?"
        r"(?:ai|a\.i\.|chatbot|language model|ai model|llm|dan|persona"
        r"|(?:ai|virtual|digital|helpful|unrestricted|unfiltered|evil) assistant)"
        r"(?=$|\s*[.,;:!?\n]| (?:and|with|without|that|who|which|called|named|free|mode)\b)",
    ),
    _pattern(
        PERSONA,
        ("mode",),
        r"\byou(?: are|'re| r) (?:now )?(?:in |entering )?(?:developer|dev|god|admin|debug"
        r"|jailbreak|jailbroken|unrestricted|unfiltered|dan|sudo|root|evil) mode\b",
    ),
    _pattern(
        PERSONA,
        _WHO,
        r"\byou(?: are|'re| r) now (?:dan|jailbroken|unrestricted|unfiltered|uncensored"
        r"|unchained|unbound|no longer (?:bound|restricted|limited|an? (?:ai|assistant"
        r"|language model))|free (?:from|of) (?:all |any |your )?(?:rules|restrictions"
        r"|guidelines|constraints|filters|limitations|programming))\b",
    ),
    _pattern(
        PERSONA,
        ("mode",),
        r"\b(?:developer|dan|jailbreak|god|unrestricted) mode (?:enabled|activated|engaged"
        r"|on(?=\s*(?:$|[.,;:!\n])))\b"
        r"|\benable (?:developer|dan|jailbreak|god) mode\b",
    ),
    _pattern(
        PERSONA,
        ("act as",),
        r"(?:^|[.!?:;,\n] ?|\b(?:please|now|you will|you must|you should|you shall"
        r"|i want you to|you are to|your (?:task|job|role) is to|from now on,?) )"
        r"act as (?:an?|the|my|if you (?:are|were))\b[^.!?\n]{1,60}? and (?:then )?"
        r"(?:ignore|disregard|forget|reveal|tell|answer|respond|reply|say|output|print|repeat"
        r"|write|never|always|don't|do not|bypass|pretend|stop|only|must|will)\b",
    ),
    _pattern(
        PERSONA,
        ("act as my",),
        r"(?:^|[.!?:;,\n] ?|\b(?:please|now|you will|you must|i want you to) )act as my\b"
        r"[^.!?\n]{1,40}? and\b",
    ),
    _pattern(
        PERSONA,
        ("act as",),
        r"\bact as (?:an? |the )?(?:unrestricted|unfiltered|uncensored|jailbroken|evil"
        r"|rogue|dan\b|ai without|assistant without|model without|llm without)",
    ),
    _pattern(
        PERSONA,
        ("pretend",),
        r"\bpretend (?:that )?(?:you are|you're|to be)\b[^.!?\n]{0,60}?"
        r"\b(?:without|with no|free (?:of|from)|not bound by) (?:any )?(?:rules|restrictions"
        r"|limits|limitations|filters|guidelines|censorship|ethics|instructions)",
    ),
    _pattern(
        PERSONA,
        ("from now on",),
        r"\bfrom now on,? you (?:are|will be|shall be|must be) (?:an? |the |my )?"
        r"(?:[\w-]+ ){0,3}?(?:ai|chatbot|dan|llm|language model)\b",
    ),
    # --- system prompt requests
    _pattern(
        PROMPT_REQUEST,
        ("system ", "developer ", "prompt", "hidden ", "secret "),
        rf"\b{_SHOW}\b[^.!?\n]{{0,30}}?\b(?:your|the|ur|this|that|thy)\s+(?:{_ADJ}\s+){{0,3}}"
        r"(?:system prompt|system message|system instructions|developer (?:message|prompt)"
        r"|pre-?prompt|meta[- ]?prompt|hidden (?:prompt|instructions|rules)"
        r"|secret (?:prompt|instructions))\b",
    ),
    _pattern(
        PROMPT_REQUEST,
        ("instructions", "directives", "programming", "initial prompt"),
        r"\b(?:reveal|print|show|display|output|repeat|recite|dump|leak|expose|tell me"
        r"|what are|what were|list)\b[^.!?\n]{0,30}?\b(?:your|ur)\s+"
        rf"(?:{_ADJ}\s+){{0,3}}(?:instructions|directives|programming|initial prompt)"
        rf"{_CLAUSE_END}",
    ),
    _pattern(
        PROMPT_REQUEST,
        ("above", "before this", "before that", "preceding", "prior", "verbatim", "you were"),
        r"\b(?:repeat|print|output|reveal|show|display|copy|recite|echo|type out|write out"
        r"|paste|return)\s+(?:back\s+)?(?:me\s+)?(?:everything|all|all of|the (?:text|words"
        r"|content|message|lines|instructions)|all (?:the )?(?:text|words))\s+"
        r"(?:(?:written|that (?:was|is) written|you (?:see|saw|got|read))\s+)?"
        r"(?:above|before this|before that|preceding|prior|verbatim|you were (?:given|told))"
        rf"{_NOT_IDIOM}",
    ),
    _pattern(
        PROMPT_REQUEST,
        ("you were", "you've been", "you have been", "you got"),
        r"\b(?:what|tell me|show me|list|repeat|reveal|print|share)\b[^.!?\n]{0,20}?"
        r"\b(?:rules|instructions|guidelines|directives|prompt) (?:that |which )?"
        r"(?:you were|you've been|you have been|you got) (?:given|told|trained)",
    ),
    _pattern(
        PROMPT_REQUEST,
        ("system ", "prompt", "instructions"),
        rf"\b(?:your|the) (?:{_ADJ} )?(?:system prompt|system message|pre-?prompt"
        r"|hidden instructions|initial instructions|secret instructions)\b[^.!?\n]{0,15}?"
        r"\b(?:say|says|contain|contains|look like|looks like|include|includes)\b"
        r"|\bwhat(?:'s| is) in (?:your|the) system (?:prompt|message)",
    ),
    _pattern(
        PROMPT_REQUEST,
        ("written", "said", "prompt"),
        r"\bwhat (?:was|is) (?:written|said) (?:above|before this)|\b(?:beginning|start|first"
        r" (?:line|words)) of (?:your|the) (?:system )?prompt\b",
    ),
    _pattern(
        PROMPT_REQUEST,
        ("above",),
        rf"\b(?:repeat|print|show) (?:the )?(?:words|text) above\b{_NOT_IDIOM}",
    ),
)

_SQUASHED: tuple[_Pattern, ...] = (
    _squashed(
        OVERRIDE,
        ("ignore", "disregard", "forget", "override", "bypass"),
        r"(?<!dont)(?<!donot)(?<!never)"
        r"(?: ignore | disregard | forget | override | bypass )"
        r"(?: all | any | every | of | the | your | my )*"
        r"(?: previous | prior | above | earlier | preceding | initial | original | system )"
        r"(?: all | of | the | your )*"
        r"(?: instructions | instruction | prompts | prompt | rules(?!of) | directives"
        r" | guidelines | commands | programming )",
    ),
    _squashed(
        OVERRIDE,
        ("ignore", "disregard"),
        r"(?<!dont)(?<!donot)(?<!never)(?: ignore | disregard )(?: all | any )(?: of )?"
        r"(?: the | your )?(?: instructions | prompts | directives | guidelines )",
    ),
    _squashed(
        PROMPT_REQUEST,
        (
            "system prompt", "system message", "initial prompt", "hidden instructions",
            "secret instructions",
        ),
        r"(?: reveal | print | show | repeat | output | dump | leak | display )(?: me )?"
        r"(?: your | the )(?: full | exact | entire | complete | original | initial | hidden"
        r" | secret )*(?: system prompt | system message | initial prompt | hidden instructions"
        r" | secret instructions )",
    ),
    _squashed(
        PERSONA,
        ("mode",),
        r"you(?: are | r )now(?: in )?(?: developer | dan | jailbreak | god )mode",
    ),
    _squashed(
        OVERRIDE,
        ("instructies",),
        r"(?: negeer | vergeet )(?: alle )?(?: vorige | eerdere | voorgaande )instructies",
    ),
    _squashed(
        OVERRIDE,
        ("anweisungen",),
        r"(?: ignoriere | vergiss )(?: alle )?(?: vorherigen | bisherigen )anweisungen",
    ),
)


def _any_in(needles: tuple[str, ...], text: str) -> bool:
    # A plain loop: any() over a generator costs more than the substring tests themselves.
    for needle in needles:  # noqa: SIM110
        if needle in text:
            return True
    return False


def _first(patterns: tuple[_Pattern, ...], text: str) -> str | None:
    # Several patterns share a needle set; test each set once per text.
    tested: dict[tuple[str, ...], bool] = {}
    for pattern in patterns:
        found = tested.get(pattern.needles)
        if found is None:
            found = tested[pattern.needles] = _any_in(pattern.needles, text)
        if not found:
            continue
        for m in pattern.regex.finditer(text):
            if pattern.imperative and _REPORTED.search(text, max(0, m.start() - 16), m.start()):
                continue
            return pattern.reason
    return None


def injection_reason(text: str) -> str | None:
    """A short neutral reason when `text` reads like instructions for a model, else None."""
    if not text or text.isspace():
        return None
    if _hidden_characters(text):
        return INVISIBLE
    norm, hid = _normalize(text)
    plain = _deobfuscate(norm)
    disguised = hid or plain != norm
    for variant in (norm, plain) if disguised else (norm,):
        if _first((_ROLE,), variant):
            return ROLE_MARKER
        # A newline ends a clause for some patterns and is mere spacing for others; try both.
        for lines in (variant, variant.replace("\n", " ")) if "\n" in variant else (variant,):
            reason = _first(_PATTERNS, lines)
            if reason:
                return reason
    # Squashing throws away the word boundaries that keep "I'd ignore any prompts that..."
    # apart from an order, so it only runs on text that shows signs of a disguise.
    if not (disguised or _SPLIT_WORDS.search(plain)):
        return None
    return _first(_SQUASHED, _squash(plain))
