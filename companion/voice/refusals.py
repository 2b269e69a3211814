"""Why a call was refused, in the words players hear.

The rules core refuses a call with an error that carries data (the refused bid and the
smallest raises, a reason, the players and counts involved) and never a sentence. Here the
data becomes what the referee says, so the words stay out of the rules and an error's
developer message is never read aloud.
"""

from __future__ import annotations

from companion.calls import bid_words, face_words, number_words
from companion.rules.errors import (
    BadCount,
    BidRefusal,
    CallNotAllowed,
    ChallengeRefusal,
    CountRefusal,
    IllegalBid,
    NothingToUndo,
    OutOfTurn,
    PhaseRefusal,
    RulesError,
    UnknownPlayer,
    WrongPhase,
)
from companion.rules.game import DUDO
from companion.rules.presets import Rules
from companion.voice.phrases import as_sentence, rules_words, smallest_raises_phrase

ACES_OPENINGS = {
    BidRefusal.NO_ACES_OPENING: "a round cannot open with {ace}",
    BidRefusal.ACES_OPENING_ONE_DIE_ONLY: "only a player with one die left may open with {ace}",
    BidRefusal.ACES_OPENING_PALIFICO_ONLY: "only the palifico player may open with {ace}",
}

CHALLENGE_REFUSALS = {
    ChallengeRefusal.PLAYER_OUT: "{player} is already out of the game and cannot call {kind}",
    ChallengeRefusal.NO_BID: "there is no bid yet to {doubt}",
    ChallengeRefusal.OWN_BID: "{player} cannot challenge their own bid",
    ChallengeRefusal.NOT_A_CHALLENGE: "unknown challenge {kind!r}",
    ChallengeRefusal.CALZA_NOT_PLAYED: "calza is not played under the {rules}",
    ChallengeRefusal.CALZA_IN_PALIFICO: "calza is not allowed in a palifico round",
    ChallengeRefusal.CALZA_TOO_FEW_PLAYERS: "calza is not allowed with {players_left} players left",
    ChallengeRefusal.CALZA_TOO_FEW_DICE: "calza is only allowed while more than half the dice remain",
    ChallengeRefusal.CALZA_BY_NEXT_PLAYER: "{player} is next to play, and the next player may not call calza",
}

PHASE_REFUSALS = {
    PhaseRefusal.GAME_OVER: "the game is over; {winner} won",
    PhaseRefusal.CUPS_UP: "the cups are up: I need the count first",
    PhaseRefusal.NOTHING_TO_COUNT: "nobody has challenged, so there is nothing to count",
}

COUNT_REFUSALS = {
    CountRefusal.NOT_A_COUNT: "a count is a whole number from zero, not {said!r}",
    CountRefusal.MORE_THAN_IN_PLAY: "there are only {actual} dice in play, so the count cannot be {said}",
    CountRefusal.PLAYER_OUT: "{player} is out of the game and has no dice",
    CountRefusal.WRONG_NUMBER_OF_DICE: "{player} has {actual} {dice}, not {said}",
    CountRefusal.NOT_A_FACE: "a die shows 1 to 6; {player}'s dice were given as {given}",
    CountRefusal.HANDS_MISSING: "I still need the dice of {missing}",
    CountRefusal.HANDS_DISAGREE: "those dice make {actual}, not {said}",
    CountRefusal.CAMERA_DICE_NOT_IN_PLAY: "the camera's dice {given} are not the {actual} dice in play",
    CountRefusal.CAMERA_DISAGREES: "the camera's dice make {actual}, not {said}",
}


def refusal(error: RulesError, rules: Rules) -> str:
    """What the referee says when the rules refuse a call, as whole sentences."""
    if isinstance(error, IllegalBid):
        return illegal_bid(error, rules.ace_word)
    return as_sentence(why_refused(error, rules))


def illegal_bid(error: IllegalBid, ace_word: str) -> str:
    """The refused bid, why, and what may be bid instead: "Nine fours does not raise nine
    fives. The smallest raises: nine sixes, ten of any face, or five pacos."; "Two pacos is
    not allowed: a round cannot open with pacos. To open: ..." """
    why = why_bid_refused(error, ace_word)
    if error.reason is BidRefusal.NOT_A_RAISE and error.last is not None:
        # the reason names both bids already: each said once
        refused, options_are = as_sentence(why), "The smallest raises"
    else:
        refused = f"{bid_words(error.bid, ace_word).capitalize()} is not allowed: {why}."
        options_are = f"After {bid_words(error.last, ace_word)}" if error.last else "To open"
    options = smallest_raises_phrase(error.smallest_raises, ace_word)
    left = "calls left are dudo and calza" if error.calza_open else "call left is dudo"
    return f"{refused} {options_are}: {options}." if options else f"{refused} The only {left}."


def why_bid_refused(error: IllegalBid, ace_word: str) -> str:
    """The reason alone: "there are only four dice in play"."""
    reason = error.reason
    if reason is BidRefusal.MORE_THAN_IN_PLAY:
        return f"there are only {number_words(error.dice_in_play or 0)} dice in play"
    if reason is BidRefusal.MORE_THAN_THE_PLAYERS_HOLD:
        return (f"{number_words(error.players_left or 0)} players hold at most "
                f"{number_words((error.players_left or 0) * (error.most_dice or 0))} dice")
    if reason is BidRefusal.NOT_A_RAISE and error.last is not None:
        return f"{bid_words(error.bid, ace_word)} does not raise {bid_words(error.last, ace_word)}"
    if reason is BidRefusal.FACE_STAYS and error.last is not None:
        return f"in a palifico round the face stays {face_words(error.last.face, 2, ace_word)}"
    if reason in ACES_OPENINGS:
        return ACES_OPENINGS[reason].format(ace=ace_word)
    return str(error)


def why_refused(error: RulesError, rules: Rules) -> str:
    """Why a call was refused, as a clause ("only Ben may call dudo now"). Errors that never
    reach a game in play (setup, rules files, journals) keep their own message."""
    if isinstance(error, IllegalBid):
        return why_bid_refused(error, rules.ace_word)
    if isinstance(error, OutOfTurn):
        if error.call == "bid" and error.player_out:
            return f"{error.player} is out of the game; it is {error.turn}'s turn"
        if error.call == "bid":
            return f"it is {error.turn}'s turn, not {error.player}'s"
        return f"only {error.turn} may call {error.call} now"
    if isinstance(error, CallNotAllowed):
        return CHALLENGE_REFUSALS[error.reason].format(
            player=error.player, kind=error.kind, rules=rules_words(rules),
            doubt="doubt" if error.kind == DUDO else "call calza on",
            players_left=number_words(error.players_left or 0))
    if isinstance(error, WrongPhase):
        return PHASE_REFUSALS[error.reason].format(winner=error.winner)
    if isinstance(error, BadCount):
        if error.reason is CountRefusal.MORE_THAN_IN_PLAY and not rules.announce_dice_in_play:
            # the rules hide how many dice are in play: the refusal must not tell it
            return f"the count cannot be {number_words(error.said)}: that is more dice than are in play"
        return _why_count_refused(error)
    if isinstance(error, UnknownPlayer):
        return f"there is no player called {error.name!r}; the players are {', '.join(error.players)}"
    if isinstance(error, NothingToUndo):
        return "there is nothing to undo"
    return str(error)


def _why_count_refused(error: BadCount) -> str:
    def words(n: object) -> object:
        return number_words(n) if isinstance(n, int) and n >= 0 else n

    said = error.said if error.reason is CountRefusal.NOT_A_COUNT else words(error.said)
    return COUNT_REFUSALS[error.reason].format(
        player=error.player, said=said, actual=words(error.actual),
        dice="die" if error.actual == 1 else "dice", given=list(error.dice),
        missing=", ".join(error.missing))
