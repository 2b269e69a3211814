"""Bad inputs fail loudly with typed errors, never with a wrong count."""
import json
import pathlib

import numpy as np
import pytest

from companion.vision.errors import ImageUnreadable, ModelError, ProfileError, VisionError
from companion.vision.frames import ImageFrames, as_bgr, header_size, read_image
from companion.vision.detect import load_detector
from companion.vision.model import load_model
from companion.vision.profile import load_profile


def test_error_hierarchy():
    for e in (ImageUnreadable, ModelError, ProfileError):
        assert issubclass(e, VisionError)


@pytest.mark.parametrize("content", [b"", b"hello, not a picture", b"\x89PNG\r\n\x1a\n broken"])
def test_bad_image_files(tmp_path, content):
    p = tmp_path / "x.png"
    p.write_bytes(content)
    with pytest.raises(ImageUnreadable, match="x.png"):
        read_image(p)


def test_an_image_too_big_for_any_camera_is_refused_before_it_is_decoded(tmp_path):
    import cv2
    import zlib

    # a 20000 x 20000 PNG of one colour is a small file that decodes to 1.2 GB
    ihdr = b"IHDR" + (20000).to_bytes(4, "big") * 2 + bytes([8, 2, 0, 0, 0])
    png = b"\x89PNG\r\n\x1a\n" + (13).to_bytes(4, "big") + ihdr + zlib.crc32(ihdr).to_bytes(4, "big")
    (tmp_path / "huge.png").write_bytes(png + b"\x00" * 64)
    with pytest.raises(ImageUnreadable, match="huge.png: 20000x20000 pixels is more than any camera's photo"):
        read_image(tmp_path / "huge.png")
    for ext, options in ((".png", []), (".jpg", []), (".jpg", [cv2.IMWRITE_JPEG_PROGRESSIVE, 1]),
                         (".webp", []), (".webp", [cv2.IMWRITE_WEBP_QUALITY, 101]), (".tif", []), (".bmp", [])):
        ok, data = cv2.imencode(ext, np.zeros((33, 47, 3), np.uint8), options)
        assert header_size(data.tobytes()) == (47, 33), (ext, options)  # what the check reads is the size
    core = (12).to_bytes(4, "little") + (40).to_bytes(2, "little") + (30).to_bytes(2, "little") + bytes([1, 0, 24, 0])
    os2_bmp = b"BM" + bytes(12) + core  # OS/2's BMP header: 16-bit sides
    assert header_size(os2_bmp) == (40, 30)
    # a big-endian TIFF whose sides are a SHORT and a LONG: a small file that says 30000 x 30000
    entries = [(256, 3, (30000 << 16).to_bytes(4, "big")), (257, 4, (30000).to_bytes(4, "big"))]
    tiff = b"MM\x00*" + (8).to_bytes(4, "big") + (2).to_bytes(2, "big") + b"".join(
        tag.to_bytes(2, "big") + kind.to_bytes(2, "big") + (1).to_bytes(4, "big") + value for tag, kind, value in entries)
    (tmp_path / "huge.tif").write_bytes(tiff + b"\x00" * 64)
    with pytest.raises(ImageUnreadable, match="30000x30000 pixels is more than any camera's photo"):
        read_image(tmp_path / "huge.tif")


def test_a_gif_or_pnm_saying_it_is_huge_is_refused_not_a_traceback(tmp_path):
    import cv2

    # a GIF whose screen says 65535 x 65535 (OpenCV raised cv2.error on it), under any name
    ok, gif = cv2.imencode(".gif", np.zeros((8, 8, 3), np.uint8)) if cv2.haveImageWriter(".gif") else (False, None)
    data = bytearray(gif.tobytes()) if ok else bytearray(b"GIF89a" + bytes(7) + b";")
    data[6:10] = (65535).to_bytes(2, "little") * 2
    (tmp_path / "photo.png").write_bytes(bytes(data))
    (tmp_path / "bomb.ppm").write_bytes(b"P6\n# a comment\n40000 40000\n255\n")
    (tmp_path / "old-mac.ppm").write_bytes(b"P6\r# a comment ended the old Mac way\r30000 30000\r255\r")
    for name, size in (("photo.png", "65535x65535"), ("bomb.ppm", "40000x40000"), ("old-mac.ppm", "30000x30000")):
        with pytest.raises(ImageUnreadable, match=f"{name}: {size} pixels is more than any camera's photo"):
            read_image(tmp_path / name)
    ok, data = cv2.imencode(".ppm", np.zeros((33, 47, 3), np.uint8))
    assert header_size(data.tobytes()) == (47, 33)


def test_a_named_pipe_nothing_writes_to_is_not_waited_on_and_a_device_is_refused(tmp_path):
    import os

    os.mkfifo(tmp_path / "photo.jpg")  # opening it to read would wait for a writer for ever
    with pytest.raises(ImageUnreadable, match="photo.jpg: the file is empty"):
        read_image(tmp_path / "photo.jpg")
    with pytest.raises(ImageUnreadable, match="/dev/zero: cannot be read \\(a device or a socket, not a file\\)"):
        read_image("/dev/zero")  # it would be read for ever


def test_missing_image_and_folder(tmp_path):
    with pytest.raises(ImageUnreadable, match="no such file"):
        read_image(tmp_path / "nope.jpg")
    with pytest.raises(ImageUnreadable, match="folder"):
        read_image(tmp_path)
    with pytest.raises(ImageUnreadable):
        ImageFrames([tmp_path / "nope.jpg"]).read()


def test_bad_arrays():
    with pytest.raises(ImageUnreadable):
        as_bgr(np.zeros((0, 0, 3), np.uint8))
    with pytest.raises(ImageUnreadable):
        as_bgr(np.zeros((8, 8, 3), np.float32))
    with pytest.raises(ImageUnreadable, match="2000x1 pixels: too small"):
        as_bgr(np.zeros((1, 2000, 3), np.uint8))  # resizing it for the detector would fail
    assert as_bgr(np.zeros((32, 32), np.uint8)).shape == (32, 32, 3)


def _write_profile(d: pathlib.Path, **over):
    d.mkdir(parents=True, exist_ok=True)
    data = {"version": 2, "name": "t", "resolution": [48, 64], "die_size": 10.0, "background": None, "paco": []}
    data.update(over)
    (d / "profile.json").write_text(json.dumps(data))
    return d


def test_good_minimal_profile_loads(tmp_path):
    p = load_profile(_write_profile(tmp_path / "ok"))
    assert p.name == "t" and p.die_size == 10.0 and p.paco_features is None


@pytest.mark.parametrize("over, msg", [
    ({"version": 9}, "version"),
    ({"resolution": [48]}, "resolution"),
    ({"die_size": "big"}, "die_size"),
    ({"die_size": -3}, "die_size"),
    ({"background": "background.png"}, "missing"),
    ({"paco": ["paco-0.png"]}, "missing"),
    ({"paco": ["../../etc/passwd"]}, "plain file name"),
    ({"paco": "paco-0.png"}, "list"),
])
def test_corrupt_profiles(tmp_path, over, msg):
    d = _write_profile(tmp_path / "bad", **over)
    with pytest.raises(ProfileError, match=msg):
        load_profile(d)


def test_a_profile_saved_with_a_byte_order_mark_loads_and_one_of_absurd_size_is_refused(tmp_path):
    d = _write_profile(tmp_path / "bom")
    (d / "profile.json").write_bytes(b"\xef\xbb\xbf" + (d / "profile.json").read_bytes())  # a Windows editor's
    assert load_profile(d).name == "t"
    d = _write_profile(tmp_path / "huge", resolution=[10 ** 400, 1])  # its die-size checks overflowed floats
    with pytest.raises(ProfileError, match="is more than any camera's"):
        load_profile(d)


def test_a_profile_of_the_earlier_format_is_refused_with_the_command_to_make_it_again(tmp_path):
    """Version 1 measured the die size with side faces and shadows: used now, it would set the
    wrong scale. Its photos are kept in images/, so the message gives the rebuild."""
    d = _write_profile(tmp_path / "old", version=1)
    with pytest.raises(ProfileError, match=r"earlier companion.*calibrate again: companion calibrate$"):
        load_profile(d)
    (d / "images").mkdir()
    with pytest.raises(ProfileError, match=rf"calibrate again: companion calibrate --images {d / 'images'} --out {d}$"):
        load_profile(d)


def test_missing_and_garbled_profiles(tmp_path):
    with pytest.raises(ProfileError, match="does not exist"):
        load_profile(tmp_path / "none")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ProfileError, match="no profile.json"):
        load_profile(tmp_path / "empty")
    d = tmp_path / "garbled"
    d.mkdir()
    (d / "profile.json").write_text("{not json")
    with pytest.raises(ProfileError, match="corrupt"):
        load_profile(d)
    (d / "profile.json").write_text("[1, 2]")
    with pytest.raises(ProfileError, match="corrupt"):
        load_profile(d)


def test_profile_with_unreadable_image(tmp_path):
    d = _write_profile(tmp_path / "p", background="background.png")
    (d / "background.png").write_bytes(b"junk")
    with pytest.raises(ProfileError, match="not a readable image"):
        load_profile(d)


@pytest.mark.parametrize("load, what", [(load_model, "face model"), (load_detector, "dice detector")])
def test_network_missing_corrupt_or_of_another_shape(tmp_path, load, what):
    with pytest.raises(ModelError, match=f"^{what} .* is missing"):
        load(tmp_path / "none.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"zip? no")
    with pytest.raises(ModelError, match=f"^{what} .* is unreadable"):
        load(bad)
    other = tmp_path / "other.npz"
    np.savez(other, w0=np.zeros((27, 8), np.float32), w1=np.zeros(8, np.float32),
             mean=np.zeros(3, np.float32), std=np.ones(3, np.float32))
    with pytest.raises(ModelError, match=f"^{what} .* has the wrong shape"):
        load(other)
    from companion.vision.detect import MODEL_PATH as DETECTOR
    from companion.vision.model import MODEL_PATH as FACES

    with np.load(FACES if load is load_model else DETECTOR) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["w0"] = arrays["w0"] * np.nan  # a training run gone wrong: every read would be NaN
    np.savez(other, **arrays)
    with pytest.raises(ModelError, match=f"^{what} .* holds numbers that are not finite"):
        load(other)
    if load is load_model:
        arrays["w1"] = arrays["w1"][:-1]  # a layer's bias one short of its outputs
        np.savez(other, **arrays)
        with pytest.raises(ModelError, match="has the wrong shape"):
            load(other)


def test_missing_camera_is_typed():
    from companion.vision.errors import CameraUnavailable
    from companion.vision.frames import CameraFrames

    with pytest.raises(CameraUnavailable, match="camera 97"):
        CameraFrames(97)
    # OpenCV's "any camera" index crashes some builds (a segfault, no message): never asked for
    with pytest.raises(CameraUnavailable, match="numbered from 0, so there is no camera -1"):
        CameraFrames(-1)


def test_see_camera_missing_is_clean(capsys):
    import argparse

    from companion.vision.commands import add_see_arguments, run_see

    p = argparse.ArgumentParser()
    add_see_arguments(p)
    # nothing can be read: refused as a bad profile is, and as play refuses a missing camera
    assert run_see(p.parse_args(["--camera", "97", "--headless", "--frames", "1"])) == 2
    err = capsys.readouterr().err
    assert "camera 97" in err and "Traceback" not in err


def test_pictures_and_profiles_in_a_folder_named_outside_utf8(tmp_path):
    """A folder named in Latin-1 ("Sesión" as bytes): OpenCV's own path handling crashed the
    process on it (a reveal's picture, a profile), so only Python touches the path."""
    from companion.vision.frames import read_frame, write_image

    folder = tmp_path / pathlib.Path(b"Sesi\xf3n".decode("utf-8", "surrogateescape"))
    folder.mkdir()
    picture = np.zeros((48, 64, 3), np.uint8)
    picture[10:20, 10:20] = (0, 0, 255)
    write_image(folder / "reveal-0001.png", picture)
    assert np.array_equal(read_frame(folder / "reveal-0001.png"), picture)
    write_image(folder / "paco-0.png", np.full((32, 32, 3), 200, np.uint8))
    profile = load_profile(_write_profile(folder, paco=["paco-0.png"]))
    assert profile.paco_patches.shape == (1, 32, 32, 3)
    with pytest.raises(OSError, match="not a picture file name"):
        write_image(folder / "reveal.t\udcf3f", picture)
