import contextlib
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def stand_in_camera(frame):
    """A stand-in for cv2.VideoCapture (monkeypatched into companion.vision.frames.cv2): a
    camera that is there, and whose every frame is `frame()`."""
    class Camera:
        def __init__(self, *args):
            pass

        def isOpened(self):
            return True

        def set(self, *args):
            return True

        def grab(self):
            return True

        def read(self):
            return True, frame()

        def release(self):
            pass

    return Camera


def run_companion(*args, input_text=None, timeout=120, env_extra=None):
    """Run the real command line in a child process, as a user would."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "companion", *map(str, args)], input=input_text,
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)


@pytest.fixture
def companion_cli():
    return run_companion


@pytest.fixture
def page_of_text():
    """A screen of code, as a camera pointed at a laptop would see it (1280x720): no dice, and
    a great many things a dice reader must turn down."""
    import cv2
    import numpy as np

    img = np.full((720, 1280, 3), 250, np.uint8)
    lines = ["fn main() { let x = vec![1, 2, 3]; println!(\"{:?}\", x); }",
             "impl Display for Dice { fn fmt(&self, f) -> Result { write!(f, \"o o o\") } }",
             "0 1 2 3 4 5 6 7 8 9 : . o O 0 ; :: ... ooo",
             "the quick brown fox jumps over the lazy dog 0123456789"]
    for i in range(22):
        cv2.putText(img, lines[i % 4], (10, 30 + 31 * i), cv2.FONT_HERSHEY_SIMPLEX, 0.75, (20, 20, 20), 2, cv2.LINE_AA)
    return img


@contextlib.contextmanager
def disk_full_past(size: int):
    """A full disk, played in this process by a limit on the size a file may grow to: a write
    past `size` bytes fails (EFBIG, as ENOSPC would), and nothing else is touched."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an error, not the signal's kill
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)
