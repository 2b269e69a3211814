"""Bids, their spoken form, and the one ordering every raise is checked against."""

from __future__ import annotations

from dataclasses import dataclass

ACE = 1
FACES = (1, 2, 3, 4, 5, 6)
PLAIN_FACES = (2, 3, 4, 5, 6)

_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = {20: "twenty", 30: "thirty", 40: "forty", 50: "fifty", 60: "sixty"}

FACE_SINGULAR = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
FACE_PLURAL = {2: "twos", 3: "threes", 4: "fours", 5: "fives", 6: "sixes"}
# The name of face 1 differs by rulebook ("aces", "pacos", "jokers"); the rules say which.
ACE_WORDS = {"aces": "ace", "pacos": "paco", "jokers": "joker", "ones": "one"}


def number_words(n: int) -> str:
    """Spell a count the way it is said: 21 -> "twenty one"."""
    if n < 0:
        raise ValueError(f"no words for a negative number: {n}")
    if n < 20:
        return _UNITS[n]
    if n < 70:
        tens, unit = divmod(n, 10)
        return _TENS[tens * 10] + (f" {_UNITS[unit]}" if unit else "")
    return str(n)


def face_words(face: int, count: int = 2, ace_word: str = "pacos") -> str:
    """The face as said after a count: "fives", "six" (after one), "pacos"."""
    if face == ACE:
        return ace_word if count != 1 else ACE_WORDS.get(ace_word, ace_word)
    return FACE_PLURAL[face] if count != 1 else FACE_SINGULAR[face]


@dataclass(frozen=True)
class Bid:
    """A claim that at least `count` dice under all cups show `face` (1 = aces/pacos)."""

    count: int
    face: int

    def __post_init__(self) -> None:
        if not isinstance(self.count, int) or self.count < 1:
            raise ValueError(f"a bid needs a count of at least one, not {self.count!r}")
        if self.face not in FACES:
            raise ValueError(f"a die face is 1 to 6, not {self.face!r}")

    @property
    def is_aces(self) -> bool:
        return self.face == ACE

    def spoken(self, ace_word: str = "pacos") -> str:
        return f"{number_words(self.count)} {face_words(self.face, self.count, ace_word)}"

    def __str__(self) -> str:
        return self.spoken()

    def __repr__(self) -> str:
        return f"Bid({self.count}, {self.face})"

    @classmethod
    def parse(cls, text: str) -> "Bid":
        """Read a bid as people say it ("nine fives", "4 pacos"); raises UnparsableCall."""
        from companion.calls import BidCall, UnparsableCall, parse_call

        call = parse_call(text)
        if not isinstance(call, BidCall):
            raise UnparsableCall(text, "that is not a bid")
        return call.bid


def bid_key(bid: Bid, aces_wild: bool = True) -> int:
    """The single ordering of bids: a raise must have a strictly larger key.

    With wild aces, n aces sit just above every plain bid of 2n dice and just below every
    plain bid of 2n+1 dice. That one fact gives all three pacos rules: halving (rounded up)
    to go to aces, double plus one to come back, and a higher count from aces to aces.
    Without wild aces (a palifico round), ones are simply the lowest face.
    """
    if not aces_wild:
        return bid.count * 10 + bid.face
    if bid.is_aces:
        return bid.count * 20 + 7
    return bid.count * 10 + bid.face


def smallest_count_above(previous: Bid, face: int, aces_wild: bool = True) -> int:
    """The smallest count of `face` that is a legal raise over `previous`."""
    key = bid_key(previous, aces_wild)
    # Keys grow with the count for a fixed face, so a short linear walk finds it.
    count = 1
    if aces_wild and face == ACE:
        count = max(1, (key - 7) // 20)
    else:
        count = max(1, key // 10 - 1)
    while bid_key(Bid(count, face), aces_wild) <= key:
        count += 1
    return count
