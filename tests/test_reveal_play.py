"""The reveal in a real game: the referee counts from image files, or falls back to asking."""

import json

import cv2
import pytest

from companion.journal import load_game
from companion.rules import count_matching
from companion.vision.reader import DiceReader
from companion.vision.reveal import MIN_CONFIDENCE
from companion.vision.scenes import generate_scene
from conftest import run_companion


@pytest.fixture(scope="module")
def table_photo(tmp_path_factory):
    """A top-down photo of six dice that the reader reads exactly (checked, not assumed)."""
    reader = DiceReader()
    for seed in range(700, 720):
        scene = generate_scene(seed, size=(480, 640), n_dice=6, angle=0.3, hard=0.3, touching=0.0,
                               paco_fraction=0.3)
        reading = reader.read(scene.image)
        if reading.counts == scene.counts and reading.min_confidence >= MIN_CONFIDENCE:
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
            if reading.total == 6 and reading.min_confidence < MIN_CONFIDENCE:
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
    assert counts == [{"type": "count", "count": truth, "hands": None, "source": "camera",
                       "correct": truth >= 2}]
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
        if reading.counts == scene.counts and reading.min_confidence >= MIN_CONFIDENCE:
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
