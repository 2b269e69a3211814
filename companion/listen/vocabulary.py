"""What a recogniser may hear: the call grammar, built from the parser's own tables.

Every engine is constrained to the words `companion.calls` can read, so a transcript is
always something the one parser understands (or plainly not a call). Words Vosk's fixed
vocabulary does not know get a sound-alike spelling that the parser maps back.
"""

from __future__ import annotations

import re
from typing import Sequence

from companion.calls import COMMAND_PHRASES, LARGEST_SPELT, BidCall, number_words, parse_call_or_none
from companion.errors import CompanionError
from companion.rules.names import name_key
from companion.sources import Expect


class VocabularyError(CompanionError):
    """A grammar word (usually a player's name) cannot be pronounced by the model."""


# Counts and bare numbers the grammar allows: a game of six players has at most 30 dice.
# A bigger table passes its own most dice (up to LARGEST_COUNT, the last number spelt).
MAX_COUNT = 30
LARGEST_COUNT = LARGEST_SPELT


def count_words(max_count: int = MAX_COUNT) -> list[str]:
    """ "one" to the spelt `max_count`: every count the grammar can hear."""
    if not 1 <= max_count <= LARGEST_COUNT:
        raise VocabularyError(f"counts up to {max_count} cannot be listened for "
                              f"(at most {LARGEST_COUNT} dice)")
    return [number_words(n) for n in range(1, max_count + 1)]


# The words for face one that every engine hears (the bundled network's and Vosk's): the
# leaflet's "jokers" is not among them, so a table playing it is told to say "ones".
ACE_WORDS_HEARD = ("ones", "aces", "pacos")


def aces_to_say(spoken: bool, ace_word: str) -> str | None:
    """The word a table playing by `ace_word` should say for aces, where speech cannot hear
    that one (None: say it as the rules do, or type it)."""
    return "ones" if spoken and ace_word not in ACE_WORDS_HEARD else None


FACE_TERMS = [*ACE_WORDS_HEARD, "twos", "threes", "fours", "fives", "sixes",
              "one", "ace", "paco", "two", "three", "four", "five", "six"]
DIE_WORDS = ["one", "two", "three", "four", "five", "six"]
CHALLENGES = ["dudo", "calza", "calzo", "palifico", "i doubt it", "liar", "spot on", "exactly"]
# Spoken commands: a subset of calls.COMMAND_PHRASES short enough to be heard reliably.
COMMANDS = ["undo", "take it back", "repeat", "say again", "say that again", "pardon",
            "status", "what is the bid", "whats the bid", "what was the bid", "whose turn is it",
            "how many dice", "yes", "yeah", "correct", "no", "nope", "wrong", "cancel"]
LEADS = ["um", "uh", "well", "okay", "so", "i bid", "i say", "and"]

assert all(c in COMMAND_PHRASES for c in COMMANDS)

# For Vosk (no pronunciations can be added): sound-alike spellings, best first. Each maps
# back to the call through calls.py's tables (DUDO_PHRASES, CALZA_PHRASES, FACE_MISHEARINGS...).
SOUND_ALIKES: dict[str, list[str]] = {
    "dudo": ["doodoo", "do do", "dude oh"],
    "calza": ["kalza", "cal za", "calls a"],
    "calzo": ["kalso", "cal so", "calls oh", "calls a"],
    "pacos": ["pakos", "packos", "paco's", "packers"],
    "palifico": ["palafico", "pally fico", "paly fico"],
}


def normalise_name(name: str) -> str:
    """A player's name as one grammar word: the parser's key for it ("José" -> "jose")."""
    word = name_key(name)
    if not re.fullmatch(r"[a-z]+", word):
        raise VocabularyError(
            f"the player name {name!r} cannot be spoken to the recogniser: use letters only "
            "(one word per player, e.g. 'Ana')")
    return word


def grammar_words(players: Sequence[str] = (), max_count: int = MAX_COUNT) -> set[str]:
    words: set[str] = set()
    for group in (count_words(max_count), FACE_TERMS, CHALLENGES, COMMANDS, LEADS, ["a", "an", "please", "zero"]):
        for phrase in group:
            words.update(phrase.split())
    words.update(normalise_name(p) for p in players)
    return words


def phrase_list(players: Sequence[str] = (), expect: Expect = Expect.ANY,
                max_count: int = MAX_COUNT) -> list[str]:
    """Every call (or those that can be said now) as a whole phrase, for Vosk's
    list-of-phrases grammar."""
    names = [normalise_name(p) for p in players]
    counts = count_words(max_count)
    phrases = list(COMMANDS)
    if expect is not Expect.COUNT:
        # Not "twenty one" and the like: said alone they are the number, not twenty ones.
        bids = [b for b in (f"{c} {f}" for c in counts + ["a"] for f in FACE_TERMS)
                if isinstance(parse_call_or_none(b, ()), BidCall)]
        phrases += bids + [f"i bid {b}" for b in bids] + CHALLENGES
        for name in names:
            phrases += [f"{name} {c}" for c in CHALLENGES] + [f"{c} {name}" for c in CHALLENGES]
    if expect is not Expect.CALLS:
        phrases += counts + ["zero"]
        # Hands ("ana one five five three two") are too many as whole phrases: a name and
        # its first die, then dice words in short runs, which Vosk strings together.
        phrases += [f"{name} {d}" for name in names for d in DIE_WORDS]
        phrases += [f"{a} {b}" for a in DIE_WORDS for b in DIE_WORDS]
    return phrases
