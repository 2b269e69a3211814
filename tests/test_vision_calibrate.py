"""Calibration from a folder of photos made by the scene generator, then reading Paco faces."""
import argparse
import json

import cv2
import numpy as np
import pytest

from companion.calls import number_words
from companion.vision.calibrate import build_profile, expected_faces, load_calibration_images
from companion.vision.commands import add_calibrate_arguments, add_see_arguments, run_calibrate, run_see
from companion.vision.errors import CalibrationFailed
from companion.vision.profile import load_profile
from companion.vision.reader import DiceReader
from companion.vision.scenes import generate_paco_closeup, generate_scene

TABLE = 4242
SIZE = (480, 640)
BODY = ((40, 40, 190),)  # the player's red Perudo dice
KW = dict(size=SIZE, table_seed=TABLE, angle=0.3, hard=0.3, touching=0.0)


def _write(folder, name, img):
    cv2.imwrite(str(folder / name), img)


@pytest.fixture(scope="module")
def calib_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("calib-images")
    _write(d, "empty-1.png", generate_scene(1, n_dice=0, **KW).image)
    sc = generate_scene(2, n_dice=4, faces=(2, 3, 4, 5, 6), paco_fraction=0.0, **KW)
    faces = "".join(str(f) for f in sorted(d_.face for d_ in sc.dice))
    _write(d, f"dice-{faces}.png", sc.image)
    _write(d, "paco-1.png", generate_paco_closeup(3, body_colours=BODY).image)
    _write(d, "paco-2.png", generate_paco_closeup(4, body_colours=BODY).image)
    (d / "notes.txt").write_text("not a photo: ignored")
    return d


def test_naming_convention():
    assert expected_faces("dice-2356.png") == (2, 3, 5, 6)
    assert expected_faces("dice-1-2-6.png") == (1, 2, 6)
    assert expected_faces("DICE_a-41.jpg") == (1, 4)
    assert expected_faces("dice.png") is None


def test_calibrate_then_read_paco(calib_dir, tmp_path, capsys):
    p = argparse.ArgumentParser()
    add_calibrate_arguments(p)
    out = tmp_path / "calibration" / "alice"
    said = []
    code = run_calibrate(p.parse_args(["--images", str(calib_dir), "--name", "alice", "--out", str(out)]), say=said.append)
    out_text, err = capsys.readouterr()
    assert code == 0, err
    assert f"Profile 'alice' saved in {out}" in out_text  # printed: a path is not for the voice
    data = json.loads((out / "profile.json").read_text())
    assert data["version"] == 2 and data["background"] == "background.png" and data["paco"]
    prof = load_profile(out)
    assert prof.background is not None
    # the die size is the side of the dice's tops in the dice photo
    from training.vision_detector import top_face

    shown = generate_scene(2, n_dice=4, faces=(2, 3, 4, 5, 6), paco_fraction=0.0, **KW)
    assert prof.die_size == pytest.approx(np.median([top_face(d.corners)[2] for d in shown.dice]), rel=0.15)
    reader = DiceReader(prof)
    for seed in (10, 11):
        sc = generate_scene(seed, n_dice=8, faces=(1, 1, 2, 4), paco_fraction=1.0, body_colours=BODY, **KW)
        r = reader.read(sc.image)
        assert r.counts == sc.counts
        assert sum(d.paco for d in r.dice) == sum(d.paco for d in sc.dice)


def test_calibration_refuses_wrong_dice_names(calib_dir, tmp_path, capsys):
    bad = tmp_path / "bad"
    bad.mkdir()
    for f in calib_dir.iterdir():
        name = f.name if not f.name.startswith("dice") else "dice-1111.png"
        (bad / name).write_bytes(f.read_bytes())
    p = argparse.ArgumentParser()
    add_calibrate_arguments(p)
    assert run_calibrate(p.parse_args(["--images", str(bad), "--out", str(tmp_path / "x")]), say=lambda s: None) == 1
    assert not (tmp_path / "x" / "profile.json").exists()
    # The refusal names the photo to retake.
    assert "dice-1111.png: read faces" in capsys.readouterr().err


def test_calibration_needs_empty_and_paco(tmp_path, calib_dir):
    d = tmp_path / "no-empty"
    d.mkdir()
    (d / "paco-1.png").write_bytes((calib_dir / "paco-1.png").read_bytes())
    with pytest.raises(CalibrationFailed, match="empty"):
        load_calibration_images(d)
    (d / "empty.png").write_bytes((calib_dir / "empty-1.png").read_bytes())
    (d / "paco-1.png").unlink()
    with pytest.raises(CalibrationFailed, match="paco"):
        load_calibration_images(d)
    # Every problem at once: the missing Paco photo and a broken dice photo.
    (d / "dice-23.png").write_bytes(b"not a png")
    with pytest.raises(CalibrationFailed) as err:
        load_calibration_images(d)
    assert "no paco" in str(err.value) and "dice-23.png" in str(err.value)
    # A photo too small to show dice is named, so the right one is taken again.
    cv2.imwrite(str(d / "dice-23.png"), np.zeros((1, 1, 3), np.uint8))
    with pytest.raises(CalibrationFailed, match=r"dice-23.png: the image is only 1x1 pixels"):
        load_calibration_images(d)


@pytest.mark.parametrize("typo", ["dice-4557.png", "dice-0.png", "dice-45x6.png"])
def test_a_dice_photo_whose_faces_are_misnamed_is_refused_not_left_unchecked(calib_dir, tmp_path, typo):
    d = tmp_path / "typo"
    d.mkdir()
    for f in calib_dir.glob("*.png"):
        (d / (typo if f.name.startswith("dice") else f.name)).write_bytes(f.read_bytes())
    with pytest.raises(CalibrationFailed, match=f"{typo}: the faces after its last '-' are digits 1 to 6"):
        load_calibration_images(d)


def test_dice_photos_numbered_without_faces_are_taken_unchecked(calib_dir, tmp_path):
    d = tmp_path / "numbered"
    d.mkdir()
    for f in calib_dir.glob("*.png"):
        if f.name.startswith("dice"):
            for name in ("dice1.png", "dice2.png"):
                (d / name).write_bytes(f.read_bytes())
        else:
            (d / f.name).write_bytes(f.read_bytes())
    images = load_calibration_images(d)
    assert [faces for _, faces in images.dice] == [None, None]


def test_dice_in_the_empty_table_photo_are_named_as_the_likely_cause(calib_dir, tmp_path):
    d = tmp_path / "busy"
    d.mkdir()
    for f in calib_dir.glob("*.png"):
        (d / f.name).write_bytes(f.read_bytes())
    busy = generate_scene(5, n_dice=12, paco_fraction=0.0, **KW).image
    _write(d, "empty-1.png", busy)  # dice left on the "empty" table
    with pytest.raises(CalibrationFailed) as err:
        build_profile(load_calibration_images(d), "busy")
    assert str(err.value).startswith("empty-1.png: I see ")
    assert "dice on it; the empty-table photo must show the table alone" in str(err.value)


def _with_paco_photo(calib_dir, folder, image):
    folder.mkdir()
    for f in calib_dir.glob("*.png"):
        if not f.name.startswith("paco"):
            (folder / f.name).write_bytes(f.read_bytes())
    _write(folder, "paco-1.png", image)
    return folder


def test_a_paco_photo_of_plain_faces_is_refused(calib_dir, tmp_path):
    """Plain faces kept as Paco references would be read as 1s in every game after."""
    plain = generate_scene(3, size=SIZE, n_dice=3, faces=(2, 3, 5), paco_fraction=0.0, angle=0.3,
                           hard=0.5, body_colours=BODY, die_scale=1.6, touching=0.0)
    d = _with_paco_photo(calib_dir, tmp_path / "plain", plain.image)
    with pytest.raises(CalibrationFailed) as err:
        build_profile(load_calibration_images(d), "plain")
    shown = sorted(die.face for die in plain.dice)
    words = [number_words(f) for f in shown]
    assert str(err.value) == (f"paco-1.png: I see the faces {words[0]}, {words[1]} and {words[2]}, not the "
                              "Paco; hold only the toucan face of your dice to the camera, close and well lit")


def test_a_paco_photo_of_the_bare_table_is_refused(calib_dir, tmp_path):
    d = _with_paco_photo(calib_dir, tmp_path / "bare", generate_scene(1, n_dice=0, **KW).image)
    with pytest.raises(CalibrationFailed, match="^paco-1.png: I see no die; hold only"):
        build_profile(load_calibration_images(d), "bare")


def test_a_paco_photo_whose_only_find_is_table_is_refused():
    """The detector offers a spot that the face model takes for table: refused as only the table."""
    from companion.vision.calibrate import paco_references
    from companion.vision.detect import Candidate

    class OneSpot:  # a detector that finds one die-sized spot in the middle
        def find(self, image, **_):
            return [Candidate(cx=320, cy=240, w=60, h=60, angle=0)]

    bare = generate_scene(1, n_dice=0, **KW).image
    assert paco_references(bare, DiceReader(detector=OneSpot())) == ([], "I see only the table")


def test_a_profile_is_not_used_for_another_framing(calib_dir, tmp_path, capsys):
    prof = build_profile(load_calibration_images(calib_dir), "alice")
    assert prof.fits((480, 640)) and prof.die_size_for((960, 1280)) == pytest.approx(2 * prof.die_size)
    # 4:3 taken as 16:9: the table photo and the die size say nothing about the frame
    assert not prof.fits((720, 1280))
    assert prof.background_for((720, 1280)) is None and prof.die_size_for((720, 1280)) is None
    wide = generate_scene(12, size=(720, 1280), n_dice=6, angle=0.3, hard=0.3, touching=0.0, paco_fraction=0.0)
    assert DiceReader(prof).read(wide.image).counts == DiceReader().read(wide.image).counts
    # `see` says so, and still reads
    prof.save(tmp_path / "alice")
    cv2.imwrite(str(tmp_path / "wide.png"), wide.image)
    see = argparse.ArgumentParser()
    add_see_arguments(see)
    assert run_see(see.parse_args(["--profile", str(tmp_path / "alice"), str(tmp_path / "wide.png")])) == 0
    err = capsys.readouterr().err
    assert ("wide.png: framed 1280x720, unlike the profile's 640x480 photos; its table photo and die size "
            "are not used (calibrate again for this camera setting)") in err


def test_calibrate_refuses_a_name_that_is_a_path(calib_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = argparse.ArgumentParser()
    add_calibrate_arguments(p)
    for name in ("x/y", "", ".hidden"):
        assert run_calibrate(p.parse_args(["--images", str(calib_dir), "--name", name]), say=lambda s: None) == 2
        assert "must be a plain name" in capsys.readouterr().err
    assert not (tmp_path / "calibration").exists()


class _Frames:
    """A camera stand-in: serves the calibration photos in the order the prompts ask for them."""

    def __init__(self, images):
        self.images = images
        self.i = 0

    def read(self):
        img = self.images[min(self.i, len(self.images) - 1)]
        self.i += 1
        return img


class _Person:
    """Answers the prompts: Enter to each, then yes or no as scripted."""

    def __init__(self, answers=()):
        self.waited, self.asked = [], []
        self.answers = list(answers)

    def wait(self, prompt):
        self.waited.append(prompt)

    def confirm(self, question):
        self.asked.append(question)
        return self.answers.pop(0) if self.answers else True


def _live_photos(calib_dir):
    empty = cv2.imread(str(calib_dir / "empty-1.png"))
    dice_file = next(calib_dir.glob("dice-*.png"))
    return empty, cv2.imread(str(dice_file)), cv2.imread(str(calib_dir / "paco-1.png")), dice_file.name


def test_live_calibration_with_prompts(calib_dir, tmp_path):
    from companion.vision.calibrate import calibrate_live

    empty, dice, paco, dice_name = _live_photos(calib_dir)
    said, person = [], _Person()
    prof = calibrate_live(_Frames([empty] * 5 + [dice, paco]), tmp_path / "live", name="bob",
                          say=said.append, prompter=person)
    assert prof.name == "bob" and (tmp_path / "live" / "profile.json").exists()
    assert any("Clear the table" in s for s in said) and any("Paco" in s for s in said)
    assert said[-1].startswith("Calibration saved.") and not any(str(tmp_path) in s for s in said)  # no path aloud
    assert len(person.waited) == 3
    # It says what it read, the person agrees, and the photo's name records those faces.
    faces = dice_name[len("dice-"):-len(".png")]
    assert len(person.asked) == 1 and person.asked[0] in said  # asked aloud, not just shown
    assert person.asked[0].startswith("I see four dice: ") and person.asked[0].endswith("Is that right?")
    assert sorted(p.name for p in (tmp_path / "live" / "images").iterdir()) == [
        f"dice-{faces}.png", "empty.png", "paco.png"]


def test_live_calibration_retakes_misread_dice_and_gives_up_after_three(calib_dir, tmp_path):
    from companion.vision.calibrate import calibrate_live

    empty, dice, paco, _ = _live_photos(calib_dir)
    person = _Person(answers=[False, True])
    calibrate_live(_Frames([empty] * 5 + [dice, dice, paco]), tmp_path / "again", say=lambda s: None,
                   prompter=person)
    assert len(person.asked) == 2 and (tmp_path / "again" / "profile.json").exists()
    photos = sorted(p.name for p in (tmp_path / "again" / "images").iterdir())
    # calibrating again and giving up leaves the earlier profile, photos and all
    with pytest.raises(CalibrationFailed):
        calibrate_live(_Frames([empty] * 5 + [dice]), tmp_path / "again", say=lambda s: None,
                       prompter=_Person(answers=[False] * 3))
    assert (tmp_path / "again" / "profile.json").exists()
    assert sorted(p.name for p in (tmp_path / "again" / "images").iterdir()) == photos
    with pytest.raises(CalibrationFailed, match="not read right in 3 tries"):
        calibrate_live(_Frames([empty] * 5 + [dice]), tmp_path / "never", say=lambda s: None,
                       prompter=_Person(answers=[False] * 3))
    assert not (tmp_path / "never" / "profile.json").exists()


def test_live_calibration_retakes_a_table_with_dice_and_a_paco_photo_of_plain_faces(calib_dir, tmp_path):
    """Checked as each photo is taken, and retaken then, not refused after the whole session."""
    from companion.vision.calibrate import calibrate_live

    empty, dice, paco, _ = _live_photos(calib_dir)
    busy = generate_scene(5, n_dice=12, paco_fraction=0.0, **KW).image
    plain = generate_scene(3, size=SIZE, n_dice=3, faces=(2, 3, 5), paco_fraction=0.0, angle=0.3,
                           hard=0.5, body_colours=BODY, die_scale=1.6, touching=0.0).image
    said, person = [], _Person()
    calibrate_live(_Frames([busy] * 5 + [empty] * 5 + [dice, plain, paco]), tmp_path / "retake",
                   say=said.append, prompter=person)
    assert (tmp_path / "retake" / "profile.json").exists()
    assert [p for p in person.waited if p.startswith("I see ")] == [
        next(p for p in said if p.endswith("on it. Clear the table of dice and cups, then press Enter.")),
        next(p for p in said if p.startswith("I see the faces") and "not the Paco. Hold only the Paco face" in p)]
    with pytest.raises(CalibrationFailed, match="the table was not clear of dice in 3 tries"):
        calibrate_live(_Frames([busy]), tmp_path / "busy", say=lambda s: None, prompter=_Person())
    assert not (tmp_path / "busy" / "profile.json").exists()


def test_live_calibration_with_nobody_at_the_keyboard(calib_dir, tmp_path):
    from companion.vision.calibrate import TerminalPrompter, calibrate_live

    def closed(hint):
        raise EOFError

    empty, dice, paco, _ = _live_photos(calib_dir)
    with pytest.raises(CalibrationFailed, match="no answer from the keyboard"):
        calibrate_live(_Frames([empty] * 5 + [dice, paco]), tmp_path / "x", say=lambda s: None,
                       prompter=TerminalPrompter(closed))
    assert TerminalPrompter(lambda hint: "n").confirm("right?") is False
    assert TerminalPrompter(lambda hint: "").confirm("right?") is True


def test_a_profile_folder_that_cannot_be_made_is_a_clear_failure(calib_dir, tmp_path, capsys):
    (tmp_path / "file").write_text("in the way")
    p = argparse.ArgumentParser()
    add_calibrate_arguments(p)
    code = run_calibrate(p.parse_args(["--images", str(calib_dir), "--out", str(tmp_path / "file" / "x")]),
                         say=lambda s: None)
    err = capsys.readouterr().err
    assert code == 1 and "cannot save the profile in" in err and "Traceback" not in err


def test_a_die_printed_on_the_table_is_the_table_but_a_die_on_it_is_read():
    """A tablecloth printed with a die looks like one to the reader; the profile's empty-table photo
    shows it there before any die was thrown, so it is the table. A real die thrown onto the print
    is still read. (Calibration refuses an empty-table photo with anything read surely as a die,
    so this profile is made by hand: a fainter look-alike passes calibration the same way.)"""
    import numpy as np

    from companion.vision.profile import Profile
    from companion.vision.scenes import draw_face

    def paste(img, face, body, pip, x, y, s, seed):
        out = img.astype(np.float32)
        top, mask = draw_face(np.random.default_rng(seed), face, body, pip)
        top = cv2.resize(top, (s, s), interpolation=cv2.INTER_AREA)
        a = cv2.resize(mask, (s, s), interpolation=cv2.INTER_AREA).astype(np.float32)[..., None] / 255
        out[y:y + s, x:x + s] = out[y:y + s, x:x + s] * (1 - a) + top * a
        return out.astype(np.uint8)

    def with_print(img):
        return paste(img, 5, (200, 200, 200), (30, 30, 30), 520, 60, 44, 0)

    empty = with_print(generate_scene(1, n_dice=0, **KW).image)
    prof = Profile(name="printed", resolution=SIZE, die_size=None, background=empty,
                   paco_patches=np.zeros((0, 32, 32, 3), np.uint8))
    sc = generate_scene(20, n_dice=5, faces=(2, 3, 4, 6), paco_fraction=0.0, **KW)
    frame = with_print(sc.image)
    assert DiceReader().read(frame).counts[5] == 1  # without the profile: the print reads as a five
    assert DiceReader(prof).read(frame).counts == sc.counts
    # the same framing at twice the resolution: the table photo is scaled to it
    big = cv2.resize(frame, (1280, 960), interpolation=cv2.INTER_CUBIC)
    assert DiceReader(prof).read(big).counts == sc.counts
    # a die thrown onto the print covers it: read, not taken for the table, even a white two on
    # the white printed five
    for body, pip in (((40, 40, 190), (240, 240, 240)), ((205, 205, 205), (30, 30, 30))):
        r = DiceReader(prof).read(paste(frame, 2, body, pip, 518, 58, 48, 1))
        assert r.counts[2] == sc.counts[2] + 1 and r.total == len(sc.dice) + 1, body


def test_the_live_preview_puts_its_prompt_above_the_counts_and_the_dice():
    """The prompt's strip is added above what the reader drew, not over its top: the counts'
    banner and a die at the frame's top edge stay in view."""
    from companion.vision.annotate import annotate
    from companion.vision.calibrate import PROMPT_BAND, preview

    scene = generate_scene(5, n_dice=5, **KW)
    reader = DiceReader()
    drawn = annotate(scene.image, reader.read(scene.image))
    shown = preview(scene.image, "Put the dice in view, then press Enter.  [Enter]", reader)
    assert shown.shape == (drawn.shape[0] + PROMPT_BAND, drawn.shape[1], 3)
    assert np.array_equal(shown[PROMPT_BAND:], drawn)  # counts and dice untouched
    assert (shown[:PROMPT_BAND] > 200).all(axis=2).sum() > 100  # the prompt, written in white
    gray = preview(cv2.cvtColor(scene.image, cv2.COLOR_BGR2GRAY), "Clear the table.")  # no reader
    assert gray.shape == (SIZE[0] + PROMPT_BAND, SIZE[1], 3)


def test_calibration_photos_without_colour_are_refused(calib_dir, tmp_path):
    # in grey, no die is read surely: a die left on the "empty" table would pass unseen
    grey = tmp_path / "grey"
    grey.mkdir()
    for photo in calib_dir.glob("*.png"):
        image = cv2.cvtColor(cv2.imread(str(photo)), cv2.COLOR_BGR2GRAY)
        cv2.imwrite(str(grey / photo.name), image)
    with pytest.raises(CalibrationFailed) as err:
        load_calibration_images(grey)
    assert "paco-2.png: no colour" in str(err.value) and "dice-" in str(err.value)
    load_calibration_images(calib_dir)  # the same photos in colour are taken
    (calib_dir / "empty-1.png").replace(tmp_path / "colour-empty.png")  # a neutral cloth: no colour to see
    (calib_dir / "empty-1.png").write_bytes((grey / "empty-1.png").read_bytes())
    try:
        load_calibration_images(calib_dir)
    finally:
        (tmp_path / "colour-empty.png").replace(calib_dir / "empty-1.png")


def test_a_paco_photo_of_a_single_pip_ace_is_accepted_and_not_kept(calib_dir, tmp_path, capsys):
    """Plain dice have a one-pip ace for a Paco. Kept as a reference it drew every die
    towards a 1; the reader reads it as a 1 without one."""
    ace = generate_scene(3, size=SIZE, n_dice=1, faces=(1,), paco_fraction=0.0, angle=0.3,
                         hard=0.3, body_colours=BODY, die_scale=1.6, touching=0.0)
    d = _with_paco_photo(calib_dir, tmp_path / "ace", ace.image)
    prof = build_profile(load_calibration_images(d), "plain")
    assert len(prof.paco_patches) == 0
    scene = generate_scene(21, n_dice=6, faces=(2, 3, 4, 5, 6), paco_fraction=0.0, **KW)
    assert DiceReader(prof).read(scene.image).counts == scene.counts
    p = argparse.ArgumentParser()
    add_calibrate_arguments(p)
    assert run_calibrate(p.parse_args(["--images", str(d), "--out", str(tmp_path / "prof")]), say=lambda s: None) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("no Paco reference (the ace shown is a single pip, which needs none).")
    assert out.startswith("Profile 'prof' saved in")  # no --name: named as its folder
    assert len(load_profile(tmp_path / "prof").paco_patches) == 0


def test_a_folder_that_cannot_be_listed_is_a_calibration_failure_not_a_traceback(tmp_path, monkeypatch):
    from companion.vision import calibrate

    def refused(folder, suffixes):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(calibrate, "files_in", refused)
    with pytest.raises(CalibrationFailed, match=f"cannot read the folder {tmp_path}: Permission denied"):
        load_calibration_images(tmp_path)
