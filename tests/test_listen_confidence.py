"""The pocketsphinx confidence model and the endpointer's band option (no decoding)."""

import numpy as np

from companion.bench.speech import FIT_VOICES, VOICES, fit_confidence
from companion.listen.endpoint import frame_db
from companion.listen.sphinx import FEATURES, SphinxSettings, confidence_features

CALL = {"margin": 0.6, "speech": 80, "voiced": 82, "frames": 150, "n_phones": 8,
        "span": 80, "word_frames": 78, "voiced_in": 80, "voiced_out": 2, "word_ac": -25.0,
        "lead": 30, "trail": 40}


def test_one_weight_per_feature():
    assert len(confidence_features(CALL)) == len(FEATURES) == len(SphinxSettings().weights)
    assert len(confidence_features({})) == len(FEATURES)  # no call heard: still defined


def test_some_voices_are_held_out_of_the_fit():
    assert set(FIT_VOICES) < set(VOICES)


def test_fit_confidence_separates_right_from_wrong():
    rng = np.random.default_rng(0)
    rows, voices = [], {}
    for i in range(400):
        right = i % 2 == 0
        key = f"u{i}"
        voices[key] = FIT_VOICES[i % len(FIT_VOICES)]
        details = dict(CALL, margin=float(rng.normal(0.8 if right else -1.5, 0.5)))
        rows.append({"key": key, "details": details, "call": {"kind": "dudo"},
                     "truth": {"kind": "dudo"} if right else {"kind": "calza"}})
    fit = fit_confidence(rows, voices)
    assert len(fit["weights"]) == len(FEATURES) and fit["weights"][0] > 0 and fit["slope"] > 0


def test_band_limited_level_matches_full_band_for_white_noise():
    noise = np.random.default_rng(1).normal(0, 1000, 16000)
    full, band = frame_db(noise), frame_db(noise, (300.0, 3400.0))
    # 300-3400 Hz is about 39% of white noise's power: about 4 dB down.
    assert abs(np.median(full - band) - 4.1) < 1.0
