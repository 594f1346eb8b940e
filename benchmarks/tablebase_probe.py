"""WDL probes per second: our Syzygy probe (runner.tablebase) beside python-chess's, same positions.

Random legal positions of every table in the directory (a third of them with a capture
available, en passant where the material allows it) are probed by both, each table opened
and warmed first (the files' first opening is not what a game pays per ply). Each repeat
times both on the same positions, alternating which goes first; the figures are the medians
over repeats, with the load average (the machine is shared: compare the ratio, not the
rates, across runs). DTZ probes are timed the same way on the tables that have DTZ files.

    python benchmarks/tablebase_probe.py [--tb DIR] [--per-table N] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import chess
import chess.syzygy

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from runner.rules import Board  # noqa: E402
from runner.tablebase import Tablebase  # noqa: E402

LETTER = {"K": chess.KING, "Q": chess.QUEEN, "R": chess.ROOK, "B": chess.BISHOP,
          "N": chess.KNIGHT, "P": chess.PAWN}


def positions(name: str, count: int, rng: random.Random) -> list[chess.Board]:
    """`count` random legal positions of a table's material, every third with a capture."""
    white, black = name.split("v")
    out: list[chess.Board] = []
    while len(out) < count:
        board = chess.Board(None)
        board.turn = rng.random() < 0.5
        used: set[int] = set()
        for part, color in ((white, chess.WHITE), (black, chess.BLACK)):
            for letter in part:
                while True:
                    sq = rng.randrange(64)
                    if sq not in used and not (letter == "P" and chess.square_rank(sq) in (0, 7)):
                        break
                used.add(sq)
                board.set_piece_at(sq, chess.Piece(LETTER[letter], color))
        if not board.is_valid():
            continue
        if len(out) % 3 == 0 and not any(board.generate_legal_captures()):
            continue
        out.append(board)
    return out


def rate(probe: Callable[[object], object], boards: list[object]) -> float:
    """Probes per second over `boards`."""
    started = time.perf_counter()
    for board in boards:
        probe(board)
    return len(boards) / (time.perf_counter() - started)


def main() -> None:
    """Measure and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tb", default=str(REPO.parent / "shared" / "data" / "syzygy"))
    parser.add_argument("--per-table", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    ours = Tablebase([args.tb])
    theirs = chess.syzygy.open_tablebase(args.tb)
    wdl_names = [n for n in ours.tables() if ours.has_wdl(n)]
    dtz_names = [n for n in wdl_names if ours.has_dtz(n)]
    peer_wdl = [b for n in wdl_names for b in positions(n, args.per_table, rng)]
    peer_dtz = [b for n in dtz_names for b in positions(n, max(1, args.per_table // 4), rng)]
    our_wdl = [Board(b.fen()) for b in peer_wdl]
    our_dtz = [Board(b.fen()) for b in peer_dtz]
    # Warm up: every file opened and parsed by both before timing, and the results checked.
    for mine, peer in zip(our_wdl, peer_wdl, strict=True):
        assert ours.probe_wdl(mine) == theirs.probe_wdl(peer), peer.fen()
    for mine, peer in zip(our_dtz, peer_dtz, strict=True):
        assert ours.probe_dtz(mine) == theirs.probe_dtz(peer), peer.fen()

    results: dict[str, list[float]] = {"wdl ours": [], "wdl peer": [], "dtz ours": [], "dtz peer": []}
    for i in range(args.repeat):
        order = [("ours", ours, our_wdl, our_dtz), ("peer", theirs, peer_wdl, peer_dtz)]
        if i % 2:
            order.reverse()
        for label, tb, wdl_boards, dtz_boards in order:
            results[f"wdl {label}"].append(rate(tb.probe_wdl, wdl_boards))
            results[f"dtz {label}"].append(rate(tb.probe_dtz, dtz_boards))
    load = os.getloadavg()
    print(f"{len(our_wdl)} WDL positions over {len(wdl_names)} tables, {len(our_dtz)} DTZ positions "
          f"over {len(dtz_names)} tables; median of {args.repeat} repeats; "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    for kind in ("wdl", "dtz"):
        mine = statistics.median(results[f"{kind} ours"])
        peer = statistics.median(results[f"{kind} peer"])
        ratios = [a / b for a, b in zip(results[f"{kind} ours"], results[f"{kind} peer"], strict=True)]
        print(f"{kind.upper()}: ours {mine:,.0f}/s, python-chess {peer:,.0f}/s, "
              f"ratio {mine / peer:.2f}x (per-repeat ratios {min(ratios):.2f}..{max(ratios):.2f})")


if __name__ == "__main__":
    main()
