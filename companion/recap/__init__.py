"""A recap of a finished or paused game: its bids, challenges and dice, as a page to look back at.

The recap is read from the events that stand once the journal is replayed (the game's own
record, so a bid taken back is not in it), never from the raw lines. `recap_of` is pure: no
files and no plotting, so every figure can be checked against the events. `write_recap`
draws the charts with matplotlib (a dependency, imported only there, so a game starts without
it); where it cannot be loaded, one plain line says how to install it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from companion.recap.page import INSTALL_PLOTTING, RecapError, render_html, write_recap
from companion.recap.summary import Challenge, PlayerStats, Recap, RecapBid, Round, read_recap, recap_of

__all__ = ["INSTALL_PLOTTING", "Challenge", "PlayerStats", "Recap", "RecapBid", "RecapError", "Round",
           "default_out_dir", "read_recap", "recap_journal", "recap_of", "render_html", "write_recap"]


def default_out_dir(journal_path: Path) -> Path:
    """`game.jsonl` -> `game-recap/`; a copy kept aside, `game.jsonl.game-1`, -> `game-game-1-recap/`."""
    journal_path = Path(journal_path)
    return journal_path.with_name(f"{_game_name(journal_path)}-recap")


def _game_name(journal_path: Path) -> str:
    """`game` for `game.jsonl`, `game-game-1` for a copy kept aside (`game.jsonl.game-1`)."""
    name = journal_path.name
    return name.replace(".jsonl.", "-") if ".jsonl." in name else journal_path.stem


def add_recap_arguments(parser) -> None:
    parser.add_argument("journal", metavar="JOURNAL", nargs="?", default="",
                        help="the game's journal (.jsonl) or session name, as --resume takes (default: the game played last)")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="where to write it (default: JOURNAL's name + -recap, beside it)")


def run_recap(args) -> int:
    """`companion recap [JOURNAL] [--out DIR]`: a path, a session name, or the game played last."""
    from companion.journal import find_session

    return recap_journal(find_session(args.journal or None), args.out)


def recap_journal(journal_path: Path, out_dir: Path | None = None) -> int:
    """Write the page of one journal and say where it is."""
    journal_path = Path(journal_path)
    recap, torn = read_recap(journal_path)
    page = write_recap(recap, Path(out_dir) if out_dir else default_out_dir(journal_path),
                       f"Perudo recap: {_game_name(journal_path)}")
    if torn:
        print("companion: the journal's last line was cut off mid-write; the recap leaves it out", file=sys.stderr)
    print(page)
    return 0
