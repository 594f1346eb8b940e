"""Rules-core benchmark: our runner.rules against python-chess on the same inputs, in one run.

Prints, for each workload, the median of several repeats for both libraries and their ratio:
1. perft without bulk counting (push/pop at every node) on the classic positions: nodes/s;
2. the referee's work per ply over seeded random games: parse the coordinate move (which checks
   legality), write SAN, push, then decide the game end (outcome with draw claims: threefold and
   fifty-move included);
3. the game loop's arbiter workload per ply, as issue 17 states it and ``runner.game.play`` does
   it: parse the coordinate move (is_legal), SAN, push, outcome() without claims, then
   is_repetition(3) and can_claim_fifty_moves(); once with ``san`` then ``push`` (the issue's
   words), once with ``san_and_push`` (one push, as the game loop writes SAN; python-chess has
   the same method); then ours alone in one step, ``push_refereed``, as the loop does now.

Times are process CPU time (``time.process_time``), not wall time: on a shared machine the
scheduler's delays would otherwise land in the figures. The first line says whether the
compiled (mypyc) rules core ran; ``RUNNER_PURE=1`` measures the Python source.

Run: python benchmarks/rules_bench.py [--repeats N] [--games N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import chess

from runner import compiled
from runner.rules import Board, perft

POSITIONS = [
    ("start", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 4),
    ("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 3),
    ("position3", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 5),
    ("position4", "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 3),
    ("position5", "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 3),
    ("position6", "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 3),
]


def peer_perft(board: chess.Board, depth: int) -> int:
    """python-chess perft with push/pop at every node (the library ships none)."""
    if depth == 0:
        return 1
    total = 0
    for move in board.legal_moves:
        board.push(move)
        total += peer_perft(board, depth - 1)
        board.pop()
    return total


def timed(fn, repeats: int) -> tuple[float, object]:
    """Median CPU time of ``repeats`` calls, and the last result."""
    times = []
    result = None
    for _ in range(repeats):
        start = time.process_time()
        result = fn()
        times.append(time.process_time() - start)
    return statistics.median(times), result


def random_games(count: int, seed: int, max_plies: int) -> list[list[str]]:
    """Seeded random games as coordinate-move lists (generated before any timing)."""
    rng = random.Random(seed)
    games = []
    for _ in range(count):
        board = Board()
        moves = []
        while len(moves) < max_plies and board.outcome(claim_draw=True) is None:
            move = rng.choice(sorted(board.legal_moves, key=lambda m: m.uci()))
            moves.append(move.uci())
            board.push(move)
        games.append(moves)
    return games


def referee_ours(games: list[list[str]]) -> int:
    """Our arbiter's per-ply work over every game; returns plies handled."""
    plies = 0
    for moves in games:
        board = Board()
        for uci in moves:
            move = board.parse_uci(uci)
            board.san(move)
            board.push(move)
            board.outcome(claim_draw=True)
            plies += 1
    return plies


def referee_peer(games: list[list[str]]) -> int:
    """The same per-ply work with python-chess."""
    plies = 0
    for moves in games:
        board = chess.Board()
        for uci in moves:
            move = board.parse_uci(uci)
            board.san(move)
            board.push(move)
            board.outcome(claim_draw=True)
            plies += 1
    return plies


def arbiter(new_board: Callable[[], Any], games: list[list[str]], one_push: bool = False) -> int:
    """The game loop's per-ply checks on boards from `new_board` (ours or python-chess's: the
    two libraries share these method names); returns plies handled."""
    plies = 0
    for moves in games:
        board = new_board()
        for uci in moves:
            move = board.parse_uci(uci)
            if one_push:
                board.san_and_push(move)
            else:
                board.san(move)
                board.push(move)
            if board.outcome() is None:
                board.is_repetition(3)
                board.can_claim_fifty_moves()
            plies += 1
    return plies


def arbiter_one_step(games: list[list[str]]) -> int:
    """The game loop's per-ply checks as it makes them since issue 38: parse the coordinate
    move, then `Board.push_refereed` (SAN, push and the rules' end in one step; python-chess
    has no counterpart, so this one is ours alone); returns plies handled."""
    plies = 0
    for moves in games:
        board = Board()
        for uci in moves:
            board.push_refereed(board.parse_uci(uci))
            plies += 1
    return plies


def main() -> None:
    """Run both workloads and print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--max-plies", type=int, default=200)
    args = parser.parse_args()

    print(f"runner.rules: {compiled.describe()}")
    print(f"perft without bulk counting, median of {args.repeats} runs")
    print(f"{'position':<10} {'depth':>5} {'nodes':>9} {'ours n/s':>10} {'peer n/s':>10} {'ratio':>6}")
    ratios = []
    for name, fen, depth in POSITIONS:
        ours_t, nodes = timed(lambda f=fen, d=depth: perft(Board(f), d, bulk=False), args.repeats)
        peer_t, peer_nodes = timed(lambda f=fen, d=depth: peer_perft(chess.Board(f), d), args.repeats)
        assert nodes == peer_nodes, (name, nodes, peer_nodes)
        ratio = peer_t / ours_t
        ratios.append(ratio)
        print(f"{name:<10} {depth:>5} {nodes:>9} {nodes / ours_t:>10.0f} {nodes / peer_t:>10.0f}"
              f" {ratio:>5.2f}x")
    print(f"perft speed ratio (ours / python-chess), median over positions: {statistics.median(ratios):.2f}x"
          " (issue 30 target >= 5x)")

    games = random_games(args.games, seed=2026, max_plies=args.max_plies)
    ours_t, plies = timed(lambda: referee_ours(games), args.repeats)
    peer_t, peer_plies = timed(lambda: referee_peer(games), args.repeats)
    assert plies == peer_plies
    print(f"\nreferee work per ply over {args.games} seeded random games ({plies} plies), "
          f"median of {args.repeats} runs")
    print(f"ours {ours_t / plies * 1e6:.1f} us/ply, python-chess {peer_t / plies * 1e6:.1f} us/ply, "
          f"time ratio {ours_t / peer_t:.2f}x (issue 30 target <= 0.2x)")
    for one_push, words in ((False, "san, push"), (True, "san_and_push")):
        ours_t, plies = timed(lambda o=one_push: arbiter(Board, games, o), args.repeats)
        peer_t, peer_plies = timed(lambda o=one_push: arbiter(chess.Board, games, o), args.repeats)
        assert plies == peer_plies
        print(f"\nthe game loop's checks per ply (is_legal, {words}, outcome, is_repetition(3), "
              "can_claim_fifty_moves)")
        print(f"ours {ours_t / plies * 1e6:.1f} us/ply, python-chess {peer_t / plies * 1e6:.1f} "
              f"us/ply, time ratio {ours_t / peer_t:.2f}x (issue 30 target <= 0.2x)")
    ours_t, plies = timed(lambda: arbiter_one_step(games), args.repeats)
    print(f"\nthe same checks in one step (parse_uci, push_refereed): ours {ours_t / plies * 1e6:.1f}"
          " us/ply")


if __name__ == "__main__":
    main()
