"""Pacing: how a reply is cut into messages, and how long the typing shows before each."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tactful.core.companion.pacing import (
    JITTER,
    LONG_PARAGRAPH,
    MAX_DELAY,
    MAX_MESSAGES,
    MIN_DELAY,
    TYPING_BASE,
    TYPING_PER_CHAR,
    split,
    typing_delays,
)

from .conftest import World

TEXT_LIMIT = 4096  # Telegram's limit for one message's text


class FixedRandom(random.Random):
    """Every draw is the same fraction of the way through its range: jitter made exact."""

    def __init__(self, fraction: float) -> None:
        super().__init__(0)
        self.fraction = fraction
        self.draws = 0

    def random(self) -> float:
        self.draws += 1
        return self.fraction


def long(*sentences: str) -> str:
    text = " ".join(sentences)
    assert len(text) > LONG_PARAGRAPH, "the test needs a paragraph long enough to be cut"
    return text


# ---- split ---------------------------------------------------------------------------------

def test_a_short_reply_is_one_message() -> None:
    assert split("Hey! Good to hear. How did it go?") == ["Hey! Good to hear. How did it go?"]


def test_paragraphs_become_messages() -> None:
    assert split("First thought.\n\nSecond one.\n  \nThird!") == [
        "First thought.", "Second one.", "Third!"]


def test_a_long_paragraph_is_cut_into_one_or_two_sentences_each() -> None:
    a = "I was thinking about what you said about the new job yesterday evening."
    b = "It sounds like a big change, and big changes are allowed to feel scary."
    c = "Still, you have done hard things before and came out fine every time."
    assert split(long(a, b, c)) == [f"{a} {b}", c]  # a and b fit one message, c does not


def test_never_more_than_two_sentences_in_one_message() -> None:
    short = ["How are you doing today, friend?", "Did you sleep well at all?",
             "I hope the rain finally stopped.", "Tell me about the interview.",
             "Was the manager nice to you?", "I want all the details!"]
    assert split(long(*short)) == [" ".join(short[i : i + 2]) for i in (0, 2, 4)]


def test_sentences_too_long_to_pair_go_alone() -> None:
    sentences = [f"This is sentence number {word} of a paragraph that goes on and on and on, "
                 "until it is far too long to share." for word in ("one", "two", "three")]
    assert split(long(*sentences)) == sentences


def test_at_most_four_messages_and_the_rest_joins_the_last() -> None:
    parts = split("One.\n\nTwo.\n\nThree.\n\nFour.\n\nFive.\n\nSix.")
    assert len(parts) == MAX_MESSAGES
    assert parts == ["One.", "Two.", "Three.", "Four.\n\nFive.\n\nSix."]


def test_overflow_inside_one_paragraph_keeps_its_spacing() -> None:
    sentences = [f"This is sentence number {word} of a paragraph that goes on and on and on, "
                 "until it is far too long to share."
                 for word in ("one", "two", "three", "four", "five", "six")]
    parts = split("  ".join(sentences))
    assert parts[:3] == sentences[:3]
    assert parts[3] == " ".join(sentences[3:])  # the double spaces tidied to one


# A sentence too long to share a message: whatever stands between two of them is one message
# exactly when it holds no sentence end.
FILLER = ("This sentence is only here to make the paragraph long, so that it must be cut up, and "
          "it is much too long to share a message with anything else at all, not even a word.")


@pytest.mark.parametrize("kept", [
    "For example e.g. this one and i.e. that one",
    "Dr. Jansen said it",
    "Pi is about 3.14 and that is fine",
    "Well... I am not sure",
    "Hmm… Maybe later",
    "See https://example.com/a.b?c=1&d=2.3 and tell me",
    "J. R. R. Tolkien wrote it",
    "At 5 p.m. Then we leave",
    "Am 3. Mai gehen wir",
    "Gern, z.B. Kuchen oder bzw. Torte",
    "Ok. see you soon",
])
def test_sentence_ends_that_are_not_sentence_ends(kept: str) -> None:
    # "Yes." pairs with the next sentence: with `kept` whole, that is all of it; cut, only a part.
    assert split(long(FILLER, "Yes.", kept + ".", FILLER)) == [FILLER, f"Yes. {kept}.", FILLER]


def test_and_the_sentence_ends_that_are() -> None:
    assert split(long(FILLER, "It was 1990. Then it was 1991. So?! Ha", FILLER)) == [
        FILLER, "It was 1990. Then it was 1991. So?!", f"Ha {FILLER}"]


def test_a_url_at_the_end_of_a_sentence_stays_whole() -> None:
    parts = split(long(FILLER, "Look at https://example.com/x.y.", "Then tell me.", FILLER))
    assert parts == [FILLER, "Look at https://example.com/x.y. Then tell me.", FILLER]


def test_emoji_stay_with_the_sentence_they_close() -> None:
    parts = split(long(FILLER, "That is great news! 🎉👍🏽", FILLER))
    assert parts == [FILLER, "That is great news! 🎉👍🏽", FILLER]
    family = "👨‍👩‍👧"
    parts = split(long(FILLER, f"Say hi to them!{family}", FILLER))
    assert parts == [FILLER, f"Say hi to them!{family}", FILLER]


def test_question_and_exclamation_cut_even_before_lower_case() -> None:
    filler = FILLER.lower().rstrip(".")
    parts = split(f"{filler}. really? {filler}! wow {filler}.")
    assert parts == [f"{filler}. really?", f"{filler}!", f"wow {filler}."]


def test_quotes_close_with_their_sentence() -> None:
    parts = split(long(FILLER, 'She said "go for it."', FILLER, '(And "wow!🎉")', FILLER))
    assert parts == [FILLER, 'She said "go for it."', FILLER, f'(And "wow!🎉") {FILLER}']
    parts = split(long(FILLER, 'Yes. "Go!🎉"', "Do.", FILLER))
    assert parts == [FILLER, 'Yes. "Go!🎉"', "Do.", FILLER]


def test_whitespace_is_tidied_and_nothing_is_empty() -> None:
    reply = "\r\n\r\n  Hi   there,\t\tfriend.  \r\n- milk  \n-   eggs\n\n\n\n   \n\nBye.  \n"
    assert split(reply) == ["Hi there, friend.\n- milk\n- eggs", "Bye."]


def test_lists_keep_their_lines() -> None:
    reply = "Three things:\n1. Sleep\n2. Water\n3. A walk"
    assert split(reply) == [reply]


@pytest.mark.parametrize("reply", ["", "   ", "\n\n\t\n"])
def test_an_empty_reply_has_no_messages(reply: str) -> None:
    assert split(reply) == []


_ALPHABET = st.sampled_from([*"abcdefghij ABCDEFG .!?…,'\"()-:/\n\t0123456789", "🎉", "👍🏽", "é",
                             "ß", "\u200d", "\ufe0f", "e.g.", "Dr.", "\r\n"])
_REPLIES = st.lists(_ALPHABET, max_size=400).map("".join)
_SENTENCE = st.builds(lambda words, end: " ".join(words) + end,
                      st.lists(st.sampled_from(["I", "you", "Went", "home", "e.g.", "Dr.", "3.14",
                                                "https://x.nl/a.b", "🎉", "ok...", "z.B."]),
                               min_size=1, max_size=12),
                      st.sampled_from([".", "!", "?", "?!", "", " 🎉"]))
_PROSE = st.lists(st.lists(_SENTENCE, min_size=1, max_size=8).map(" ".join),
                  min_size=1, max_size=7).map("\n\n".join)
_MANY = settings(max_examples=300)


@_MANY
@given(st.one_of(_REPLIES, _PROSE))
def test_every_word_survives_in_order_and_no_part_is_empty(reply: str) -> None:
    parts = split(reply)
    assert " ".join(parts).split() == reply.split()
    assert all(part and part == part.strip() for part in parts)
    assert len(parts) <= MAX_MESSAGES
    assert (parts == []) == (reply.strip() == "")


# ---- typing delays -------------------------------------------------------------------------

def test_the_formula_without_jitter() -> None:
    rng = FixedRandom(0.5)  # uniform(1 - JITTER, 1 + JITTER) gives exactly 1
    parts = ["x" * 20, "x" * 60]
    assert typing_delays(parts, thinking=0, rng=rng) == pytest.approx([1.5, 3.3])
    assert (TYPING_BASE, TYPING_PER_CHAR) == (0.6, 0.045)
    assert rng.draws == 2  # one draw per message


def test_jitter_at_both_ends() -> None:
    parts = ["x" * 60]
    assert typing_delays(parts, thinking=0, rng=FixedRandom(0.0)) == pytest.approx(
        [3.3 * (1 - JITTER)])
    assert typing_delays(parts, thinking=0, rng=FixedRandom(1.0)) == pytest.approx(
        [3.3 * (1 + JITTER)])


def test_seeded_jitter_is_exact_and_within_twenty_percent() -> None:
    parts = ["Hello there, how are you?", "x" * 80, "ok"]
    first = typing_delays(parts, thinking=0, rng=random.Random(42))
    assert first == typing_delays(parts, thinking=0, rng=random.Random(42))
    draws = random.Random(42)
    expected = [min(MAX_DELAY, max(MIN_DELAY, (0.6 + 0.045 * len(p)) * draws.uniform(0.8, 1.2)))
                for p in parts]
    assert first == expected
    assert 0.8 * (0.6 + 0.045 * 25) <= first[0] <= 1.2 * (0.6 + 0.045 * 25)


def test_clamped_to_one_and_seven_seconds() -> None:
    assert typing_delays(["Hi"], thinking=0, rng=FixedRandom(0.5)) == [MIN_DELAY]
    assert typing_delays(["x" * 10], thinking=0, rng=FixedRandom(0.0)) == [MIN_DELAY]  # 0.84
    assert typing_delays(["x" * 200], thinking=0, rng=FixedRandom(0.5)) == [MAX_DELAY]  # 9.6
    assert typing_delays(["x" * 130], thinking=0, rng=FixedRandom(1.0)) == [MAX_DELAY]  # 7.74
    assert (MIN_DELAY, MAX_DELAY) == (1.0, 7.0)


def test_thinking_time_comes_off_the_first_delay_only() -> None:
    parts = ["x" * 20, "x" * 20]
    assert typing_delays(parts, thinking=0.4, rng=FixedRandom(0.5)) == pytest.approx([1.1, 1.5])
    assert typing_delays(parts, thinking=30.0, rng=FixedRandom(0.5)) == pytest.approx([0.0, 1.5])
    assert typing_delays(parts, thinking=-2.0, rng=FixedRandom(0.5)) == pytest.approx([1.5, 1.5])
    # Subtracted after the clamp: a short first message still owes only its clamped second.
    assert typing_delays(["Hi"], thinking=0.25, rng=FixedRandom(0.5)) == pytest.approx([0.75])


def test_no_parts_no_delays() -> None:
    assert typing_delays([], thinking=3.0, rng=FixedRandom(0.5)) == []


# ---- in the gateway ----------------------------------------------------------------------------

async def test_a_long_reply_reaches_the_user_within_telegrams_limit(world: World) -> None:
    sentence = "This is one more sentence of a long and careful explanation about the topic. "
    paragraph = (sentence * 8).strip()  # ~620 characters, cut at sentence ends
    world.responder.replies = ["\n\n".join([paragraph] * 10)]  # ~6,200 characters in all
    await world.say("long_a", "explain it in detail please")
    texts = world.texts()
    assert texts, "nothing reached the user"
    assert all(len(t) <= TEXT_LIMIT for t in texts)
    assert sum(len(t) for t in texts) >= 4000  # the answer, not only an apology


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


async def test_an_emoji_reply_is_cut_as_telegram_counts_length(world: World) -> None:
    # 🙂 counts two UTF-16 units: 3,000 of them fit Telegram's 4,096 as code points, not as
    # Telegram counts, so a part measured in code points would be refused by the platform.
    world.responder.replies = ["🙂" * 3000]
    await world.say("emoji_a", "show me a lot of smiles")
    texts = world.texts()
    assert texts, "nothing reached the user"
    assert all(_utf16(t) <= TEXT_LIMIT for t in texts), [_utf16(t) for t in texts]
    assert "".join(texts).count("🙂") == 3000  # nothing lost in the cut
