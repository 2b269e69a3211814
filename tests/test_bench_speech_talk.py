"""The speech benchmark's talking table with nobody calling, heard by the real recogniser."""

import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT))  # benchmarks/ sits beside the package

from benchmarks import speech  # noqa: E402
from companion.listen.audio import read_wav  # noqa: E402

RATE = 16000


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng says the call")
def test_background_talk_counts_what_the_referee_would_act_on(tmp_path):
    room = np.random.default_rng(1).standard_normal(6 * RATE).astype(np.float32) * 0.003
    quiet = speech.background_talk(room, None)
    assert quiet["utterances"] == 0 and quiet["acted"] == [] and quiet["minutes"] == pytest.approx(0.1)

    wav = tmp_path / "dudo.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(wav), "dudo"], check=True)
    call = read_wav(wav).astype(np.float32) / 32768  # resampled to 16 kHz by read_wav
    called = room.copy()
    called[2 * RATE:2 * RATE + len(call)] += 0.5 * call / np.max(np.abs(call))
    heard = speech.background_talk(called, None)
    assert heard["acted"] == ["dudo"]
    assert heard["acted_per_minute"] == pytest.approx(10.0)
