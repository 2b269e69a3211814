"""Real Vosk decoding: only where a model has been installed under models/."""

import shutil
import subprocess

import numpy as np
import pytest

from companion.calls import parse_call_or_none
from companion.listen.audio import read_wav
from companion.listen.vosk_engine import VoskEngine, find_model

MODEL = find_model()
pytestmark = [
    pytest.mark.skipif(MODEL is None, reason="no Vosk model under models/ "
                       "(run `companion models download`; needs internet)"),
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng makes the speech"),
]


def test_vosk_decodes_a_bid(tmp_path):
    raw, wav = tmp_path / "raw.wav", tmp_path / "bid.wav"
    subprocess.run(["espeak-ng", "-v", "en-us+klatt", "-s", "150", "-w", str(raw), "five fives"],
                   check=True)
    subprocess.run(["sox", str(raw), "-r", "16000", "-c", "1", "-b", "16", str(wav)], check=True)
    engine = VoskEngine(MODEL, ["Ana", "Ben"])
    samples = np.concatenate([np.zeros(6000, np.int16), read_wav(wav), np.zeros(8000, np.int16)])
    result = engine.decode(samples)
    assert parse_call_or_none(result.text).to_json() == {"kind": "bid", "count": 5, "face": 5}
    assert 0.0 <= result.confidence <= 1.0
