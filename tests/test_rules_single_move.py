"""The one-move legality test and the quick any-legal-move test agree with full generation.

``Board.is_legal`` and the mate/stalemate tests no longer generate the move list; this checks
them against ``generate_legal`` on every move of the own pieces (with and without a
promotion letter) over positions of seeded random games and the classic perft positions.
"""

from __future__ import annotations

import random

from runner.rules import Board
from runner.rules.move import Move
from runner.rules.movegen import generate_legal, has_legal_move, move_legality
from runner.rules.squares import KING, QUEEN

FENS = [
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "6k1/5ppp/8/8/8/8/5PPP/3r2K1 w - - 0 1",  # mated
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",  # stalemated
    "4k3/8/8/2KPp2r/8/8/8/8 w - e6 0 2",  # en passant would expose the king
]


def _positions() -> list[Board]:
    """Positions after every ply of a few seeded random games, plus the fixed ones."""
    rng = random.Random(17)
    boards = [Board(fen) for fen in FENS]
    for _ in range(3):
        board = Board()
        while len(board.move_stack) < 120 and board.outcome() is None:
            board.push(rng.choice(list(board.legal_moves)))
            boards.append(board.copy(stack=False))
    return boards


def test_single_move_legality_matches_generation() -> None:
    """Every decided answer equals membership in the generated list; few are left undecided."""
    undecided = checked = 0
    for board in _positions():
        legal = set(generate_legal(board))
        assert has_legal_move(board) == bool(legal), board.fen()
        own = board.occupied_co[board.turn]
        for from_square in range(64):
            if not own >> from_square & 1:
                continue
            for to_square in range(64):
                if to_square == from_square:
                    continue
                for promotion in (None, QUEEN, KING):
                    move = Move(from_square, to_square, promotion)
                    answer = move_legality(board, move)
                    checked += 1
                    if answer is None:
                        undecided += 1
                        continue
                    assert answer == (move in legal), (board.fen(), move.uci())
                    assert board.is_legal(move) == answer, (board.fen(), move.uci())
    assert checked > 50_000
    assert undecided < checked // 10, (undecided, checked)  # king jumps: castling or nonsense
