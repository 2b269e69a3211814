"""Bid ordering and the minimum raise, checked exhaustively against the rulebook wording."""

import itertools
import math

import pytest

from companion.rules import Bid, bid_key, smallest_count_above

ALL_BIDS = [Bid(c, f) for c in range(1, 31) for f in range(1, 7)]


def rulebook_allows(previous: Bid, new: Bid) -> bool:
    """The raise rules exactly as the rulebooks word them, with wild aces."""
    if not previous.is_aces and not new.is_aces:
        return new.count > previous.count or (new.count == previous.count and new.face > previous.face)
    if not previous.is_aces and new.is_aces:
        return new.count >= math.ceil(previous.count / 2)  # half, rounded up
    if previous.is_aces and new.is_aces:
        return new.count > previous.count
    return new.count >= 2 * previous.count + 1  # double plus one


def test_ordering_matches_the_rulebooks_for_every_pair_up_to_thirty_dice():
    for previous, new in itertools.product(ALL_BIDS, repeat=2):
        assert (bid_key(new) > bid_key(previous)) == rulebook_allows(previous, new), (previous, new)


def test_ordering_is_total_and_distinct():
    keys = [bid_key(b) for b in ALL_BIDS]
    assert len(set(keys)) == len(keys)
    plain = [bid_key(b, aces_wild=False) for b in ALL_BIDS]
    assert len(set(plain)) == len(plain)


def test_without_wild_aces_ones_are_the_lowest_face():
    for previous, new in itertools.product(ALL_BIDS, repeat=2):
        expected = (new.count, new.face) > (previous.count, previous.face)
        assert (bid_key(new, False) > bid_key(previous, False)) == expected


@pytest.mark.parametrize("aces_wild", [True, False])
def test_smallest_count_above_is_the_true_minimum_for_every_bid_and_face(aces_wild):
    for previous in ALL_BIDS:
        for face in range(1, 7):
            legal = [c for c in range(1, 70) if bid_key(Bid(c, face), aces_wild) > bid_key(previous, aces_wild)]
            assert smallest_count_above(previous, face, aces_wild) == min(legal), (previous, face)


def test_a_bid_prints_as_numbers_not_words():
    # The words ("nine fives") belong to companion.calls; the rules print digits only.
    assert str(Bid(9, 5)) == "9x5" and str(Bid(1, 1)) == "1x1"
    assert eval(repr(Bid(21, 2))) == Bid(21, 2)


@pytest.mark.parametrize("count, face", [(0, 5), (-1, 2), (3, 0), (3, 7)])
def test_impossible_bids_are_rejected(count, face):
    with pytest.raises(ValueError):
        Bid(count, face)
