"""`companion bench vision`: how well and how fast the dice reader reads.

Metrics, per data set:
  per-die accuracy  ground-truth dice found AND read with the right face / all ground-truth dice
  face accuracy     right face / dice found (reading alone, detection misses left out)
  recall            ground-truth dice found
  FP/image          detections matching no die, per image
  exact counts      images whose six face counts are all exactly right
  reveal ok         images a reveal would settle (every die seen, all read at or above the
                    reveal's confidence line) with the right counts
  wrong accepted    of the images a reveal would settle, those with a wrong count: a challenge
                    decided wrongly without anyone being asked (the summary gives the worst
                    synthetic set and the real held-out photos)
  ms/frame          median reader time per 1280x720 frame on one core (the summary also gives
                    the median and p90 over every rendered frame, pictures of no dice included)
A die is found when a detection and its label are paired: each box's centre inside the other
box (10% margin), one to one, nearest first (counting needs the die, not its box's edges; a
detection's box runs larger than a label's, so a box-overlap rule would read far lower).
Synthetic scenes come in sets: dice alone; with cups, chips, coins, cards, buttons, a phone or
hands in view (objects that are not dice: their false dice are the FP/image column); and dice
of each finish (dark, transparent, marbled, metallic, coloured pips); and pictures of something
else entirely, no die in them (pages, screens, charts, diagrams, circuit boards: every die read
there is false; --no-dice DIR adds a folder of your own such photos). Real photos: the fixed
held-out split (never trained on) and all 200 (the rest were trained on). Every die is also
tallied by its body colour, measured from its pixels, for the per-colour table.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

# One core, as the target says. numpy's BLAS reads these when numpy is first imported, which
# `companion bench vision` does here; where numpy came earlier (a test importing this module)
# they change nothing, and no time is measured there.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks import out_problem  # noqa: E402
from companion.vision.types import DiceReading  # noqa: E402
from training.dice_photos import PHOTOS, Tally, labels_of, load_labels, match, real_split, score  # noqa: E402

# Synthetic sets: name, generate_scene options, and which --*-scenes option sets how many.
OBJECT_SEED_OFFSET, STYLE_SEED_OFFSET, PICTURE_SEED_OFFSET = 500, 700, 900  # other scenes than the dice-alone set
TARGETS = {"synthetic per-die": 0.995, "synthetic exact counts": 0.95, "real per-die": 0.99, "ms/frame": 100.0}


def _percentile(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def row(t: Tally) -> list[str]:
    """A tally as a line of the table under HEAD."""
    pct = lambda a, b: f"{100 * a / b:.2f}%" if b else "-"  # noqa: E731
    return [t.name, str(t.images), str(t.gt), pct(t.right, t.gt), pct(t.right, t.found),
            pct(t.found, t.gt), f"{t.fp / t.images:.3f}" if t.images else "-", pct(t.exact, t.images),
            pct(t.accepted - t.wrong_accepted, t.images), pct(t.wrong_accepted, t.accepted),
            pct(t.paco_right, t.paco_gt), f"{t.ms_median:.1f}" if t.ms else "-"]  # "-": a set of no images


HEAD = ["data", "images", "dice", "per-die", "face acc", "recall", "FP/image", "exact counts", "reveal ok",
        "wrong accepted", "Paco as 1", "ms/frame"]


def _draw_errors(img, reading, gt, title: str):
    from companion.vision.annotate import annotate

    out = img.copy()  # the misses and true faces first: annotate draws its banner above the frame
    matched = {j for _, j in match(reading.dice, gt)}
    for j, (face, (x, y, w, h), _) in enumerate(gt):
        if j not in matched:  # missed die: thick white box with the true face
            cv2.rectangle(out, (int(x), int(y)), (int(x + w), int(y + h)), (255, 255, 255), 3)
            cv2.putText(out, f"miss {face}", (int(x), int(y + h + 14)), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 2)
    for i, j in match(reading.dice, gt):
        if reading.dice[i].face != gt[j][0]:
            x, y, w, h = reading.dice[i].box
            cv2.putText(out, f"true {gt[j][0]}", (x, y + h + 14), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 255), 2)
    return annotate(out, reading, title)


def body_colour(img: np.ndarray, box) -> str:
    """A die's body colour in a word, from the median of its top (the pips cover far less than
    half of it): dark, white, grey, or the hue of a coloured die."""
    x, y, w, h = (int(round(v)) for v in box)
    x0, y0 = max(0, x + w // 6), max(0, y + h // 6)
    patch = img[y0:max(y0 + 1, y + h - h // 6), x0:max(x0 + 1, x + w - w // 6)]
    if patch.size == 0:
        return "unknown"
    lab = cv2.cvtColor(patch, cv2.COLOR_BGR2LAB).reshape(-1, 3).astype(np.float32)
    lightness, a, b = np.median(lab, axis=0) - [0, 128, 128]
    if lightness < 60:
        return "dark"
    if np.hypot(a, b) < 14:
        return "white" if lightness > 170 else "grey"
    hue = np.degrees(np.arctan2(b, a)) % 360  # Lab's hue angle: 0 red, 90 yellow, 180 green, 270 blue
    for name, upto in (("red", 50), ("orange/yellow", 100), ("green", 200), ("blue", 300), ("purple", 340)):
        if hue < upto:
            return name
    return "red"


class ColourTally(dict):
    """Per body colour: [dice, found and read right]."""

    def add(self, img: np.ndarray, reading, gt) -> None:
        right = {j for i, j in match(reading.dice, gt) if reading.dice[i].face == gt[j][0]}
        for j, (_, box, _) in enumerate(gt):
            counts = self.setdefault(body_colour(img, box), [0, 0])
            counts[0] += 1
            counts[1] += j in right


def _share(n: int, of: int) -> float | None:
    """n of `of` as a fraction; None when there was nothing to count (a set of no scenes)."""
    return n / of if of else None


def _figure(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def _pct(x: float | None, places: int = 1) -> str:
    return "-" if x is None else f"{100 * x:.{places}f}%"


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _read_scored(reader, tally: Tally, img: np.ndarray, gt: list):
    """Read one image on the clock and score it into `tally`: the reading and its errors."""
    t0 = time.perf_counter()
    r = reader.read(img)
    tally.ms.append((time.perf_counter() - t0) * 1000)
    return r, score(tally, r, gt)


def _no_dice_pictures(reader, count: int, seed: int, worst: list) -> Tally:
    """Synthetic pictures of something else (training.vision_pictures, seeds training never uses)."""
    from training.vision_pictures import generate_picture

    tally = Tally("pictures, no dice")
    for k in range(count):
        _score_no_dice(reader, tally, generate_picture(seed * 1000 + k), f"synthetic-picture-{seed * 1000 + k}", worst)
    return tally


def _no_dice_photos(reader, folder: pathlib.Path, worst: list) -> Tally:
    """Every file in `folder` that `companion see` would read: photos known to hold no dice."""
    from companion.vision.errors import ImageUnreadable
    from companion.vision.frames import read_frame

    tally = Tally(f"no dice: {folder.name}")
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        try:
            img = read_frame(path)
        except ImageUnreadable:  # not an image, or too small to show dice: nothing to score
            continue
        _score_no_dice(reader, tally, img, f"real-no-dice-{path.stem}", worst)
    return tally


def _score_no_dice(reader, tally: Tally, img: np.ndarray, name: str, worst: list) -> None:
    r, errs = _read_scored(reader, tally, img, [])
    if errs:
        worst.append((errs, name, _draw_errors(img, r, [], name)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="companion bench vision", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenes", type=int, default=200, help="synthetic 1280x720 scenes (default 200)")
    ap.add_argument("--object-scenes", type=int, default=400,
                    help="synthetic scenes with objects that are not dice in view (default 400: "
                         "false dice are rare, and 100 scenes showed half the rate 400 do)")
    ap.add_argument("--style-scenes", type=int, default=100,
                    help="synthetic scenes of each dice finish (default 100 each: with 30, the "
                         "marbled dice read 99.6%% where 100 other scenes read 98.9%%)")
    ap.add_argument("--pictures", type=int, default=100,
                    help="synthetic pictures with no dice in them (pages, screens, charts, diagrams, boards)")
    ap.add_argument("--no-dice", type=pathlib.Path, action="append", default=[],
                    help="a folder of photos with no dice in them (repeatable): each die read there is false")
    ap.add_argument("--seed", type=int, default=2024, help="first scene seed (training uses other seeds)")
    ap.add_argument("--real", type=pathlib.Path, default=PHOTOS, help="labelled photos folder")
    ap.add_argument("--no-real", action="store_true")
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path("bench-out"), help="worst cases go here")
    ap.add_argument("--worst", type=int, default=4, help="worst images to save per data set")
    ap.add_argument("--model", type=pathlib.Path, help="face model to bench (default: the shipped one)")
    ap.add_argument("--detector", type=pathlib.Path, help="dice detector to bench (default: the shipped one)")
    a = ap.parse_args(argv)

    cv2.setNumThreads(1)
    from companion.vision.detect import load_detector
    from companion.vision.errors import VisionError
    from companion.vision.model import load_model
    from companion.vision.reader import DiceReader
    from companion.vision.scenes import DICE_STYLES, generate_scene

    try:
        reader = DiceReader(model=load_model(a.model) if a.model is not None else None,
                            detector=load_detector(a.detector) if a.detector is not None else None)
    except VisionError as exc:
        print(f"companion: {exc}", file=sys.stderr)
        return 2
    unsaved = out_problem(a.out)
    if unsaved:
        print(f"companion: {unsaved}", file=sys.stderr)
        return 2
    tallies: list[Tally] = []
    worst: list[tuple[int, str, np.ndarray]] = []

    colours: dict[str, ColourTally] = {"synthetic": ColourTally(), "real held-out": ColourTally()}
    sets = [("synthetic", {}, a.scenes, 0),
            ("synthetic with objects", {"objects": 1.0}, a.object_scenes, OBJECT_SEED_OFFSET)]
    sets += [(f"dice: {style}", {"dice_style": style}, a.style_scenes, STYLE_SEED_OFFSET + 10 * i)
             for i, style in enumerate(DICE_STYLES) if style != "plain"]
    for name, options, count, offset in sets:
        tally = Tally(name)
        for k in range(count):
            seed = (a.seed + offset) * 1000 + k
            sc = generate_scene(seed, **options)
            gt = [(d.face, d.box, d.paco) for d in sc.dice]
            r, errs = _read_scored(reader, tally, sc.image, gt)
            colours["synthetic"].add(sc.image, r, gt)
            if errs:
                worst.append((errs, f"synthetic-{seed}", _draw_errors(sc.image, r, gt, f"{name}, seed {seed}")))
        tallies.append(tally)
    syn = tallies[0]
    no_dice = [_no_dice_pictures(reader, a.pictures, a.seed + PICTURE_SEED_OFFSET, worst)] if a.pictures else []
    no_dice += [_no_dice_photos(reader, folder, worst) for folder in a.no_dice]
    tallies += no_dice

    real_rows = []
    if not a.no_real and (a.real / "labels.jsonl").exists():
        recs = load_labels(a.real)
        _, held = real_split(recs)
        held_files = {r["file"] for r in held}
        t_held, t_all = Tally("real held-out"), Tally("real all")
        for rec in recs:
            gt = labels_of(rec)
            counted_in = [t_all, t_held] if rec["file"] in held_files else [t_all]
            img = cv2.imread(str(a.real / rec["file"]))
            if img is None:  # its dice count as missed, not as never there: scored as a reading of none
                print(f"(real photo {rec['file']} cannot be read: its dice count as missed)")
                for t in counted_in:
                    score(t, DiceReading(dice=()), gt)
                continue
            t0 = time.perf_counter()
            r = reader.read(img)
            ms = (time.perf_counter() - t0) * 1000
            for t in counted_in:
                t.ms.append(ms)
                errs = score(t, r, gt)
            if rec["file"] in held_files:
                colours["real held-out"].add(img, r, gt)
            if errs and rec["file"] in held_files:
                worst.append((errs, "real-" + pathlib.Path(rec["file"]).stem, _draw_errors(img, r, gt, rec["file"])))
        real_rows = [t_held, t_all]
        tallies += real_rows
    elif not a.no_real:
        print(f"(real photos not found at {a.real}: skipped)")

    print(_table([HEAD] + [row(t) for t in tallies]))
    print()
    print(_table([["dice by body colour", "dice", "per-die"]] + [
        [f"{where}: {colour}", str(n), f"{100 * right / n:.2f}%"]
        for where, tally in colours.items() for colour, (n, right) in sorted(tally.items())]))
    for old in a.out.glob("worst-*.png"):  # only this run's cases, never a stale one
        old.unlink()
    for kind in ("synthetic", "real"):
        cases = sorted((w for w in worst if w[1].startswith(kind)), key=lambda w: -w[0])[: a.worst]
        for n, (errs, name, pic) in enumerate(cases, 1):
            cv2.imwrite(str(a.out / f"worst-{kind}-{n}-{name}.png"), pic)
    with_objects = tallies[1]
    rendered_ms = [ms for t in tallies[:len(sets)] for ms in t.ms] + (no_dice[0].ms if a.pictures else [])
    summary = {
        "synthetic_per_die": _share(syn.right, syn.gt),
        "synthetic_exact_counts": _share(syn.exact, syn.images),
        "objects_false_dice_per_image": _share(with_objects.fp, with_objects.images),
        "objects_exact_counts": _share(with_objects.exact, with_objects.images),
        "styles_per_die": {t.name: _share(t.right, t.gt) for t in tallies[2:len(sets)]},
        "synthetic_wrong_accepted": _share(syn.wrong_accepted, syn.accepted),
        # the set where a reveal would most often settle a wrong count unasked
        "synthetic_wrong_accepted_worst": max(((_share(t.wrong_accepted, t.accepted), t.name)
                                               for t in tallies[:len(sets)] if t.accepted), default=(None, "")),
        "ms_per_frame": syn.ms_median if syn.ms else None,
        "ms_per_frame_every_median": _percentile(rendered_ms, 50),
        "ms_per_frame_every_p90": _percentile(rendered_ms, 90),
    }
    for t in no_dice:
        summary.setdefault("no_dice_false_dice_per_image", {})[t.name] = _share(t.fp, t.images)
    if real_rows:
        summary["real_heldout_per_die"] = _share(real_rows[0].right, real_rows[0].gt)
        summary["real_all_per_die"] = _share(real_rows[1].right, real_rows[1].gt)
        summary["real_all_wrong_accepted"] = _share(real_rows[1].wrong_accepted, real_rows[1].accepted)
        summary["real_heldout_wrong_accepted"] = _share(real_rows[0].wrong_accepted, real_rows[0].accepted)
    (a.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    line = (f"vision: synthetic per-die {_pct(summary['synthetic_per_die'], 2)} "
            f"exact counts {_pct(summary['synthetic_exact_counts'])}; with objects in view "
            f"{_figure(summary['objects_false_dice_per_image'], '.3f')} false dice/image, exact counts "
            f"{_pct(summary['objects_exact_counts'])}")
    if no_dice:
        line += f", {_figure(summary['no_dice_false_dice_per_image'][no_dice[0].name], '.3f')} in pictures of no dice"
    if real_rows:
        line += (f", real per-die {_pct(summary['real_heldout_per_die'], 2)} held-out / "
                 f"{_pct(summary['real_all_per_die'], 2)} all")
    worst_share, worst_set = summary["synthetic_wrong_accepted_worst"]
    worst_set = "every set" if not worst_share else worst_set
    line += f", wrong counts accepted up to {_pct(worst_share)} synthetic ({worst_set})"
    if real_rows:
        line += f" / {_pct(summary['real_heldout_wrong_accepted'])} real held-out"
    line += (f", {_figure(summary['ms_per_frame'], '.0f')} ms/frame median dice alone, "
             f"{_figure(summary['ms_per_frame_every_median'], '.0f')} median / "
             f"{_figure(summary['ms_per_frame_every_p90'], '.0f')} p90 over every rendered frame (1280x720, one core)")
    print(line)
    print(f"worst cases saved in {a.out}/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
