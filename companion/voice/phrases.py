"""What the referee says: events and game state rendered as short spoken sentences.

Pure functions of their arguments, so every announcement can be tested as text; the
speakers in `speakers.py` only turn the text into sound.
"""

from __future__ import annotations

from typing import Sequence

from companion.calls import bid_words, face_to_count, face_words, number_words
from companion.rules.bids import Bid
from companion.rules.events import (
    BidMade,
    ChallengeCalled,
    DiceCounted,
    DieLost,
    DieRegained,
    Event,
    GameOver,
    GameStarted,
    PalificoDeclared,
    PlayerEliminated,
    RoundStarted,
)
from companion.rules.presets import FaceChange, Rules


def as_sentence(text: str) -> str:
    """Capitalised, with a full stop unless it already ends a sentence."""
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!", "?")) else ".")


def rules_words(rules: Rules) -> str:
    """The rules a game plays by, as said: "asmodee rules", or "asmodee rules with house
    rules" for a preset changed by a house-rules file (its name "asmodee+house" would be
    read out as "plus")."""
    base, plus, _ = rules.name.partition("+")
    return f"{base} rules with house rules" if plus else f"{rules.name} rules"


def count_of(n: int, noun: str = "die", plural: str = "dice") -> str:
    return f"{number_words(n)} {noun if n == 1 else plural}"


def join_and(items: Sequence[str]) -> str:
    """ "Ana", "Ana and Ben", "Ana, Ben and Cleo"."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def join_or(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f", or {items[-1]}"


def smallest_raises_phrase(raises: Sequence[Bid], ace_word: str) -> str:
    """ "nine sixes, ten of any face, or five pacos"; in a palifico round, where pacos are
    not wild, "three fours, ..., four of any face, pacos too".

    Raises that keep the count name each face; the plain faces that need a higher count
    (twos among them) are said once, as "of any face".
    """
    plain = [b for b in raises if not b.is_aces]
    aces = [b for b in raises if b.is_aces]
    # Twos' smallest raise is the "raise the count, any face" level. Without twos (the count
    # cannot go up: it would pass the dice in play) no count holds for any face.
    any_count = next((b.count for b in plain if b.face == 2), None)
    any_face = [b for b in plain if b.count == any_count]
    # Where aces are not wild (a palifico round) they are the lowest face, raised like the
    # others: said with them ("four of any face, aces too"), not again on their own.
    aces_too = bool(aces) and len(any_face) > 1 and aces[0].count == any_count
    if aces_too:
        aces = aces[1:]
    parts = []
    for bid in plain:
        if len(any_face) > 1 and bid in any_face:
            if bid is any_face[0]:
                parts.append(f"{number_words(bid.count)} of any face" + (f", {ace_word} too" if aces_too else ""))
        else:
            parts.append(bid_words(bid, ace_word))
    parts += [bid_words(b, ace_word) for b in aces]
    return join_or(parts)


# Who may still change the face in a palifico round, as said after "the face stays";
# {also} names the palifico player where they count as palifico before in their own round.
FACE_CHANGERS = {
    FaceChange.NOBODY: "",
    FaceChange.PALIFICO_PLAYER: ", except for {palifico}",
    FaceChange.WAS_PALIFICO: ", except for {also}a player who has been palifico before",
    FaceChange.WAS_PALIFICO_ON_ONE_DIE: ", except for {also}a player on one die who has been palifico before",
    FaceChange.ON_ONE_DIE: ", except for a player on one die",
}


def palifico_rules(palifico: str, rules: Rules, face_changers: Sequence[str] | None = None,
                   players: Sequence[str] = ()) -> str:
    """What a palifico round changes: "pacos are not wild and the face stays, except for ...":
    for `face_changers` by name where the game says who of `players` may change the face
    (nobody: "the face stays"), otherwise the preset's rule for who may."""
    if face_changers is not None and players and set(players) <= set(face_changers):
        return f"{rules.ace_word} are not wild, and anyone may change the face"
    if face_changers is not None:
        changers = f", except for {join_and(list(face_changers))}" if face_changers else ""
    else:
        also = f"{palifico} and " if rules.palifico_player_was_palifico else ""
        changers = FACE_CHANGERS[rules.palifico_face_change].format(palifico=palifico, also=also)
    return f"{rules.ace_word} are not wild and the face stays{changers}"


def describe_event(event: Event, rules: Rules, calza: bool = False,
                   face_changers: Sequence[str] | None = None) -> str | None:
    """One sentence per event; None for events that need no words of their own. `calza`:
    the count settles a calza (exactly the bid), not a dudo; `face_changers`: who may change
    the face in the palifico round a RoundStarted begins, where the game knows."""
    ace = rules.ace_word
    if isinstance(event, GameStarted):
        return (f"New game: {join_and(event.players)}. {count_of(rules.starting_dice).capitalize()} each, "
                f"{rules_words(rules)}.")
    if isinstance(event, RoundStarted):
        total = sum(event.dice.values())
        text = f"Round {number_words(event.number)}. {event.opener} opens."
        if rules.announce_dice_in_play:
            text += f" {count_of(total).capitalize()} in play."
        if event.palifico:
            players = [p for p, n in event.dice.items() if n > 0]
            rule = palifico_rules(event.palifico, rules, face_changers, players)
            text += f" Palifico round: {rule}."  # whose round: just said
        return text
    if isinstance(event, BidMade):
        return f"{event.player}: {bid_words(Bid(event.count, event.face), ace)}. {event.next_player}, your call."
    if isinstance(event, ChallengeCalled):
        bid = bid_words(Bid(event.count, event.face), ace)
        what = "Dudo" if event.kind == "dudo" else "Calza"
        return (f"{what} from {event.player} on {event.bidder}'s {bid}! Lift the cups and count the "
                f"{face_to_count(event.face, event.aces_wild, ace)}.")
    if isinstance(event, DiceCounted):
        counted = f"{number_words(event.count).capitalize()} counted"
        if calza:
            return f"{counted}: {'exactly the bid' if event.correct else 'not exactly the bid'}."
        return f"{counted}: the bid was {'right' if event.correct else 'wrong'}."
    if isinstance(event, DieLost):
        left = f"{count_of(event.remaining)} left" if event.remaining else "no dice left"
        lost = "a die" if event.lost == 1 else count_of(event.lost)
        return f"{event.player} loses {lost} and has {left}."
    if isinstance(event, DieRegained):
        if event.gained == 0:
            return f"{event.player} is right, but already holds the most dice allowed: {count_of(event.remaining)}."
        return f"{event.player} is exactly right and wins back a die, and now has {count_of(event.remaining)}."
    if isinstance(event, PalificoDeclared):
        return f"Palifico for {event.player}!"  # said after "... and has one die left"
    if isinstance(event, PlayerEliminated):
        return f"{event.player} is out of the game."
    if isinstance(event, GameOver):
        return f"{event.winner} wins the game!"
    return None


def describe_events(events: Sequence[Event], rules: Rules, calza: bool = False,
                    face_changers: Sequence[str] | None = None) -> list[str]:
    """Sentences for events in order; `calza` says what an earlier batch challenged with;
    `face_changers`: who may change the face in the palifico round the last RoundStarted
    begins (the round the game is now in)."""
    texts = []
    last_start = max((i for i, e in enumerate(events) if isinstance(e, RoundStarted)), default=None)
    for i, event in enumerate(events):
        if isinstance(event, ChallengeCalled):
            calza = event.kind == "calza"
        text = describe_event(event, rules, calza, face_changers if i == last_start else None)
        if text:
            texts.append(text)
    return texts
