"""The recap as a page: an HTML file with PNG charts (matplotlib, imported only here)."""

from __future__ import annotations

import html
import math
import os
from pathlib import Path
from typing import Sequence

from companion.errors import CompanionError
from companion.recap.summary import Recap, bid_words, face_name, outcome_words

INSTALL_PLOTTING = "pip install matplotlib"
# Okabe and Ito's colours, told apart with the commoner colour blindnesses too; each dot also
# carries its face, in ink that reads on its colour.
FACE_COLOURS = {1: "#000000", 2: "#e69f00", 3: "#56b4e9", 4: "#009e73", 5: "#cc79a7", 6: "#0072b2"}
FACE_INK = {1: "white", 2: "black", 3: "black", 4: "white", 5: "black", 6: "white"}
FACE_MARKS = {face: str(face) for face in FACE_COLOURS}


class RecapError(CompanionError):
    """The recap cannot be drawn or written; the message says what to do."""


def _pyplot():
    """matplotlib, drawing to files only; a plain line saying how to install it if it is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RecapError(f"the recap's charts need matplotlib: install it with {INSTALL_PLOTTING}") from None
    return plt


def _save(plt, fig, path: Path, keep_above: float = 0.0) -> None:
    """Lay the figure out (leaving `keep_above` inches at the top for a legend) and write it."""
    fig.tight_layout(rect=(0, 0, 1, 1 - keep_above / fig.get_figheight()))
    try:
        _write_whole(path, lambda part: fig.savefig(part, dpi=100, format="png"))
    finally:
        plt.close(fig)


def _write_whole(path: Path, write) -> None:
    """`write` a file beside `path`, then put it in its place: a full disk leaves the recap
    made before as it was, not a picture cut off."""
    part = path.with_name(f".{path.name}.part")
    try:
        write(part)
        os.replace(part, path)
    except BaseException:
        part.unlink(missing_ok=True)
        raise


def _bids_chart(plt, recap: Recap, path: Path) -> None:
    """One panel per round: each bid's count in the order made, its dot coloured by face and
    marked with it (colour alone fails a colour-blind reader), the legend at the top."""
    rounds = [r for r in recap.rounds if r.bids]
    columns = min(4, len(rounds))
    rows = math.ceil(len(rounds) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(max(7.2, 3.6 * columns), 2.8 * rows + 0.4), squeeze=False)
    for ax in axes.flat[len(rounds):]:
        ax.set_visible(False)
    for ax, r in zip(axes.flat, rounds):
        numbers, counts = range(1, len(r.bids) + 1), [b.count for b in r.bids]
        ax.plot(numbers, counts, color="#bbbbbb", zorder=1)
        ax.scatter(numbers, counts, c=[FACE_COLOURS[b.face] for b in r.bids], s=170, zorder=2)
        for n, b in zip(numbers, r.bids):
            ax.annotate(FACE_MARKS[b.face], (n, b.count), ha="center", va="center", fontsize=9,
                        fontweight="bold", color=FACE_INK[b.face], zorder=3)
        title = f"Round {r.number}" + (" (palifico)" if r.palifico else "")
        if r.challenge is not None and r.challenge.settled:
            title += f": {r.challenge.kind} by {r.challenge.caller}, {'right' if r.challenge.caller_right else 'wrong'}"
        elif r.challenge is not None:
            title += f": {r.challenge.kind} by {r.challenge.caller}, not counted"
        ax.set_title(title, fontsize=9)
        ax.set_xticks(list(numbers))
        ax.set_ylim(0, max(counts) + 1)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_xlabel("bid", fontsize=8)
        ax.set_ylabel("count", fontsize=8)
    handles = [plt.Line2D([], [], marker="o", linestyle="", color=FACE_COLOURS[f],
                          label=f"{FACE_MARKS[f]}: {face_name(f, recap.ace_word)}") for f in FACE_COLOURS]
    fig.legend(handles=handles, loc="upper center", ncol=6, fontsize=8, frameon=False)
    _save(plt, fig, path, keep_above=0.4)


def _dice_chart(plt, recap: Recap, path: Path) -> None:
    """Each player's dice after each round; a round still being played is "now"."""
    steps = range(len(recap.rounds) + 1)
    fig, ax = plt.subplots(figsize=(min(16.0, max(7.0, 0.28 * len(steps) + 2)), 3.5))
    # Players often hold the same dice: thinner lines and other markers drawn on top keep each seen.
    for n, player in enumerate(recap.players):
        ax.plot(steps, recap.dice_series(player), marker="os^Dv<>p*h"[n % 10], linewidth=max(1, 6 - 1.5 * n),
                markersize=max(4, 10 - 2 * n), alpha=0.8, label=player)
    labels = ["start"] + [str(r.number) if r.challenge is not None and r.challenge.settled else "now"
                          for r in recap.rounds]
    every = math.ceil(len(labels) / 40)  # a long game's labels would run together: every few, and the last
    shown = [i for i in steps if i % every == 0 or i == len(labels) - 1]
    ax.set_xticks(shown, [labels[i] for i in shown])
    ax.set_xlabel("after round")
    ax.set_ylabel("dice")
    ax.set_ylim(0, max(max(recap.dice_series(p)) for p in recap.players) + 0.5)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)  # beside, never over the lines
    _save(plt, fig, path)


def _success_chart(plt, recap: Recap, path: Path) -> None:
    """Per player: bids dudo'd and caught as bluffs, dudos and calzas called and right."""
    pairs = [("bids dudo'd", "bids_challenged", "bluffs_caught"), ("dudos", "dudos", "dudos_right"),
             ("calzas", "calzas", "calzas_right")]
    # bars across, one row a player: names side by side under the bars ran into each other
    fig, axes = plt.subplots(1, len(pairs), figsize=(10, 1.2 + 0.4 * len(recap.players)), squeeze=False,
                             sharey=True)
    places = range(len(recap.players))
    for ax, (title, total, part) in zip(axes.flat, pairs):
        totals = [getattr(s, total) for s in recap.stats]
        ax.barh(places, totals, color="#cccccc", label="all")
        ax.barh(places, [getattr(s, part) for s in recap.stats], color="#3969ac", label="bluff caught, or right")
        ax.set_yticks(list(places), list(recap.players), fontsize=8)
        ax.invert_yaxis()  # the first player at the top, as in the tables
        ax.set_xlim(0, max(1, *totals) * 1.05)  # none at all: an axis from 0 to 1, not -0.04 to 0.04
        ax.set_title(title, fontsize=9)
        ax.xaxis.get_major_locator().set_params(integer=True)
    # one legend for the three panels, above them: never over a bar
    fig.legend(*axes.flat[0].get_legend_handles_labels(), loc="upper center", ncol=2, fontsize=8, frameon=False)
    _save(plt, fig, path, keep_above=0.35)


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(cell))}</td>" for cell in row) + "</tr>\n"
                   for row in rows)
    return f'<div class="wide">\n<table>\n<tr>{head}</tr>\n{body}</table>\n</div>'  # a phone scrolls it, not the page


def render_html(recap: Recap, title: str, images: Sequence[str]) -> str:
    """The page: a summary, the charts (file names beside it) and the tables; names escaped."""
    ace = recap.ace_word
    played = len(recap.rounds)
    state = (f"{recap.winner} won after {played} round{'' if played == 1 else 's'}." if recap.winner is not None
             else f"Paused in round {recap.rounds[-1].number}.")
    dice_now = ", ".join(f"{p} {recap.final_dice[p]}" for p in recap.players)
    dice_when = "Dice at the end" if recap.winner is not None else "Dice now"
    rounds = [(r.number, r.opener, r.palifico or "", ", ".join(f"{b.player} {bid_words(b, ace)}" for b in r.bids))
              for r in recap.rounds]
    challenges = [(number, c.kind, c.caller, f"{bid_words(c.bid, ace)} by {c.bidder}",
                   "" if c.counted is None else c.counted, outcome_words(c))
                  for number, c in recap.challenges]
    stats = [(s.player, s.bids, s.bids_challenged, s.bluffs_caught, s.bids_held, s.dudos, s.dudos_right,
              s.calzas, s.calzas_right) for s in recap.stats]
    charts = "\n".join(f'<p><img src="{html.escape(name)}" alt="{html.escape(name.removesuffix(".png"))} chart"></p>'
                       for name in images)
    return f"""<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 70em; }} img {{ max-width: 100%; }}
table {{ border-collapse: collapse; margin-bottom: 1.5em; }} .wide {{ overflow-x: auto; }}
th, td {{ border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; }}
</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p>{html.escape(", ".join(recap.players))}; {html.escape(recap.rules_name)} rules. {html.escape(state)}
{dice_when}: {html.escape(dice_now)}.</p>
{charts}
<h2>Challenges</h2>
{_table(("round", "call", "caller", "bid", "counted", "outcome"), challenges) if challenges else "<p>No challenges yet.</p>"}
<h2>Players</h2>
{_table(("player", "bids", "bids dudo'd", "bluffs caught", "bids held", "dudos", "dudos right",
         "calzas", "calzas right"), stats)}
<h2>Rounds</h2>
{_table(("round", "opener", "palifico", "bids"), rounds)}
</body>
</html>
"""


def write_recap(recap: Recap, out_dir: Path, title: str) -> Path:
    """Draw the charts and write index.html beside them; returns the page's path. Nothing is
    written when matplotlib is missing; the page is written last, once its charts are."""
    plt = _pyplot()
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise RecapError(f"--out takes a folder for the page and its charts; {out_dir} is a file")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        images = []
        # names are printed as written: "$" in one is no formula (matplotlib's math text)
        with plt.rc_context({"text.parse_math": False}):
            if any(r.bids for r in recap.rounds):
                _bids_chart(plt, recap, out_dir / "bids.png")
                images.append("bids.png")
            _dice_chart(plt, recap, out_dir / "dice.png")
            _success_chart(plt, recap, out_dir / "success.png")
        images += ["dice.png", "success.png"]
        page = out_dir / "index.html"
        html = render_html(recap, title, images)
        _write_whole(page, lambda part: part.write_text(html, encoding="utf-8"))
    except OSError as exc:
        raise RecapError(f"cannot write the recap to {out_dir}: {exc.strerror or exc}") from None
    return page
