"""A recap of a finished or paused game: its bids, challenges and dice, as a page to look back at.

The recap is read from the events that stand once the journal is replayed (the game's own
record, so a bid taken back is not in it), never from the raw lines. `recap_of` is pure: no
files and no plotting, so every figure can be checked against the events. `write_recap`
draws the charts with matplotlib, which stays optional (the `bench` extra): it is imported
only there, and its absence is one plain line saying how to install it.
"""

from __future__ import annotations

import html
import math
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, Sequence

from companion.calls import face_words
from companion.errors import CompanionError
from companion.journal import read_events, replay
from companion.rules import DUDO
from companion.rules.events import (
    BidMade, ChallengeCalled, DiceCounted, DieLost, DieRegained, Event, GameOver, GameStarted, RoundStarted,
    Undone,
)

INSTALL_PLOTTING = "pip install -e '.[bench]'"
FACE_COLOURS = {1: "#7f3c8d", 2: "#11a579", 3: "#3969ac", 4: "#f2b701", 5: "#e73f74", 6: "#80ba5a"}


class RecapError(CompanionError):
    """The recap cannot be drawn or written; the message says what to do."""


@dataclass(frozen=True)
class RecapBid:
    player: str
    count: int
    face: int


@dataclass(frozen=True)
class Challenge:
    """A dudo or a calza and how it came out; the outcome is None while the cups are up."""

    kind: str  # DUDO or CALZA
    caller: str
    bidder: str
    bid: RecapBid
    counted: int | None = None
    correct: bool | None = None  # the bid held (dudo) or was exact (calza)
    loser: str | None = None
    lost: int = 0
    regained: int = 0  # the calza caller's die back; 0 when already at the most dice

    @property
    def settled(self) -> bool:
        return self.counted is not None

    @property
    def caller_right(self) -> bool | None:
        return self.loser != self.caller if self.settled else None


@dataclass(frozen=True)
class Round:
    number: int
    opener: str
    palifico: str | None
    bids: tuple[RecapBid, ...]
    challenge: Challenge | None
    dice_at_start: Mapping[str, int]  # every player, 0 once out
    dice_at_end: Mapping[str, int]  # the same at the round's end (or now, in a round not done)


@dataclass(frozen=True)
class PlayerStats:
    """One player's game. Only dudos test a bid: a calza is the caller's own claim, so it
    counts for the caller and not against the bidder."""

    player: str
    bids: int = 0
    bids_challenged: int = 0  # by a dudo that was counted
    bluffs_caught: int = 0  # of those, the bid was wrong
    bids_held: int = 0  # of those, the bid held
    dudos: int = 0
    dudos_right: int = 0
    calzas: int = 0
    calzas_right: int = 0


@dataclass(frozen=True)
class Recap:
    players: tuple[str, ...]
    rules_name: str
    ace_word: str
    rounds: tuple[Round, ...]
    winner: str | None
    stats: tuple[PlayerStats, ...]

    @property
    def challenges(self) -> list[tuple[int, Challenge]]:
        return [(r.number, r.challenge) for r in self.rounds if r.challenge is not None]

    @property
    def final_dice(self) -> Mapping[str, int]:
        return self.rounds[-1].dice_at_end

    def dice_series(self, player: str) -> list[int]:
        """The player's dice at the start, then after each round: the dice chart's line."""
        return [self.rounds[0].dice_at_start[player]] + [r.dice_at_end[player] for r in self.rounds]


@dataclass
class _RoundSoFar:
    """The round being read, until the next one starts."""

    number: int
    opener: str
    palifico: str | None
    dice_at_start: dict[str, int]
    bids: list[RecapBid] = field(default_factory=list)
    challenge: Challenge | None = None

    def settle(self, **outcome) -> None:
        if self.challenge is None:
            raise ValueError(f"round {self.number} has a count or a die lost with no challenge before it")
        self.challenge = replace(self.challenge, **outcome)

    def done(self, dice: Mapping[str, int]) -> Round:
        return Round(self.number, self.opener, self.palifico, tuple(self.bids), self.challenge,
                     self.dice_at_start, dict(dice))


def recap_of(events: Sequence[Event]) -> Recap:
    """The recap of a game from its standing events (`Game.events`: undone actions gone)."""
    start = events[0] if events else None
    if not isinstance(start, GameStarted):
        raise ValueError("a game's events begin with its start")
    if any(isinstance(e, Undone) for e in events):
        raise ValueError("these events still hold undone actions: recap the replayed game's events")
    players = tuple(start.players)
    dice: dict[str, int] = {}
    rounds: list[Round] = []
    current: _RoundSoFar | None = None
    winner = None
    for event in events:
        if isinstance(event, RoundStarted):
            if current is not None:
                rounds.append(current.done(dice))
            dice = {p: event.dice.get(p, 0) for p in players}
            current = _RoundSoFar(event.number, event.opener, event.palifico, dict(dice))
        elif isinstance(event, GameOver):
            winner = event.winner
        elif current is None:
            continue
        elif isinstance(event, BidMade):
            current.bids.append(RecapBid(event.player, event.count, event.face))
        elif isinstance(event, ChallengeCalled):
            current.challenge = Challenge(event.kind, event.player, event.bidder,
                                          RecapBid(event.bidder, event.count, event.face))
        elif isinstance(event, DiceCounted):
            current.settle(counted=event.count, correct=event.correct)
        elif isinstance(event, DieLost):
            dice[event.player] = event.remaining
            current.settle(loser=event.player, lost=event.lost)
        elif isinstance(event, DieRegained):
            dice[event.player] = event.remaining
            current.settle(regained=event.gained)
    if current is not None:
        rounds.append(current.done(dice))
    return Recap(players, str(start.rules.get("name", "")), str(start.rules.get("ace_word", "aces")),
                 tuple(rounds), winner, tuple(_stats(p, rounds) for p in players))


def _stats(player: str, rounds: Sequence[Round]) -> PlayerStats:
    counts = dict.fromkeys(("bids_challenged", "bluffs_caught", "bids_held", "dudos", "dudos_right",
                            "calzas", "calzas_right"), 0)
    for r in rounds:
        c = r.challenge
        if c is None or not c.settled:
            continue
        if c.kind == DUDO and c.bidder == player:
            counts["bids_challenged"] += 1
            counts["bids_held" if c.loser != player else "bluffs_caught"] += 1
        if c.caller == player:
            called = "dudos" if c.kind == DUDO else "calzas"
            counts[called] += 1
            counts[f"{called}_right"] += bool(c.caller_right)
    bids = sum(1 for r in rounds for b in r.bids if b.player == player)
    return PlayerStats(player, bids, **counts)


def face_name(face: int, ace_word: str) -> str:
    """ "fives", and face 1 in the rules' own word ("pacos", "aces")."""
    return face_words(face, 2, ace_word)


def bid_words(bid: RecapBid, ace_word: str) -> str:
    """ "3 fives", "1 paco": the count in figures, the face as the referee says it."""
    return f"{bid.count} {face_words(bid.face, bid.count, ace_word)}"


def outcome_words(challenge: Challenge) -> str:
    """Who was right, in a sentence for the challenges table."""
    if not challenge.settled:
        return "the cups were up when the game stopped: not counted"
    if challenge.kind == DUDO:
        verdict = "the bid held" if challenge.correct else "the bid was wrong"
    else:
        verdict = "exactly the bid" if challenge.correct else "not exactly the bid"
    if challenge.loser is not None:
        change = f"{challenge.loser} lost " + ("a die" if challenge.lost == 1 else f"{challenge.lost} dice")
    elif challenge.regained:
        change = f"{challenge.caller} won back a die"
    else:
        change = f"{challenge.caller} already had the most dice"
    return f"{verdict}: {change}"


# --- the page and its charts --------------------------------------------------------------


def _pyplot():
    """matplotlib, drawing to files only; a plain line saying how to install it if it is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RecapError(f"the recap's charts need matplotlib: install it with {INSTALL_PLOTTING}") from None
    return plt


def _save(plt, fig, path: Path, keep_below: float = 0.0) -> None:
    """Lay the figure out (leaving `keep_below` inches at the bottom for a legend) and write it."""
    fig.tight_layout(rect=(0, keep_below / fig.get_figheight(), 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _bids_chart(plt, recap: Recap, path: Path) -> None:
    """One panel per round: each bid's count in the order made, its dot coloured by face."""
    rounds = [r for r in recap.rounds if r.bids]
    columns = min(4, len(rounds))
    rows = math.ceil(len(rounds) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.6 * columns, 2.8 * rows + 0.4), squeeze=False)
    for ax in axes.flat[len(rounds):]:
        ax.set_visible(False)
    for ax, r in zip(axes.flat, rounds):
        numbers, counts = range(1, len(r.bids) + 1), [b.count for b in r.bids]
        ax.plot(numbers, counts, color="#bbbbbb", zorder=1)
        ax.scatter(numbers, counts, c=[FACE_COLOURS[b.face] for b in r.bids], zorder=2)
        title = f"Round {r.number}" + (" (palifico)" if r.palifico else "")
        if r.challenge is not None and r.challenge.settled:
            title += f": {r.challenge.kind} by {r.challenge.caller}, {'right' if r.challenge.caller_right else 'wrong'}"
        ax.set_title(title, fontsize=9)
        ax.set_xticks(list(numbers))
        ax.set_ylim(0, max(counts) + 1)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_xlabel("bid", fontsize=8)
        ax.set_ylabel("count", fontsize=8)
    handles = [plt.Line2D([], [], marker="o", linestyle="", color=FACE_COLOURS[f], label=face_name(f, recap.ace_word))
               for f in FACE_COLOURS]
    fig.legend(handles=handles, loc="lower center", ncol=6, fontsize=8, frameon=False)
    _save(plt, fig, path, keep_below=0.4)


def _dice_chart(plt, recap: Recap, path: Path) -> None:
    """Each player's dice after each round; a round still being played is "now"."""
    fig, ax = plt.subplots(figsize=(7, 3.5))
    steps = range(len(recap.rounds) + 1)
    # Players often hold the same dice: thinner lines and other markers drawn on top keep each seen.
    for n, player in enumerate(recap.players):
        ax.plot(steps, recap.dice_series(player), marker="os^Dv<>p*h"[n % 10], linewidth=max(1, 6 - 1.5 * n),
                markersize=max(4, 10 - 2 * n), alpha=0.8, label=player)
    labels = [str(r.number) if r.challenge is not None and r.challenge.settled else "now" for r in recap.rounds]
    ax.set_xticks(list(steps), ["start"] + labels)
    ax.set_xlabel("after round")
    ax.set_ylabel("dice")
    ax.set_ylim(0, max(max(recap.dice_series(p)) for p in recap.players) + 0.5)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=8)
    _save(plt, fig, path)


def _success_chart(plt, recap: Recap, path: Path) -> None:
    """Per player: bids dudo'd and caught as bluffs, dudos and calzas called and right."""
    pairs = [("bids dudo'd", "bids_challenged", "bluffs_caught"), ("dudos", "dudos", "dudos_right"),
             ("calzas", "calzas", "calzas_right")]
    fig, axes = plt.subplots(1, len(pairs), figsize=(10, 3.2), squeeze=False)
    places = range(len(recap.players))
    for ax, (title, total, part) in zip(axes.flat, pairs):
        ax.bar(places, [getattr(s, total) for s in recap.stats], color="#cccccc", label="all")
        ax.bar(places, [getattr(s, part) for s in recap.stats], color="#3969ac",
               label="bluffs caught" if part == "bluffs_caught" else "right")
        ax.set_xticks(list(places), list(recap.players), fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.legend(fontsize=7)
    _save(plt, fig, path)


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(cell))}</td>" for cell in row) + "</tr>\n"
                   for row in rows)
    return f"<table>\n<tr>{head}</tr>\n{body}</table>"


def render_html(recap: Recap, title: str, images: Sequence[str]) -> str:
    """The page: a summary, the charts (file names beside it) and the tables; names escaped."""
    ace = recap.ace_word
    state = (f"{recap.winner} won after {len(recap.rounds)} rounds." if recap.winner is not None
             else f"Paused in round {recap.rounds[-1].number}.")
    dice_now = ", ".join(f"{p} {recap.final_dice[p]}" for p in recap.players)
    rounds = [(r.number, r.opener, r.palifico or "", ", ".join(f"{b.player} {bid_words(b, ace)}" for b in r.bids))
              for r in recap.rounds]
    challenges = [(number, c.kind, c.caller, f"{bid_words(c.bid, ace)} by {c.bidder}",
                   "" if c.counted is None else c.counted, outcome_words(c))
                  for number, c in recap.challenges]
    stats = [(s.player, s.bids, s.bids_challenged, s.bluffs_caught, s.bids_held, s.dudos, s.dudos_right,
              s.calzas, s.calzas_right) for s in recap.stats]
    charts = "\n".join(f'<p><img src="{html.escape(name)}" alt="{html.escape(name.removesuffix(".png"))} chart"></p>'
                       for name in images)
    return f"""<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 70em; }} img {{ max-width: 100%; }}
table {{ border-collapse: collapse; margin-bottom: 1.5em; }}
th, td {{ border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; }}
</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p>{html.escape(", ".join(recap.players))}; {html.escape(recap.rules_name)} rules. {html.escape(state)}
Dice now: {html.escape(dice_now)}.</p>
{charts}
<h2>Challenges</h2>
{_table(("round", "call", "caller", "bid", "counted", "outcome"), challenges) if challenges else "<p>No challenges yet.</p>"}
<h2>Players</h2>
{_table(("player", "bids", "bids dudo'd", "bluffs caught", "bids held", "dudos", "dudos right",
         "calzas", "calzas right"), stats)}
<h2>Rounds</h2>
{_table(("round", "opener", "palifico", "bids"), rounds)}
</body>
</html>
"""


def write_recap(recap: Recap, out_dir: Path, title: str) -> Path:
    """Draw the charts and write index.html beside them; returns the page's path. Nothing is
    written when matplotlib is missing; the page is written last, once its charts are."""
    plt = _pyplot()
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        images = []
        if any(r.bids for r in recap.rounds):
            _bids_chart(plt, recap, out_dir / "bids.png")
            images.append("bids.png")
        _dice_chart(plt, recap, out_dir / "dice.png")
        _success_chart(plt, recap, out_dir / "success.png")
        images += ["dice.png", "success.png"]
        page = out_dir / "index.html"
        page.write_text(render_html(recap, title, images), encoding="utf-8")
    except OSError as exc:
        raise RecapError(f"cannot write the recap to {out_dir}: {exc.strerror or exc}") from None
    return page


def read_recap(journal_path: Path) -> tuple[Recap, bool]:
    """The recap of a journal's game; the flag says a last line cut off mid-write was left out.
    A file that is not a journal is a JournalError, raised before anything is written."""
    events, torn = read_events(Path(journal_path))
    game, _ = replay(events, journal_path)
    return recap_of(game.events), torn


def default_out_dir(journal_path: Path) -> Path:
    journal_path = Path(journal_path)
    return journal_path.with_name(f"{journal_path.stem}-recap")


def run_recap(journal_path: Path, out_dir: Path | None = None) -> int:
    """`companion recap JOURNAL [--out DIR]`: write the page and say where it is."""
    journal_path = Path(journal_path)
    recap, torn = read_recap(journal_path)
    page = write_recap(recap, Path(out_dir) if out_dir else default_out_dir(journal_path),
                       f"Perudo recap: {journal_path.stem}")
    if torn:
        print("companion: the journal's last line was cut off mid-write; the recap leaves it out", file=sys.stderr)
    print(page)
    return 0
