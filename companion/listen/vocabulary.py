"""What a recogniser may hear: the call grammar, built from the parser's own tables.

Both engines are constrained to the words `companion.calls` can read, so a transcript is
always something the one parser understands (or plainly not a call). Words a model does not
know get a pronunciation (pocketsphinx) or a sound-alike spelling that the parser maps back
(Vosk, whose vocabulary is fixed).
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from companion.calls import COMMAND_PHRASES, BidCall, parse_call_or_none
from companion.errors import CompanionError
from companion.rules.bids import number_words
from companion.sources import Expect


class VocabularyError(CompanionError):
    """A grammar word (usually a player's name) cannot be pronounced by the model."""


# Counts and bare numbers the grammar allows: a game of six players has at most 30 dice.
# A bigger table passes its own most dice (up to LARGEST_COUNT, the last number spelt).
MAX_COUNT = 30
LARGEST_COUNT = 69


def count_words(max_count: int = MAX_COUNT) -> list[str]:
    """ "one" to the spelt `max_count`: every count the grammar can hear."""
    if not 1 <= max_count <= LARGEST_COUNT:
        raise VocabularyError(f"counts up to {max_count} cannot be listened for "
                              f"(at most {LARGEST_COUNT} dice)")
    return [number_words(n) for n in range(1, max_count + 1)]


FACE_TERMS = ["ones", "aces", "pacos", "twos", "threes", "fours", "fives", "sixes",
              "one", "ace", "paco", "two", "three", "four", "five", "six"]
DIE_WORDS = ["one", "two", "three", "four", "five", "six"]
CHALLENGES = ["dudo", "calza", "calzo", "palifico", "i doubt it", "liar", "spot on", "exactly"]
# Spoken commands: a subset of calls.COMMAND_PHRASES short enough to be heard reliably.
COMMANDS = ["undo", "take it back", "repeat", "say again", "say that again", "pardon",
            "status", "what is the bid", "whats the bid", "what was the bid", "whose turn is it",
            "how many dice", "yes", "yeah", "correct", "no", "nope", "wrong", "cancel"]
LEADS = ["um", "uh", "well", "okay", "so", "i bid", "i say", "and"]

assert all(c in COMMAND_PHRASES for c in COMMANDS)

# ARPAbet for the Spanish words the CMU dictionary lacks, with English-speaker variants.
SPANISH_PRONUNCIATIONS: dict[str, list[str]] = {
    "dudo": ["D UW D OW", "D UW D UW"],
    "calza": ["K AE L Z AH", "K AA L Z AH", "K AA L S AH"],
    "calzo": ["K AE L Z OW", "K AA L Z OW", "K AA L S OW"],
    "pacos": ["P AA K OW Z", "P AE K OW Z", "P AA K OW S"],
    "paco": ["P AA K OW", "P AE K OW"],
    "palifico": ["P AH L IY F IY K OW", "P AE L IH F IH K OW", "P AA L IY F IY K OW"],
    "whats": ["W AH T S"],
}

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
    word = name.strip().lower()
    if not re.fullmatch(r"[a-z]+", word):
        raise VocabularyError(
            f"the player name {name!r} cannot be spoken to the recogniser: use letters only "
            "(one word per player, e.g. 'Ana')")
    return word


def _alts(words: Iterable[str]) -> str:
    return " | ".join(words)


def jsgf(players: Sequence[str] = (), leads: Sequence[str] = LEADS, hands: bool = True,
         expect: Expect = Expect.ANY, max_count: int = MAX_COUNT) -> str:
    """The call grammar in JSGF, for pocketsphinx: every call, or only those that can be
    said at this point of the game (`expect`), with counts up to `max_count`."""
    names = [normalise_name(p) for p in players]
    count_words(max_count)  # refuses a largest count it cannot spell, before building
    if expect is Expect.COUNT:
        # No "um" or "uh" before a count: with them, "undo" said during a reveal was heard as
        # "um" and a number ("um two", "um zero": 30 of 45 espeak-ng recordings, 3 of them
        # confidently enough to settle the challenge); without them it is acted on in 12 (from 6) and never taken
        # for a count. Its other misreadings are a one-die hand ("ana two"), refused by the
        # dice check unless that player holds exactly one die.
        leads = ()
    tens = [f"{number_words(t)} [<unit>]" if t < max_count else number_words(t)
            for t in range(20, max_count + 1, 10)]
    units = [number_words(n) for n in range(1, 10)]
    teens = [number_words(n) for n in range(1, 20)]
    bidding, counting = expect is not Expect.COUNT, expect is not Expect.CALLS
    # Weights are priors: optional lead words, "a"/"an" as a count and names are rarer than
    # plain calls, so they must earn their place acoustically (they otherwise soak up noise).
    calls = {Expect.ANY: "/0.55/ <bid> | /0.15/ (<number> | zero) | /0.15/ <challenge> "
                         "| /0.15/ <command>",
             Expect.CALLS: "/0.65/ <bid> | /0.175/ <challenge> | /0.175/ <command>",
             Expect.COUNT: "/0.7/ (<number> | zero) | /0.3/ <command>"}[expect]
    lines = [
        "#JSGF V1.0;",
        "grammar perudo;",
        "<number> = " + " | ".join([_alts(teens[:max_count])] + tens) + ";",
        "<unit> = " + _alts(units) + ";",
        "<face> = " + _alts(FACE_TERMS) + ";",
        "<bid> = (/0.9/ <number> | /0.05/ a | /0.05/ an) <face>;",
        "<challenge> = " + _alts(CHALLENGES) + ";",
        "<command> = " + _alts(COMMANDS) + ";",
        ("<lead> = /0.9/ <NULL> | /0.1/ (" + _alts(leads) + ");") if leads else "<lead> = <NULL>;",
        "<tail> = /0.95/ <NULL> | /0.05/ please;",
        f"<call> = {calls};",
    ]
    # Named calls: "Ben calza" while bidding, "Ana one five five" (a hand) at the count.
    named = []
    if names and bidding:
        named += ["/0.05/ <name> <challenge>", "/0.05/ <challenge> <name>"]
    if names and counting and hands:
        named.append("/0.05/ <name> <hand>" if bidding else "/0.1/ <name> <hand>")
    if named:
        lines += [
            "<name> = " + _alts(names) + ";",
            "<die> = " + _alts(DIE_WORDS) + ";",
            "<hand> = <die> | <die> <die> | <die> <die> <die> | <die> <die> <die> <die>"
            " | <die> <die> <die> <die> <die>;",
            f"public <utterance> = <lead> (/{1 - 0.05 * len(named) if bidding else 0.9:g}/ "
            f"<call> | {' | '.join(named)}) <tail>;",
        ]
    else:
        lines.append("public <utterance> = <lead> <call> <tail>;")
    return "\n".join(lines) + "\n"


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


def letter_to_sound(word: str) -> str:
    """A rough ARPAbet spelling for a name the dictionary lacks (e.g. "Zoltan").

    Crude rules, but a grammar only has to tell the name from a few dozen other words.
    """
    rules = [
        ("tch", "CH"), ("sch", "SH K"), ("ch", "CH"), ("sh", "SH"), ("th", "TH"), ("ph", "F"),
        ("ck", "K"), ("ng", "NG"), ("qu", "K W"), ("wh", "W"), ("gh", "G"), ("kn", "N"),
        ("ee", "IY"), ("ea", "IY"), ("oo", "UW"), ("ou", "AW"), ("ow", "OW"), ("oi", "OY"),
        ("oy", "OY"), ("ai", "EY"), ("ay", "EY"), ("ei", "EY"), ("ie", "IY"), ("au", "AO"),
        ("aw", "AO"), ("ue", "UW"), ("ew", "UW"), ("a", "AE"), ("e", "EH"), ("i", "IH"),
        ("o", "AA"), ("u", "AH"), ("y", "IY"), ("b", "B"), ("c", "K"), ("d", "D"), ("f", "F"),
        ("g", "G"), ("h", "HH"), ("j", "JH"), ("k", "K"), ("l", "L"), ("m", "M"), ("n", "N"),
        ("p", "P"), ("r", "R"), ("s", "S"), ("t", "T"), ("v", "V"), ("w", "W"), ("x", "K S"),
        ("z", "Z"),
    ]
    word = word.lower()
    if word.endswith("e") and len(word) > 3 and word[-2] not in "aeiou":
        word = word[:-1]  # silent final e ("Jane", "Mike")
    phones, i = [], 0
    while i < len(word):
        for graph, phone in rules:
            if word.startswith(graph, i):
                if phones and phones[-1] == phone:  # doubled letters are one sound
                    pass
                else:
                    phones.append(phone)
                i += len(graph)
                break
        else:
            i += 1
    if word.endswith("a") and phones and phones[-1] == "AE":
        phones[-1] = "AH"  # final a is a schwa ("Ana", "Maria")
    if not phones:
        raise VocabularyError(f"cannot work out how to say {word!r}")
    return " ".join(phones)
