"""What multiplies the training voices: the speaker warp and the tempo change on real mel
frames, and the other ways the Spanish words are said."""

import random

import numpy as np

from companion.listen.embedding import SpeechEmbedding
from training.augment import stretch_mels, warp_mels
from training.corpus import SAID_AS, said_as, spell


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


def test_a_tempo_change_shortens_or_lengthens_a_burst_but_keeps_its_pitch():
    embedding = SpeechEmbedding.shared()
    burst = np.concatenate([np.zeros(8000, np.float32), tone(1000, 0.6), np.zeros(8000, np.float32)])
    mels = embedding.mels(burst)
    loud = lambda m: int(np.sum(m.max(axis=1) > m.max() - 1.0))  # noqa: E731
    faster, slower = stretch_mels(mels, 1.25), stretch_mels(mels, 0.8)
    assert len(faster) == round(len(mels) / 1.25) and len(slower) == round(len(mels) / 0.8)
    assert abs(loud(faster) - loud(mels) / 1.25) <= 2 and abs(loud(slower) - loud(mels) / 0.8) <= 2
    assert loudest_band(faster) == loudest_band(slower) == loudest_band(mels)
    np.testing.assert_allclose(stretch_mels(mels, 1.0), mels)


def test_the_spanish_words_are_said_other_ways_but_labelled_the_same():
    rng = random.Random(3)
    said = [said_as("okay ana calza please", rng) for _ in range(200)]
    assert {s.split()[2] for s in said if len(s.split()) == 4} <= {"calza", "calsa", "kahlza"}
    assert 60 < sum(s == "okay ana calza please" for s in said) < 140  # kept about half the time
    assert len(set(said)) == 1 + len(SAID_AS["calza"])
    assert said_as("three fives", rng) == "three fives"  # English words are left alone
    assert spell("okay ana calza please", frozenset({"ana"})) == ("okay", "<name>", "calza", "please")


def test_clips_of_different_lengths_come_back_as_saved_with_their_columns(tmp_path):
    from training.build import load_clips, save_clips

    clips = [np.arange(n, dtype=np.int16) for n in (3, 0, 7)]
    save_clips(tmp_path / "clips.npz", clips, snr=[24, 18, 6])
    back, columns = load_clips(tmp_path / "clips.npz")
    assert [c.tolist() for c in back] == [c.tolist() for c in clips]
    assert columns["snr"].tolist() == [24, 18, 6] and set(columns) == {"snr"}

