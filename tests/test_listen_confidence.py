"""The pocketsphinx confidence model and the endpointer's band option (no decoding)."""

import json

import numpy as np
import pytest

from companion.bench.speech import (
    BENCH, TRAIN, build_items, fit_confidence, rescore)
from companion.listen.confidence import ConfidenceModel, ConfidenceModelError
from companion.listen.endpoint import frame_db
from companion.listen.errors import ModelError
from companion.listen.sphinx import (
    CONFIDENCE_MODEL, FEATURES, SphinxEngine, SphinxSettings, confidence_features)

CALL = {"margin": 0.6, "speech": 80, "voiced": 82, "frames": 150, "n_phones": 8,
        "span": 80, "word_frames": 78, "voiced_in": 80, "voiced_out": 2, "word_ac": -25.0,
        "lead": 30, "trail": 40}


def test_the_shipped_model_reads_exactly_the_engine_features():
    model = ConfidenceModel.load(CONFIDENCE_MODEL, FEATURES)
    assert len(confidence_features(CALL)) == len(FEATURES) == len(model.hidden)
    assert len(confidence_features({})) == len(FEATURES)  # no call heard: still defined
    assert 0.0 <= model.confidence(confidence_features(CALL)) <= 1.0


def test_a_model_for_other_features_or_a_broken_file_is_refused(tmp_path):
    model = ConfidenceModel.load(CONFIDENCE_MODEL, FEATURES)
    with pytest.raises(ConfidenceModelError, match="other measurements"):
        ConfidenceModel.load(CONFIDENCE_MODEL, FEATURES[:-1])
    broken = tmp_path / "broken.json"
    broken.write_text(model.to_json()[:200])
    with pytest.raises(ConfidenceModelError, match="not a confidence model"):
        ConfidenceModel.load(broken, FEATURES)
    short = json.loads(model.to_json())
    short["out"] = short["out"][:-1]
    broken.write_text(json.dumps(short))
    with pytest.raises(ConfidenceModelError, match="do not fit"):
        ConfidenceModel.load(broken, FEATURES)
    with pytest.raises(ModelError, match="no confidence model"):  # said plainly by the engine
        SphinxEngine((), SphinxSettings(confidence_model=str(tmp_path / "missing.json")))


def test_a_model_survives_its_json_round_trip(tmp_path):
    model = ConfidenceModel.load(CONFIDENCE_MODEL, FEATURES)
    copy = tmp_path / "copy.json"
    copy.write_text(model.to_json())
    again = ConfidenceModel.load(copy, FEATURES)
    x = confidence_features(CALL)
    assert abs(again.confidence(x) - model.confidence(x)) < 1e-4


def test_the_confidence_is_fitted_on_nothing_the_benchmark_measures():
    train, bench = build_items(TRAIN), build_items(BENCH)
    assert not {i.voice for i in train} & {i.voice for i in bench}
    assert not {i.say for i in train if i.truth is None} & {i.say for i in bench if i.truth is None}
    assert TRAIN.babble_file != BENCH.babble_file
    assert len({i.key for i in train}) == len(train)


def test_fit_confidence_separates_right_from_wrong_and_places_the_lines():
    rng = np.random.default_rng(0)
    rows = []
    for i in range(400):
        right = i % 2 == 0
        key = f"u{i}"
        details = dict(CALL, margin=float(rng.normal(0.8 if right else -1.5, 0.5)),
                       phone_err=float(rng.uniform(0.0, 0.4) if right else rng.uniform(0.3, 1.0)))
        rows.append({"key": key, "details": details, "call": {"kind": "dudo"},
                     "truth": {"kind": "dudo"} if right else {"kind": "calza"}})
    model = fit_confidence(rows)
    scored = rescore(rows, model)
    right = [r["confidence"] for r in scored if r["call"] == r["truth"]]
    wrong = [r["confidence"] for r in scored if r["call"] != r["truth"]]
    assert np.median(right) > 0.7 > np.median(wrong)
    # The 0.5 line lets through at most 1% of the calls as wrong ones, and 0.7 fewer still.
    assert sum(c >= 0.5 for c in wrong) <= 0.01 * len(rows)
    assert sum(c >= 0.7 for c in wrong) <= sum(c >= 0.5 for c in wrong)
    assert sum(c >= 0.5 for c in right) > 0.8 * len(right)


def test_band_limited_level_matches_full_band_for_white_noise():
    noise = np.random.default_rng(1).normal(0, 1000, 16000)
    full, band = frame_db(noise), frame_db(noise, (300.0, 3400.0))
    # 300-3400 Hz is about 39% of white noise's power: about 4 dB down.
    assert abs(np.median(full - band) - 4.1) < 1.0


def test_word_measurements_skip_the_lattices_empty_nodes():
    # pocketsphinx puts zero-width "(NULL)" nodes in a word segmentation; they are not words
    # and must not pull the worst word's probability or fit down.
    from types import SimpleNamespace as Seg

    from companion.listen.sphinx import _agreement_features

    words = [Seg(word="five", start_frame=10, end_frame=40, prob=0.9, ascore=0.5),
             Seg(word="(NULL)", start_frame=41, end_frame=41, prob=0.01, ascore=1e-9),
             Seg(word="fives", start_frame=42, end_frame=80, prob=0.8, ascore=0.5)]
    phones = [Seg(word="F", start_frame=10, end_frame=80, prob=1.0, ascore=0.5)]
    lookup = {"five": "F AY V", "fives": "F AY V Z"}.get
    with_null = _agreement_features(words, phones, lookup)
    without = _agreement_features([words[0], words[2]], phones, lookup)
    assert with_null == without
    assert with_null["word_prob_min"] == 0.8


def test_the_benchmark_scores_a_call_by_the_referees_own_rule():
    from companion.bench.speech import acted_on, summarise
    from companion.calls import parse_call
    from companion.referee import Hearing, RefereeSettings

    rule = RefereeSettings()
    bid, dudo, status = parse_call("three fours"), parse_call("dudo"), parse_call("status")
    assert [rule.hearing(bid, c) for c in (0.1, 0.3, 0.6, 0.8)] == [
        Hearing.IGNORE, Hearing.SAY_AGAIN, Hearing.ASK, Hearing.APPLY]
    assert rule.hearing(dudo, 0.15) is Hearing.ASK  # a faint dudo is asked about
    assert rule.hearing(status, 0.15) is Hearing.APPLY  # a question is simply answered
    assert rule.hearing(dudo, 0.05) is rule.hearing(status, 0.05) is Hearing.IGNORE
    count = parse_call("twenty eight")
    assert [rule.hearing(count, c) for c in (0.1, 0.3, 0.6, 0.95)] == [
        Hearing.IGNORE, Hearing.SAY_AGAIN, Hearing.ASK, Hearing.ASK]  # a count is always read back
    texts = {"three fours": bid.to_json(), "dudo": dudo.to_json(), "status": status.to_json(), "": None}

    def row(text, truth, conf):
        return {"condition": "clean", "text": text, "call": texts[text], "truth": texts[truth],
                "confidence": conf, "cpu": 0.1, "audio": 1.0, "endpoint_delay": 0.1, "finish": 0.01}

    assert not acted_on(row("three fours", "three fours", 0.15), 0.5)
    assert acted_on(row("dudo", "dudo", 0.15), 0.5) and acted_on(row("status", "status", 0.15), 0.5)
    assert acted_on(row("three fours", "three fours", 0.45), 0.4)  # the benchmark's own line
    rows = [row("three fours", "three fours", 0.9), row("dudo", "dudo", 0.15),
            row("three fours", "three fours", 0.3), row("dudo", "three fours", 0.8),
            row("three fours", "", 0.3), row("", "", 0.0)]
    s = summarise(rows, 0.5)["clean"]
    assert s["accuracy"] == 2 / 4 and s["raw_accuracy"] == 3 / 4
    assert s["silent_errors"] == s["silent_unconfirmed"] == 1 / 4
    assert s["say_again"] == 1 / 4 and s["chatter_accepted"] == 0 and s["chatter_answered"] == 1 / 2
