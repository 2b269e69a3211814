"""The rules engine: every rule, under every preset that changes it."""

import pytest

from companion.rules import (
    BadCount,
    BadSetup,
    Bid,
    BidRefusal,
    CallNotAllowed,
    ChallengeRefusal,
    CountRefusal,
    Game,
    IllegalBid,
    NothingToUndo,
    OutOfTurn,
    Phase,
    UnknownPlayer,
    WrongPhase,
    get_preset,
)
from companion.rules.presets import CalzaCaller
from companion.rules.events import DieLost, DieRegained, GameOver, PalificoDeclared, PlayerEliminated, RoundStarted

PRESET_NAMES = ["asmodee", "asmodee-own-round", "pressman", "pressman-calza", "leaflet", "web", "wikipedia", "wikipedia-difference"]


def game(players="Ana Ben Cleo", preset="asmodee", dice=None, first=None, **changes):
    rules = get_preset(preset)
    if changes:
        rules = rules.replace(**changes)
    g = Game(players.split(), rules, first)
    for name, n in (dice or {}).items():
        g.dice[name] = n
    return g


def play_round(g, bids, challenger, count, kind="dudo"):
    for player, (count_, face) in bids:
        g.bid(player, Bid(count_, face))
    (g.dudo if kind == "dudo" else g.calza)(challenger)
    return g.reveal(count)


# --- bidding -------------------------------------------------------------------------------

@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_no_pacos_opening_in_a_normal_round(preset):
    g = game(preset=preset)
    with pytest.raises(IllegalBid, match="cannot open|only a player with one die"):
        g.bid("Ana", Bid(2, 1))
    assert g.events[-1].type == "round_started" and g.last_bid is None


def test_aces_opening_house_rule():
    g = game(aces_opening=True)
    g.bid("Ana", Bid(2, 1))
    assert g.last_bid == Bid(2, 1)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_raise_rules_are_the_same_in_every_preset(preset):
    g = game(preset=preset)
    g.bid("Ana", Bid(7, 4))
    with pytest.raises(IllegalBid):
        g.bid("Ben", Bid(7, 2))  # same count, lower face
    with pytest.raises(IllegalBid):
        g.bid("Ben", Bid(3, 1))  # 7 / 2 rounded up is 4
    g.bid("Ben", Bid(4, 1))
    with pytest.raises(IllegalBid):
        g.bid("Cleo", Bid(8, 6))  # from four pacos needs nine
    with pytest.raises(IllegalBid):
        g.bid("Cleo", Bid(4, 1))  # pacos to pacos must raise
    g.bid("Cleo", Bid(9, 2))
    assert g.turn == "Ana"


def test_illegal_bid_names_the_smallest_raises():
    g = game("A B C D E F")
    g.bid("A", Bid(9, 5))
    with pytest.raises(IllegalBid) as caught:
        g.bid("B", Bid(9, 4))
    assert caught.value.smallest_raises == (Bid(9, 6), Bid(10, 2), Bid(10, 3), Bid(10, 4), Bid(10, 5), Bid(5, 1))
    refused = caught.value
    assert (refused.bid, refused.reason, refused.last) == (Bid(9, 4), BidRefusal.NOT_A_RAISE, Bid(9, 5))
    assert str(refused) == "bid 9x4 is not above 9x5"  # for developers: digits, no words


def test_bid_above_dice_in_play_is_refused_unless_totals_are_secret():
    g = game("A B", dice={"A": 2, "B": 2})
    with pytest.raises(IllegalBid) as caught:
        g.bid("A", Bid(5, 3))
    assert caught.value.reason is BidRefusal.MORE_THAN_IN_PLAY and caught.value.dice_in_play == 4
    hidden = game("A B", preset="pressman", dice={"A": 2, "B": 2})
    hidden.bid("A", Bid(5, 3))  # refusing would reveal the hidden total


def test_a_hidden_total_still_refuses_what_the_players_left_could_never_hold():
    # Everyone sees who is still in, and no one holds more than five: eleven dice between two
    # players tells nothing of the pouch, so it is refused, and the raises offered stop there.
    hidden = game("A B", preset="pressman", dice={"A": 2, "B": 1})
    assert hidden.bid_ceiling == 10
    hidden.bid("A", Bid(10, 3))
    with pytest.raises(IllegalBid) as caught:
        hidden.bid("B", Bid(11, 3))
    refused = caught.value
    assert refused.reason is BidRefusal.MORE_THAN_THE_PLAYERS_HOLD
    assert (refused.players_left, refused.most_dice) == (2, 5)
    assert all(b.count <= 10 for b in refused.smallest_raises) and Bid(10, 6) in refused.smallest_raises
    assert game("A B", dice={"A": 2, "B": 1}).bid_ceiling == 3  # where the total is told


def test_illegal_bid_says_whether_calza_is_open_to_the_bidder():
    g = game("A B C", dice={"A": 2, "B": 2, "C": 2})
    g.bid("A", Bid(6, 6))
    g.bid("B", Bid(6, 1))
    with pytest.raises(IllegalBid) as caught:
        g.bid("C", Bid(7, 1))
    assert caught.value.smallest_raises == () and caught.value.calza_open  # C may call calza
    no_calza = game("A B C", dice={"A": 2, "B": 2, "C": 2}, calza=False)
    no_calza.bid("A", Bid(6, 6))
    no_calza.bid("B", Bid(6, 1))
    with pytest.raises(IllegalBid) as caught:
        no_calza.bid("C", Bid(7, 1))
    assert not caught.value.calza_open


def test_out_of_turn_and_unknown_players_change_nothing():
    g = game()
    with pytest.raises(OutOfTurn):
        g.bid("Ben", Bid(2, 3))
    with pytest.raises(UnknownPlayer):
        g.bid("Zed", Bid(2, 3))
    assert g.actions == () and g.turn == "Ana"


@pytest.mark.parametrize("players, message", [("Ana", "at least two"), ("Ana ana", "different name"),
                                              ("José Jose", "different name"), ("Jean-Luc JeanLuc", "different name"),
                                              ("Zoë zoe", "different name")])
def test_bad_setups(players, message):
    with pytest.raises(BadSetup, match=message):
        Game(players.split())


def test_a_player_is_found_by_their_name_typed_without_accents_or_hyphens():
    g = Game(["José", "Jean-Luc"], first="jeanluc")
    assert g.turn == "Jean-Luc" and g.player_named("JOSE") == "José"


def test_more_than_six_players_work():
    g = Game([f"P{i}" for i in range(10)])
    g.bid("P0", Bid(10, 3))
    g.dudo("P1")
    g.reveal(12)
    assert g.dice["P1"] == 4 and g.turn == "P1"


# --- dudo ----------------------------------------------------------------------------------

def test_dudo_counts_wild_aces_and_the_bidder_loses_when_short():
    g = game()
    events = play_round(g, [("Ana", (5, 3))], "Ben", 4)
    assert DieLost("Ana", 1, 4) in events
    assert g.turn == "Ana" and g.round_number == 2


def test_dudo_wrong_challenger_loses_and_opens():
    g = game()
    play_round(g, [("Ana", (5, 3)), ("Ben", (6, 3))], "Cleo", 6)
    assert g.dice == {"Ana": 5, "Ben": 5, "Cleo": 4} and g.turn == "Cleo"


def test_only_the_next_player_may_call_dudo_unless_house_rules_say_anyone():
    g = game()
    g.bid("Ana", Bid(3, 3))
    with pytest.raises(OutOfTurn):
        g.dudo("Cleo")
    anyone = game(dudo_caller=__import__("companion.rules", fromlist=["DudoCaller"]).DudoCaller.ANYONE)
    anyone.bid("Ana", Bid(3, 3))
    with pytest.raises(CallNotAllowed):
        anyone.dudo("Ana")  # never on your own bid
    anyone.dudo("Cleo")
    assert anyone.phase is Phase.REVEAL


def test_no_dudo_before_a_bid_and_no_bid_during_a_reveal():
    g = game()
    with pytest.raises(CallNotAllowed, match="no bid"):
        g.dudo("Ana")
    g.bid("Ana", Bid(3, 3))
    g.dudo("Ben")
    with pytest.raises(WrongPhase):
        g.bid("Cleo", Bid(4, 3))


def test_count_larger_than_the_dice_in_play_is_refused():
    g = game()
    g.bid("Ana", Bid(3, 3))
    g.dudo("Ben")
    with pytest.raises(BadCount) as caught:
        g.reveal(16)
    assert caught.value.reason is CountRefusal.MORE_THAN_IN_PLAY
    assert (caught.value.said, caught.value.actual) == (16, 15)
    assert g.phase is Phase.REVEAL


def test_hands_are_checked_against_the_dice_each_player_holds():
    g = game(dice={"Cleo": 2})
    g.bid("Ana", Bid(3, 5))
    g.dudo("Ben")
    with pytest.raises(BadCount) as caught:
        g.reveal(3, {"Ana": [5, 5, 1, 2, 3], "Ben": [2, 2, 2, 2, 2], "Cleo": [5, 5, 5, 5, 5]})
    wrong = caught.value
    assert (wrong.reason, wrong.player, wrong.actual, wrong.said) == (
        CountRefusal.WRONG_NUMBER_OF_DICE, "Cleo", 2, 5)
    with pytest.raises(BadCount) as caught:
        g.reveal(3, {"Ana": [5, 5, 1, 2, 3], "Ben": [2, 2, 2, 2, 5], "Cleo": [4, 4]})
    assert (caught.value.reason, caught.value.actual, caught.value.said) == (CountRefusal.HANDS_DISAGREE, 4, 3)
    g.reveal(4, {"Ana": [5, 5, 1, 2, 3], "Ben": [2, 2, 2, 2, 5], "Cleo": [4, 4]})
    assert g.dice["Ben"] == 4


def test_hands_without_every_player_still_in_are_refused():
    # A count made from some hands only would settle the challenge on dice nobody said.
    g = game()
    g.bid("Ana", Bid(3, 5))
    g.dudo("Ben")
    with pytest.raises(BadCount) as caught:
        g.reveal(3, {"Ana": [5, 5, 1, 2, 3], "Ben": [2, 2, 2, 2, 2]})
    assert caught.value.reason is CountRefusal.HANDS_MISSING and caught.value.missing == ("Cleo",)
    assert g.phase is Phase.REVEAL and g.dice == {"Ana": 5, "Ben": 5, "Cleo": 5}


def test_a_count_of_every_die_in_play_is_accepted():
    # Fifteen fives (pacos included) is the most there can be, not one too many.
    g = game()
    g.bid("Ana", Bid(3, 5))
    g.dudo("Ben")
    g.reveal(15)
    assert g.dice["Ben"] == 4 and g.round_number == 2


@pytest.mark.parametrize("count, ana, ben", [(2, 5, 0), (4, 5, 1), (5, 5, 4), (8, 5, 2), (0, 5, 0)])
def test_losing_the_difference(count, ana, ben):
    g = game("Ana Ben Cleo", preset="wikipedia-difference")
    g.bid("Ana", Bid(5, 3))
    g.dudo("Ben")
    g.reveal(count)
    if count >= 5:  # the bid stood: Ben loses count - 5, at least one
        assert g.dice["Ben"] == 5 - max(1, count - 5)
    else:  # Ana loses 5 - count
        assert g.dice["Ana"] == 5 - (5 - count)


# --- calza ---------------------------------------------------------------------------------

def test_calza_right_regains_a_die_but_never_above_the_start():
    g = game(dice={"Cleo": 3})
    g.bid("Ana", Bid(4, 2))
    g.calza("Cleo")
    events = g.reveal(4)
    assert DieRegained("Cleo", 1, 4) in events and g.dice["Cleo"] == 4
    g.bid(g.turn, Bid(4, 2))
    g.calza("Ben" if g.last_bidder != "Ben" else "Cleo")
    full = g.reveal(4)
    assert any(isinstance(e, DieRegained) and e.gained == 0 and e.remaining == 5 for e in full)


def test_calza_wrong_loses_a_die():
    g = game()
    g.bid("Ana", Bid(4, 2))
    g.calza("Cleo")
    g.reveal(5)
    assert g.dice["Cleo"] == 4 and g.turn == "Cleo"


def test_pressman_has_no_calza_unless_the_optional_rule_is_on():
    g = game(preset="pressman")
    g.bid("Ana", Bid(4, 2))
    with pytest.raises(CallNotAllowed, match="not played"):
        g.calza("Cleo")


@pytest.mark.parametrize("preset, caller, allowed", [
    ("asmodee", "Ben", True), ("asmodee", "Cleo", True), ("asmodee", "Ana", False),
    ("pressman-calza", "Ben", False), ("pressman-calza", "Cleo", True),
    ("wikipedia", "Ben", True), ("wikipedia", "Cleo", False),
    ("leaflet", "Cleo", True), ("web", "Cleo", True),
])
def test_who_may_call_calza(preset, caller, allowed):
    g = game(preset=preset)
    g.bid("Ana", Bid(4, 2))  # Ben is next
    if allowed:
        g.calza(caller)
        assert g.phase is Phase.REVEAL
    else:
        with pytest.raises((CallNotAllowed, OutOfTurn)):
            g.calza(caller)
        assert g.phase is Phase.BIDDING


@pytest.mark.parametrize("preset, right_opener, wrong_opener", [
    ("asmodee", "Ben", "Cleo"),  # the last player to lose a die (Ben, last round) / the caller
    ("web", "Cleo", "Cleo"),  # the calza caller whatever the outcome
])
def test_who_opens_after_a_calza(preset, right_opener, wrong_opener):
    for correct, expected in ((True, right_opener), (False, wrong_opener)):
        g = game(preset=preset)
        play_round(g, [("Ana", (3, 3))], "Ben", 5)  # Ben loses a die and opens round two
        g.bid("Ben", Bid(4, 2))
        g.calza("Cleo")
        g.reveal(4 if correct else 3)
        assert g.turn == expected, (preset, correct)


def test_calza_not_with_two_players_nor_in_palifico_rounds():
    g = game("Ana Ben")
    g.bid("Ana", Bid(2, 2))
    with pytest.raises(CallNotAllowed) as caught:
        g.calza("Ben")
    assert caught.value.reason is ChallengeRefusal.CALZA_TOO_FEW_PLAYERS and caught.value.players_left == 2
    p = game(dice={"Ana": 2})
    play_round(p, [("Ana", (3, 3))], "Ben", 0)
    assert p.is_palifico_round
    p.bid("Ana", Bid(2, 3))
    with pytest.raises(CallNotAllowed, match="palifico"):
        p.calza("Cleo")


def test_wikipedia_spot_on_only_while_more_than_half_the_dice_remain():
    g = game(preset="wikipedia", dice={"Ana": 3, "Ben": 3, "Cleo": 2})  # 8 of 15: more than half
    g.bid("Ana", Bid(2, 2))
    g.calza("Ben")
    g.reveal(2)
    g2 = game(preset="wikipedia", dice={"Ana": 3, "Ben": 2, "Cleo": 2})  # 7 of 15
    g2.bid("Ana", Bid(2, 2))
    with pytest.raises(CallNotAllowed, match="half"):
        g2.calza("Ben")


def test_wikipedia_spot_on_is_refused_with_exactly_half_the_dice_left():
    # "More than half": ten of twenty is not, eleven is.
    g = game("Ana Ben Cleo Dan", "wikipedia", dice={"Ana": 3, "Ben": 3, "Cleo": 2, "Dan": 2})
    g.bid("Ana", Bid(2, 2))
    with pytest.raises(CallNotAllowed) as caught:
        g.calza("Ben")
    assert caught.value.reason is ChallengeRefusal.CALZA_TOO_FEW_DICE and g.phase is Phase.BIDDING
    g = game("Ana Ben Cleo Dan", "wikipedia", dice={"Ana": 3, "Ben": 3, "Cleo": 3, "Dan": 2})
    g.bid("Ana", Bid(2, 2))
    g.calza("Ben")
    assert g.phase is Phase.REVEAL


@pytest.mark.parametrize("preset", ["wikipedia", "wikipedia-difference"])
def test_wikipedia_spot_on_goes_on_with_two_players(preset):
    # Wikipedia sets no player minimum for spot on: the half of the dice is its one limit.
    g = game("Ana Ben", preset, dice={"Ben": 4})
    g.bid("Ana", Bid(2, 2))
    g.calza("Ben")
    events = g.reveal(2)
    assert DieRegained("Ben", 1, 5) in events and g.dice == {"Ana": 5, "Ben": 5}


@pytest.mark.parametrize("preset", ["wikipedia", "wikipedia-difference"])
def test_wikipedia_spot_on_goes_on_in_an_obliga_round(preset):
    # Its one limit is the half of the dice; the obliga round sets none of its own.
    g = game("Ana Ben Cleo", preset, dice={"Ana": 2, "Ben": 2, "Cleo": 5})
    play_round(g, [("Ana", (3, 3))], "Ben", 2)  # off by one: Ana down to one die, obliga
    assert g.is_palifico_round
    g.bid("Ana", Bid(1, 3))
    g.calza("Ben")
    g.reveal(1)
    assert g.dice["Ben"] == 3  # right: a die back


# --- palifico ------------------------------------------------------------------------------

def palifico_game(preset, **changes):
    g = game("Ana Ben Cleo", preset, dice={"Ana": 2, "Ben": 1, "Cleo": 3}, **changes)
    g.been_palifico.add("Ben")  # Ben had his palifico round earlier
    play_round(g, [("Ana", (3, 3))], "Ben", 2)  # one short: Ana drops to one die
    return g


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_palifico_round_after_first_dropping_to_one_die(preset):
    g = palifico_game(preset)
    assert g.palifico_player == "Ana" and g.turn == "Ana" and not g.aces_wild
    assert any(isinstance(e, PalificoDeclared) for e in g.events)
    if not g.rules.palifico_opens_aces:  # the leaflet: never an opening on jokers
        with pytest.raises(IllegalBid, match="cannot open"):
            g.bid("Ana", Bid(1, 1))
        return
    g.bid("Ana", Bid(1, 1))  # the palifico player may open with pacos
    g.bid("Ben", Bid(2, 1))
    with pytest.raises(IllegalBid):
        g.bid("Cleo", Bid(2, 6))  # Cleo was never palifico: the face stays
    g.bid("Cleo", Bid(3, 1))
    g.dudo("Ana")
    g.reveal(2)  # only real ones count, checked by the caller of reveal
    assert g.dice["Cleo"] == 2 and not g.is_palifico_round  # once per player


def test_pacos_are_not_wild_in_a_palifico_count():
    g = palifico_game("asmodee")  # Ana's palifico round: Ana and Ben hold one die, Cleo three
    g.bid("Ana", Bid(3, 3))
    g.dudo("Ben")
    hands = {"Ana": [1], "Ben": [3], "Cleo": [1, 1, 3]}  # two threes, three pacos
    with pytest.raises(BadCount) as caught:
        g.reveal(5, hands)  # what wild pacos would make
    assert (caught.value.reason, caught.value.actual) == (CountRefusal.HANDS_DISAGREE, 2)
    events = g.reveal(2, hands)
    assert PlayerEliminated("Ana") in events  # short of three threes: Ana loses her last die


@pytest.mark.parametrize("preset, ben_may_change", [
    ("asmodee", True), ("web", True),  # already palifico once
    ("pressman", True),  # already palifico and on one die (Ben holds one)
    ("leaflet", False),  # nobody
    ("wikipedia", True),  # anyone on one die
])
def test_who_may_change_the_face_in_a_palifico_round(preset, ben_may_change):
    g = palifico_game(preset)
    g.bid("Ana", Bid(1, 3))
    if ben_may_change:
        g.bid("Ben", Bid(1, 4))
        with pytest.raises(IllegalBid):
            g.bid("Cleo", Bid(2, 3))  # the others follow the new face
        g.bid("Cleo", Bid(2, 4))
    else:
        with pytest.raises(IllegalBid) as caught:
            g.bid("Ben", Bid(1, 4))
        assert caught.value.reason is BidRefusal.FACE_STAYS and caught.value.last == Bid(1, 3)


def test_a_one_die_player_may_open_with_aces_under_wikipedia():
    # Wikipedia: no round opens on aces "unless they have only one die left".
    for preset in ("wikipedia", "wikipedia-difference"):
        g = game("Ana Ben Cleo", preset, dice={"Ana": 3, "Ben": 1, "Cleo": 3}, first="Ben")
        assert not g.is_palifico_round
        assert Bid(1, 1) in g.smallest_raises("Ben")
        g.bid("Ben", Bid(1, 1))
        g = game("Ana Ben Cleo", preset, dice={"Ana": 3, "Ben": 1, "Cleo": 3})
        with pytest.raises(IllegalBid, match="only a player with one die left"):
            g.bid("Ana", Bid(1, 1))
    g = game("Ana Ben Cleo", "asmodee", dice={"Ana": 3, "Ben": 1, "Cleo": 3}, first="Ben")
    with pytest.raises(IllegalBid, match="cannot open"):
        g.bid("Ben", Bid(1, 1))  # elsewhere only in the palifico player's own round


def test_the_leaflet_lets_only_the_palifico_player_change_the_face():
    g = palifico_game("leaflet")  # Ana's palifico round; Ben was palifico before
    g.bid("Ana", Bid(1, 3))
    with pytest.raises(IllegalBid) as caught:
        g.bid("Ben", Bid(1, 4))  # "cannot be changed by other players"
    assert caught.value.reason is BidRefusal.FACE_STAYS
    g.bid("Ben", Bid(2, 3))
    g.bid("Cleo", Bid(3, 3))
    g.bid("Ana", Bid(4, 5))  # the palifico player may


def test_pressman_needs_one_die_as_well_as_an_earlier_palifico():
    g = game("Ana Ben Cleo", "pressman", dice={"Ana": 2, "Ben": 2, "Cleo": 3})
    g.been_palifico.add("Ben")
    play_round(g, [("Ana", (3, 3))], "Ben", 0)
    g.bid("Ana", Bid(1, 3))
    assert not g.may_change_face("Ben")  # two dice: no
    asmodee = game("Ana Ben Cleo", "asmodee", dice={"Ana": 2, "Ben": 2, "Cleo": 3})
    asmodee.been_palifico.add("Ben")
    play_round(asmodee, [("Ana", (3, 3))], "Ben", 0)
    assert asmodee.may_change_face("Ben")


def test_wikipedia_lets_anyone_on_one_die_change_the_face():
    g = game("Ana Ben Cleo", "wikipedia", dice={"Ana": 2, "Ben": 1, "Cleo": 3})
    play_round(g, [("Ana", (3, 3))], "Ben", 0)
    assert g.may_change_face("Ana") and g.may_change_face("Ben") and not g.may_change_face("Cleo")


def test_only_the_palifico_player_may_open_with_pacos():
    g = palifico_game("asmodee")
    assert g.smallest_raises("Ana")[0] == Bid(1, 1)
    assert Bid(1, 1) not in game().smallest_raises()


def test_no_palifico_with_two_players_left():
    g = game("Ana Ben", dice={"Ana": 2})
    play_round(g, [("Ana", (3, 3))], "Ben", 0)
    assert g.dice["Ana"] == 1 and not g.is_palifico_round and g.aces_wild


def test_palifico_only_once_per_player():
    g = game("Ana Ben Cleo", dice={"Ana": 2})
    play_round(g, [("Ana", (3, 3))], "Ben", 0)
    assert g.palifico_player == "Ana"
    play_round(g, [("Ana", (1, 3))], "Ben", 1)  # Ben loses; a normal round follows
    assert not g.is_palifico_round
    g.bid("Ben", Bid(2, 3))
    g.calza("Ana")
    g.reveal(2)  # Ana back to two dice
    assert g.dice["Ana"] == 2
    play_round(g, [(g.turn, (9, 3))], g.next_active_after(g.turn), 0)
    # whoever lost, nobody new reached one die for the first time except possibly the loser
    assert g.palifico_player != "Ana"


def drop_to_one_win_back_and_drop_again(preset):
    """Ana drops to one die (her palifico round), wins a die back with a calza, then drops
    from two to one again."""
    g = game("Ana Ben Cleo", preset, dice={"Ana": 2})
    play_round(g, [("Ana", (3, 3))], "Ben", 2)  # one short (losing the difference: one die)
    assert g.palifico_player == "Ana"
    play_round(g, [("Ana", (1, 3))], "Ben", 1)  # Ben loses in Ana's round and opens the next
    assert not g.is_palifico_round
    g.bid("Ben", Bid(2, 3))
    if g.rules.calza_caller is CalzaCaller.NEXT_PLAYER:
        g.bid("Cleo", Bid(3, 3))  # so that Ana's turn is next
    g.calza("Ana")
    g.reveal(g.bids[-1][1].count)
    assert g.dice["Ana"] == 2 and not g.is_palifico_round
    count = 9
    while True:  # bids go round until Ana has bid; the next player doubts, and it is one short
        bidder = g.turn
        g.bid(bidder, Bid(count, 3))
        count += 1
        if bidder == "Ana":
            break
    g.dudo(g.turn)
    g.reveal(g.bids[-1][1].count - 1)
    assert g.dice["Ana"] == 1 and g.turn == "Ana"
    return g


# Pressman's own palifico rules are pressman-calza's; calza is the way back to two dice here.
@pytest.mark.parametrize("preset", [p for p in PRESET_NAMES if p not in ("leaflet", "pressman")])
def test_a_second_drop_to_one_die_is_no_palifico(preset):
    g = drop_to_one_win_back_and_drop_again(preset)
    assert not g.is_palifico_round and g.aces_wild


def test_the_leaflet_declares_palifico_at_every_drop_from_two_dice_to_one():
    g = drop_to_one_win_back_and_drop_again("leaflet")
    assert g.palifico_player == "Ana" and not g.aces_wild
    assert any(isinstance(e, PalificoDeclared) and e.player == "Ana" for e in g._history[-1][1])


@pytest.mark.parametrize("preset, dice", [
    ("leaflet", 1),  # palifico at every drop to one die, so none was had before to stop it
    ("wikipedia-difference", 1),
    ("wikipedia-difference", 3),  # three dice lost at once: off by three
])
def test_a_player_knocked_out_gets_no_palifico_round(preset, dice):
    g = game("Ana Ben Cleo Dan", preset, dice={"Ana": dice})
    events = play_round(g, [("Ana", (dice, 3))], "Ben", 0)
    assert PlayerEliminated("Ana") in events
    assert not any(isinstance(e, PalificoDeclared) for e in events)
    assert g.palifico_player is None and events[-1].palifico is None
    g.bid(g.turn, Bid(2, 5))
    assert g.dudo(g.turn)[0].aces_wild  # the next round counts pacos as fives


@pytest.mark.parametrize("preset, ana_may_change", [
    ("asmodee", False), ("asmodee-own-round", True),
    ("pressman", True),  # only "other players" are held to the face; Ana is on one die
])
def test_the_palifico_player_in_their_own_round(preset, ana_may_change):
    g = palifico_game(preset)  # Ana's palifico round; Ben was palifico before
    g.bid("Ana", Bid(1, 3))
    g.bid("Ben", Bid(1, 4))  # Ben may change the face under both readings
    g.bid("Cleo", Bid(2, 4))
    assert g.may_change_face("Ana") is ana_may_change and not g.may_change_face("Cleo")
    if ana_may_change:
        g.bid("Ana", Bid(2, 5))
    else:
        with pytest.raises(IllegalBid) as caught:
            g.bid("Ana", Bid(2, 5))
        assert caught.value.reason is BidRefusal.FACE_STAYS


# --- elimination and the end ---------------------------------------------------------------

def test_elimination_passes_the_opening_to_the_left_and_the_last_player_wins():
    g = game("Ana Ben Cleo", dice={"Ana": 1, "Ben": 1, "Cleo": 1})
    g.been_palifico.update({"Ana", "Ben", "Cleo"})
    events = play_round(g, [("Ana", (2, 3))], "Ben", 0)
    assert PlayerEliminated("Ana") in events and g.turn == "Ben"
    assert "Ana" not in g.active_players
    g.bid("Ben", Bid(1, 2))
    with pytest.raises(CallNotAllowed, match="out of the game"):
        g.dudo("Ana")
    g.dudo("Cleo")
    g.reveal(1)  # Ben's one two stands: Cleo is out
    assert g.winner == "Ben" and g.phase is Phase.OVER
    assert isinstance(g.events[-1], GameOver)
    with pytest.raises(WrongPhase):
        g.bid("Ben", Bid(1, 2))


def test_a_knocked_out_player_is_skipped_when_the_turn_passes():
    g = game("Ana Ben Cleo", dice={"Ben": 1})
    g.been_palifico.add("Ben")  # no palifico round to complicate the next one
    play_round(g, [("Ana", (9, 3))], "Ben", 9)  # the bid stood: Ben is out
    assert g.active_players == ("Ana", "Cleo") and g.turn == "Cleo"
    g.bid("Cleo", Bid(2, 3))
    events = g.bid("Ana", Bid(3, 3))
    assert g.turn == "Cleo" and events[-1].next_player == "Cleo"  # not Ben, who sits between


def test_eliminated_opener_passes_to_the_next_player_in_seating_order():
    g = game("Ana Ben Cleo Dan", dice={"Cleo": 1})
    g.been_palifico.add("Cleo")
    g.turn = "Cleo"
    play_round(g, [("Cleo", (9, 3))], "Dan", 0)
    assert g.turn == "Dan"


# --- undo ----------------------------------------------------------------------------------

def test_undo_restores_the_exact_state_before_each_action():
    g = game()
    snapshots = []
    actions = [lambda: g.bid("Ana", Bid(3, 4)), lambda: g.bid("Ben", Bid(4, 4)),
               lambda: g.dudo("Cleo"), lambda: g.reveal(2)]
    for act in actions:
        snapshots.append((dict(g.dice), g.turn, g.phase, list(g.bids), [e.to_dict() for e in g.events]))
        act()
    for snapshot in reversed(snapshots):
        g.undo()
        assert (dict(g.dice), g.turn, g.phase, list(g.bids), [e.to_dict() for e in g.events]) == snapshot
    with pytest.raises(NothingToUndo):
        g.undo()


# --- the rulebooks' example hands, call by call ---------------------------------------------

def test_pressman_demonstration_hand():
    g = Game([f"Player {i}" for i in range(1, 7)], get_preset("pressman"))
    calls = [(1, 10, 4), (2, 10, 6), (3, 11, 2), (4, 13, 2), (5, 7, 1), (6, 15, 2), (1, 16, 2), (2, 8, 1)]
    for player, count, face in calls:
        assert g.is_legal(Bid(count, face), f"Player {player}")
        g.bid(f"Player {player}", Bid(count, face))
    g.dudo("Player 3")
    g.reveal(7)  # only seven aces
    assert g.dice["Player 2"] == 4 and g.turn == "Player 2"


def test_asmodee_example_round():
    g = Game(["Alex", "Chris", "Sam", "Robin", "Nick"], get_preset("asmodee"))
    g.dice["Robin"] = 4  # 21 dice in play, as in the example
    g.bid("Alex", Bid(4, 4))
    g.bid("Chris", Bid(6, 4))
    assert g.is_legal(Bid(3, 1), "Sam")  # "he may have declared three pacos"
    g.bid("Sam", Bid(4, 1))
    assert g.smallest_raises("Robin")[0].count == 9  # nine is the minimum
    assert not g.is_legal(Bid(8, 5), "Robin")
    g.bid("Robin", Bid(9, 5))
    g.dudo("Nick")
    g.reveal(9)  # four fives and five wild pacos
    assert g.dice["Nick"] == 4 and g.turn == "Nick"


def test_leaflet_joker_examples():
    g = game("A B C", "leaflet")
    g.bid("A", Bid(5, 3))
    g.bid("B", Bid(3, 1))  # three jokers after five threes
    assert not g.is_legal(Bid(6, 4), "C")
    g.bid("C", Bid(7, 4))  # 3 * 2 + 1


def test_web_page_example_raises():
    g = game("A B", "web")
    g.bid("A", Bid(3, 2))
    for bid in (Bid(3, 3), Bid(4, 2), Bid(4, 4), Bid(10, 6)):
        assert g.is_legal(bid, "B")


def test_wikipedia_examples():
    g = game("A B C", "wikipedia")
    g.bid("A", Bid(5, 3))
    assert g.smallest_raises("B")[-1] == Bid(3, 1)  # at least three aces
    g.bid("B", Bid(3, 1))
    assert g.is_legal(Bid(4, 1), "C") and g.is_legal(Bid(7, 4), "C") and not g.is_legal(Bid(6, 4), "C")


def test_round_events_carry_the_dice_in_play():
    g = game()
    play_round(g, [("Ana", (3, 3))], "Ben", 0)
    start = [e for e in g.events if isinstance(e, RoundStarted)][-1]
    assert start.dice == {"Ana": 4, "Ben": 5, "Cleo": 5}


def test_each_quantity_of_aces_only_once_a_round():
    g = game("A B C D E F", "pressman")
    g.bid("A", Bid(8, 6))
    g.bid("B", Bid(4, 1))
    g.bid("C", Bid(9, 5))
    assert not g.is_legal(Bid(4, 1), "D")  # four aces were already bid
    assert g.smallest_raises("D")[-1] == Bid(5, 1)


def test_calza_under_rules_without_it_is_said_not_played_even_before_any_bid():
    # "There is no bid yet to call calza on" would say it may be called later
    game = Game(["Ana", "Ben", "Cleo"], get_preset("pressman"))
    assert game.challenge_problem("calza", "Ben").reason is ChallengeRefusal.CALZA_NOT_PLAYED
    assert game.challenge_problem("dudo", "Ben").reason is ChallengeRefusal.NO_BID


# --- preset names ----------------------------------------------------------------------------

# Each alias by what it says: the game's own name and "default" are the default (Asmodee's
# Perudo), the year is Pressman's 2008 rulebook, "jokers" the leaflet's faces, "dudo" the name
# of Wikipedia's article, and its variant is the one where a loser loses the difference.
ALIASES_MEANT = {
    "default": "asmodee", "perudo": "asmodee",
    "pressman-2008": "pressman", "2008": "pressman",
    "jokers": "leaflet",
    "webpage": "web",
    "dudo": "wikipedia", "wiki": "wikipedia",
    "lose-difference": "wikipedia-difference",
}


@pytest.mark.parametrize("alias, preset", ALIASES_MEANT.items())
def test_each_preset_alias_names_the_preset_it_says(alias, preset):
    assert get_preset(alias).name == preset
    assert get_preset(alias.upper()).name == preset  # typed in any case


def test_every_alias_has_its_meaning_written_down():
    from companion.rules.presets import ALIASES

    assert set(ALIASES) == set(ALIASES_MEANT)  # a new alias needs a line in ALIASES_MEANT


def test_true_is_no_number_of_dice():
    # Python takes True for 1; the journal's reader refuses JSON's true, so a game that took it
    # could never be resumed
    from companion.rules.events import Event

    with pytest.raises(ValueError):
        Bid(True, 3)
    with pytest.raises(ValueError):
        Bid(2, True)
    game = Game(["Ana", "Ben", "Cleo"], get_preset("asmodee"))
    game.bid("Ana", Bid(1, 3))
    game.dudo("Ben")
    for count, hands in ((True, None), (1, {"Ana": [True] * 5, "Ben": [3] * 5, "Cleo": [3] * 5})):
        with pytest.raises(BadCount):
            game.reveal(count, hands)
    assert game.phase is Phase.REVEAL  # nothing taken
    game.reveal(1)
    assert all(Event.from_dict(e.to_dict()) == e for e in game.events)


def test_the_rules_questions_take_a_name_in_any_spelling_as_the_actions_do():
    game = Game(["Ana", "Ben"], get_preset("wikipedia"))  # who may open on aces depends on the player's dice
    assert game.smallest_raises("ana") == game.smallest_raises("Ana")
    assert str(game.bid_problem("ana", Bid(1, 1))) == str(game.bid_problem("Ana", Bid(1, 1))) != "None"
    assert game.is_legal(Bid(1, 3), "ana") and not game.is_legal(Bid(1, 3), "ben")
    game.bid("ana", Bid(1, 3))
    assert game.challenge_problem("dudo", "ben") is None  # not "Ben is out": Ben holds five dice
    assert game.challenge_problem("dudo", "ANA") is not None
