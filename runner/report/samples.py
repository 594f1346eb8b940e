"""Training samples from stored games: one line per chosen position, ``FEN,score,result``.

Engine authors fit their evaluation to positions from played games, each with the score the
engine on move reported and how the game ended. The layout is c-chess-cli's ``-sample`` text
(its README, "Sampling"): the position's FEN, the mover's score in centipawns, and the result
from the side to move's view as 0 (lost), 1 (drawn) or 2 (won). A position is the one the
move was searched from, so the score is the mover's own (a ``whitepov`` engine's scores are
already turned to the mover's view when stored).

Left out always: the opening's (book) plies and any ply without a centipawn score (a mate
score, or none reported), and games without a result (``*``). Asked for: positions in check,
positions whose move played was a capture, and all but every Nth ply.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from runner.rules import STARTING_FEN, Board, Result

__all__ = ["SampleFilter", "SampledMove", "book_ply_count", "game_samples", "lines_of"]


class SampledMove(Protocol):
    """What a sample needs of a stored ply (runner.store's `StoredMove` is one)."""

    @property
    def uci(self) -> str:
        """The move in long algebraic notation."""
        ...

    @property
    def score_cp(self) -> int | None:
        """The mover's score in centipawns, None without one."""
        ...

    @property
    def mate(self) -> int | None:
        """The mover's mate score (moves to mate), None without one."""
        ...


@dataclass(frozen=True)
class SampleFilter:
    """Which positions of a game become samples."""

    every: int = 1
    """Only plies whose number (from the game's start position, 0 first) divides by this."""
    skip_check: bool = False
    """Leave out positions where the side to move is in check."""
    skip_captures: bool = False
    """Leave out positions whose move played was a capture (the score is not quiet)."""

    def __post_init__(self) -> None:
        if self.every < 1:
            raise ValueError(f"every must be a whole number of plies from 1, not {self.every}")


_POINTS = {Result.WHITE_WINS: (2, 0), Result.BLACK_WINS: (0, 2), Result.DRAW: (1, 1)}
"""(White's, Black's) result code, c-chess-cli's 0/1/2."""


def game_samples(start_fen: str | None, chess960: bool, book_plies: int,
                 moves: Iterable[SampledMove], result: Result,
                 choose: SampleFilter = SampleFilter()) -> Iterator[str]:
    """The sample lines of one game from `start_fen` (None: the standard start) whose first
    `book_plies` of `moves` are the opening's; none for an unfinished game. ValueError when
    a stored move is not legal where it stands (a damaged record)."""
    points = _POINTS.get(result)
    if points is None:
        return
    board = Board(start_fen or STARTING_FEN, chess960=chess960)
    for ply, stored in enumerate(moves):
        move = board.parse_uci(stored.uci)
        if (ply >= book_plies and stored.score_cp is not None and stored.mate is None
                and ply % choose.every == 0
                and not (choose.skip_check and board.is_check())
                and not (choose.skip_captures and board.is_capture(move))):
            code = points[0] if board.turn else points[1]
            yield f"{board.fen()},{stored.score_cp},{code}"
        board.push(move)


def book_ply_count(opening_moves: str | None) -> int:
    """How many plies a stored game's opening played (its moves, space-separated)."""
    return len(opening_moves.split()) if opening_moves else 0


def lines_of(games: Iterable[tuple[str | None, str | None, Result | None,
                                   Sequence[SampledMove]]],
             chess960: bool, choose: SampleFilter) -> Iterator[str]:
    """The sample lines of several stored games: (start FEN, opening moves, result, moves)."""
    for start_fen, opening_moves, result, moves in games:
        if result is None:
            continue
        yield from game_samples(start_fen, chess960, book_ply_count(opening_moves), moves,
                                result, choose)
