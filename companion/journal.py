"""The journal: every accepted event appended as one JSON line and flushed at once.

Resume rebuilds the game by replaying the players' actions through the rules engine and
checking that each derived event (a die lost, a palifico, the winner...) matches what was
written, so a journal that was edited, truncated or written by something else is caught
rather than trusted. A line cut off by a kill is dropped. A damaged line further up (a disk
error, a stray edit) costs only the game from that line on: resume goes on from the lines
before it, says what was dropped and why, and keeps the damaged file beside it untouched.
A bad game start is refused, since nothing follows from it.

Long: the file's writing, locking, reading, replay and repair are one format's, kept together
so that a change to it is made in one place.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import errno
import json
import os
import stat
import tempfile
from enum import Enum
from pathlib import Path
from typing import Iterable, NamedTuple, Sequence

try:
    import fcntl  # POSIX: one referee per journal
except ImportError:  # Windows: no lock
    fcntl = None  # type: ignore[assignment]

from companion.errors import CompanionError
from companion.files import open_file, read_bytes
from companion.rules import (Bid, BidAction, BidRefusal, ChallengeAction, CountAction, Game, IllegalBid, Phase, Rules,
                             RulesError, dice_left_standing, undone_event)
from companion.rules.presets import RULES_ADDED_LATER, RULES_REMOVED_LATER
from companion.rules.events import (
    ACTION_TYPES,
    BidMade,
    ChallengeCalled,
    DiceCounted,
    Event,
    EventFormatError,
    GameStarted,
    HandShown,
    HandTakenBack,
    Undone,
    hands_so_far,
)


class JournalError(CompanionError):
    """A journal that cannot be read, replayed or written; nothing is changed. `resume_from`:
    where the game so far was kept instead, when not at the journal's own path."""

    def __init__(self, message: str, resume_from: Path | None = None, resumable: bool = True) -> None:
        super().__init__(message)
        self.resume_from = resume_from
        self.resumable = resumable  # False: nothing at the path (or beside it) holds this game


class JournalTaken(JournalError):
    """The file a new game was to start in holds a game already, or another referee has it."""


class DamagedJournal(JournalError):
    """A journal with a damaged line after its game start: resume can cut it back to the lines before it."""


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


# In the sessions folder: the name of the journal the table played last. Files' times cannot
# tell: a Raspberry Pi has no clock of its own, and offline, after a power cut, it starts from
# the time it last saved, so the game just played can look older than one played before.
LAST_PLAYED = "last-played"
# Beside it, the games played there before, newest last: when the last is gone (deleted, or a
# start cut off), the one played before it is the one to resume, whatever the files' times
# say. (A file of its own: an earlier companion reads `last-played` as one name.)
GAMES_PLAYED = "games-played"
PLAYED_KEPT = 50


def mark_played(path: Path, directory: Path | None = None) -> None:
    """Remember the game at `path` as the one played last, where it is in the sessions
    folder. Only a hint for finding it: a folder that cannot be written loses nothing."""
    directory = directory or default_sessions_dir()
    try:
        if path.resolve().parent != directory.resolve():
            return
        played = [name for name in _hint(directory, GAMES_PLAYED) if name != path.name][-(PLAYED_KEPT - 1):]
        _write_hint(directory, GAMES_PLAYED, [*played, path.name])
        _write_hint(directory, LAST_PLAYED, [path.name])
    except OSError:
        # A stale hint would resume another game: without it the newest file is taken (a
        # full disk still lets a file be removed).
        for stale in (LAST_PLAYED, GAMES_PLAYED):
            with contextlib.suppress(OSError):
                (directory / stale).unlink(missing_ok=True)


def _write_hint(directory: Path, name: str, lines: Sequence[str]) -> None:
    spare = None
    try:
        # a spare of its own: another referee's hint is never half ours
        fd, spare = tempfile.mkstemp(dir=directory, prefix=f".{name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write("".join(f"{line}\n" for line in lines))
        os.replace(spare, directory / name)
    except OSError:
        if spare is not None:
            with contextlib.suppress(OSError):
                os.unlink(spare)
        raise


def find_session(name: str | None, directory: Path | None = None) -> Path:
    """The journal to resume: a path, a session name in the data directory, or the one
    played last (the newest, where nothing says)."""
    directory = directory or default_sessions_dir()
    if name:
        for candidate in (Path(name), directory / name, directory / f"{name}.jsonl"):
            if candidate.is_file():
                return candidate
        if Path(name).is_dir():
            raise JournalError(f"{name} is a folder: name a game's journal (.jsonl) in it")
        if Path(name).exists():
            raise JournalError(f"cannot read the journal {name}: {NOT_A_FILE_OF_ANY_KIND}")
        if "/" in name or os.sep in name:  # a path, not a session's name
            raise JournalError(f"no such file: {name}")
        raise JournalError(f"no saved game called {name!r} (looked in {directory})")
    # an empty file or a game start cut off is no game (a full disk or a kill stopped it at its
    # start): the game before it is
    for name in [*_hint(directory, LAST_PLAYED)[-1:], *reversed(_hint(directory, GAMES_PLAYED))]:
        last = directory / name
        if last.parent == directory and last.suffix == ".jsonl" and _starts_a_game(last):
            return last
    sessions = sorted((p for p in directory.glob("*.jsonl") if _starts_a_game(p)),
                      key=lambda p: p.stat().st_mtime) if directory.is_dir() else []
    if not sessions:
        raise JournalError(f"there is no saved game in {directory}")
    return sessions[-1]


def _hint(directory: Path, name: str) -> list[str]:
    """The games a hint in the sessions folder names, newest last (none where it cannot be read)."""
    try:
        text = read_bytes(directory / name).decode("utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return []
    return [line.strip() for line in text.splitlines() if line.strip() and "\0" not in line]  # (a damaged file)


def _starts_a_game(path: Path) -> bool:
    """Does the file begin with a whole game start line?"""
    try:
        with open_file(path) as f:  # a pipe named like a journal: not waited on
            first = f.readline(1 << 20).removeprefix(b"\xef\xbb\xbf")
    except OSError:
        return False
    return first.endswith(b"\n") and isinstance(_event_in(first), GameStarted)


NOT_A_FILE_OF_ANY_KIND = "it is a pipe, a device or a socket, not a file"


def _holds_a_game(path: Path) -> JournalTaken:
    return JournalTaken(f"{path} already holds a game; resume it with --resume, or choose another --journal")


def check_new(path: Path) -> None:
    """A new game never overwrites or extends a journal that already holds one."""
    if path.is_dir():
        raise JournalError(f"{path} is a folder: name a journal file (.jsonl) in it")
    if path.exists() and not path.is_file():  # a pipe would wait for a reader for ever
        raise JournalError(f"cannot write the journal {path}: {NOT_A_FILE_OF_ANY_KIND}")
    if path.exists() and path.stat().st_size > 0:
        raw = _read_bytes(path)  # one that cannot be read says so
        try:
            _scan(raw, path)
        except JournalError:  # a game start cut off, or another file: nothing to resume
            raise JournalError(f"{path} is not empty and holds no game to resume; a new game never "
                               "overwrites a file: choose another --journal") from None
        raise _holds_a_game(path)


class Journal:
    """Appends events to a JSON-lines file, flushed and synced after every action. The file
    is locked while it is open: two referees writing one game would each announce calls the
    other's journal lines then contradict, and a resume would drop them."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._file = self._open_locked()
        self._written = self._read_back()

    def _open_locked(self):
        for parent in self.path.parents:  # where mkdir would only say "File exists"
            if parent.is_symlink() and not parent.exists():
                raise JournalError(f"cannot write the journal {self.path}: {parent} is a link to nothing")
            if parent.exists() and not parent.is_dir():
                raise JournalError(f"cannot write the journal {self.path}: {parent} is a file, not a folder")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            file = open(self.path, "a", encoding="utf-8")
        except OSError as exc:
            raise JournalError(f"cannot write the journal {self.path}: {exc.strerror or exc}") from None
        if fcntl is None:
            return file
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return file  # a file system without locks (some network shares): unlocked, as before
            file.close()
            raise self._in_use() from None
        try:
            replaced = os.fstat(file.fileno()).st_ino != os.stat(self.path).st_ino
        except OSError:
            replaced = True
        if replaced:  # locked a file another referee's repair had just replaced
            file.close()
            raise self._in_use()
        return file

    def _read_back(self) -> list[str] | None:
        """The text written so far (in pieces), kept to write the journal again if its file is
        deleted or moved away while the game goes on (a tidy-up of the data folder), when a
        crash would lose the game; None where the file cannot be read back (written again, it
        would hold the new lines only)."""
        try:
            if not stat.S_ISREG(os.fstat(self._file.fileno()).st_mode):
                return None  # a device, a pipe: nothing to read back, nor to delete
            return [self.path.read_bytes().decode("utf-8")]
        except (OSError, UnicodeDecodeError):
            return None

    def _still_at_its_path(self) -> None:
        """The file at the journal's path is the one being written: if nothing is there (deleted,
        moved to the bin), the journal is written there again, whole; if another file is (an
        editor's save over it, a restore), the game stops rather than write into that one."""
        if self._written is None:
            return
        try:
            there = os.stat(self.path)
        except FileNotFoundError:
            self._file.close()
            self._file = self._open_locked()
            self._file.write("".join(self._written))
            _sync_folder(self.path)
            return
        except OSError:
            return  # cannot tell (a network share's hiccup): the open file is still written
        ours = os.fstat(self._file.fileno())
        if (there.st_ino, there.st_dev) != (ours.st_ino, ours.st_dev):
            replaced = f"{self.path} was replaced by another file while the game went on; the game stops rather than write into it"
            try:
                kept = _keep_copy(self.path, "".join(self._written).encode("utf-8"), "game", "the game in")
            except JournalError as failed:
                raise JournalError(f"{replaced}; {failed}", resumable=False) from None
            raise JournalError(f"{replaced}, and is kept in {kept}", resume_from=kept)

    def _in_use(self) -> JournalError:
        return JournalTaken(f"{self.path} is in use: another companion is playing this game; stop that one first")

    def reopen(self) -> None:
        """Write to (and lock) the file now at the path, after a repair replaced the old one."""
        file = self._open_locked()
        self.close()
        self._file = file
        self._written = self._read_back()

    def append(self, events: Sequence[Event]) -> None:
        # One write per action: a kill can cut at most the last line, which resume drops.
        text = journal_lines(events)
        before = None
        try:
            self._still_at_its_path()
            self._file.flush()
            fd = self._file.fileno()
            before = os.fstat(fd).st_size
            data = memoryview(text.encode("utf-8"))
            while data:  # unbuffered: a write that fails leaves nothing behind to flush later
                data = data[os.write(fd, data):]
            os.fsync(fd)
        except OSError as exc:  # a full card, a removed drive: said, and the game pauses
            self._cut_back(before)
            raise JournalError(f"cannot write the journal {self.path}: {exc.strerror or exc}") from None
        if self._written is not None:
            self._written.append(text)

    def _cut_back(self, size: int | None) -> None:
        """A write that failed part-way (a card filling up) is taken off again: the table is
        told the move is not saved, and a resume must not play it (or half a line after it)."""
        if size is None:
            return
        try:
            os.ftruncate(self._file.fileno(), size)
            os.fsync(self._file.fileno())
        except OSError:
            pass  # not a file that can be cut (a device), or the drive is gone: resume drops a torn line

    def close(self) -> None:
        try:
            if self._written is not None and not self._file.closed and not self.path.exists():
                self._still_at_its_path()  # deleted after the last call: written again
                self._file.flush()
                os.fsync(self._file.fileno())
        except (OSError, JournalError):
            pass  # the game has said all it can; nothing more to save it with
        try:
            self._file.close()
        except OSError:
            pass  # only a failed append's text can be left to flush, and that error was raised then

    @classmethod
    def start(cls, path: Path, game: Game) -> "Journal":
        check_new(path)
        existed = path.exists()
        journal = cls(path)
        if os.fstat(journal._file.fileno()).st_size > 0:  # written by another referee since the check
            journal.close()
            raise _holds_a_game(path)
        try:
            journal.append(game.events)
        except JournalError:
            journal.close()
            if not existed and not Path(path).is_symlink():  # an empty file left behind would be
                Path(path).unlink(missing_ok=True)                # taken for the newest game
            raise
        _sync_folder(journal.path)
        return journal

    @classmethod
    def start_in_sessions(cls, path: Path, game: Game) -> "Journal":
        """`start` at a name `new_session_path` chose: when another referee took it meanwhile
        (two tables started in the same second), the next free name."""
        for _ in range(100):
            try:
                return cls.start(path, game)
            except JournalTaken:
                path = new_session_path(path.parent)
        return cls.start(path, game)


class Damage(Enum):
    """Why a journal line could not be used."""

    UNREADABLE = "unreadable"  # not text, not JSON, or not an event
    DOES_NOT_REPLAY = "does not replay"  # an event the game so far does not allow or produce


class BadLine(NamedTuple):
    number: int  # from 1, as an editor shows it
    damage: Damage
    why: str  # follows "line N": "is not readable JSON (...)"


class _Scan(NamedTuple):
    events: list[Event]  # the readable events before the first bad line
    numbers: list[int]  # the line of each (blank lines hold none)
    lines: int  # whole lines in the file
    torn: bool  # a last line cut off mid-write followed them
    bad: BadLine | None  # the first line that could not be read
    unended: bool = False  # the last line is a whole event without its line end


def _scan(raw: bytes, path: Path) -> _Scan:
    """Read events up to the first unreadable line; a file whose game start is bad is refused."""
    lines = raw.removeprefix(b"\xef\xbb\xbf").split(b"\n")  # an editor's byte order mark is no damage
    # The process died in the middle of writing the last line: it never happened. A last
    # line that is a whole event without its line end (an editor saved it so) is kept.
    last = lines.pop()
    unended = last.strip() != b"" and _event_in(last) is not None
    if unended:
        lines.append(last)
    torn = last.strip() != b"" and not unended
    events: list[Event] = []
    numbers: list[int] = []
    bad = None
    for number, line in enumerate(lines, 1):
        if not line.strip():  # a blank line (a hand edit) holds no event
            continue
        try:
            events.append(Event.from_dict(json.loads(line.decode("utf-8"))))
            numbers.append(number)
            continue
        except UnicodeDecodeError:
            bad = BadLine(number, Damage.UNREADABLE, "is not text")
        except json.JSONDecodeError as exc:
            where = f"{exc.msg.removesuffix(' at')} at column {exc.colno}"
            bad = BadLine(number, Damage.UNREADABLE, f"is not readable JSON ({where})")
        except EventFormatError as exc:
            bad = BadLine(number, Damage.UNREADABLE, f"is not a journal event ({exc})")
        except ValueError:  # a number of thousands of digits, which Python will not read
            bad = BadLine(number, Damage.UNREADABLE, "is not readable JSON (a number too long to read)")
        except RecursionError:  # JSON nested past Python's stack: no event is
            bad = BadLine(number, Damage.UNREADABLE, "is not a journal event (nested too deep)")
        break
    if bad is not None and bad.number == 1:
        raise JournalError(f"{path} is not a companion journal: line 1 {bad.why}")
    if not events or not isinstance(events[0], GameStarted):
        raise JournalError(f"{path} is not a companion journal: it does not start with a game")
    return _Scan(events, numbers, len(lines), torn, bad, unended)


def _event_in(line: bytes) -> Event | None:
    """The event a line holds whole; None for one cut off, not JSON or no event."""
    try:
        return Event.from_dict(json.loads(line.decode("utf-8")))
    except (ValueError, RecursionError):  # not UTF-8, not JSON (cut off), no event, or nested past reading
        return None


def _read_bytes(path: Path) -> bytes:
    try:
        if Path(path).exists() and not Path(path).is_file():  # a journal is written too: a pipe would wait
            raise JournalError(f"cannot read the journal {path}: {NOT_A_FILE_OF_ANY_KIND}")
        return read_bytes(path)
    except OSError as exc:
        raise JournalError(f"cannot read the journal {path}: {exc.strerror or exc}") from None


def read_events(path: Path) -> tuple[list[Event], bool]:
    """Read a whole journal, refusing any bad line; the flag says a cut-off last line was
    dropped."""
    scan = _scan_whole(path)
    return scan.events, scan.torn


def _scan_whole(path: Path) -> _Scan:
    scan = _scan(_read_bytes(path), path)
    if scan.bad is not None:
        raise DamagedJournal(f"{path} is corrupt at line {scan.bad.number}: it {scan.bad.why}")
    return scan


def _action(event: Event):
    if isinstance(event, BidMade):
        return BidAction(event.player, Bid(event.count, event.face))
    if isinstance(event, ChallengeCalled):
        return ChallengeAction(event.kind, event.player)
    if isinstance(event, DiceCounted):
        return CountAction(event.count, event.hands, event.source, event.camera_dice)
    raise AssertionError(event)


def replay(events: Sequence[Event], path: Path | str = "journal",
           lines: Sequence[int] | None = None) -> tuple[Game, list[Event]]:
    """Rebuild the game from journalled events; returns it with the events that stand.

    A last action whose derived events were cut off is kept (they are re-derived); an
    event that does not replay is refused, said by its line (`lines`: each event's, where
    blank lines came between) or else by its place.
    """
    game, kept, bad = _replay_until_bad(events, path)
    if bad is not None:
        number = lines[bad.number - 1] if lines else bad.number
        raise DamagedJournal(f"{path}: line {number} {bad.why}")
    return game, kept


# What a line's data can make replay raise: fields of the wrong type are refused as they
# are read (Event.from_dict), so a TypeError or KeyError here is a fault in the code, not
# in the file, and must not cut the journal back as damage.
_BAD_DATA = (RulesError, ValueError)


class _DoesNotReplay(Exception):
    def __init__(self, why: str, over_hidden_cap: bool = False) -> None:
        super().__init__(why)
        self.why = why
        self.over_hidden_cap = over_hidden_cap  # a bid above what the players could hold


def _started_game(start: GameStarted, older_bids: bool = False) -> Game:
    """The game a journal's start sets up (a field a later version dropped left out)."""
    rules = {k: v for k, v in start.rules.items() if k not in RULES_REMOVED_LATER}
    game = Game(start.players, Rules.from_dict(rules), start.first)
    game.admit_older_bids = older_bids
    return game


def _replay_until_bad(events: Sequence[Event], path: Path | str,
                      older_bids: bool = False) -> tuple[Game, list[Event], BadLine | None]:
    """Rebuild the game from the events before the first one that does not replay, and say
    which that is. Only a game start that cannot be trusted is an error: nothing follows
    from it. `older_bids`: an older version's journal, whose bids above the cap where the
    total is hidden (made before there was one) replay as played."""
    start = events[0]
    assert isinstance(start, GameStarted)
    try:
        game = _started_game(start, older_bids)
    except _BAD_DATA as exc:
        # (a version that set up games this one refuses, or damage: the file is not touched)
        raise JournalError(f"{path} starts a game this version cannot set up ({exc}). It may be another "
                           "version's journal; it was not changed.") from None
    kept: list[Event] = list(game.events)
    written = [e.to_dict() for e in events[: len(kept)]]
    # A journal from before a rules field was added lacks it; the field's default is what
    # that game was played by, so the start is compared with it filled in (any other
    # missing field is still a journal that does not match its own start), and without
    # the fields a later version dropped.
    added = {f: v for f, v in Rules().to_dict().items() if f in RULES_ADDED_LATER}
    rules = {k: v for k, v in written[0].get("rules", {}).items() if k not in RULES_REMOVED_LATER}
    written[0] = dict(written[0], rules={**added, **rules})
    # The opening round written with the start may have been cut off: it is re-derived.
    if written != [e.to_dict() for e in kept[: len(written)]]:
        raise JournalError(f"{path} does not match its own start: was it written by another version?")
    i = len(kept)
    places: list[int] = []  # where each action standing was journalled
    while i < len(events):
        try:
            _check_dice_left_standing(game, events, i, places)
            standing = _replay_one(game, events, i)
        except _DoesNotReplay as refused:
            if refused.over_hidden_cap and not older_bids:
                # an older version's game, before the cap: its bids replay as they were
                # played (and what this version plays on is capped); but where the line is
                # bad for another reason too, it is that damage
                older = _replay_until_bad(events, path, older_bids=True)
                older[0].admit_older_bids = False
                if older[2] is None or older[2].number > i + 1:
                    return older
                refused = _DoesNotReplay(older[2].why)
            # The refused event may have stopped half-way through the rules engine: the
            # game is rebuilt from the lines before it, which all replayed.
            game, kept, _ = _replay_until_bad(events[:i], path, older_bids)
            game.admit_older_bids = False
            return game, kept, BadLine(i + 1, Damage.DOES_NOT_REPLAY, refused.why)
        if events[i].type in ACTION_TYPES:
            places.append(i)
        elif isinstance(events[i], Undone):
            places.pop()
        kept.extend(standing)
        i += len(standing)
    return game, kept, None


def _check_dice_left_standing(game: Game, events: Sequence[Event], i: int, places: list[int]) -> None:
    """An undo's dice left standing (its `hands`) must be those the referee keeps when it
    takes back that count: all but the last said, of a count the dice made; the dice said
    before it, of a number counted; none otherwise."""
    event = events[i]
    if not isinstance(event, Undone) or not event.hands or not game.actions:
        return
    expected = dice_left_standing(game.actions[-1], hands_so_far(events[:places[-1]]) if places else {})
    if {p: tuple(d) for p, d in event.hands.items()} != expected:
        raise _DoesNotReplay("leaves dice standing that were not said before the count it takes back")


def _replay_one(game: Game, events: Sequence[Event], i: int) -> list[Event]:
    """Replay events[i] on the game; returns the events that stand for it (an action's with
    its consequences, re-derived if they were cut off), or raises _DoesNotReplay."""
    event = events[i]
    if isinstance(event, Undone):
        if not game.actions:
            raise _DoesNotReplay("undoes nothing: the game has no call to take back")
        named = dataclasses.replace(event, hands=None).to_dict()
        if event.action and named != undone_event(game.actions[-1]).to_dict():
            # (an undo with no action named, as tools may write it, takes back the last)
            raise _DoesNotReplay("takes back another call than the last")
        game.undo()  # (the dice it leaves standing are checked before: _check_dice_left_standing)
        return [event]
    if isinstance(event, HandShown):
        try:
            if game.phase is not Phase.REVEAL:
                raise RulesError("nobody had challenged")
            game.check_hands({event.player: event.dice})
        except _BAD_DATA as exc:
            raise _DoesNotReplay(f"shows dice that cannot be shown: {exc}") from None
        return [event]
    if isinstance(event, HandTakenBack):
        if game.phase is not Phase.REVEAL or event.player not in hands_so_far(events[:i]):
            raise _DoesNotReplay("takes back a hand that was not said")
        return [event]
    if event.type not in ACTION_TYPES:
        raise _DoesNotReplay(f"({event.type}) does not follow from the game so far")
    try:
        produced = game.apply(_action(event))
    except _BAD_DATA as exc:
        over = isinstance(exc, IllegalBid) and exc.reason is BidRefusal.MORE_THAN_THE_PLAYERS_HOLD
        raise _DoesNotReplay(f"is not allowed by the rules: {exc}", over) from None
    written = events[i: i + len(produced)]
    if [e.to_dict() for e in produced[: len(written)]] != [e.to_dict() for e in written]:
        raise _DoesNotReplay("is followed by events that do not match the rules engine's replay")
    return produced


class Dropped(NamedTuple):
    """What resuming a damaged journal left out: its first bad line and every line after it."""

    first: BadLine
    last_line: int  # the journal's last line (a line cut off mid-write included)
    backup: Path  # the journal as it was, untouched

    @property
    def after(self) -> int:
        """Lines after the bad one, dropped with it: without it they cannot be trusted."""
        return self.last_line - self.first.number

    def describe(self) -> str:
        first = self.first.number
        what = (f"line {first} was dropped" if not self.after else
                f"lines {first} to {self.last_line} were dropped (line {first} and the "
                f"{self.after} event{'s' if self.after != 1 else ''} after it)")
        return (f"the journal was damaged: line {first} {self.first.why}. The game goes on from "
                f"the line before it; {what}. The journal as it was is kept in {self.backup}")


class Resumed(NamedTuple):
    game: Game
    journal: Journal
    notes: list[str]  # what to tell the players about the journal itself
    hands: dict[str, tuple[int, ...]]  # dice already said at the reveal in progress
    dropped: Dropped | None = None  # set when a damaged journal was cut back to its good lines
    count_taken_back: bool = False  # a count of the reveal in progress was taken back: the players count
    # for each number counted that still stands, oldest first, the dice said before it (a
    # "take it back" of that count brings them back)
    under_counts: tuple[dict[str, tuple[int, ...]], ...] = ()
    # the last round whose dice were counted before the pause, taken back since or not (0:
    # none): photos given for reveals now are of later rounds
    last_round_counted: int = 0
    # a repair read but not yet written (resume(defer_repair=True)): write_repair writes it
    repair: "_Repair | None" = None

    @property
    def latest_round(self) -> int:
        """The latest round the table can have rolled for: the game's, or the one after the
        last counted before the pause (a game walked back across rounds before it). Photos
        given now begin with its reveal; a camera sees no earlier round's dice."""
        return max(self.game.round_number, self.last_round_counted + 1)

    def write_repair(self) -> "Resumed":
        """Write a repair resume() deferred: the damaged journal kept beside it and the game's
        file cut back (then `dropped` says so), or the lines that follow added (`notes`)."""
        if self.repair is None:
            return self
        journal, (kept, raw, bad, last_line, notes) = self.journal, self.repair
        dropped = Dropped(bad, last_line, _keep_backup(journal.path, raw)) if bad is not None else None
        if fcntl is None:
            journal.close()  # Windows replaces no file that is open
        _rewrite(journal.path, kept)
        journal.reopen()
        return self._replace(notes=notes, dropped=dropped, repair=None)


class _Repair(NamedTuple):
    kept: list[Event]
    raw: bytes  # the journal as it was
    bad: BadLine | None
    last_line: int
    notes: list[str]


def resume(path: Path, *, defer_repair: bool = False) -> Resumed:
    """Open a journal to continue its game: a cut-off tail is repaired, and a damaged
    journal is cut back to the events before its first bad line (kept whole in a backup).
    A journal another referee has open, or one that cannot be written, is left as it is.
    `defer_repair`: the repair is written by `Resumed.write_repair`, once the game is sure
    to go on (its devices opened): a game that cannot start leaves its journal as it was."""
    path = Path(path)
    _read_bytes(path)  # a missing or unreadable journal is said so before anything is opened
    # A link's file is the journal: a repair replaces that file, never the link.
    journal = Journal(path.resolve())
    try:
        raw = _read_bytes(path)  # as it is now that nobody else can write it
        scan = _scan(raw, path)
        game, kept, refused = _replay_until_bad(scan.events, path)
        if refused is not None:  # told by the event's place: said by its line
            refused = refused._replace(number=scan.numbers[refused.number - 1])
        bad = refused or scan.bad  # a refused event always comes before an unreadable line
        notes = []
        if bad is None and scan.torn:
            notes.append("the journal's last line had been cut off mid-write; it was repaired")
        elif bad is None and scan.unended:  # the next line would be written onto its end
            notes.append("the journal's last line had no line end; it was added")
        elif bad is None and len(kept) != len(scan.events):  # stopped between an action and what followed from it
            notes.append("the journal stopped before what follows from its last line was written; that was added")
        repair = _Repair(kept, raw, bad, scan.lines + scan.torn, notes) if bad is not None or notes else None
    except BaseException:
        journal.close()
        raise
    taken_back, under_counts = _counts_standing(kept)
    # The dice an undo of a count leaves standing are in its own line (journals before that
    # wrote them as hand lines after it); an undo without them brings none back, as an older
    # version's undo of a count dropped every hand said.
    hands = hands_so_far(kept)
    last_counted = _last_round_counted(kept, bool(game.older_bids))
    resumed = Resumed(game, journal, [], hands, None, taken_back, under_counts, last_counted, repair)
    if defer_repair:
        return resumed
    try:
        return resumed.write_repair()
    except BaseException:
        journal.close()
        raise


def _last_round_counted(events: Sequence[Event], older_bids: bool = False) -> int:
    """The last round whose dice were counted, taken back since or not (0: none), found by
    replaying the game as it went: a round taken back into is told by the game, not by the
    lines before the count (a later round's start may lie there, taken back)."""
    start = events[0]
    assert isinstance(start, GameStarted)
    game = _started_game(start, older_bids)
    last, i = 0, len(game.events)
    while i < len(events):
        round_number = game.round_number
        standing = _replay_one(game, events, i)  # they all replayed once already
        if any(isinstance(e, DiceCounted) for e in standing):
            last = max(last, round_number)
        i += len(standing)
    return last


def _counts_standing(events: Sequence[Event]) -> tuple[bool, tuple[dict[str, tuple[int, ...]], ...]]:
    """Whether a count was taken back since the last challenge (the players overruled the
    camera, or corrected themselves), and for each number counted that still stands, the
    dice said before it. The actions are followed as the game stacks them: an undo takes
    back the last, named or not."""
    # type, and for a number counted the dice said before it
    actions: list[tuple[str, dict[str, tuple[int, ...]] | None]] = []
    taken_back = False
    for i, event in enumerate(events):
        if isinstance(event, ChallengeCalled):
            taken_back = False
        if event.type in ACTION_TYPES:
            number = isinstance(event, DiceCounted) and event.said_as_number
            actions.append((event.type, hands_so_far(events[:i]) if number else None))
        elif isinstance(event, Undone) and actions:
            kind, _ = actions.pop()  # popped whatever taken_back already is
            taken_back = taken_back or kind == DiceCounted.type
    return taken_back, tuple(under for _, under in actions if under is not None)


def last_line(path: Path) -> str:
    """What to tell the players as a game stops: how to see it if its journal holds it won,
    or else how to carry it on."""
    if finished(path):
        return f"the game is over; its recap page: companion recap {path}"
    return f"the game is paused; continue it with: companion play --resume {path}"


def finished(path: Path) -> bool:
    """Does the journal on disk hold a won game? What a resume would find, whatever the game
    in memory reached: a move its journal line never reached never happened."""
    try:
        return load_game(path).winner is not None
    except CompanionError:
        return False


def _keep_backup(path: Path, raw: bytes) -> Path:
    """Keep the damaged journal's bytes beside it (game.jsonl.corrupt-1, -2...), never over
    an older backup; the game's own file is only rewritten once this is safely written."""
    return _keep_copy(path, raw, "corrupt", "the damaged journal")


def _keep_copy(path: Path, raw: bytes, suffix: str, what: str) -> Path:
    """`raw` (`what`, for the message) kept beside the journal as game.jsonl.SUFFIX-1 (-2,
    ...), never over an older copy."""
    n = 1
    while True:
        backup = path.with_name(f"{path.name}.{suffix}-{n}")
        try:
            with open(backup, "xb") as f:
                f.write(raw)
                f.flush()
                os.fsync(f.fileno())
            return backup
        except FileExistsError:
            n += 1
        except OSError as exc:
            backup.unlink(missing_ok=True)  # a part copy is no backup
            raise JournalError(f"cannot keep a copy of {what} {path} as {backup}: "
                               f"{exc.strerror or exc}; nothing was changed") from None


def journal_lines(events: Sequence[Event]) -> str:
    """The events as the journal stores them: one compact JSON object a line."""
    return "".join(json.dumps(e.to_dict(), separators=(",", ":")) + "\n" for e in events)


def _rewrite(path: Path, events: Sequence[Event]) -> None:
    """Replace the journal by these events in one atomic step, so a second crash cannot hurt it."""
    tmp = Path(f"{path}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(journal_lines(events))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise JournalError(f"cannot repair the journal {path}: {exc.strerror or exc}; it is as it was") from None
    _sync_folder(path)


def _sync_folder(path: Path) -> None:
    """Make a journal's new name in its folder last through a power cut (the folder's own
    entry is written apart from the file; an SD card's FAT is the likely place to lose it)."""
    try:
        folder = os.open(Path(path).resolve().parent, os.O_RDONLY)
    except OSError:
        return  # not a platform or file system that opens folders: nothing more can be done
    try:
        os.fsync(folder)
    except OSError:
        pass
    finally:
        os.close(folder)


def load_game(path: Path) -> Game:
    """Replay a journal without opening it for writing (for tools and tests); any bad line is
    an error, since nothing is repaired here."""
    return read_game(path)[0]


def read_game(path: Path) -> tuple[Game, bool]:
    """load_game, and whether a last line cut off mid-write was left out."""
    scan = _scan_whole(path)
    return replay(scan.events, path, scan.numbers)[0], scan.torn


def dump(events: Iterable[Event]) -> str:
    return "".join(json.dumps(e.to_dict()) + "\n" for e in events)
