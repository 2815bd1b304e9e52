"""The few fixed lines the companion says itself (docs/companion.md), in English, Dutch and German.

Everything else the companion says comes from the responder; these are the lines that must work
when there is no reply to send (a hold, a failure) or that answer a command. The language comes
from the platform's language tag (Telegram's `language_code`: "nl", "nl-BE", "de-AT" ...).

Choices made here (also in docs/companion.md, "Languages"):

- The primary subtag decides, case and "_" or "-" aside: "nl*" is Dutch, "de*" German (so
  Flemish, Austrian and Swiss users get them too), anything else or nothing is English.
- Informal address throughout ("je", "du"): the companion is a friend, not a bank.
- "hold" never mentions limits, numbers or times: it is a friend asking for a moment, and it
  does not promise "a minute" when the wait may be until tomorrow. A few variants per language,
  picked with `rng`, so a regular user does not see the same line every time.
- The command descriptions live here once (`commands`), so the help text and the command list
  registered with the platform cannot drift apart.
"""

from __future__ import annotations

import random
from typing import Literal

Kind = Literal["hold", "failed", "paused", "resumed", "forgotten", "deleted", "welcome", "help",
               "memory_empty", "group_ignored", "timezone_set", "timezone_unknown",
               "timezone_now", "timezone_later"]
Language = Literal["en", "nl", "de"]

KINDS: tuple[Kind, ...] = ("hold", "failed", "paused", "resumed", "forgotten", "deleted",
                           "welcome", "help", "memory_empty", "group_ignored", "timezone_set",
                           "timezone_unknown", "timezone_now", "timezone_later")
LANGUAGES: tuple[Language, ...] = ("en", "nl", "de")
COMMANDS = ("memory", "forget", "export", "delete", "invite", "pause", "resume", "timezone",
            "help")

_COMMAND_TEXT: dict[Language, dict[str, str]] = {
    "en": {
        "memory": "see what I remember about you",
        "forget": "clear what I remember and our recent chat",
        "export": "get a file with what I remember",
        "delete": "delete everything I keep for you",
        "invite": "a link to share with a friend",
        "pause": "stop me from messaging you first",
        "resume": "let me check in on you again",
        "timezone": "tell me your time zone, e.g. /timezone Europe/London",
        "help": "this list",
    },
    "nl": {
        "memory": "zien wat ik over je onthoud",
        "forget": "wissen wat ik onthoud en ons laatste gesprek",
        "export": "een bestand met wat ik onthoud",
        "delete": "alles verwijderen wat ik voor je bewaar",
        "invite": "een link om met een vriend te delen",
        "pause": "ik stuur je niet meer uit mezelf een bericht",
        "resume": "ik laat weer af en toe van me horen",
        "timezone": "je tijdzone, bv. /timezone Europe/Amsterdam",
        "help": "dit lijstje",
    },
    "de": {
        "memory": "sehen, was ich mir über dich merke",
        "forget": "löschen, was ich mir merke, und unseren letzten Chat",
        "export": "eine Datei mit dem, was ich mir merke",
        "delete": "alles löschen, was ich für dich speichere",
        "invite": "ein Link zum Teilen mit Freunden",
        "pause": "ich schreibe dir nicht mehr von mir aus",
        "resume": "ich melde mich wieder ab und zu",
        "timezone": "deine Zeitzone, z. B. /timezone Europe/Berlin",
        "help": "diese Liste",
    },
}

_HELP_HEAD: dict[Language, str] = {
    "en": "Here's what I understand:",
    "nl": "Dit kan ik:",
    "de": "Das verstehe ich:",
}
_HELP_FOOT: dict[Language, str] = {
    "en": "Or just write to me, the way you'd text a friend.",
    "nl": "Of schrijf me gewoon, zoals je een vriend zou appen.",
    "de": "Oder schreib mir einfach, so wie du einem Freund schreiben würdest.",
}


def _help(lang: Language) -> str:
    lines = [f"/{name} — {_COMMAND_TEXT[lang][name]}" for name in COMMANDS]
    return "\n".join([_HELP_HEAD[lang], *lines, _HELP_FOOT[lang]])


_LINES: dict[Language, dict[Kind, tuple[str, ...]]] = {
    "en": {
        "hold": (
            "Give me a moment, I'll get back to you.",
            "Hang on a sec, I'll be right with you.",
            "One moment! Let me catch up and I'll answer you soon.",
            "Just a moment, I'm on it. I'll write back in a bit.",
        ),
        "failed": (
            "Sorry, I lost my thread there — say that again?",
            "Oops, my mind went blank for a second. Could you say that again?",
        ),
        "paused": ("Okay, I won't message you first for now. You can still write me anytime, "
                   "and /resume turns my check-ins back on.",),
        "resumed": ("Got it, I'll check in on you now and then again. "
                    "/pause stops that whenever you like.",),
        "forgotten": ("Done. I've forgotten what I knew about you and our recent chat, "
                      "so we're starting fresh.",),
        "deleted": ("Done. Everything I kept for you is deleted. "
                    "If you write again, we'll start from scratch.",),
        "welcome": ("Hi! I'm glad you're here. Tell me about your day: I'll remember the "
                    "important bits, and /memory and /forget let you see or clear what I "
                    "remember. /help lists everything.",),
        "help": (_help("en"),),
        "memory_empty": ("I don't remember anything about you yet. Tell me something!",),
        "group_ignored": ("I only chat one-on-one. Message me directly and I'm all yours!",),
        "timezone_set": ("Got it, I'll keep your clock in mind: {zone}.",),
        "timezone_unknown": ("I don't know that time zone. Try one like /timezone "
                             "Europe/London or /timezone America/New_York.",),
        "timezone_now": ("Your time zone here is {zone}. /timezone Area/City changes it.",),
        "timezone_later": ("You changed your time zone today already; try again tomorrow.",),
    },
    "nl": {
        "hold": (
            "Momentje, ik kom zo bij je terug.",
            "Geef me heel even, ik antwoord je zo.",
            "Even geduld, ik reageer zo!",
            "Wacht even, ik ben er zo weer.",
        ),
        "failed": (
            "Sorry, ik was de draad even kwijt. Kun je dat nog eens zeggen?",
            "Oeps, even een black-out. Zeg je het nog een keer?",
        ),
        "paused": ("Oké, ik stuur je voorlopig niet uit mezelf een bericht. Je kunt me altijd "
                   "schrijven, en met /resume zet je het weer aan.",),
        "resumed": ("Top, ik laat weer af en toe van me horen. Met /pause stop je dat "
                    "wanneer je wilt.",),
        "forgotten": ("Gedaan. Ik ben vergeten wat ik over je wist en wat we laatst bespraken, "
                      "dus we beginnen opnieuw.",),
        "deleted": ("Gedaan. Alles wat ik voor je bewaarde is verwijderd. Als je weer "
                    "schrijft, beginnen we helemaal opnieuw.",),
        "welcome": ("Hoi! Leuk dat je er bent. Vertel eens hoe je dag was: ik onthoud de "
                    "belangrijke dingen, en met /memory en /forget zie of wis je wat ik "
                    "onthoud. /help laat alles zien.",),
        "help": (_help("nl"),),
        "memory_empty": ("Ik weet nog niets over je. Vertel eens wat!",),
        "group_ignored": ("Ik chat alleen één-op-één. Stuur me een privébericht, dan ben ik er "
                          "helemaal voor je!",),
        "timezone_set": ("Genoteerd, ik houd rekening met jouw klok: {zone}.",),
        "timezone_unknown": ("Die tijdzone ken ik niet. Probeer bijvoorbeeld /timezone "
                             "Europe/Amsterdam.",),
        "timezone_now": ("Je tijdzone hier is {zone}. Met /timezone Gebied/Stad pas je die "
                         "aan.",),
        "timezone_later": ("Je hebt je tijdzone vandaag al aangepast; probeer het morgen "
                           "weer.",),
    },
    "de": {
        "hold": (
            "Einen Moment, ich melde mich gleich bei dir.",
            "Gib mir kurz Zeit, ich antworte dir gleich.",
            "Moment noch, ich bin gleich wieder da!",
            "Kleinen Augenblick, ich schreib dir gleich zurück.",
        ),
        "failed": (
            "Sorry, da hab ich den Faden verloren. Sagst du das nochmal?",
            "Hoppla, kurz war mein Kopf leer. Kannst du das nochmal schreiben?",
        ),
        "paused": ("Okay, ich schreibe dir vorerst nicht von mir aus. Du kannst mir jederzeit "
                   "schreiben, und mit /resume schaltest du es wieder ein.",),
        "resumed": ("Alles klar, ich melde mich wieder ab und zu. Mit /pause stoppst du das "
                    "jederzeit.",),
        "forgotten": ("Erledigt. Ich habe vergessen, was ich über dich wusste und worüber wir "
                      "zuletzt geredet haben. Wir fangen neu an.",),
        "deleted": ("Erledigt. Alles, was ich für dich gespeichert hatte, ist gelöscht. Wenn du "
                    "wieder schreibst, fangen wir ganz von vorne an.",),
        "welcome": ("Hallo! Schön, dass du da bist. Erzähl mir von deinem Tag: Ich merke mir das "
                    "Wichtige, und mit /memory und /forget siehst oder löschst du, was ich mir "
                    "merke. /help zeigt alles.",),
        "help": (_help("de"),),
        "memory_empty": ("Ich weiß noch nichts über dich. Erzähl mir was!",),
        "group_ignored": ("Ich chatte nur zu zweit. Schreib mir direkt, dann bin ich ganz für "
                          "dich da!",),
        "timezone_set": ("Alles klar, ich denke an deine Uhrzeit: {zone}.",),
        "timezone_unknown": ("Diese Zeitzone kenne ich nicht. Versuch es zum Beispiel mit "
                             "/timezone Europe/Berlin.",),
        "timezone_now": ("Deine Zeitzone hier ist {zone}. Mit /timezone Gebiet/Stadt änderst du "
                         "sie.",),
        "timezone_later": ("Du hast deine Zeitzone heute schon geändert; versuch es morgen "
                           "wieder.",),
    },
}


def language(language_code: str | None) -> Language:
    """The companion's language for a platform language tag: Dutch, German, or else English."""
    primary = (language_code or "").strip().lower().replace("_", "-").split("-")[0]
    if primary == "nl":
        return "nl"
    if primary == "de":
        return "de"
    return "en"


def pick(kind: Kind, language_code: str | None, rng: random.Random) -> str:
    """One line of `kind` in the user's language; variants are chosen with `rng`."""
    lines = _LINES[language(language_code)].get(kind)
    if not lines:
        raise ValueError(f"no companion line of kind {kind!r}; kinds are {', '.join(KINDS)}")
    return rng.choice(lines)


def variants(kind: Kind, language_code: str | None) -> tuple[str, ...]:
    """Every line of `kind` in the user's language (for tests, and to recognise our own lines)."""
    return _LINES[language(language_code)][kind]


def commands(language_code: str | None) -> list[tuple[str, str]]:
    """(command, description) pairs for the platform's command menu, in the user's language."""
    lang = language(language_code)
    return [(name, _COMMAND_TEXT[lang][name]) for name in COMMANDS]
