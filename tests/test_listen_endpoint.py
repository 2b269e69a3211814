"""The endpointer's level measure: its `band` option (no decoding)."""

import numpy as np

from companion.listen.endpoint import frame_db


def test_band_limited_level_matches_full_band_for_white_noise():
    noise = np.random.default_rng(1).normal(0, 1000, 16000)
    full, band = frame_db(noise), frame_db(noise, (300.0, 3400.0))
    # 300-3400 Hz is about 39% of white noise's power: about 4 dB down.
    assert abs(np.median(full - band) - 4.1) < 1.0
