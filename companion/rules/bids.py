"""Bids and the one ordering every raise is checked against.

How a bid is said ("nine fives", "one paco") belongs to the call grammar in
`companion.calls`; here a bid is two numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

ACE = 1
FACES = (1, 2, 3, 4, 5, 6)
PLAIN_FACES = (2, 3, 4, 5, 6)


def is_whole_number(x: object) -> bool:
    """An int, and not a bool (True == 1 in Python, and JSON's true is no number of dice)."""
    return isinstance(x, int) and not isinstance(x, bool)


def is_face(x: object) -> bool:
    return is_whole_number(x) and x in FACES

@dataclass(frozen=True)
class Bid:
    """A claim that at least `count` dice under all cups show `face` (1 = aces/pacos)."""

    count: int
    face: int

    def __post_init__(self) -> None:
        if not is_whole_number(self.count) or self.count < 1:
            raise ValueError(f"a bid needs a count of at least one, not {self.count!r}")
        if not is_face(self.face):
            raise ValueError(f"a die face is 1 to 6, not {self.face!r}")

    @property
    def is_aces(self) -> bool:
        return self.face == ACE

    def __str__(self) -> str:
        """Count x face, "9x5": for logs and error messages, never for players."""
        return f"{self.count}x{self.face}"

    def __repr__(self) -> str:
        return f"Bid({self.count}, {self.face})"


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
