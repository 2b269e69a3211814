"""Keeping the display in step with the game: small wrappers around what the referee already
uses (its journal, speaker, source and camera), so the page follows exactly the events the
journal stores, whatever the input, with no change to the referee.

A display that fails says so once and stops; the game never does."""

from __future__ import annotations

import dataclasses
import secrets
from pathlib import Path
from typing import Callable, Mapping, Sequence

from companion.display import DEFAULT_HOST, DEFAULT_PORT, is_local
from companion.display.server import DisplayError, DisplayServer
from companion.display.view import HeardLine, RevealShown, table_view
from companion.rules import CALZA, COUNT, DUDO, Event, Game
from companion.rules.events import Undone, hands_so_far
from companion.sources import Utterance


def open_display(game: Game, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                 warn: Callable[[str], None] = lambda line: None,
                 hands: Mapping[str, tuple[int, ...]] | None = None) -> "TableDisplay | None":
    """Start the page and show the game; says where, or in one line why it could not (then
    None: the game goes on without it). `hands`: dice said before a resume, at its reveal."""
    server = DisplayServer(host, port, warn)
    try:
        url = server.start()
    except DisplayError as error:
        warn(f"the display could not start: {error}; the game goes on without it")
        return None
    display = TableDisplay(game, server, warn)
    display.hands = dict(hands or {})
    display.refresh()
    warn(f"the table display is at {url}")
    if not is_local(host):
        warn(f"warning: the display listens on {host}, not only this machine: "
             "anyone on the network can open it and see the game")
    return display


class TableDisplay:
    def __init__(self, game: Game, server: DisplayServer,
                 warn: Callable[[str], None] = lambda line: None) -> None:
        self.game, self.server, self._warn = game, server, warn
        self.heard: HeardLine | None = None
        self.said: str | None = None
        self.answered = True  # the referee spoke after the last utterance heard
        self.said_earlier = False  # ... it did not: what it said last was said before that
        self.reveal: RevealShown | None = None
        self.hands: dict[str, tuple[int, ...]] = {}  # the dice said so far at the reveal in progress
        self.learning_names = False  # the players say their names before the game
        self._pictures = 0
        # a page left open across a resume must not take this game's first picture for the
        # last one's: each run's pictures are named apart
        self._run = secrets.token_hex(4)
        self._broken = False
        self.stopped = False

    def new_game(self, game: Game) -> None:
        """The table plays again: the page shows the new game from its start."""
        self.game, self.heard, self.said, self.reveal = game, None, None, None
        self.answered, self.said_earlier, self.hands = True, False, {}
        self.refresh()

    def close(self) -> None:
        """The companion stops: the page is told, so it no longer shows a live game."""
        self.stopped = True
        self.refresh()
        self.server.close()

    def refresh(self) -> None:
        """Send the page the game as it stands now."""
        if self._broken:
            return
        try:
            self.server.publish(table_view(self.game, self.heard, self.said, self.reveal, self.learning_names,
                                           self.stopped, self.said_earlier, self.hands))
        except Exception as error:  # noqa: BLE001 - the page is never worth the game
            self._give_up(error)

    def _give_up(self, error: Exception) -> None:
        self._broken = True
        self._warn(f"the display stopped ({error}); the game goes on")

    # --- what the referee uses, watched -------------------------------------------------------

    def watch_journal(self, journal):
        return _WatchedJournal(journal, self)

    def watch_speaker(self, speaker):
        return _WatchedSpeaker(speaker, self)

    def watch_source(self, source):
        return _WatchedSource(source, self)

    def watch_counter(self, counter):
        return None if counter is None else _WatchedCounter(counter, self)

    def heard_utterance(self, utterance: Utterance) -> None:
        # (not a try at a name that nobody said: no voice, no words)
        if utterance.text or not (utterance.typed or utterance.voiced is False):
            self.heard = HeardLine(utterance.text, utterance.confidence, utterance.origin)
            self.answered, self.said_earlier = False, False  # its reply, if any, is to come
            self.refresh()

    def spoke(self, text: str) -> None:
        self.said, self.answered, self.said_earlier = text, True, False
        self.refresh()

    def listening_again(self) -> None:
        """The referee is done with the last utterance: if it said nothing to it (chatter, a
        "yes" with nothing asked), the page must not show its last line as the reply."""
        if self.heard is not None and not self.answered and not self.said_earlier:
            self.said_earlier = True
            self.refresh()

    def revealed(self, outcome) -> None:
        if self._broken:
            return
        picture = getattr(outcome, "annotated_path", None)
        try:
            version = None  # no picture of this reveal: never an earlier reveal's in its place
            if picture is not None and Path(picture).exists():
                self.server.show_image(Path(picture).read_bytes())
                self._pictures += 1
                version = f"{self._run}-{self._pictures}"
            reading = getattr(outcome, "reading", None)
            self.reveal = RevealShown(version, None if reading is None else len(reading.dice),
                                      getattr(outcome, "reason", "") or "")
        except OSError as error:
            self._give_up(error)
            return
        self.refresh()


class _Watched:
    """One of the referee's own devices, passed through; the subclass tells the display."""

    def __init__(self, inner, display: TableDisplay) -> None:
        self._inner, self._display = inner, display

    def __getattr__(self, name):  # everything not watched: close(), expect(), mute() ...
        return getattr(self._inner, name)


class _WatchedJournal(_Watched):
    def append(self, events: Sequence[Event]) -> None:
        self._inner.append(events)  # first on disk, then on the page
        if events and self._display.heard is not None:  # what was heard last was taken
            self._display.heard = dataclasses.replace(self._display.heard, changed_the_game=True)
        if any(isinstance(e, Undone) and e.action.get("kind") in (COUNT, DUDO, CALZA) for e in events):
            self._display.reveal = None  # the reveal it showed was taken back, or its count was
        # the dice said at a reveal, read as a resume reads them from the journal
        self._display.hands = hands_so_far(events, self._display.hands)
        if events:
            self._display.refresh()


class _WatchedSpeaker(_Watched):
    def say(self, text: str) -> None:
        self._display.spoke(text)  # on the page as it is said, not after
        self._inner.say(text)


class _WatchedSource(_Watched):
    _learning_now = False  # the utterance awaited is a name the source is learning

    def expect(self, *args, **kwargs) -> None:
        self._learning_now = False
        self._inner.expect(*args, **kwargs)

    def learn_name(self, player: str, phrase: str) -> bool:
        self._learning_now = self._inner.learn_name(player, phrase)
        self._display.learning_names = self._display.learning_names or self._learning_now
        return self._learning_now

    def next_utterance(self) -> Utterance | None:
        if self._display.learning_names and not self._learning_now:  # the game itself begins
            self._display.learning_names = False
            self._display.refresh()
        self._display.listening_again()
        utterance = self._inner.next_utterance()
        if utterance is not None:
            self._display.heard_utterance(utterance)
        return utterance


class _WatchedCounter(_Watched):
    def reveal(self, *args, **kwargs):
        outcome = self._inner.reveal(*args, **kwargs)
        self._display.revealed(outcome)
        return outcome
