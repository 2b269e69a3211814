"""The call vocabulary, the one parser for typed lines and speech transcripts, and how
numbers, faces and bids are said.

Every input source (keyboard, pipe, microphone, WAV files) turns what it heard into text and
hands it to `parse_call`, so typed and spoken calls cannot drift apart. The parser is strict:
the whole utterance must be a call, give or take a few filler words, so table chatter such as
"six of us played last night" never becomes one.

Long: the call types, the words each is said in and the parser that reads them stay together,
so a word added to a table is read by the parser in the same place.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Iterator, Sequence, Union

from companion.errors import CompanionError
from companion.rules.bids import ACE, Bid
from companion.rules.errors import BadSetup
from companion.rules.names import folded, name_key

# --- saying: numbers, faces and bids in words -----------------------------------------------

_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = {20: "twenty", 30: "thirty", 40: "forty", 50: "fifty", 60: "sixty", 70: "seventy", 80: "eighty",
         90: "ninety"}

FACE_SINGULAR = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
FACE_PLURAL = {2: "twos", 3: "threes", 4: "fours", 5: "fives", 6: "sixes"}
# The name of face 1 differs by rulebook ("aces", "pacos", "jokers"); the rules say which.
ACE_WORDS = {"aces": "ace", "pacos": "paco", "jokers": "joker", "ones": "one"}


LARGEST_SPELT = 99  # number_words gives figures past it: no table holds a hundred dice


def number_words(n: int) -> str:
    """Spell a count the way it is said: 21 -> "twenty one"; past LARGEST_SPELT, in figures."""
    if n < 0:
        raise ValueError(f"no words for a negative number: {n}")
    if n < 20:
        return _UNITS[n]
    if n <= LARGEST_SPELT:
        tens, unit = divmod(n, 10)
        return _TENS[tens * 10] + (f" {_UNITS[unit]}" if unit else "")
    return str(n)


def face_words(face: int, count: int = 2, ace_word: str = "pacos") -> str:
    """The face as said after a count: "fives", "six" (after one), "pacos"."""
    if face == ACE:
        return ace_word if count != 1 else ACE_WORDS.get(ace_word, ace_word)
    return FACE_PLURAL[face] if count != 1 else FACE_SINGULAR[face]


def face_to_count(face: int, aces_wild: bool, ace_word: str) -> str:
    """What players must count at a reveal: "fives, pacos included"."""
    if face == ACE:
        return ace_word
    if aces_wild:
        return f"{face_words(face)}, {ace_word} included"
    return f"{face_words(face)} only, {ace_word} are not wild"


def bid_words(bid: Bid, ace_word: str = "pacos") -> str:
    """A bid as players say it, which `parse_call` reads back: "nine fives", "one paco"."""
    return f"{number_words(bid.count)} {face_words(bid.face, bid.count, ace_word)}"


# Why a line with no words of a call in it, or a player's name alone, is none; the referee
# answers a name alone with how to say a call after it.
NOTHING_SAID = "nothing was said"


class UnparsableCall(CompanionError, ValueError):
    """The words are not a call: the answer is "say again", never a guess."""

    def __init__(self, text: str, why: str = "that is not a call I know") -> None:
        super().__init__(f"{why}: {text!r}")
        self.text = text
        self.why = why


class Command(enum.Enum):
    UNDO = "undo"
    REPEAT = "repeat"
    STATUS = "status"
    YES = "yes"
    NO = "no"
    NEW_GAME = "new game"  # typed: the same table plays again once the game is won


@dataclass(frozen=True)
class BidCall:
    bid: Bid
    speaker: str | None = None

    def to_json(self) -> dict:
        return {"kind": "bid", "count": self.bid.count, "face": self.bid.face}


@dataclass(frozen=True)
class DudoCall:
    speaker: str | None = None

    def to_json(self) -> dict:
        return {"kind": "dudo"}


@dataclass(frozen=True)
class CalzaCall:
    speaker: str | None = None

    def to_json(self) -> dict:
        return {"kind": "calza"}


@dataclass(frozen=True)
class PalificoCall:
    speaker: str | None = None

    def to_json(self) -> dict:
        return {"kind": "palifico"}


@dataclass(frozen=True)
class NumberCall:
    """A bare number: the count of the bid face after a challenge."""

    value: int
    speaker: str | None = None

    def to_json(self) -> dict:
        return {"kind": "number", "value": self.value}


@dataclass(frozen=True)
class HandCall:
    """One player's revealed dice: "Ana 1 5 5 3 2"."""

    player: str
    dice: tuple[int, ...]
    speaker: str | None = None

    def to_json(self) -> dict:
        return {"kind": "hand", "player": self.player, "dice": list(self.dice)}


@dataclass(frozen=True)
class CommandCall:
    name: Command
    speaker: str | None = None

    def to_json(self) -> dict:
        return {"kind": "command", "name": self.name.value}


Call = Union[BidCall, DudoCall, CalzaCall, PalificoCall, NumberCall, HandCall, CommandCall]

# --- hearing: the words a call may use ------------------------------------------------------

NUMBER_WORDS: dict[str, int] = {number_words(n): n for n in (*range(1, 20), *_TENS)}
NUMBER_WORDS.update({"a": 1, "an": 1, "zero": 0, "none": 0, "no": 0})
# Sound-alikes a recogniser (or a hurried typist) produces for numbers; each is deliberate
# and tested. "to"/"too" -> two, "for"/"fore" -> four, "won" -> one, "ate" -> eight...
NUMBER_MISHEARINGS: dict[str, int] = {
    "won": 1, "to": 2, "too": 2, "tu": 2, "tree": 3, "free": 3, "for": 4, "fore": 4,
    "fiver": 5, "sex": 6, "sick": 6, "seben": 7, "ate": 8, "nein": 9,
    "tin": 10, "twelf": 12, "fourty": 40,
}

FACE_WORDS: dict[str, int] = {}
for _face, _word in FACE_PLURAL.items():
    FACE_WORDS[_word] = _face
for _face, _word in FACE_SINGULAR.items():
    FACE_WORDS[_word] = _face
FACE_WORDS.update({
    "ones": ACE, "one": ACE, "aces": ACE, "ace": ACE, "pacos": ACE, "paco": ACE,
    "jokers": ACE, "joker": ACE, "deuces": 2, "deuce": 2, "treys": 3, "trey": 3,
})
FACE_MISHEARINGS: dict[str, int] = {
    "sexes": 6, "sixths": 6, "six's": 6, "sixties": 6, "fifes": 5, "fives'": 5, "fives's": 5,
    "fours'": 4, "forks": 4, "fourths": 4, "trees": 3, "threes'": 3, "tues": 2, "twos'": 2,
    "tooth": 2, "packers": ACE, "pakos": ACE, "packos": ACE, "pack": ACE, "aces'": ACE,
    "asses": ACE, "eyeses": ACE, "paco's": ACE, "pahcos": ACE, "pacoes": ACE,
}
# A face said in the singular ("nine six") is misheard like the number: "nine sex", "five to".
FACE_MISHEARINGS.update({w: v for w, v in NUMBER_MISHEARINGS.items() if 1 <= v <= 6})

DUDO_PHRASES = {"dudo", "doodoo", "du do", "do do", "dude oh", "dudu", "doubt", "i doubt it",
                "i doubt", "doubt it", "liar", "dude o", "dodo", "doodoe", "doo doe"}
# "calzo" is how many players say it; the sound-alikes are what a fixed-vocabulary
# recogniser (Vosk) writes for the Spanish words it does not know.
CALZA_PHRASES = {"calza", "calzo", "cal za", "cal so", "calls a", "call za", "kalza", "kalso",
                 "calls oh", "kalsa",
                 "spot on", "exact", "exactly"}
PALIFICO_PHRASES = {"palifico", "palafico", "pally fico", "pal if ico", "paly fico"}
COMMAND_PHRASES: dict[str, Command] = {
    "undo": Command.UNDO, "take it back": Command.UNDO, "take that back": Command.UNDO,
    "cancel": Command.UNDO,  # "cancel" after a bid means that bid (with a question waiting, that question)
    "repeat": Command.REPEAT, "again": Command.REPEAT, "say again": Command.REPEAT, "say that again": Command.REPEAT,
    "pardon": Command.REPEAT, "what": Command.REPEAT,
    "status": Command.STATUS, "what is the bid": Command.STATUS, "whats the bid": Command.STATUS,
    "what was the bid": Command.STATUS, "the bid": Command.STATUS, "score": Command.STATUS,
    "how many dice": Command.STATUS, "whose turn": Command.STATUS, "whose turn is it": Command.STATUS,
    "yes": Command.YES, "yeah": Command.YES, "correct": Command.YES, "right": Command.YES,
    "no": Command.NO, "nope": Command.NO, "wrong": Command.NO,
    "new game": Command.NEW_GAME, "play again": Command.NEW_GAME, "another game": Command.NEW_GAME,
}
# Said around a call without changing it ("um, I bid nine fives please", "the count is seven").
FILLERS = {"um", "uh", "er", "erm", "hmm", "ok", "okay", "so", "well", "please", "i", "bid",
           "say", "call", "there", "are", "there's", "theres", "of", "dice", "let's", "lets",
           "go", "then", "oh", "and", "like", "make", "it", "i'll", "ill", "the", "count", "is"}
# Every word a call can hold, and every phrase of them run together: a player named one
# ("Paco", "Spot", "Spoton") would be taken for the speaker of "one paco" or "spot on".
_CALL_TABLES = (NUMBER_WORDS, NUMBER_MISHEARINGS, FACE_WORDS, FACE_MISHEARINGS, FILLERS,
                DUDO_PHRASES, CALZA_PHRASES, PALIFICO_PHRASES, COMMAND_PHRASES)
CALL_WORDS = {w.replace("'", "") for table in _CALL_TABLES for phrase in table
              for w in (*phrase.split(), phrase.replace(" ", ""))}


_DIGIT_FACES = {1: "ones", **FACE_PLURAL}
_DIGIT_FACE_WORDS = {str(face) for face in _DIGIT_FACES}


def _normalise(text: str) -> list[str]:
    text = folded(text).replace("what's", "what is").replace("’", "'")
    # A face typed as a digit, as rulebooks write bids ("five 2s", "twelve 4's")
    text = re.sub(r"\b([1-6])'?s\b", lambda m: f" {_DIGIT_FACES[int(m.group(1))]}", text)
    text = re.sub(r"(\d+)([a-z])", r"\1 \2", text)  # "9fives" -> "9 fives"
    text = re.sub(r"[^a-z0-9' ]+", " ", text.replace("-", " "))
    return [w.strip("'") if w not in FACE_MISHEARINGS else w for w in text.split()]


def _number(words: list[str], i: int) -> tuple[int, int] | None:
    """Read a number starting at words[i]: returns (value, words used) or None."""
    if i >= len(words):
        return None
    word = words[i]
    if word.isdigit():
        # No table has a million dice; int() also refuses numbers of 4,300+ digits.
        return (int(word), 1) if len(word) <= 6 else None
    value = NUMBER_WORDS.get(word, NUMBER_MISHEARINGS.get(word))
    if value is None:
        return None
    if value >= 20 and value % 10 == 0 and i + 1 < len(words):
        unit = NUMBER_WORDS.get(words[i + 1], NUMBER_MISHEARINGS.get(words[i + 1]))
        if unit is not None and 1 <= unit <= 9 and words[i + 1] not in ("a", "an"):
            return value + unit, 2
    return value, 1


def _face(word: str) -> int | None:
    return FACE_WORDS.get(word, FACE_MISHEARINGS.get(word))


def _strip_name(words: list[str], players: Sequence[str]) -> tuple[str | None, list[str]]:
    """The speaker named first (or last: "calza, Ben") and the words left. A name is its own
    words ("jean luc" for Jean-Luc) or written as one ("jeanluc", "oneil" for O'Neil)."""
    def bare(ws):  # "o'neil" typed either way
        return tuple(w.replace("'", "") for w in ws)

    forms = sorted(((bare(form), p) for p in players for form in (_normalise(p), [name_key(p)])),
                   key=lambda fp: -len(fp[0]))  # the longest first: "jean luc" before "jean"
    said = bare(words)
    for form, player in forms:
        if said[:len(form)] == form:
            return player, words[len(form):]
    for form, player in forms:
        if len(words) > len(form) and said[-len(form):] == form:
            return player, words[:-len(form)]
    return None, words


def parse_call(text: str, players: Sequence[str] = ()) -> Call:
    """Turn a line or transcript into a Call, or raise UnparsableCall.

    `players` lets a leading (or trailing) name be read as the speaker ("Ben calza") and a
    name followed by die faces as a revealed hand ("Ana 1 5 5 3 2").
    """
    if re.search(r"(^|[^\w])-\s*\d", text):  # "-3 fives": the minus would go with the punctuation
        raise UnparsableCall(text, "a count cannot be negative")
    words = _normalise(text)
    if not words:
        raise UnparsableCall(text, NOTHING_SAID)
    speaker, words = _strip_name(words, players)
    if not words:
        raise UnparsableCall(text, NOTHING_SAID)  # a name alone
    if speaker is None and re.search(r"(?<![\d.])\d+\.\d+(?![\d.])", text):
        # "3.5" would read as "3 5", three fives; a hand may part its dice with dots ("Ana 5.5.3")
        raise UnparsableCall(text, "a count is a whole number")
    # The whole line first, before fillers go (some sound-alikes contain one: "cal so", "dude
    # oh"), then with fillers taken off its ends ("take it back please", "ok, dudo"); inside a
    # command or challenge they are its own words ("it" of "take it back", "the" of "the bid").
    for phrase in _cores(words):
        if phrase in COMMAND_PHRASES:
            return CommandCall(COMMAND_PHRASES[phrase], speaker)
        for table, kind in ((DUDO_PHRASES, DudoCall), (CALZA_PHRASES, CalzaCall), (PALIFICO_PHRASES, PalificoCall)):
            if phrase in table:
                return kind(speaker)
    # "a" before a filler is an article, not one ("a count of two")
    words = [w for i, w in enumerate(words) if not (
        w in ("a", "an") and i + 1 < len(words) and words[i + 1] in FILLERS and words[i + 1] not in NUMBER_WORDS)]
    words = [w for w in words if w not in FILLERS or w in NUMBER_WORDS]
    # "a" and "an" only count as one in front of a face ("a six"); elsewhere they are filler.
    if len(words) != 2:
        words = [w for w in words if w not in ("a", "an")]
    phrase = " ".join(words)
    if not words:
        raise UnparsableCall(text)  # only words said around a call ("make it", "um")
    if phrase in DUDO_PHRASES:
        return DudoCall(speaker)
    if phrase in CALZA_PHRASES:
        return CalzaCall(speaker)
    if phrase in PALIFICO_PHRASES:
        return PalificoCall(speaker)
    if phrase in COMMAND_PHRASES:
        return CommandCall(COMMAND_PHRASES[phrase], speaker)

    if speaker is not None and all(w.isdigit() or w in NUMBER_WORDS or w in NUMBER_MISHEARINGS
                                   for w in words):
        dice = _read_numbers(words, text)
        if dice and all(1 <= d <= 6 for d in dice) and (len(dice) > 1 or len(words) == 1):
            return HandCall(speaker, tuple(dice), speaker)

    number = _number(words, 0)
    if number is None:
        raise UnparsableCall(text)
    value, used = number
    rest = words[used:]
    if not rest:  # a count past the dice in play is the referee's to refuse, with the range
        return NumberCall(value, speaker)
    if len(rest) == 1 and rest[0] in _DIGIT_FACE_WORDS:  # "four 3", typed as a rulebook writes it
        rest = [_DIGIT_FACES[int(rest[0])]]
    if len(rest) == 1 and _face(rest[0]) is not None:
        if value < 1:  # a count past the dice in play is the rules' to refuse, with the reason
            raise UnparsableCall(text, "a bid needs a count from one up")
        return BidCall(Bid(value, _face(rest[0])), speaker)
    raise UnparsableCall(text)


def _cores(words: list[str]) -> Iterator[str]:
    """The line with fillers taken off its ends, fewest first: "whose turn is it please" gives
    "whose turn is it please", "whose turn is it", "whose turn is"..."""
    lead = min(6, next((i for i, w in enumerate(words) if w not in FILLERS), len(words)))
    trail = min(6, next((i for i, w in enumerate(reversed(words)) if w not in FILLERS), len(words)))
    for cut in range(lead + trail + 1):
        for i in range(min(cut, lead) + 1):
            j = len(words) - (cut - i)
            if cut - i <= trail and i < j:
                yield " ".join(words[i:j])


def _read_numbers(words: list[str], text: str) -> list[int]:
    values, i = [], 0
    while i < len(words):
        if words[i].isdigit() and len(words[i]) > 1 and all(c in "123456" for c in words[i]):
            values.extend(int(c) for c in words[i])  # "15532" typed without spaces
            i += 1
            continue
        number = _number(words, i)
        if number is None:
            raise UnparsableCall(text)
        values.append(number[0])
        i += 1  # word by word: a die shows one face, so "twenty one" is never a single value
    return values


def parse_call_or_none(text: str, players: Sequence[str] = ()) -> Call | None:
    try:
        return parse_call(text, players)
    except UnparsableCall:
        return None


# Words a typed line says alone to the referee, so no player's name: asking for help, asking
# how to stop, and stopping (the input ends there, as at the end of a file).
HELP_WORDS = ("help", "what can i say", "commands")
STOP_WORDS = ("stop", "end", "bye")
QUIT_WORDS = ("quit", "exit")
TYPED_ALONE = frozenset((*HELP_WORDS, *STOP_WORDS, *QUIT_WORDS))


def check_player_names(names: Sequence[str]) -> None:
    """Refuse names the parser could not tell apart from calls ("Five", "Dudo", "Ana Maria",
    "Paco" of "one paco"). Names the referee would hear as one ("José" and "Jose") are the
    game's to refuse (rules.Game)."""
    for name in names:
        key = name_key(name)
        if len(name.split()) != 1 or not re.fullmatch(r"[a-z]+", key):
            raise BadSetup(f"player names must be single words of Latin letters (accents, hyphens and "
                           f"apostrophes are fine); {name!r} is not")
        if parse_call_or_none(name) is not None or key in CALL_WORDS:
            raise BadSetup(f"{name!r} is a word of the calls; choose another name for that player")
        if key in TYPED_ALONE:
            raise BadSetup(f"{name!r} typed alone asks the referee for help or to stop; choose another name "
                           f"for that player")
        said = " ".join(_normalise(name))  # "Ben-Calza" said is "ben calza": Ben's calza
        if parse_call_or_none(said, [n for n in names if n != name]) is not None:
            raise BadSetup(f"{name!r} said aloud is a call ({said!r}); choose another name for that player")
    for name in names:  # every name its own word or words by now
        words = _normalise(name)
        for other in names:
            part = _normalise(other)
            if other != name and len(part) < len(words) and any(
                    words[i:i + len(part)] == part for i in range(len(words) - len(part) + 1)):
                # "Ana Ben calza" aloud: Ana-Ben's, or Ben's after "Ana"?
                raise BadSetup(f"{name!r} holds another player's name, {other}; choose another name for one of them")


def describe_call(call: Call, ace_word: str = "pacos") -> str:
    """Read a call back in words, the way the referee confirms it ("Ben calza", "Ana one
    five five three two")."""
    who = f"{call.speaker} " if call.speaker else ""
    if isinstance(call, BidCall):
        return who + bid_words(call.bid, ace_word)
    if isinstance(call, DudoCall):
        return who + "dudo"
    if isinstance(call, CalzaCall):
        return who + "calza"
    if isinstance(call, PalificoCall):
        return who + "palifico"
    if isinstance(call, NumberCall):
        return who + number_words(call.value)
    if isinstance(call, HandCall):
        return f"{call.player} " + " ".join(number_words(d) for d in call.dice)
    return who + call.name.value


def call_to_json(call: Call | None) -> dict | None:
    """A call as `hear --json` prints it: its kind and words, and who called it where a name
    was said ("Cleo calza": `"caller": "Cleo"`; a hand's caller is its player)."""
    if call is None:
        return None
    data = call.to_json()
    if call.speaker and not isinstance(call, HandCall):
        data["caller"] = call.speaker
    return data
