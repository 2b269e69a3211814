"""`companion bench talk`: its summary line and its refusal without the held-out recordings."""

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT))  # benchmarks/ sits beside the package

from benchmarks import talk  # noqa: E402


def row(right: int, wrong: int, babble: int) -> dict:
    return {"calls": 10, "own": 10, "split": 0, "right": right, "wrong": wrong, "babble": babble}


def test_the_summary_gives_each_level_clean_first_the_worst_wrong_share_and_the_talk_heard():
    line = talk.summary_line({12: row(5, 2, 3), None: row(9, 0, 0), 24: row(8, 1, 2)})
    assert "acted on right: clean 90.0%, 24 dB 80.0%, 12 dB 50.0%;" in line
    assert "wrong at most 20.0% (12 dB)" in line and "heard as 5 calls" in line
    assert "wrong at most 0.0% (clean)" in talk.summary_line({None: row(9, 0, 0)})


def test_without_the_held_out_speaker_s_recordings_it_says_so(tmp_path, capsys):
    assert talk.main(["--real", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "no recordings of the held-out speaker" in capsys.readouterr().err
