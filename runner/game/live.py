"""A game watched as it is played: each move with the position after it and both clocks.

The game loop's ``on_move`` hook gives the move record and the board; `MoveWatch` adds what a
live board needs (the position as FEN, the clocks after the move, counted by the same `Clock`
the game loop runs) and hands a `LiveMove` on. Only watchers pay for it: a run nobody
watches passes no hook.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from runner.clock import Clock
from runner.game.record import GameSpec
from runner.rules import Board
from runner.types import MoveRecord

__all__ = ["LiveMove", "MoveWatch"]


@dataclass(frozen=True)
class LiveMove:
    """One move as it was played: its record, the position after it, both clocks."""

    ply: int
    """Plies played from the game's start position, this one and the opening's included."""
    move: MoveRecord
    fen: str
    """The position after the move."""
    white_clock: float | None
    """Seconds left on White's clock after the move (None: no clock)."""
    black_clock: float | None


class MoveWatch:
    """The game loop's ``on_move`` hook that reports every move as a `LiveMove`."""

    def __init__(self, spec: GameSpec, report: Callable[[LiveMove], None]) -> None:
        """`report` is called once per move, in the game's task; it must not block."""
        self._clocks = {True: Clock(spec.white_tc, spec.clock_head_start),
                        False: Clock(spec.black_tc, spec.clock_head_start)}
        self._report = report

    def __call__(self, played: MoveRecord, board: Board) -> None:
        """Charge the mover's clock and report the move."""
        mover = not board.turn  # the board is after the move
        self._clocks[mover].spend(max(played.time or 0.0, 0.0))
        self._report(LiveMove(
            ply=len(board.move_stack), move=played, fen=board.fen(),
            white_clock=self._clocks[True].remaining, black_clock=self._clocks[False].remaining,
        ))
