"""`python -m engine [OPTIONS] bench [DEPTH]`: a fixed search over a fixed set of positions.

The node count depends only on the code (the search and the evaluation), not on the machine,
so it is the build's signature a test queue checks; the speed line is the machine's. The
lines are spelt as Stockfish spells its own bench, which is what test queues read.
"""

from __future__ import annotations

import sys
import time

from engine.config import EngineConfig
from engine.evaluate import evaluator_for
from engine.search import Searcher, SearchLimits
from runner.rules import Board

__all__ = ["BENCH_DEPTH", "BENCH_POSITIONS", "run_bench"]

BENCH_DEPTH = 3
"""The depth searched in each position unless the command line says otherwise."""

BENCH_POSITIONS = (
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1",
    "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
)
"""Opening, middlegame, tactical and endgame positions (the last one a back-rank mate)."""


def run_bench(depth: int = BENCH_DEPTH, version: str = "v2") -> tuple[int, float]:
    """Search every bench position to `depth` from empty tables; (nodes, seconds)."""
    nodes = 0
    start = time.monotonic()
    for fen in BENCH_POSITIONS:
        # A fresh searcher per position: the count must not depend on what came before.
        searcher = Searcher(evaluator_for(version))
        result = searcher.search(Board(fen), SearchLimits(depth=depth))
        nodes += result.nodes
    return nodes, time.monotonic() - start


def main(args: list[str], config: EngineConfig | None = None) -> int:
    """Print the bench's node count and speed for `config`'s evaluation; a bad depth exits 2
    with one line."""
    depth = BENCH_DEPTH
    if args:
        if len(args) > 1 or not args[0].isdecimal() or not 1 <= int(args[0]) <= 20:
            print(f"usage: python -m engine bench [DEPTH 1-20], not {' '.join(args)!r}",
                  file=sys.stderr)
            return 2
        depth = int(args[0])
    nodes, seconds = run_bench(depth, (config or EngineConfig()).version)
    print(f"Total time (ms) : {round(seconds * 1000)}")
    print(f"Nodes searched  : {nodes}")
    print(f"Nodes/second    : {round(nodes / seconds) if seconds > 0 else 0}")
    return 0
