"""Benchmarks that sit beside the runtime package: `companion bench speech` runs
benchmarks.speech, `companion bench vision` benchmarks.vision.

They need the training tools (training/voices.py and training/augment.py make the speech,
training/dice_photos.py splits and scores the labelled dice photos), so they live beside
companion/, not inside it.
"""
from __future__ import annotations

import tempfile
from pathlib import Path


def out_problem(out: Path) -> str | None:
    """Why the results cannot be saved in `out` (made if missing), said before a run of
    minutes rather than after it; None when they can."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".write-check-"):
            pass
    except OSError as exc:
        return f"cannot save the results in {out}: {exc.strerror or exc}"
    return None
