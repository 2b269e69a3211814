"""The speaker warp that multiplies the training voices, on real mel frames."""

import numpy as np

from companion.listen.embedding import SpeechEmbedding
from training.augment import warp_mels


def tone(freq: float, seconds: float = 1.5) -> np.ndarray:
    t = np.arange(int(16000 * seconds)) / 16000
    return (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def loudest_band(mels: np.ndarray) -> float:
    return float(np.median(np.argmax(mels, axis=1)))


def test_no_warp_leaves_the_frames_as_they_are():
    mels = SpeechEmbedding.shared().mels(tone(1000))
    np.testing.assert_allclose(warp_mels(mels, 1.0), mels, atol=1e-6)


def test_a_warp_moves_a_tone_as_the_same_tone_at_the_warped_frequency_would_be():
    embedding = SpeechEmbedding.shared()
    warped = warp_mels(embedding.mels(tone(1000)), 1.15)
    assert abs(loudest_band(warped) - loudest_band(embedding.mels(tone(1150)))) <= 1
    assert loudest_band(warped) > loudest_band(embedding.mels(tone(1000)))
    assert loudest_band(warp_mels(embedding.mels(tone(1000)), 0.85)) < loudest_band(
        embedding.mels(tone(1000)))


def test_embedding_from_mels_is_the_embedding_of_the_audio():
    embedding = SpeechEmbedding.shared()
    audio = tone(440, 2.0)
    np.testing.assert_allclose(embedding.embed_mels(embedding.mels(audio)), embedding.embed(audio))
