"""`companion bench vision` end to end on a few scenes: its table, summary line and summary.json."""

import json
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT))  # benchmarks/ sits beside the package

from benchmarks import vision  # noqa: E402


def test_a_small_run_reports_each_set_and_a_summary(tmp_path, capsys):
    assert vision.main(["--scenes", "2", "--object-scenes", "1", "--style-scenes", "0", "--no-real",
                        "--pictures", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "synthetic with objects" in out and "vision: synthetic per-die" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert 0.0 <= summary["synthetic_per_die"] <= 1.0 and summary["ms_per_frame"] > 0
    assert summary["styles_per_die"] and set(summary["styles_per_die"].values()) == {None}  # none drawn
    assert "pictures, no dice" in out and "in pictures of no dice" in out
    assert summary["no_dice_false_dice_per_image"]["pictures, no dice"] >= 0.0


def test_a_folder_of_photos_with_no_dice_counts_every_die_read_there_as_false(tmp_path, capsys):
    import cv2
    import numpy as np

    from companion.vision.scenes import generate_scene

    folder = tmp_path / "kitchen"
    folder.mkdir()
    cv2.imwrite(str(folder / "wall.png"), np.full((480, 640, 3), 200, np.uint8))
    (folder / "notes.txt").write_text("not an image")  # skipped, not a crash
    # a photo that does hold dice, put there by mistake: every die read in it counts as false
    scene = generate_scene(5, n_dice=3)
    cv2.imwrite(str(folder / "dice.png"), scene.image)
    assert vision.main(["--scenes", "0", "--object-scenes", "0", "--style-scenes", "0", "--no-real",
                        "--pictures", "0", "--no-dice", str(folder), "--out", str(tmp_path / "out")]) == 0
    row = [l for l in capsys.readouterr().out.splitlines() if l.startswith("no dice: kitchen")][0].split()
    assert row[3:5] == ["2", "0"]  # two images, no true dice
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    from companion.vision.reader import DiceReader

    read_there = len(DiceReader().read(scene.image).dice)
    assert read_there >= 1  # the dice photo's dice are read, and each counts against the reader
    assert summary["no_dice_false_dice_per_image"]["no dice: kitchen"] == read_there / 2


def test_a_set_with_nothing_in_it_is_reported_as_nothing_measured(tmp_path, capsys):
    assert vision.main(["--scenes", "0", "--object-scenes", "0", "--style-scenes", "0", "--no-real",
                        "--pictures", "0", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out  # in the table's rows too, not only the summary line
    synthetic = next(l.split() for l in out.splitlines() if l.startswith("synthetic "))
    assert synthetic[1:3] == ["0", "0"] and set(synthetic[3:]) == {"-"}
    line = [l for l in out.splitlines() if l.startswith("vision:")][0]
    assert "0.00%" not in line
    assert "synthetic per-die - " in line and "- ms/frame" in line
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["synthetic_per_die"] is None and summary["ms_per_frame"] is None


def test_a_network_to_bench_that_is_missing_is_a_clear_message(tmp_path, capsys):
    for option in ("--model", "--detector"):
        assert vision.main(["--scenes", "1", "--object-scenes", "0", "--style-scenes", "0", "--no-real",
                            "--pictures", "0", "--out", str(tmp_path), option, str(tmp_path / "none.npz")]) == 2
        assert "none.npz is missing" in capsys.readouterr().err


def test_a_folder_the_results_cannot_go_in_is_said_before_the_run(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert vision.main(["--scenes", "50", "--out", str(tmp_path / "file" / "bench")]) == 2
    err = capsys.readouterr().err
    assert f"cannot save the results in {tmp_path / 'file' / 'bench'}: " in err and "worst" not in err


def test_the_benchmarks_are_the_checkouts_wherever_companion_runs_from(tmp_path):
    # they are not installed with the package: run from anywhere, `companion bench` uses the
    # repository's, and not another project's `benchmarks` that happens to be importable
    import os
    import subprocess

    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "__init__.py").write_text("raise SystemExit('another project')\n")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}")  # the other project first
    result = subprocess.run([sys.executable, "-c", "import sys; sys.path.remove(''); from companion.cli import main; "
                             "sys.exit(main(['bench', 'vision', '--help']))"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "--scenes" in result.stdout, result.stdout + result.stderr


def test_an_installed_companion_without_a_checkout_says_where_the_benchmarks_are(tmp_path, monkeypatch, capsys):
    from companion import cli

    site = tmp_path / "site-packages"
    monkeypatch.setattr(cli, "__file__", str(site / "companion" / "cli.py"))
    assert cli.main(["bench", "vision", "--help"]) == 2
    # nor is another project's `benchmarks` installed beside it taken for the checkout's
    (site / "benchmarks").mkdir(parents=True)
    (site / "benchmarks" / "__init__.py").write_text("")
    (site / "benchmarks" / "vision.py").write_text("def main(args):\n    raise SystemExit('another project')\n")
    assert cli.main(["bench", "vision", "--help"]) == 2  # (the checkout's, imported already, would print its help)
    err = capsys.readouterr().err
    assert "the benchmarks run from a checkout of the repository" in err and "Traceback" not in err
