"""Perft: counting the leaves of the legal move tree, the standard check of a move generator.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

from runner.rules.board import Board
from runner.rules.move import Move


def perft(board: Board, depth: int, *, bulk: bool = True) -> int:
    """Number of leaf nodes ``depth`` plies below the position.

    With ``bulk=True`` the last ply is counted from the move list; with ``bulk=False`` every
    leaf is reached with ``push``/``pop`` (the figure benchmarks compare).
    """
    if depth <= 0:
        return 1
    moves = board._generate()
    if depth == 1 and bulk:
        return len(moves)
    total = 0
    # Methods called on the board, not through local bound methods: compiled, that is a
    # direct C call instead of a call through a Python object.
    if depth == 1:
        for move in moves:
            board.push(move)
            board.pop()
            total += 1
        return total
    for move in moves:
        board.push(move)
        total += perft(board, depth - 1, bulk=bulk)
        board.pop()
    return total


def perft_divide(board: Board, depth: int) -> list[tuple[Move, int]]:
    """Per-move leaf counts at ``depth`` (each root move and the count below it)."""
    result = []
    for move in list(board.legal_moves):
        board.push(move)
        result.append((move, perft(board, depth - 1)))
        board.pop()
    return result
