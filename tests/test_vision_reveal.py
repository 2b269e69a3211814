"""The reveal flow: several agreeing frames, a dice-count check, and honest refusals."""
import cv2
import numpy as np
import pytest
from conftest import stand_in_camera

from companion.calls import number_words
from companion.vision.errors import ImageUnreadable, NoFrame
from companion.vision.frames import ArrayFrames, ImageFrames
from companion.vision.reader import DiceReader
from companion.vision.reveal import CameraCounter
from companion.vision.scenes import generate_scene
from companion.vision.settings import CameraSettings
from companion.vision.types import DiceReading, Die, Refused, RevealOutcome

SURE = CameraSettings().min_confidence

# A frame for stand-in readers: grey, as a black one would be too dark to read dice in
FRAME = np.full((40, 40, 3), 120, np.uint8)


def _easy_scene(seed, n=6):
    # top-down, gentle conditions: the reveal logic is under test here, not the reader's limits
    return generate_scene(seed, size=(480, 640), n_dice=n, angle=0.3, hard=0.3, touching=0.0, paco_fraction=0.0)


@pytest.fixture(scope="module")
def reader():
    return DiceReader()


def _save(tmp_path, img, name):
    p = tmp_path / name
    cv2.imwrite(str(p), img)
    return p


def _find_readable(reader, seeds, n=6):
    for s in seeds:
        sc = _easy_scene(s, n)
        r = reader.read(sc.image)
        if r.counts == sc.counts and r.min_confidence >= SURE:
            return sc
    pytest.fail("the reader misread every easy scene tried")


def test_agreeing_frames_give_a_reading_and_a_picture(tmp_path, reader):
    sc = _find_readable(reader, range(500, 510))
    p = _save(tmp_path, sc.image, "a.png")
    counter = CameraCounter(ImageFrames([p]), reader, CameraSettings(frames_to_agree=3))
    out = counter.reveal(len(sc.dice), save_dir=tmp_path / "rev")
    assert isinstance(out, RevealOutcome)
    assert out.reading is not None, out.reason
    assert out.reading.counts == sc.counts and out.reading.total == len(sc.dice)
    assert out.annotated_path == tmp_path / "rev" / "reveal-0001.png" and out.annotated_path.exists()
    again = CameraCounter(ImageFrames([p]), reader).reveal(len(sc.dice), save_dir=tmp_path / "rev")
    assert again.annotated_path.name == "reveal-0002.png"


def test_count_mismatch_returns_none_with_reason(tmp_path, reader):
    sc = _find_readable(reader, range(520, 530))
    out = CameraCounter(ArrayFrames([sc.image]), reader).reveal(len(sc.dice) + 1, save_dir=tmp_path)
    assert out.reading is None
    assert out.reason == (f"I see {number_words(len(sc.dice))} dice but "
                          f"{number_words(len(sc.dice) + 1)} are in play")
    assert out.annotated_path is not None and out.annotated_path.exists()
    hidden = CameraCounter(ArrayFrames([sc.image]), reader).reveal(len(sc.dice) + 1, say_total=False)
    assert hidden.reason == f"I see {number_words(len(sc.dice))} dice but more are in play"


def test_disagreeing_frames_return_none(reader):
    a = _easy_scene(540, 3).image
    b = _easy_scene(541, 9).image
    frames = ArrayFrames([a, b, a, b, a, b, a, b])
    out = CameraCounter(frames, reader, CameraSettings(frames_to_agree=3, max_frames=6)).reveal(3)
    assert out.reading is None and "disagree" in out.reason and out.annotated_path is None


class _StubReader:
    def __init__(self, readings):
        self.readings = list(readings)
        self.i = 0

    def read(self, frame):
        r = self.readings[min(self.i, len(self.readings) - 1)]
        self.i += 1
        return r


def _reading(faces, conf=0.99):
    return DiceReading(dice=tuple(Die(face=f, box=(10 * i, 0, 8, 8), confidence=conf) for i, f in enumerate(faces)))


def test_low_confidence_returns_none():
    frames = ArrayFrames([FRAME])
    out = CameraCounter(frames, _StubReader([_reading([2, 3, 3], conf=0.3)]),
                        CameraSettings(min_confidence=0.6)).reveal(3)
    assert out.reading is None and out.reason == "some dice are too hard to read"


def test_needs_consecutive_agreement():
    frames = ArrayFrames([FRAME])
    seq = [_reading([2]), _reading([3]), _reading([2]), _reading([2]), _reading([2])]
    counter = CameraCounter(frames, _StubReader(seq), CameraSettings(frames_to_agree=3, max_frames=10))
    out = counter.reveal(1)
    assert out.reading is not None and out.reading.counts[2] == 1
    assert counter.reader.i == 5  # answered only after three in a row


class _UnpluggedCamera(ArrayFrames):
    """A camera that stops giving frames mid-reveal, as CameraFrames says it."""

    live = True

    def read(self):
        raise NoFrame("camera 0 gave no frame")


def test_a_camera_failing_mid_reveal_gives_none():
    out = CameraCounter(_UnpluggedCamera([FRAME]), _StubReader([_reading([1])])).reveal(1)
    assert out.reading is None and out.reason == "the camera failed (camera 0 gave no frame)"


def test_unreadable_photos_are_refused_together_before_any_reveal(tmp_path):
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image")
    tiny = _save(tmp_path, np.zeros((4, 4, 3), np.uint8), "tiny.png")
    with pytest.raises(ImageUnreadable) as err:
        ImageFrames([bad, tiny])
    assert "bad.png: not an image OpenCV can decode" in str(err.value)
    assert "tiny.png: the image is only 4x4 pixels" in str(err.value)


class _CountingReader:
    def __init__(self, reader):
        self.reader, self.reads = reader, 0

    def read(self, frame):
        self.reads += 1
        return self.reader.read(frame)


def test_photos_are_one_per_reveal_in_order_then_the_players_count(tmp_path, reader):
    six = _find_readable(reader, range(540, 560), n=6)
    four = _find_readable(reader, range(560, 580), n=4)
    counting = _CountingReader(reader)
    counter = CameraCounter(ImageFrames([_save(tmp_path, six.image, "r1.png"),
                                         _save(tmp_path, four.image, "r2.png")]), counting)
    first = counter.reveal(6, round_number=1)
    assert first.reading is not None and first.reading.counts == six.counts
    assert counting.reads == 1  # a photo agrees with itself: read once
    again = counter.reveal(6, round_number=1)  # the same reveal, after an undo: the same photo
    assert again.reading is not None and again.reading.counts == six.counts
    second = counter.reveal(4, round_number=2)
    assert second.reading is not None and second.reading.counts == four.counts
    again = counter.reveal(6, round_number=1)  # undone back to round one: its photo again
    assert again.reading is not None and again.reading.counts == six.counts
    third = counter.reveal(3, round_number=3)
    assert third.reading is None and third.reason == "there is no photo left for this reveal"


def test_after_a_resume_the_photos_are_of_its_round_on_and_an_earlier_reveal_has_none(tmp_path, reader):
    four = _find_readable(reader, range(560, 580), n=4)
    counter = CameraCounter(ImageFrames([_save(tmp_path, four.image, "r3.png")], first_round=3), reader)
    earlier = counter.reveal(6, round_number=2)  # taken back into the round before the pause
    assert earlier.reading is None and earlier.reason == ("this round was revealed before the game was paused, "
                                                          "and the photos given now are of later rounds")
    now = counter.reveal(4, round_number=3)  # the first photo is still the resumed round's
    assert now.reading is not None and now.reading.counts == four.counts


def test_a_photo_gone_by_its_reveal_is_said_without_its_path(tmp_path, reader):
    four = _find_readable(reader, range(560, 580), n=4)
    photo = _save(tmp_path, four.image, "r1.png")
    counter = CameraCounter(ImageFrames([photo]), reader)
    photo.unlink()  # deleted mid-game: the reason is read aloud, and a path is no sentence
    out = counter.reveal(4, round_number=1)
    assert out.reading is None and out.reason == "the camera failed (photo one of those given cannot be read: no such file)"


def test_a_frame_without_colour_settles_nothing_and_the_players_count(tmp_path, reader):
    import cv2

    four = _find_readable(reader, range(560, 580), n=4)
    grey = cv2.cvtColor(cv2.cvtColor(four.image, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    out = CameraCounter(ArrayFrames([grey]), reader).reveal(4, save_dir=tmp_path / "rev")
    assert out.reading is None and "no colour" in out.reason  # red pips on a dark die vanish in grey
    assert out.annotated_path is not None and out.annotated_path.exists()
    assert CameraCounter(ArrayFrames([four.image]), reader).reveal(4).reading is not None


def test_a_reading_gives_its_faces_and_counts_each_face_only_for_itself():
    r = _reading([1, 1, 2, 5, 5, 5])
    assert r.total == 6 and r.faces == (1, 1, 2, 5, 5, 5)
    assert r.counts == {1: 2, 2: 1, 3: 0, 4: 0, 5: 3, 6: 0}
    with pytest.raises(ValueError):
        Die(face=7, box=(0, 0, 8, 8), confidence=0.9)


def test_camera_settings_refuse_a_count_that_can_never_agree():
    with pytest.raises(ValueError):
        CameraSettings(frames_to_agree=4, max_frames=3)
    with pytest.raises(ValueError):
        CameraSettings(min_confidence=1.5)


class _LiveCamera(ArrayFrames):
    """A camera watching the table: each read is a tenth of a second on the fake clock."""

    live = True

    def __init__(self, clock):
        super().__init__([FRAME])
        self.clock = clock

    def read(self):
        self.clock.now += 0.1
        return super().read()


class _Clock:
    now = 0.0

    def __call__(self):
        return self.now


def test_a_live_camera_waits_for_the_cups():
    clock = _Clock()
    cups_down = [_reading([])] * 20  # nothing to see while the cups are still over the dice
    half_lifted = [_reading([2, 3, 3])] * 5  # agreeing frames, but not every die yet
    table = [_reading([2, 3, 3, 5, 6, 1])]
    reader = _StubReader(cups_down + half_lifted + table)
    out = CameraCounter(_LiveCamera(clock), reader, CameraSettings(frames_to_agree=3, patience=20.0),
                        clock=clock).reveal(6)
    assert out.reading is not None and out.reading.total == 6, out.reason
    assert reader.i == 28  # three agreeing frames of the whole table


def test_a_live_camera_gives_up_after_its_patience_and_says_what_it_saw():
    clock = _Clock()
    reader = _StubReader([_reading([2, 3, 3, 5])])  # one cup never comes up
    out = CameraCounter(_LiveCamera(clock), reader, CameraSettings(patience=5.0), clock=clock).reveal(6)
    assert out.reading is None and out.reason == "I see four dice but six are in play"
    assert 49 <= reader.i <= 51  # it kept looking for five seconds, not ten frames


def test_a_live_camera_stopped_mid_reveal_looks_on_after_it_is_continued():
    # Ctrl-Z while the cups come up, fg a minute later: the minute was no time spent looking
    clock = _Clock()
    cups_down = [_reading([])] * 10
    table = [_reading([2, 3, 3, 5, 6, 1])]

    class _StoppedOnce(_StubReader):
        def read(self, frame):
            if self.i == 5:
                clock.now += 60.0  # the process was stopped here
            return super().read(frame)

    reader = _StoppedOnce(cups_down + table)
    out = CameraCounter(_LiveCamera(clock), reader, CameraSettings(frames_to_agree=3, patience=20.0),
                        clock=clock).reveal(6)
    assert out.reading is not None and out.reading.total == 6, out.reason


def test_a_live_camera_on_a_slow_machine_gives_up_after_its_patience_all_the_same():
    # six seconds a look (a slow machine's crowded frames) is no stop: patience is patience
    clock = _Clock()

    class _Slow(_StubReader):
        def read(self, frame):
            clock.now += 6.0
            return super().read(frame)

    reader = _Slow([_reading([2, 3, 3, 5])])  # one cup never comes up
    out = CameraCounter(_LiveCamera(clock), reader, CameraSettings(patience=20.0), clock=clock).reveal(6)
    assert out.reading is None and reader.i <= 5 and clock.now <= 31


def test_recorded_frames_are_not_waited_for():
    reader = _StubReader([_reading([2, 3, 3, 5])])
    out = CameraCounter(ArrayFrames([FRAME]), reader).reveal(6)
    assert out.reading is None and "I see four dice but six" in out.reason and reader.i == 3


def test_a_picture_that_cannot_be_saved_does_not_stop_the_count(tmp_path):
    (tmp_path / "file").write_text("in the way of the reveals folder")
    reader = _StubReader([_reading([2, 3])])
    out = CameraCounter(ArrayFrames([FRAME]), reader).reveal(
        2, save_dir=tmp_path / "file" / "reveals")
    assert out.reading is not None and out.reading.total == 2 and out.annotated_path is None


def test_a_reveal_accepts_only_every_die_seen_and_surely_read():
    settings = CameraSettings()
    sure, unsure = _reading([2, 3, 5]), _reading([2, 3, 5], conf=settings.min_confidence - 0.01)
    assert settings.accepts(sure, 3) and not settings.accepts(sure, 4) and not settings.accepts(unsure, 3)
    assert settings.doubtful(unsure) == 3 and settings.doubtful(sure) == 0
    out = CameraCounter(ArrayFrames([FRAME]), _StubReader([unsure])).reveal(3)
    assert out.reading is None and out.reason == "some dice are too hard to read"  # the counter keeps the same line


def test_a_live_camera_keeps_looking_while_unsure():
    clock = _Clock()
    hand_over_a_die = [_reading([2, 3, 5], conf=0.5)] * 6  # all seen, one hard to read
    reader = _StubReader(hand_over_a_die + [_reading([2, 3, 5])])
    out = CameraCounter(_LiveCamera(clock), reader, CameraSettings(patience=20.0), clock=clock).reveal(3)
    assert out.reading is not None and reader.i == 7, out.reason
    never_sure = _StubReader([_reading([2, 3, 5], conf=0.5)])
    out = CameraCounter(_LiveCamera(clock), never_sure, CameraSettings(patience=2.0), clock=clock).reveal(3)
    assert out.reading is None and out.reason == "some dice are too hard to read" and never_sure.i >= 19


def test_a_frame_is_without_colour_only_where_nearly_every_pixel_is_grey():
    import cv2

    from companion.vision.frames import without_colour

    table = np.full((1080, 1920, 3), 120, np.uint8)  # a grey cloth, as a renderer draws it
    for i in range(4):
        table[500:540, 100 + 100 * i:140 + 100 * i] = (40, 40, 200)  # four small red dice
    assert not without_colour(table)
    grey = cv2.cvtColor(cv2.cvtColor(table, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    assert without_colour(grey) and without_colour(grey[..., 0])
    ok, jpeg = cv2.imencode(".jpg", grey, [cv2.IMWRITE_JPEG_QUALITY, 40])
    assert without_colour(cv2.imdecode(jpeg, cv2.IMREAD_COLOR))  # a black-and-white photo, saved


def test_a_live_camera_without_colour_is_not_waited_for():
    from dataclasses import replace

    clock = _Clock()
    night = _StubReader([replace(_reading([2, 3, 5], conf=0.5), colourless=True)])
    out = CameraCounter(_LiveCamera(clock), night, CameraSettings(patience=20.0), clock=clock).reveal(3)
    assert out.reading is None and "no colour" in out.reason and clock.now < 1.0  # the agreeing frames, no more


def test_a_profile_made_for_another_framing_is_warned_about_once():
    from companion.vision.profile import Profile

    reader = _StubReader([_reading([2, 3])])
    reader.profile = Profile(name="kitchen", resolution=(480, 640), die_size=40.0, background=None,
                             paco_patches=np.zeros((0, 32, 32, 3), np.uint8))
    notes = []
    counter = CameraCounter(ArrayFrames([np.zeros((720, 1280, 3), np.uint8)]), reader, warn=notes.append)
    counter.reveal(2)
    counter.reveal(2)
    assert notes == ["the camera: framed 1280x720, unlike the profile's 640x480 photos; "
                     "its table photo and die size are not used (calibrate again for this camera setting)"]
    fitting = CameraCounter(ArrayFrames([np.zeros((960, 1280, 3), np.uint8)]), reader, warn=notes.append)
    fitting.reveal(2)
    assert len(notes) == 1  # the same framing at another size is fine


def test_a_frame_full_of_things_that_are_not_dice_settles_nothing(tmp_path, reader, page_of_text):
    settings = CameraSettings()
    refused = tuple(Refused((20 * i, 40, 8, 8), 0.99) for i in range(settings.max_refused + 1))
    cluttered = DiceReading(_reading([6, 6, 1]).dice, refused)
    assert not settings.accepts(cluttered, 3)  # sure dice, the right total, and still not trusted
    assert settings.accepts(DiceReading(cluttered.dice, refused[:settings.max_refused]), 3)
    out = CameraCounter(ArrayFrames([FRAME]), _StubReader([cluttered])).reveal(3)
    assert out.reading is None and "things I cannot take for dice" in out.reason
    # real pixels: three dice below a screen of code, read by the shipped reader. Every die is
    # read, surely; it is the screen's letters that make the frame no table to settle from.
    scene = _easy_scene(543, 3)
    h, w = scene.image.shape[:2]
    frame = np.full((720 + h, 1280, 3), 250, np.uint8)
    frame[:720], frame[720:, :w] = page_of_text, scene.image
    read = reader.read(frame)
    assert read.counts == scene.counts and not settings.doubtful(read) and settings.cluttered(read)
    out = CameraCounter(ImageFrames([_save(tmp_path, frame, "screen.png")]), reader).reveal(3)
    assert out.reading is None and out.reason.endswith("this does not look like dice on a table")


def test_a_frame_with_more_candidates_than_the_reader_reads_settles_nothing(reader):
    """Past the most candidates read in a frame the rest are left out, merged into a few
    "maybe" things: too many to read is itself a sign the frame is no reveal (a page, a
    board), however few things that leaves refused. A reader reading at most four of a
    scene's six dice stands in for a board's hundreds."""
    scene = _find_readable(reader, range(540, 560))
    few = DiceReader(max_read=4)
    read = few.read(scene.image)
    assert read.total == 4 and read.unread == 2 and len(read.refused) <= CameraSettings().max_refused
    assert CameraSettings().cluttered(read) and not CameraSettings().cluttered(reader.read(scene.image))
    out = CameraCounter(ArrayFrames([scene.image]), few).reveal(4)  # even where the total fits
    assert out.reading is None and out.reason == ("I see too many things I cannot take for dice: "
                                                  "this does not look like dice on a table")


def test_a_live_camera_drops_the_frames_its_driver_held_from_before_the_reveal(monkeypatch):
    from companion.vision import frames as frames_module

    class Driver:
        """A capture device that, like V4L2, hands out the oldest buffered frame first."""

        def __init__(self, *args):
            self.frames = [np.full((8, 8, 3), i, np.uint8) for i in range(20)]

        def isOpened(self):
            return True

        def set(self, *args):
            return True

        def grab(self):
            self.frames.pop(0)
            return True

        def read(self):
            return True, self.frames.pop(0)

    monkeypatch.setattr(frames_module.cv2, "VideoCapture", Driver)
    camera = frames_module.CameraFrames(0)
    camera.read()  # the last reveal's look, and buffered frames behind it
    camera.begin_reveal(2)
    assert camera.read()[0, 0, 0] == 1 + frames_module.CameraFrames.STALE_FRAMES


def test_a_live_camera_sees_no_reveal_taken_back_into_after_the_dice_were_rolled_again(monkeypatch, reader):
    """Taken back into a round before the latest one revealed, the table shows the later
    round's dice: the camera would settle the old challenge on them. The round revealed
    again before anyone rolls is still on the table."""
    from companion.vision import frames as frames_module

    four = _find_readable(reader, range(560, 580), n=4)
    monkeypatch.setattr(frames_module.cv2, "VideoCapture", stand_in_camera(lambda: four.image))
    settings = CameraSettings(frames_to_agree=1)
    counter = CameraCounter(frames_module.CameraFrames(0), reader, settings)
    assert counter.reveal(4, round_number=1, latest_round=1).reading is not None
    assert counter.reveal(4, round_number=1, latest_round=1).reading is not None  # undone within its round
    assert counter.reveal(4, round_number=2, latest_round=2).reading is not None
    back = counter.reveal(5, round_number=1, latest_round=2)
    assert back.reading is None and back.reason == "the dice of that round may have been rolled again since"
    assert counter.reveal(4, round_number=2, latest_round=2).reading is not None  # the latest round is still there
    assert counter.reveal(5, round_number=2, latest_round=3).reading is None  # a round before the pause


def test_a_reveal_picture_that_cannot_be_saved_is_said_once_and_the_count_stands(tmp_path, reader):
    four = _find_readable(reader, range(560, 580), n=4)
    (tmp_path / "game-reveals").write_text("")  # a file where the pictures' folder goes
    warnings = []
    counter = CameraCounter(ArrayFrames([four.image]), reader, CameraSettings(frames_to_agree=1),
                            warn=warnings.append)
    for _ in range(2):
        out = counter.reveal(4, save_dir=tmp_path / "game-reveals")
        assert out.reading is not None and out.annotated_path is None
    assert len(warnings) == 1 and warnings[0].startswith(f"the reveals' pictures cannot be saved in {tmp_path}")
