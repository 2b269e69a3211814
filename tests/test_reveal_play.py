"""The reveal in a real game: the referee counts from image files, or falls back to asking;
the rules count what the camera read, and a resumed game counts it again."""

import dataclasses
import json

import cv2
import pytest
from conftest import stand_in_camera

from companion.journal import JournalError, dump, load_game
from companion.rules import Bid, Game, count_matching, get_preset
from companion.rules.events import DiceCounted, Event
from companion.vision import CameraSettings, DiceReading, Die
from companion.vision.reader import DiceReader
from companion.vision.scenes import generate_scene
from conftest import run_companion

SURE = CameraSettings().min_confidence


@pytest.fixture(scope="module")
def table_photo(tmp_path_factory):
    """A top-down photo of six dice that the reader reads exactly (checked, not assumed)."""
    reader = DiceReader()
    for seed in range(700, 720):
        scene = generate_scene(seed, size=(480, 640), n_dice=6, angle=0.3, hard=0.3, touching=0.0,
                               paco_fraction=0.3)
        reading = reader.read(scene.image)
        if reading.counts == scene.counts and reading.min_confidence >= SURE:
            path = tmp_path_factory.mktemp("reveal") / "table.png"
            cv2.imwrite(str(path), scene.image)
            return path, [d.face for d in scene.dice]
    pytest.fail("the reader misread every easy scene tried")


@pytest.fixture(scope="module")
def doubtful_photo(table_photo, tmp_path_factory):
    """The table photo with one die's face blurred: every die is still found, but that one
    is read below the reveal's line (checked, not assumed)."""
    reader = DiceReader()
    image = cv2.imread(str(table_photo[0]))
    for die in reader.read(image).dice:
        x, y, w, h = die.box
        for k in (21, 31, 41, 51):
            blurred = image.copy()
            blurred[y + 2:y + h - 2, x + 2:x + w - 2] = cv2.GaussianBlur(
                image[y + 2:y + h - 2, x + 2:x + w - 2], (k, k), 0)
            reading = reader.read(blurred)
            if reading.total == 6 and reading.min_confidence < SURE:
                path = tmp_path_factory.mktemp("doubt") / "blurred.png"
                cv2.imwrite(str(path), blurred)
                return path
    pytest.fail("no blur made the reader doubt a die it still found")


def play_with_camera(tmp_path, photo, dice_each, script):
    """Ana and Ben play from typed calls; reveals are read from `photo`. Returns the count events."""
    journal = tmp_path / "game.jsonl"
    result = run_companion("play", "--players", "Ana", "Ben", "--dice", dice_each, "--input", "text", "--mute",
                           "--journal", journal, "--camera-images", photo, input_text=script)
    assert result.returncode == 0, result.stderr
    counts = [json.loads(line) for line in journal.read_text().splitlines() if '"type":"count"' in line]
    return result, journal, counts


def test_the_camera_settles_a_dudo(tmp_path, table_photo):
    path, faces = table_photo
    result, journal, counts = play_with_camera(tmp_path, path, 3, "two fours\ndudo\n")
    truth = count_matching(faces, 4, aces_wild=True)
    assert [(c["count"], c["hands"], c["source"], c["correct"]) for c in counts] == [
        (truth, None, "camera", truth >= 2)]
    assert "I see " in result.stdout and "Lift the cups" in result.stdout
    loser = "Ben" if truth >= 2 else "Ana"
    assert load_game(journal).dice[loser] == 2
    assert (tmp_path / "game-reveals" / "reveal-0001.png").is_file()


def test_a_mismatch_with_the_dice_in_play_falls_back_to_asking(tmp_path, table_photo):
    path, _ = table_photo
    result, journal, counts = play_with_camera(tmp_path, path, 4, "two fours\ndudo\n1\n")
    assert "I cannot count this one: I see six dice but eight are in play." in result.stdout
    assert "How many fours, pacos included?" in result.stdout
    game = load_game(journal)
    assert game.dice["Ana"] == 3  # the players' count of one decided it
    assert [c["source"] for c in counts] == ["players"]


def test_low_confidence_falls_back_to_asking(tmp_path, doubtful_photo):
    result, journal, counts = play_with_camera(tmp_path, doubtful_photo, 3, "two fours\ndudo\n1\n")
    assert "I cannot count this one: some dice are too hard to read." in result.stdout
    assert "How many fours, pacos included?" in result.stdout
    assert [c["source"] for c in counts] == ["players"] and load_game(journal).dice["Ana"] == 2
    assert (tmp_path / "game-reveals" / "reveal-0001.png").is_file()  # what it doubted, kept


def test_an_unreadable_camera_image_is_refused_before_the_game(tmp_path):
    bad = tmp_path / "bad.png"
    bad.write_text("not a picture")
    result = run_companion("play", "--players", "Ana", "Ben", "--input", "text", "--mute",
                           "--journal", tmp_path / "j.jsonl", "--camera-images", bad,
                           input_text="two fours\ndudo\n1\n")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "bad.png: not an image OpenCV can decode" in result.stderr
    assert not (tmp_path / "j.jsonl").exists()  # no game was started


def test_a_profile_without_a_camera_is_refused(tmp_path):
    result = run_companion("play", "--players", "Ana", "Ben", "--input", "text", "--mute",
                           "--journal", tmp_path / "j.jsonl", "--profile", tmp_path / "prof",
                           input_text="two fours\n")
    assert result.returncode == 2
    assert "give it with --camera N or --camera-images" in result.stderr
    assert not (tmp_path / "j.jsonl").exists()


def test_each_reveal_reads_its_own_photo(tmp_path, table_photo):
    """Two reveals, two photos: the second is settled from the second photo (five dice in play
    after the first round), not from whichever photo the first reveal stopped at."""
    first, faces = table_photo
    reader = DiceReader()
    for seed in range(740, 770):
        scene = generate_scene(seed, size=(480, 640), n_dice=5, angle=0.3, hard=0.3, touching=0.0)
        reading = reader.read(scene.image)
        if reading.counts == scene.counts and reading.min_confidence >= SURE:
            break
    else:
        pytest.fail("the reader misread every easy five-dice scene tried")
    second = tmp_path / "second.png"
    cv2.imwrite(str(second), scene.image)
    journal = tmp_path / "game.jsonl"
    result = run_companion("play", "--players", "Ana", "Ben", "--dice", 3, "--input", "text", "--mute",
                           "--journal", journal, "--camera-images", first, second,
                           input_text="two fours\ndudo\none two\ndudo\n")
    assert result.returncode == 0, result.stderr
    counts = [json.loads(line) for line in journal.read_text().splitlines() if '"type":"count"' in line]
    truth = count_matching([d.face for d in scene.dice], 2, aces_wild=True)
    assert [(c["count"], c["source"]) for c in counts] == [
        (count_matching(faces, 4, aces_wild=True), "camera"), (truth, "camera")]
    assert (tmp_path / "game-reveals" / "reveal-0002.png").is_file()


def test_a_game_stopped_before_the_camera_looked_has_it_look_on_resuming(tmp_path, table_photo):
    path, faces = table_photo
    _, journal, _ = play_with_camera(tmp_path, path, 3, "two fours\ndudo\n")
    stopped = tmp_path / "stopped.jsonl"  # killed between the dudo's line and the camera's look
    stopped.write_text("".join(journal.read_text().splitlines(keepends=True)[:4]))
    assert '"type":"challenge"' in stopped.read_text().splitlines()[-1]
    result = run_companion("play", "--resume", stopped, "--input", "text", "--mute", "--camera-images", path,
                           input_text="repeat\n")
    assert result.returncode == 0, result.stderr
    counts = [json.loads(line) for line in stopped.read_text().splitlines() if '"type":"count"' in line]
    assert [(c["count"], c["source"]) for c in counts] == [(count_matching(faces, 4, aces_wild=True), "camera")]
    # said first, as a fresh challenge is: which challenge, and that the cups go up
    assert result.stdout.index("Resuming the game. Ben called dudo on Ana's two fours. Lift the cups.") < \
        result.stdout.index("I see ")
    again = result.stdout.splitlines()[-1]  # "repeat" says the challenge with the camera's count
    # (where the game stands: "Resuming the game" said again would sound like a second resume)
    assert again.startswith("Again: Ben called dudo on Ana's two fours.") and "I see " in again


def test_a_camera_count_taken_back_is_not_counted_again_on_resuming(tmp_path, table_photo):
    # "take it back" after the camera's count overrules the camera: the players count, and
    # a resume asks them too rather than have the camera settle it again
    path, faces = table_photo
    _, journal, _ = play_with_camera(tmp_path, path, 3, "two fours\ndudo\nundo\n")
    result = run_companion("play", "--resume", journal, "--input", "text", "--mute", "--camera-images", path,
                           input_text="")
    assert result.returncode == 0, result.stderr
    assert "I see " not in result.stdout and "How many fours" in result.stdout
    counts = [line for line in journal.read_text().splitlines() if '"type":"count"' in line]
    assert len(counts) == 1  # the one taken back, not counted again
    # an undo that names no action (as tools may write it) takes back the count all the same
    lines = journal.read_text().splitlines(keepends=True)
    undo = next(i for i, line in enumerate(lines) if '"type":"undo"' in line)
    journal.write_text("".join(lines[:undo] + ['{"type":"undo","action":{}}\n'] + lines[undo + 1:]))
    result = run_companion("play", "--resume", journal, "--input", "text", "--mute", "--camera-images", path,
                           input_text="")
    assert result.returncode == 0 and "I see " not in result.stdout, result.stdout


def test_a_camera_that_cannot_count_on_resuming_says_why_then_asks(tmp_path, table_photo):
    path, _ = table_photo
    _, journal, _ = play_with_camera(tmp_path, path, 4, "two fours\ndudo\n1\n")  # eight dice: a mismatch
    stopped = tmp_path / "stopped.jsonl"
    stopped.write_text("".join(journal.read_text().splitlines(keepends=True)[:4]))
    result = run_companion("play", "--resume", stopped, "--input", "text", "--mute", "--camera-images", path,
                           input_text="")
    assert result.returncode == 0, result.stderr
    assert "I cannot count this one" in result.stdout and result.stdout.count("How many fours") == 1
    assert result.stdout.index("Lift the cups") < result.stdout.index("I cannot count this one")
    assert '"type":"count"' not in stopped.read_text()


def test_the_cameras_dice_are_journalled_with_its_count(tmp_path, table_photo):
    path, faces = table_photo
    _, journal, counts = play_with_camera(tmp_path, path, 3, "two fours\ndudo\n")
    assert sorted(counts[0]["camera_dice"]) == sorted(faces)
    assert counts[0]["count"] == count_matching(counts[0]["camera_dice"], 4, aces_wild=True)
    loser = "Ben" if counts[0]["correct"] else "Ana"
    assert load_game(journal).dice[loser] == 2


def _reading(faces):
    return DiceReading(tuple(Die(face, (10 * i, 0, 8, 8), 0.99) for i, face in enumerate(faces)))


@pytest.mark.parametrize("preset, aces_wild, fives", [("wikipedia", False, 2), ("asmodee", True, 3)])
def test_the_rules_count_the_cameras_dice_with_aces_wild_or_not(preset, aces_wild, fives):
    """Ana down to one die of two against Ben: a palifico round under wikipedia's rules
    (palifico from two players left), where aces are not wild; under asmodee's (from three) a
    round like any other."""
    game = Game(["Ana", "Ben"], dataclasses.replace(get_preset(preset), starting_dice=2, max_dice=2))
    game.bid("Ana", Bid(1, 5))
    game.dudo("Ben")
    game.reveal(0)
    game.bid("Ana", Bid(1, 5))
    game.dudo("Ben")
    challenge = game.challenge
    reading = _reading((1, 5, 5))
    assert challenge.aces_wild is aces_wild
    assert count_matching(reading.faces, challenge.face, challenge.aces_wild) == fives
    assert count_matching(reading.faces, 1, challenge.aces_wild) == 1  # aces count for themselves


def test_a_count_line_with_the_cameras_dice_round_trips():
    counted = DiceCounted(3, None, "camera", True, camera_dice=(4, 4, 1, 2, 3, 5))
    line = json.loads(json.dumps(counted.to_dict()))
    assert line["camera_dice"] == [4, 4, 1, 2, 3, 5]
    assert Event.from_dict(line) == counted
    # A count the players gave is written as before the camera's dice were kept, and a line
    # written then still reads.
    said = DiceCounted(3, None, "players", True)
    assert "camera_dice" not in said.to_dict()
    old = {"type": "count", "count": 3, "hands": None, "source": "camera", "correct": True}
    assert Event.from_dict(old) == DiceCounted(3, None, "camera", True, camera_dice=None)


def _camera_journal(tmp_path, faces, count):
    """Ana's "two fours", Ben's dudo and the camera's count of `count` from `faces` (ten dice),
    written as the referee journals them."""
    game = Game(["Ana", "Ben"], get_preset("asmodee"))
    game.bid("Ana", Bid(2, 4))
    game.dudo("Ben")
    counted = [dataclasses.replace(e, camera_dice=tuple(faces)) if isinstance(e, DiceCounted) else e
               for e in game.reveal(count, source="camera")]
    path = tmp_path / "game.jsonl"
    path.write_text(dump(game.events[:-len(counted)] + counted))
    return path


def test_a_resumed_game_counts_the_cameras_dice_again(tmp_path):
    faces = (4, 4, 1, 2, 3, 5, 6, 6, 2, 3)  # three fours, the ace included
    game = load_game(_camera_journal(tmp_path, faces, 3))
    assert game.dice == {"Ana": 5, "Ben": 4}
    counted = [e for e in game.events if isinstance(e, DiceCounted)]
    assert counted[0].camera_dice == faces


@pytest.mark.parametrize("faces, count", [
    ((4, 4, 1, 2, 3, 5, 6, 6, 2, 3), 1),  # the dice make three fours, not one
    ((4, 4, 1), 3),  # three dice read of the ten in play
])
def test_a_resumed_game_refuses_a_camera_count_its_dice_do_not_make(tmp_path, faces, count):
    with pytest.raises(JournalError, match="line 5 is not allowed by the rules: the camera's dice"):
        load_game(_camera_journal(tmp_path, faces, count))


def test_a_live_camera_sees_no_challenge_taken_back_into_across_a_roll_not_yet_revealed(monkeypatch):
    """A calza at the most dice keeps fifteen in play; the table rolls and bids in round two,
    then takes it all back and calls dudo on round one's bid: the camera would count round
    two's dice as round one's (the totals agree), so the players count."""
    import numpy as np
    from companion.referee import Referee
    from companion.rules import Game, get_preset
    from companion.sources import Utterance
    from companion.vision import frames as frames_module
    from companion.vision.reveal import CameraCounter
    from companion.vision.settings import CameraSettings
    from companion.vision.types import DiceReading, Die

    rolls = {1: (5, 5, 5, 2, 3, 2, 2, 3, 4, 6, 6, 2, 3, 4, 6), 2: (2, 2, 3, 3, 4, 4, 6, 6, 2, 3, 4, 6, 2, 3, 4)}
    table = {"roll": 1}

    class Reader:  # reads the roll the frame shows
        profile = None

        def read(self, frame):
            return DiceReading(tuple(Die(f, (10 * i, 10, 8, 8), 0.99) for i, f in enumerate(rolls[int(frame[0, 0, 0])])))

    class Said:
        def __init__(self):
            self.lines = []

        def say(self, text):
            self.lines.append(text)

    monkeypatch.setattr(frames_module.cv2, "VideoCapture",
                        stand_in_camera(lambda: np.full((48, 64, 3), table["roll"], np.uint8)))
    counter = CameraCounter(frames_module.CameraFrames(0), Reader(), CameraSettings(frames_to_agree=1))
    said = Said()
    referee = Referee(Game(["Ana", "Ben", "Cleo"], get_preset("asmodee")), said, None, counter)
    for line in ("three fives", "Ben calza"):
        referee.hear(Utterance(line))
    assert referee.game.round_number == 2 and referee.game.dice_in_play == 15
    table["roll"] = 2  # the table rolls for round two
    for line in ("four twos", "take it back", "take it back", "take it back", "dudo"):
        referee.hear(Utterance(line))
    assert said.lines[-1].startswith("I cannot count this one: the dice of that round may have been rolled again since.")
    assert not any(e.type == "count" for e in referee.game.events)


def _two_dice_photo(face, folder):
    """A photo of two dice showing `face`, read exactly and surely (checked, not assumed)."""
    reader = DiceReader()
    for seed in range(730, 760):
        scene = generate_scene(seed, size=(480, 640), n_dice=2, faces=(face,), paco_fraction=0.0, angle=0.3,
                               hard=0.3, touching=0.0)
        reading = reader.read(scene.image)
        if reading.counts == scene.counts and reading.min_confidence >= SURE:
            path = folder / f"reveal-{face}.png"
            cv2.imwrite(str(path), scene.image)
            return path
    pytest.fail("the reader misread every easy scene tried")


def test_a_new_game_of_the_evening_reads_the_next_photo_not_the_last_games(tmp_path):
    # each game's one reveal is of round one: the second must not be taken for the first again
    photos = [_two_dice_photo(3, tmp_path), _two_dice_photo(5, tmp_path)]
    journal = tmp_path / "game.jsonl"
    result = run_companion("play", "--players", "Ana", "Ben", "--dice", "1", "--input", "text", "--mute",
                           "--journal", journal, "--camera-images", *photos,
                           input_text="one three\ndudo\nnew game\none five\ndudo\n")
    assert result.returncode == 0, result.stderr
    assert "I see two threes" in result.stdout and "I see two fives" in result.stdout
    second = next(j for j in tmp_path.glob("game-*.jsonl"))
    assert load_game(journal).winner == "Ana" and load_game(second).winner == "Ana"  # both bids stood
    assert (tmp_path / f"{second.stem}-reveals" / "reveal-0001.png").is_file()
