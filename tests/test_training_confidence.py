"""Fitting the recogniser's confidence (training/confidence.py): which networks it is fitted on."""

from __future__ import annotations

import sys

import pytest

from training import confidence


def test_a_confidence_is_fitted_without_the_families_left_out_and_never_over_the_shipped_one(tmp_path, monkeypatch):
    for family in ("espeak", "festival", "kokoro"):
        (tmp_path / f"{family}.npz").write_bytes(b"")
    assert [p.stem for p in confidence.networks_to_fit(tmp_path, ["festival"])] == ["espeak", "kokoro"]
    assert len(confidence.networks_to_fit(tmp_path, [])) == 3
    with pytest.raises(SystemExit, match="Festival: no such family"):
        confidence.networks_to_fit(tmp_path, ["Festival"])
    # Left out, it must be written somewhere other than the shipped confidence.
    monkeypatch.setattr(sys, "argv", ["confidence", "--models", str(tmp_path), "--leave-out", "festival"])
    with pytest.raises(SystemExit) as stopped:
        confidence.main()
    assert stopped.value.code == 2
