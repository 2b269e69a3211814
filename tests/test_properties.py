"""Random games under every preset keep the game's invariants."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.rules import (
    CALZA,
    DUDO,
    Bid,
    Game,
    Phase,
    RulesError,
    get_preset,
)
from companion.rules.events import GameOver, PlayerEliminated
from companion.rules.presets import PRESETS

MAX_STEPS = 3000


def snapshot(g: Game):
    return (dict(g.dice), g.turn, g.phase, tuple(g.bids), g.palifico_player, len(g.events))


def play_random_game(g: Game, data) -> None:
    eliminated: set[str] = set()
    for _ in range(MAX_STEPS):
        if g.phase is Phase.OVER:
            return
        # An illegal attempt must change nothing.
        before = snapshot(g)
        stranger = data.draw(st.sampled_from(g.players))
        try:
            g.bid(stranger, Bid(data.draw(st.integers(1, 40)), data.draw(st.integers(1, 6))))
            before = snapshot(g)
        except RulesError:
            assert snapshot(g) == before
        if g.phase is Phase.OVER:
            return
        if g.phase is Phase.BIDDING:
            options = g.smallest_raises()
            challengers = [(kind, p) for kind in (DUDO, CALZA) for p in g.players
                           if g.challenge_problem(kind, p) is None]
            for kind, p in challengers:
                assert p not in eliminated and g.dice[p] > 0
            if challengers and (not options or data.draw(st.integers(0, 3)) == 0):
                kind, p = data.draw(st.sampled_from(challengers))
                (g.dudo if kind == DUDO else g.calza)(p)
            else:
                assert options, "a player must always be able to bid or challenge"
                bid = data.draw(st.sampled_from(options))
                bid = Bid(bid.count + data.draw(st.integers(0, 1)), bid.face)
                if g.is_legal(bid):
                    g.bid(g.turn, bid)
                else:
                    g.bid(g.turn, options[0])
            assert g.turn not in eliminated
        else:
            count = data.draw(st.integers(0, g.dice_in_play))
            events = g.reveal(count)
            eliminated.update(e.player for e in events if isinstance(e, PlayerEliminated))
        # invariants after every action
        assert sum(g.dice.values()) == g.dice_in_play
        assert all(0 <= n <= g.rules.max_dice for n in g.dice.values())
        assert all(g.dice[p] == 0 for p in eliminated)
        if g.phase is not Phase.OVER:
            assert g.dice[g.turn] > 0
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("preset", sorted(PRESETS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), players=st.integers(2, 7), dice=st.integers(1, 5))
def test_random_games_keep_their_invariants(preset, data, players, dice):
    rules = get_preset(preset).replace(starting_dice=dice, max_dice=dice)
    g = Game([f"P{i}" for i in range(players)], rules)
    play_random_game(g, data)
    assert g.phase is Phase.OVER
    winners = [p for p in g.players if g.dice[p] > 0]
    assert winners == [g.winner]
    assert [e for e in g.events if isinstance(e, GameOver)] == [GameOver(g.winner)]


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_undo_then_redo_gives_back_the_same_game(data):
    g = Game(["A", "B", "C"], get_preset("asmodee"))
    g.bid("A", Bid(2, 3))
    for _ in range(data.draw(st.integers(1, 20))):
        if g.phase is Phase.OVER:
            break
        if g.phase is Phase.BIDDING:
            if data.draw(st.booleans()) and g.last_bid:
                g.dudo(g.turn)
            else:
                g.bid(g.turn, g.smallest_raises()[0])
        else:
            g.reveal(data.draw(st.integers(0, g.dice_in_play)))
    events = [e.to_dict() for e in g.events]
    action = g.undo()
    g.apply(action)
    assert [e.to_dict() for e in g.events] == events
