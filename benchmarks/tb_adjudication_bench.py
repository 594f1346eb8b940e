"""The runner's CPU per ply with tablebase adjudication off and on.

The games are ``ply_bench``'s: seeded random games played out by two in-process CECP doubles
(no processes, no pipes), so what is timed is the game loop, the referee, the CECP client
and, with the tables on, the check after each move and the probes. Random games shed their
pieces quickly, so many of their positions fall in the tables' range: a harsh case.

Three settings, interleaved repeat by repeat:

- ``off``: no tables;
- ``probe``: the tables on but no result allowed to end a game (fastchess's -tbadjudicate
  with nothing chosen), so the games are the same plies as ``off`` and every position the
  rule would judge is probed: the whole cost of the check and the probes per ply;
- ``on``: the tables end games as they do in a tournament (games are shorter).

    python benchmarks/tb_adjudication_bench.py [--tables ../shared/data/syzygy] [--games 40]
        [--repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
from pathlib import Path

from ply_bench import _games, _Script

from runner.game.adjudication import AdjudicationRules
from runner.rules import STARTING_FEN, Board
from runner.tablebase import Tablebase

_DEFAULT_TABLES = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "syzygy"


def _probed_positions(count: int, largest: int) -> tuple[int, int]:
    """(positions the rule probes, all positions) in the scripted games."""
    probed = total = 0
    for moves in _Script(count).games:
        board = Board(STARTING_FEN)
        for move in moves:
            board.push_uci(move)
            total += 1
            if (not board.halfmove_clock and not board.castling_rights
                    and board.occupied.bit_count() <= largest):
                probed += 1
    return probed, total


def main() -> None:
    """Print the CPU per ply of each setting, median of the repeats, with the load average."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=Path, default=_DEFAULT_TABLES)
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if not args.tables.is_dir():
        raise SystemExit(f"no Syzygy tables at {args.tables} (give --tables DIR)")
    tables = (str(args.tables),)
    with Tablebase(tables) as opened:
        largest = opened.max_pieces
    settings = {
        "off": AdjudicationRules(),
        "probe": AdjudicationRules(tablebases=tables, tb_wins=False, tb_draws=False),
        "on": AdjudicationRules(tablebases=tables),
    }
    asyncio.run(_games(2, settings["probe"]))  # warm: imports, the tables' first mappings
    per_ply: dict[str, list[float]] = {name: [] for name in settings}
    plies_of: dict[str, int] = {}
    loads = []
    for _ in range(args.repeats):
        for name, rules in settings.items():
            plies, spent = asyncio.run(_games(args.games, rules))
            per_ply[name].append(spent / plies * 1e6)
            plies_of[name] = plies
        loads.append(os.getloadavg()[0])
    probed, total = _probed_positions(args.games, largest)
    print(f"{args.games} scripted games, tables up to {largest} pieces in {args.tables}; "
          f"{probed} of {total} positions probed with 'probe'")
    for name in settings:
        print(f"{name:>5}: {plies_of[name]:6d} plies, median {statistics.median(per_ply[name]):7.1f}"
              f" us/ply (runs: {', '.join(f'{v:.1f}' for v in per_ply[name])})")
    print(f"load average (1 min) during the runs: {min(loads):.2f}..{max(loads):.2f}")


if __name__ == "__main__":
    main()
