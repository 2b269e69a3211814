"""`companion demo`: a whole game said aloud by synthetic players, through the real pipeline.

Each player has a voice of espeak-ng's (through pyttsx3, as the referee speaks). Their lines
are synthesised into WAV files, heard by the bundled recogniser along the same path as
`play --input wav`, refereed, journalled and announced (aloud, or into a WAV with
`--wav-out`), on the table display if asked. The players react as people at a table do
(`say_line`): the line again after "say again", silence or a reply that takes nothing ("Who
calls calza?", a refused bid), "yes" or "no" to "Did you say ...?", and they give up after
three tries.

The demo doubles as an end-to-end check: the same script is typed first, and the spoken
game's journal must hold the same events.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Generator, Literal, Sequence

from companion.calls import parse_call, parse_call_or_none
from companion.display import DEFAULT_PORT
from companion.errors import CompanionError
from companion.listen.sources import WavSource
from companion.sources import NAME_PHRASES

PLAYERS = ("Ana", "Ben", "Cleo")
STARTING_DICE = 2  # a whole game to a winner in a couple of minutes
# One espeak-ng voice each: American, Scottish and Caribbean English, two of them women's.
VOICES = {"Ana": "gmw/en-us+f3", "Ben": "gmw/en-gb-scotland", "Cleo": "gmw/en-029+f4"}
# Who says what (asmodee rules, Ana opens): bids, a take-back, two palifico rounds, three
# dudos settled by a spoken count, two players out and a winner.
SCRIPT = """\
Ana: two fours
Ben: three fours
Cleo: dudo
Ana: two
Ben: one six
Cleo: two sixes
Ana: dudo
Ben: three
Ana: one five
Ben: two fives
Ben: take it back
Ben: two fives
Cleo: dudo
Ana: one
Cleo: one three
Ana: two threes
Cleo: dudo
Ben: one
"""
TRIES = 3  # times a player says a line (or answers a question) before giving up
PACE_S = 1.5  # a pause before each line when the game is shown on the page
ANSWERS = ("yes", "no")


class DemoError(CompanionError):
    pass


@dataclass(frozen=True)
class Line:
    player: str
    text: str


def script_lines(script: str = SCRIPT) -> list[Line]:
    lines = []
    for raw in script.splitlines():
        if raw.strip() and not raw.strip().startswith("#"):
            player, _, text = raw.partition(":")
            lines.append(Line(player.strip(), text.strip()))
    return lines


# --- a player at the table ------------------------------------------------------------------

ASKED = re.compile(r"[Dd]id you say (.+?)\?")  # "First: did you say ...?" asks it again
# Replies that take nothing: "Who calls calza?" (a calza heard without its caller's name), a
# bare number while bidding, a bid the rules refuse, a question let go ("Not taken: ...").
# Every script line is taken when typed, so the player was misheard and says the line
# again, as a person would.
NOT_TAKEN = re.compile(r"Who calls calza\?|is not a call\.|is not allowed:|does not raise|Not taken:")


@dataclass
class Cost:
    """What getting a game through cost the players."""

    repeats: int = 0  # something said again: after "say again", silence or a "no"
    questions: int = 0  # "Did you say ...?" answered
    gave_up: str | None = None  # the line not got through in TRIES tries
    taken: int = 0  # lines the referee took (rightly or not) before that


def asked_about(reply: str) -> str | None:
    """The call in the referee's "Did you say X?", if it asked."""
    found = ASKED.findall(reply)
    return found[-1] if found else None


def same_call(asked: str, line: str, players: Sequence[str]) -> bool:
    """Whether the referee's read-back is the line's call: compared parsed, so "take it
    back" is "undo" and "a five" is "one five"."""
    return parse_call_or_none(asked, players) == parse_call(line, players)


Said = Generator[tuple[str, int], "str | None", Literal["taken", "ended", "gave up"]]


def say_line(line: str, players: Sequence[str], cost: Cost, tries: int = TRIES) -> Said:
    """One script line said until the referee takes it, as a player at the table would.

    Yields (words, take): what to say now and how many times before it was said. Is sent
    what the referee said before it listened again (None: it stopped listening). Returns
    "taken", "ended" or "gave up" (after `tries` tries of the line or of one answer)."""
    utterance, line_tries, answer_tries = line, 0, 0
    asked_before = None
    while True:
        tried = line_tries if utterance == line else answer_tries
        if tried >= tries:
            cost.gave_up = line
            return "gave up"
        reply = yield utterance, tried
        if utterance == line:
            line_tries += 1
        else:
            answer_tries += 1
        if reply is None:
            return "ended"
        asked = asked_about(reply)
        if asked is not None:
            cost.questions += 1
            if asked != asked_before or utterance == line:
                answer_tries = 0
            # else the same question again, after its answer was misheard: another try of the
            # answer, in a fresh take (a "no" heard as the call asked about would else be
            # asked about for ever)
            utterance, asked_before = ("yes" if same_call(asked, line, players) else "no"), asked
        elif "say again" in reply.lower() or not reply.strip():
            cost.repeats += 1  # not heard, or passed over as chatter: the same words again
        elif NOT_TAKEN.search(reply) and (utterance == line or "Not taken:" in reply):
            cost.repeats += 1  # the question let go with its call: the line again
            utterance = line
        elif "say it again" in reply.lower() and utterance != line:
            cost.repeats += 1  # the misheard call was dropped after the "no": the line again
            utterance = line
        else:
            return "taken"


# --- the demo -----------------------------------------------------------------------------------

class SpokenTable:
    """The players' side of the demo: it hears what the referee says (a Speaker beside the
    referee's own), and `next_recording` gives the WAV of whatever the players say next
    (None: the script is done, or a line could not get through)."""

    def __init__(self, lines: Sequence[Line], voices: dict, folder: Path) -> None:
        self.lines, self.voices, self.folder = list(lines), voices, folder
        self.cost = Cost()
        self._heard: list[str] = []
        self._at = 0
        self._line: Said | None = None
        self._count = 0
        self.pause = 0.0  # seconds before each utterance

    def say(self, text: str) -> None:
        self._heard.append(text)

    def next_recording(self) -> Path | None:
        reply, self._heard = " ".join(self._heard), []
        while self._at < len(self.lines):
            line = self.lines[self._at]
            try:
                if self._line is None:
                    self._line = say_line(line.text, PLAYERS, self.cost)
                    words, _ = next(self._line)
                else:
                    words, _ = self._line.send(reply)
            except StopIteration as done:
                self._line = None
                if done.value != "taken":
                    return None
                self.cost.taken += 1
                self._at += 1
                reply = ""
                continue
            self._count += 1
            time.sleep(self.pause)
            path = self.folder / f"{self._count:03d}-{line.player.lower()}.wav"
            print(f"{line.player} ({self.voices[line.player].voice}): {words}", flush=True)
            return self.voices[line.player].record(words, path)
        return None


def add_demo_arguments(parser) -> None:
    parser.add_argument("--mute", action="store_true", help="print announcements only, do not speak")
    parser.add_argument("--wav-out", type=Path, metavar="WAV", help="also write the announcements into this WAV file")
    parser.add_argument("--journal", type=Path, metavar="PATH", help="keep the demo's journal here")
    parser.add_argument("--display", action="store_true", help="show the game on the table display page")
    parser.add_argument("--display-port", type=int, default=DEFAULT_PORT, metavar="PORT",
                        help=f"the page's port (default {DEFAULT_PORT})")


def run_demo(args) -> int:
    """`companion demo`."""
    if not 0 <= args.display_port <= 65535:
        raise DemoError(f"--display-port must be a port number (0-65535), not {args.display_port}")
    if args.journal is not None:
        from companion.journal import JournalTaken, check_new

        try:
            check_new(args.journal)  # a folder, another file, a game: each said as itself
        except JournalTaken:
            raise DemoError(f"{args.journal} already holds a game; the demo keeps its journal in a new file") from None
    from companion.voice.speakers import check_wav_out

    check_wav_out(args.wav_out, [args.journal] if args.journal else [])
    return play_demo(args.wav_out, args.mute, args.display, args.display_port, args.journal)


def play_demo(wav_out: Path | None = None, mute: bool = False, display: bool = False,
              display_port: int = DEFAULT_PORT, journal: Path | None = None) -> int:
    """Play the demo game; 0 when its journal equals the typed game's."""
    from companion import journal as journals
    from companion.hearing import HearingPolicy
    from companion.listen.sources import make_engine
    from companion.referee import Referee, RefereeSettings
    from companion.rules import Game, get_preset
    from companion.sources import TextSource
    from companion.voice.speakers import PlayerVoice, Speakers, VoiceUnavailable, announcer

    def warn(line: str) -> None:
        print(f"companion: {line}", file=sys.stderr)

    lines = script_lines()
    rules = get_preset("asmodee").with_starting_dice(STARTING_DICE)
    with tempfile.TemporaryDirectory(prefix="companion-demo-") as tmp:
        folder = Path(tmp)
        typed = Game(PLAYERS, rules)
        Referee(typed, Speakers(())).run(TextSource([line.text for line in lines]))  # said to no one
        try:
            voices = {p: PlayerVoice(v) for p, v in VOICES.items()}
        except VoiceUnavailable as error:
            raise DemoError(f"the players need a voice: {error}") from None
        # At the table each player first says their name as the referee asks.
        names = [Line(p, f"{p} {phrase}") for p in PLAYERS for phrase, _ in NAME_PHRASES]
        table = SpokenTable(names + lines, voices, folder)
        game = Game(PLAYERS, rules)
        path = journal or folder / "demo.jsonl"
        # the speaker and the recogniser before the journal: one that cannot start leaves no game behind
        speaker = Speakers((table, announcer(mute, wav_out, warn)))  # the players hear it first
        source = Recordings(table, make_engine("bundled", players=PLAYERS))
        record = journals.Journal.start(path, game)
        shown = None
        if display:
            from companion.display.live import open_display

            shown = open_display(game, port=display_port, warn=warn)
        if shown is not None:
            record, speaker, source = shown.watch_journal(record), shown.watch_speaker(speaker), shown.watch_source(source)
            table.pause = PACE_S  # slow enough to watch on the page
            _wait_for_enter("open the page, then press Enter to start the game")
        try:
            Referee(game, speaker, record, settings=RefereeSettings(HearingPolicy.for_speech()),
                    log=lambda text: print(text, file=sys.stderr)).run(source)
            if shown is not None:  # the game's end stays on the page until the table has seen it
                _wait_for_enter("press Enter to close the display")
        finally:  # a Ctrl-C stops the demo at once
            record.close()
            if shown is not None:
                shown.close()
        same = [e.to_dict() for e in game.events] == [e.to_dict() for e in typed.events]
        cost = table.cost
        if cost.gave_up is not None:
            print(f"demo: gave up on {cost.gave_up!r} after {TRIES} tries", file=sys.stderr)
        print(f"demo: {'the spoken game is the typed game' if same else 'the spoken game went its own way'} "
              f"({len(game.events)} events; {cost.repeats} repeats, {cost.questions} questions)"
              + (f"; journal {path}" if journal else ""))
        if wav_out:
            print(f"demo: the referee's announcements are in {wav_out}")
        return 0 if same else 1


def _wait_for_enter(prompt: str) -> None:
    """At a terminal only: a demo run from a script or a test never waits."""
    if sys.stdin.isatty():
        try:
            input(f"demo: {prompt} ")
        except EOFError:
            pass


class Recordings(WavSource):
    """The `play --input wav` source, whose next file is whatever the players say next."""

    def __init__(self, table: SpokenTable, engine) -> None:
        super().__init__((), engine, learn_names=True)
        self.table = table

    def _next_file(self) -> Path | None:
        return self.table.next_recording()
