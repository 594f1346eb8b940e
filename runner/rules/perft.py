"""Perft: counting the leaves of the legal move tree, the standard check of a move generator.

Compiled by mypyc (listed in `runner.compiled.COMPILED`). Calls between compiled functions,
in this module or across compiled modules, are direct C calls: patching a name here
(monkeypatch, mock.patch) is not seen by them, and its native classes take no attribute they
do not declare. Patch at a Python caller, or run the source with ``RUNNER_PURE=1``. In an
editable install an edit to this file makes the whole package run as source until
``pip install -e .`` compiles again (`runner --version` says which runs; docs/development.md).
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
