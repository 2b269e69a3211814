"""`companion see` / `companion calibrate` runners, called in-process with argparse namespaces."""
import argparse
import json
import sys

import cv2
import pytest
from conftest import stand_in_camera

from companion.vision.commands import add_calibrate_arguments, add_see_arguments, run_calibrate, run_see
from companion.vision.scenes import generate_scene
from companion.vision.settings import CameraSettings


def _see(*argv):
    p = argparse.ArgumentParser()
    add_see_arguments(p)
    return run_see(p.parse_args([str(a) for a in argv]))


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory):
    sc = generate_scene(900, size=(480, 640), n_dice=5, angle=0.3, hard=0.3, touching=0.0)
    p = tmp_path_factory.mktemp("see") / "table.png"
    cv2.imwrite(str(p), sc.image)
    return p, sc


def test_see_json_line_format(scene_file, capsys, tmp_path):
    path, sc = scene_file
    out_png = tmp_path / "ann.png"
    assert _see("--json", path, "--annotate", out_png) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    obj = json.loads(lines[0])
    assert list(obj) == ["file", "dice", "counts", "refused", "colourless"]  # the stable keys, each one added after
    assert obj["refused"] == []  # nothing but dice on this table
    assert obj["file"] == str(path)
    assert list(obj["counts"]) == ["1", "2", "3", "4", "5", "6"]
    assert sum(obj["counts"].values()) == len(obj["dice"])
    for d in obj["dice"]:
        assert list(d) == ["face", "box", "confidence"]
        assert d["face"] in range(1, 7) and len(d["box"]) == 4 and all(isinstance(v, int) for v in d["box"])
        assert 0.0 <= d["confidence"] <= 1.0
    assert {int(k): v for k, v in obj["counts"].items()} == sc.counts
    assert cv2.imread(str(out_png)) is not None


def test_see_bad_file_is_a_clear_error(tmp_path, capsys, scene_file):
    bad = tmp_path / "notes.txt"
    bad.write_text("not a photo")
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    code = _see("--json", bad, scene_file[0], empty)
    cap = capsys.readouterr()
    assert code != 0
    assert "notes.txt" in cap.err and "empty.png" in cap.err and "Traceback" not in cap.err
    lines = [json.loads(line) for line in cap.out.strip().splitlines()]  # one line per image
    assert [line["file"] for line in lines] == [str(bad), str(scene_file[0]), str(empty)]
    assert "dice" in lines[1]  # the good image is still read
    assert "notes.txt" in lines[0]["error"] and "empty.png" in lines[2]["error"]


def test_see_reads_a_folders_images_in_name_order(tmp_path, capsys, scene_file):
    photos = tmp_path / "photos"
    photos.mkdir()
    for name in ("IMG_10.png", "IMG_9.PNG", "notes.txt"):
        (photos / name).write_bytes(scene_file[0].read_bytes())
    assert _see("--json", photos) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
    assert [line["file"] for line in lines] == [str(photos / "IMG_9.PNG"), str(photos / "IMG_10.png")]
    assert all({int(k): v for k, v in line["counts"].items()} == scene_file[1].counts for line in lines)
    (tmp_path / "nothing").mkdir()
    assert _see(tmp_path / "nothing") == 2
    assert "nothing: no images in this folder (.png, .jpg" in capsys.readouterr().err


def test_see_plain_lines_say_which_dice_a_reveal_would_doubt(tmp_path, capsys, scene_file):
    from companion.vision.reader import DiceReader

    path, _ = scene_file
    assert _see(path, "--annotate", tmp_path / "sure.png") == 0
    out = capsys.readouterr().out
    assert "doubtfully" not in out and f"annotated: {tmp_path / 'sure.png'}" in out
    assert "refused" not in out  # nothing was: no line about it
    # one die's face smeared until the reader doubts it (found, but read below the reveal's line)
    image, reader = cv2.imread(str(path)), DiceReader()
    found = None
    for die in reader.read(image).dice:
        x, y, w, h = die.box
        for k in range(15, 52, 4):  # (how much blur makes a die doubtful depends on the model)
            blurred = image.copy()
            blurred[y + 2:y + h - 2, x + 2:x + w - 2] = cv2.GaussianBlur(image[y + 2:y + h - 2, x + 2:x + w - 2], (k, k), 0)
            reading = reader.read(blurred)
            if CameraSettings().doubtful(reading):
                found = blurred, reading
                break
        if found:
            break
    else:
        pytest.fail("no blurred die was doubted")
    blurred, reading = found
    blur_path = tmp_path / "blurred.png"
    cv2.imwrite(str(blur_path), blurred)
    assert _see(blur_path) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{blur_path}: {reading.total} dice  ")
    # nothing is drawn, so nothing is marked
    assert out.rstrip().endswith(f"({CameraSettings().doubtful(reading)} read doubtfully: a reveal would ask the players)")
    assert _see(blur_path, "--annotate", tmp_path / "marked.png") == 0
    assert f"read doubtfully, marked ?: a reveal would ask the players)" in capsys.readouterr().out


def test_see_says_when_a_reveal_would_not_trust_a_cluttered_frame(tmp_path, capsys, page_of_text):
    path = tmp_path / "screen.png"
    cv2.imwrite(str(path), page_of_text)
    assert _see(path) == 0
    assert f"(more than {CameraSettings().max_refused} things refused: a reveal would not trust this frame" \
        in capsys.readouterr().out


def test_see_warns_once_of_photos_framed_unlike_the_profile(tmp_path, capsys, scene_file):
    path, _ = scene_file
    profile = tmp_path / "profile"
    profile.mkdir()
    (profile / "profile.json").write_text(json.dumps(
        {"version": 2, "name": "t", "resolution": [48, 96], "die_size": 10.0, "background": None, "paco": []}))
    assert _see("--profile", profile, path, path, path) == 0  # 640x480: another shape of frame
    assert capsys.readouterr().err.count("unlike the profile's 96x48 photos") == 1


@pytest.mark.parametrize("option", [["--headless"], ["--frames", "5"]])
def test_see_says_which_options_are_for_a_live_camera_only(capsys, scene_file, option):
    path, _ = scene_file
    assert _see(path, *option) == 2
    assert f"see: {option[0]} is for a live camera (--camera N)" in capsys.readouterr().err


def test_see_names_the_file_that_is_too_small(tmp_path, capsys, scene_file):
    tiny = tmp_path / "tiny.png"
    cv2.imwrite(str(tiny), cv2.imread(str(scene_file[0]))[:8, :8])
    assert _see(tiny, scene_file[0]) == 1
    cap = capsys.readouterr()
    assert f"{tiny}: the image is only 8x8 pixels" in cap.err
    assert cap.out.startswith(str(scene_file[0]))


def test_see_annotate_where_no_picture_can_go(tmp_path, capsys, scene_file):
    assert _see("--annotate", tmp_path / "out.txt", scene_file[0]) == 2  # refused before reading
    cap = capsys.readouterr()
    assert "not a picture file name" in cap.err and cap.out == ""
    blocker = tmp_path / "ann.png"
    blocker.write_text("a file, not a folder")
    assert _see("--json", "--annotate", blocker / "x.png", scene_file[0]) == 1
    cap = capsys.readouterr()
    assert "cannot write" in cap.err and "Traceback" not in cap.err
    assert len(cap.out.strip().splitlines()) == 1  # the reading itself is still printed


def test_see_bad_profile(tmp_path, capsys, scene_file):
    code = _see("--json", "--profile", tmp_path / "nope", scene_file[0])
    cap = capsys.readouterr()
    assert code != 0 and "does not exist" in cap.err and cap.out == ""
    assert _see("--profile", scene_file[0], scene_file[0]) != 0  # a photo given as the profile
    assert "table.png is a file; a calibration profile is a folder" in capsys.readouterr().err


def test_see_never_draws_over_a_photo_it_reads(tmp_path, capsys, scene_file):
    photo = tmp_path / "mine.png"
    photo.write_bytes(scene_file[0].read_bytes())
    other = tmp_path / "other.png"
    other.write_bytes(scene_file[0].read_bytes())
    before = photo.read_bytes()
    linked = tmp_path / "linked.png"
    linked.hardlink_to(photo)  # one file, two names
    # the one output is the name given; with two images, the second's is NAME-2
    for argv in ((photo, "--annotate", photo), (photo, other, "--annotate", photo), (photo, "--annotate", linked),
                 (other, photo, "--annotate", tmp_path / "other.png"),
                 (photo, tmp_path / "x-2.png", "--annotate", tmp_path / "x.png")):
        assert _see(*argv) == 2, argv
        cap = capsys.readouterr()
        assert "would draw over a photo being read" in cap.err and cap.out == ""
        assert photo.read_bytes() == before
    assert _see(photo, other, "--annotate", tmp_path / "drawn.png") == 0
    assert photo.read_bytes() == before and (tmp_path / "drawn-2.png").exists()


def test_see_needs_input(capsys):
    assert _see() != 0
    assert "give image files" in capsys.readouterr().err


def test_see_takes_a_camera_or_images_not_both(capsys, scene_file):
    assert _see("--camera", 0, scene_file[0]) == 2  # refused before any camera is opened
    assert "give either --camera 0 or image files" in capsys.readouterr().err


def test_calibrate_missing_images_folder(tmp_path, capsys):
    p = argparse.ArgumentParser()
    add_calibrate_arguments(p)
    code = run_calibrate(p.parse_args(["--images", str(tmp_path / "none"), "--out", str(tmp_path / "prof")]))
    # as `see`: 2 where it cannot start, 1 where the photos were read and did not calibrate
    assert code == 2 and "calibration cannot start: " in capsys.readouterr().err
    assert not (tmp_path / "prof").exists()


def test_calibrate_with_a_camera_that_cannot_be_opened_cannot_start(capsys, monkeypatch):
    import companion.vision.frames as frames

    class NoCamera:
        def __init__(self, index):
            from companion.vision.errors import CameraUnavailable
            raise CameraUnavailable(f"camera {index} cannot be opened (is it plugged in and free?)")

    monkeypatch.setattr(frames, "CameraFrames", NoCamera)
    said = []
    p = argparse.ArgumentParser()
    add_calibrate_arguments(p)
    assert run_calibrate(p.parse_args(["--camera", "3", "--headless"]), say=said.append) == 2
    assert "calibration cannot start: camera 3 cannot be opened" in capsys.readouterr().err


def test_see_says_a_picture_has_no_colour(scene_file, capsys, tmp_path):
    path, _ = scene_file
    grey = tmp_path / "grey.png"
    cv2.imwrite(str(grey), cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2GRAY))
    empty = tmp_path / "empty.png"
    cv2.imwrite(str(empty), cv2.cvtColor(generate_scene(901, size=(480, 640), n_dice=0).image, cv2.COLOR_BGR2GRAY))
    assert _see("--json", path, grey, empty) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
    assert [line["colourless"] for line in lines] == [False, True, True]  # no dice found, grey all the same
    assert all(d["confidence"] < CameraSettings().min_confidence for d in lines[1]["dice"])
    assert _see(grey) == 0
    assert "no colour in this picture: no die in it is read surely" in capsys.readouterr().out


def test_see_without_a_display_reads_the_camera_headless(monkeypatch, capsys, scene_file):
    """A Raspberry Pi over SSH: OpenCV's window would abort the process, not raise."""
    from companion.vision import frames as frames_module

    def no_window(*args):
        raise AssertionError("a window was opened without a display")

    monkeypatch.setattr(frames_module.cv2, "VideoCapture", stand_in_camera(lambda: cv2.imread(str(scene_file[0]))))
    monkeypatch.setattr(cv2, "imshow", no_window)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert _see("--camera", 0, "--frames", 2) == 0
    out = capsys.readouterr()
    assert [json.loads(line)["frame"] for line in out.out.strip().splitlines()] == [1, 2]
    assert out.err.count("no display for the preview window") == 1 and "as with --headless" in out.err


def test_opencv_that_cannot_be_loaded_is_one_line_not_a_traceback(monkeypatch, capsys, scene_file):
    """OpenCV without its system library (libGL) fails to import: the remedy, not a traceback."""
    from companion.cli import main

    for name in [m for m in sys.modules if m == "cv2" or m.startswith(("cv2.", "companion.vision"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "cv2", None)  # an import of it now fails
    assert main(["see", str(scene_file[0])]) == 2
    err = capsys.readouterr().err
    assert err.startswith("companion: the Python package cv2 cannot be loaded (") and "./setup.sh" in err
    assert "apt-get install" in err and "libgl1" in err  # for an install without the checkout's setup.sh
