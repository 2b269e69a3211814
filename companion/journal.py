"""The journal: every accepted event appended as one JSON line and flushed at once.

Resume rebuilds the game by replaying the players' actions through the rules engine and
checking that each derived event (a die lost, a palifico, the winner...) matches what was
written, so a journal that was edited, truncated or written by something else is caught
rather than trusted.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import Iterable, NamedTuple, Sequence

from companion.errors import CompanionError
from companion.rules import Bid, BidAction, ChallengeAction, CountAction, Game, Phase, Rules, RulesError
from companion.rules.presets import RULES_ADDED_LATER
from companion.rules.events import (
    ACTION_TYPES,
    BidMade,
    ChallengeCalled,
    DiceCounted,
    Event,
    EventFormatError,
    GameStarted,
    HandShown,
    Undone,
)


class JournalError(CompanionError):
    """A journal that cannot be read or replayed; nothing is changed."""


def default_sessions_dir() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("companion", appauthor=False)) / "sessions"


def new_session_path(directory: Path | None = None) -> Path:
    directory = directory or default_sessions_dir()
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = directory / f"game-{stamp}.jsonl"
    n = 1
    while path.exists():
        n += 1
        path = directory / f"game-{stamp}-{n}.jsonl"
    return path


def find_session(name: str | None, directory: Path | None = None) -> Path:
    """The journal to resume: a path, a session name in the data directory, or the newest."""
    directory = directory or default_sessions_dir()
    if name:
        for candidate in (Path(name), directory / name, directory / f"{name}.jsonl"):
            if candidate.is_file():
                return candidate
        raise JournalError(f"no saved game called {name!r} (looked in {directory})")
    sessions = sorted(directory.glob("*.jsonl"), key=lambda p: p.stat().st_mtime) if directory.is_dir() else []
    if not sessions:
        raise JournalError(f"there is no saved game to resume in {directory}")
    return sessions[-1]


def check_new(path: Path) -> None:
    """A new game never overwrites or extends a journal that already holds one."""
    if path.exists() and path.stat().st_size > 0:
        raise JournalError(f"{path} already holds a game; resume it with --resume, or choose another --journal")


class Journal:
    """Appends events to a JSON-lines file, flushed and synced after every action."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "a", encoding="utf-8")
        except OSError as exc:
            raise JournalError(f"cannot write the journal {self.path}: {exc.strerror or exc}") from None

    def append(self, events: Sequence[Event]) -> None:
        # One write per action: a kill can cut at most the last line, which resume drops.
        text = "".join(json.dumps(e.to_dict(), separators=(",", ":")) + "\n" for e in events)
        self._file.write(text)
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()

    @classmethod
    def start(cls, path: Path, game: Game) -> "Journal":
        check_new(path)
        journal = cls(path)
        journal.append(game.events)
        return journal


def read_events(path: Path) -> tuple[list[Event], bool]:
    """Read a journal's events; the flag says a cut-off last line was dropped."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise JournalError(f"cannot read the journal {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise JournalError(f"{path} is not a companion journal (it is not text)") from None
    lines = text.split("\n")
    truncated = False
    if lines and lines[-1] == "":
        lines.pop()
    elif lines:
        # The process died in the middle of writing this line: it never happened.
        lines.pop()
        truncated = True
    events = []
    for number, line in enumerate(lines, 1):
        try:
            events.append(Event.from_dict(json.loads(line)))
        except (json.JSONDecodeError, EventFormatError) as exc:
            if number == 1:
                raise JournalError(f"{path} is not a companion journal: line 1 is not a game event") from None
            raise JournalError(f"{path} is corrupt at line {number}: {exc}") from None
    if not events or not isinstance(events[0], GameStarted):
        raise JournalError(f"{path} is not a companion journal: it does not start with a game")
    return events, truncated


def _action(event: Event):
    if isinstance(event, BidMade):
        return BidAction(event.player, Bid(event.count, event.face))
    if isinstance(event, ChallengeCalled):
        return ChallengeAction(event.kind, event.player)
    if isinstance(event, DiceCounted):
        return CountAction(event.count, event.hands, event.source)
    raise AssertionError(event)


def replay(events: Sequence[Event], path: Path | str = "journal") -> tuple[Game, list[Event]]:
    """Rebuild the game from journalled events; returns it with the events that stand.

    A last action whose derived events were cut off is kept (they are re-derived).
    """
    start = events[0]
    assert isinstance(start, GameStarted)
    try:
        rules = Rules.from_dict(start.rules)
        game = Game(start.players, rules, start.first)
    except (RulesError, TypeError) as exc:
        raise JournalError(f"{path} starts a game that cannot be set up: {exc}") from None
    kept: list[Event] = list(game.events)
    written = [e.to_dict() for e in events[: len(kept)]]
    # A journal from before a rules field was added lacks it; the field's default is what
    # that game was played by, so the start is compared with it filled in (any other
    # missing field is still a journal that does not match its own start).
    added = {f: v for f, v in Rules().to_dict().items() if f in RULES_ADDED_LATER}
    written[0] = dict(written[0], rules={**added, **written[0].get("rules", {})})
    if written != [e.to_dict() for e in kept]:
        raise JournalError(f"{path} does not match its own start: was it written by another version?")
    i = len(kept)
    while i < len(events):
        event = events[i]
        if isinstance(event, Undone):
            try:
                game.undo()
            except RulesError as exc:
                raise JournalError(f"{path}: line {i + 1} undoes nothing: {exc}") from None
            kept.append(event)
            i += 1
            continue
        if isinstance(event, HandShown):
            try:
                if game.phase is not Phase.REVEAL:
                    raise RulesError("nobody had challenged")
                game.check_hands({event.player: event.dice})
            except RulesError as exc:
                raise JournalError(f"{path}: line {i + 1} shows dice that cannot be shown: {exc}") from None
            kept.append(event)
            i += 1
            continue
        if event.type not in ACTION_TYPES:
            raise JournalError(f"{path}: line {i + 1} ({event.type}) does not follow from the game so far")
        try:
            produced = game.apply(_action(event))
        except RulesError as exc:
            raise JournalError(f"{path}: line {i + 1} is not allowed by the rules: {exc}") from None
        written = events[i: i + len(produced)]
        complete = i + len(produced) <= len(events)
        compared = produced if complete else produced[: len(written)]
        if [e.to_dict() for e in compared] != [e.to_dict() for e in written]:
            raise JournalError(f"{path}: the events from line {i + 1} on do not match the rules engine's replay")
        kept.extend(produced)
        i += len(produced)
    return game, kept


def hands_so_far(events: Sequence[Event]) -> dict[str, tuple[int, ...]]:
    """The dice said at the reveal in progress: the hands journalled since the last action."""
    hands: dict[str, tuple[int, ...]] = {}
    for event in reversed(events):
        if not isinstance(event, HandShown):
            break
        hands.setdefault(event.player, event.dice)  # a hand said again replaces the first
    return hands


class Resumed(NamedTuple):
    game: Game
    journal: Journal
    notes: list[str]  # what to tell the players about the journal itself
    hands: dict[str, tuple[int, ...]]  # dice already said at the reveal in progress


def resume(path: Path) -> Resumed:
    """Open a journal to continue its game; repairs a cut-off tail."""
    events, truncated = read_events(path)
    game, kept = replay(events, path)
    notes = []
    if truncated or len(kept) != len(events):
        # Rewrite the repaired journal in one atomic step, so a second crash cannot hurt it.
        tmp = Path(f"{path}.tmp")
        tmp.write_text("".join(json.dumps(e.to_dict(), separators=(",", ":")) + "\n" for e in kept),
                       encoding="utf-8")
        os.replace(tmp, path)
        notes.append("the journal's last line had been cut off mid-write; it was repaired")
    return Resumed(game, Journal(path), notes, hands_so_far(kept))


def load_game(path: Path) -> Game:
    """Replay a journal without opening it for writing (for tools and tests)."""
    events, _ = read_events(path)
    return replay(events, path)[0]


def dump(events: Iterable[Event]) -> str:
    return "".join(json.dumps(e.to_dict()) + "\n" for e in events)
