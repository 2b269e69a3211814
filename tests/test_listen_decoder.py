"""The grammar decoder on hand-made network outputs: what it may spell, and its scores."""

from __future__ import annotations

import numpy as np
import pytest

from companion.listen.decoder import CompiledGraph
from companion.listen.recogniser import call_graph, measures
from companion.listen.tokens import BLANK, INDEX, NAME, TOKENS, UNKNOWN, number_tokens, word_token
from companion.sources import Expect


def spelt(*frames: str, sure: float = 0.9) -> np.ndarray:
    """Log-probabilities of a network sure of one token per frame ("-" is a blank)."""
    out = np.full((len(frames), len(TOKENS)), np.log((1 - sure) / (len(TOKENS) - 1)))
    for t, token in enumerate(frames):
        out[t, INDEX[BLANK if token == "-" else token]] = np.log(sure)
    return out


@pytest.fixture(scope="module")
def graphs():
    return {e: CompiledGraph(call_graph(e, 30, named=True)) for e in Expect}


def test_a_bid_is_spelt_through_blanks_and_long_tokens(graphs):
    decoded = graphs[Expect.CALLS].decode(spelt("-", "nine", "nine", "-", "fives", "fives", "-"))
    assert decoded.best == "nine fives"
    assert decoded.calls[1][1] < decoded.calls[0][1]


def test_words_around_a_call_do_not_change_it(graphs):
    frames = ("-", "okay", "-", "i", "bid", "-", "twenty", "-", "one", "-", "aces", "-", "please")
    assert graphs[Expect.CALLS].decode(spelt(*frames)).best == "twenty one aces"


def test_the_moment_decides_what_can_be_heard(graphs):
    said = spelt("-", "seven", "seven", "-")
    assert graphs[Expect.COUNT].decode(said).best == "seven"
    assert graphs[Expect.CALLS].decode(said).best != "seven"  # a bare number is no bid
    bid = spelt("-", "four", "-", "fours", "-")
    assert graphs[Expect.COUNT].decode(bid).best != "four fours"


def test_counts_stop_at_the_largest_count():
    thirty = CompiledGraph(call_graph(Expect.COUNT, 30, named=False))
    forty = CompiledGraph(call_graph(Expect.COUNT, 45, named=False))
    said = spelt("-", "forty", "-", "two", "-")
    assert thirty.decode(said).best != "forty two"
    assert forty.decode(said).best == "forty two"


def test_a_hand_needs_a_blank_between_equal_dice(graphs):
    graph = graphs[Expect.COUNT]
    assert graph.decode(spelt("-", NAME, "-", "five", "-", "five", "three", "-")).best == "{name} five five three"
    assert graph.decode(spelt("-", NAME, "-", "five", "five", "three", "-")).best == "{name} five three"


def test_a_hand_holds_as_many_dice_as_a_player_has():
    # "five five five three" run together: the network marks the fives once, weakly apart
    frames = spelt("-", NAME, "-", "five", "five", "five", "five", "five", "three", "-")
    frames[4, INDEX[BLANK]] = frames[6, INDEX[BLANK]] = np.log(0.3)
    any_size = CompiledGraph(call_graph(Expect.COUNT, 30, named=True))
    four_dice = CompiledGraph(call_graph(Expect.COUNT, 30, named=True, hand_sizes=frozenset({4})))
    assert any_size.decode(frames).best == "{name} five three"
    assert four_dice.decode(frames).best == "{name} five five five three"
    assert all(len(text.split()) == 5 for text, _ in four_dice.decode(frames).calls
               if text.startswith("{name}"))


def test_a_hand_too_big_to_say_is_left_to_a_count():
    # a resumed journal's odd game may give a player a million dice: their hand's chain would
    # fill the memory, and no one says such a hand
    small = call_graph(Expect.COUNT, 30, named=True, hand_sizes=frozenset({3}))
    huge = call_graph(Expect.COUNT, 30, named=True, hand_sizes=frozenset({3, 10**6}))
    assert len(huge.arcs) == len(small.arcs)
    alone = CompiledGraph(call_graph(Expect.COUNT, 30, named=True, hand_sizes=frozenset({10**6})))
    assert alone.decode(spelt("-", "seven", "-")).best == "seven"  # counts are still heard


def test_a_named_calza_keeps_where_the_name_was(graphs):
    decoded = graphs[Expect.CALLS].decode(spelt("-", "-", NAME, NAME, "-", "calza", "-"))
    assert decoded.best == "{name} calza"
    assert decoded.name_frames == (2, 3)


def test_without_players_no_name_can_be_heard():
    graph = CompiledGraph(call_graph(Expect.CALLS, 30, named=False))
    assert "{name}" not in graph.decode(spelt("-", NAME, "-", "calza", "-")).best


def test_chatter_scores_far_below_what_the_network_spelt(graphs):
    call = measures(graphs[Expect.CALLS].decode(spelt("-", "dudo", "dudo", "-")))
    chatter = measures(graphs[Expect.CALLS].decode(spelt("-", UNKNOWN, "-", UNKNOWN, UNKNOWN, "-")))
    assert call["margin_free"] > -0.5
    assert chatter["margin_free"] < call["margin_free"] - 5
    assert chatter["unknown_peak"] > 0.8 > call["unknown_peak"]


def test_nothing_heard_decodes_to_no_call(graphs):
    assert graphs[Expect.CALLS].decode(np.zeros((0, len(TOKENS)))).best == ""


def test_tokens_spell_numbers_and_words():
    assert number_tokens(21) == ["twenty", "one"]
    assert number_tokens(40) == ["forty"]
    assert word_token("what's") == "whats" and word_token("banana") == UNKNOWN
    with pytest.raises(ValueError):
        number_tokens(50)
