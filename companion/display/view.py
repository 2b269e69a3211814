"""What the display page shows, as plain data: a pure function of the game and of the last
things heard, said and seen. The page draws it; nothing here does any I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from companion.calls import bid_words, face_to_count
from companion.rules import Game
from companion.rules.game import Phase


@dataclass(frozen=True)
class HeardLine:
    """The last utterance: what it was taken for and how sure the recogniser was."""

    text: str
    confidence: float | None  # None: typed
    origin: str = "text"
    changed_the_game: bool = False  # the referee took it: a bid, a challenge, a count...


@dataclass(frozen=True)
class RevealShown:
    """The camera's last reveal: its annotated picture (served by the page) and its count."""

    image_version: str | None  # new with each new picture, so the page reloads it; None: none this reveal
    dice_seen: int | None  # dice the camera read (None: it could not count)
    note: str = ""


def table_view(game: Game, heard: HeardLine | None = None, said: str | None = None,
               reveal: RevealShown | None = None, learning_names: bool = False,
               stopped: bool = False, said_earlier: bool = False,
               hands: Mapping[str, tuple[int, ...]] | None = None) -> dict[str, Any]:
    """The whole page's state. Dice counts are left out (None) where the rules hide lost
    dice, as "status" leaves them out (a die lost is said as it goes, and a player who keeps
    track can add them up, but nothing shows the sum). `stopped`: the companion has stopped
    (the game paused, or over), so the page stops showing a live game. `said_earlier`: the
    referee gave the last utterance heard no reply, so what it said was said before it.
    `hands`: the dice said so far at a reveal, by player (shown in their rows, to be checked)."""
    shown = game.rules.announce_dice_in_play
    turn = None if learning_names else game.current_player  # nobody's call while names are said
    bid = game.last_bid
    challenge = game.challenge if game.phase is Phase.REVEAL else None
    hands = dict(hands or {}) if challenge is not None else {}
    return {
        "round": game.round_number,
        "phase": game.phase.value,
        "turn": turn,
        "learning_names": learning_names,
        "winner": game.winner,
        "palifico": game.palifico_player,
        "ace_word": game.rules.ace_word,
        "dice_in_play": game.dice_in_play if shown else None,
        "players": [{"name": p, "dice": game.dice[p] if shown else None,
                     "out": game.dice[p] == 0, "turn": p == turn,
                     "palifico": p == game.palifico_player,
                     "hand": list(hands[p]) if p in hands else None} for p in game.players],
        "bid": None if bid is None else {
            "count": bid.count, "face": bid.face, "by": game.last_bidder,
            "words": bid_words(bid, game.rules.ace_word)},
        "challenge": None if challenge is None else {
            "kind": challenge.kind, "by": challenge.player, "on": challenge.bidder,
            "count": face_to_count(challenge.face, challenge.aces_wild, game.rules.ace_word)},
        # what a palifico round changes, for the whole round, not only as it starts
        "palifico_round": None if not game.is_palifico_round or game.phase is Phase.OVER else {
            "aces_wild": game.aces_wild,
            "face_changers": list(game.face_changers()),
            "everyone": len(game.active_players)},
        "heard": None if heard is None else {
            "text": heard.text, "confidence": heard.confidence, "typed": heard.confidence is None,
            "changed": heard.changed_the_game},
        "stopped": stopped,
        "said": said,
        "said_earlier": said_earlier and heard is not None,
        # where the rules hide the dice in play, the last reveal's picture and count go once the
        # next round's bidding is under way (they would tell the total, less the die lost, all
        # of it); until its first bid the table may still check the camera's count
        "reveal": None if reveal is None or (not shown and game.phase is Phase.BIDDING
                                              and game.last_bid is not None) else {
            "image": None if reveal.image_version is None else f"/camera.png?v={reveal.image_version}",
            "dice_seen": reveal.dice_seen,
            "note": reveal.note},
    }
