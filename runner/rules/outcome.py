"""How a game ends: the PGN result with its points, and the rules' termination reasons.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Result(enum.StrEnum):
    """A game's result as PGN writes it, with the points it gives each side.

    A `StrEnum`, so a member equals its PGN text (``Result.DRAW == "1/2-1/2"``) and is stored
    as that text.
    """

    # Hashed as the text it equals, so the hash agrees with ==, and in C (enum's own hashes
    # the member's name in Python, a call per dictionary lookup).
    __hash__ = str.__hash__

    WHITE_WINS = "1-0"
    BLACK_WINS = "0-1"
    DRAW = "1/2-1/2"
    UNFINISHED = "*"

    @classmethod
    def from_text(cls, text: str) -> Result:
        """The result a PGN result token names (surrounding spaces ignored)."""
        try:
            return cls(text.strip())
        except ValueError:
            raise ValueError(f"not a PGN result: {text!r} (1-0, 0-1, 1/2-1/2 or *)") from None

    @classmethod
    def from_white_points(cls, points: float) -> Result:
        """The finished result in which White scores `points` (1, 1/2 or 0)."""
        for result in (cls.WHITE_WINS, cls.DRAW, cls.BLACK_WINS):
            if result.white_points == points:
                return result
        raise ValueError(f"White cannot score {points!r} points in one game (1, 0.5 or 0)")

    @property
    def finished(self) -> bool:
        """Whether the result scores (every result but ``*``)."""
        return self is not Result.UNFINISHED

    @property
    def winner(self) -> bool | None:
        """The winning color (``True`` for White), ``None`` for a draw or an unfinished game."""
        if self is Result.WHITE_WINS:
            return True
        if self is Result.BLACK_WINS:
            return False
        return None

    @property
    def white_half_points(self) -> int | None:
        """White's score in half points (2, 1 or 0), ``None`` for an unfinished game."""
        return _WHITE_HALF_POINTS[self]

    @property
    def white_points(self) -> float | None:
        """White's points (1, 1/2 or 0), ``None`` for an unfinished game."""
        half = _WHITE_HALF_POINTS[self]
        return None if half is None else half / 2

    @property
    def black_points(self) -> float | None:
        """Black's points (1, 1/2 or 0), ``None`` for an unfinished game."""
        half = _WHITE_HALF_POINTS[self]
        return None if half is None else (2 - half) / 2

    def points(self, white: bool) -> float | None:
        """The points of one side (``white=True`` for White), ``None`` for an unfinished game."""
        return self.white_points if white else self.black_points


_WHITE_HALF_POINTS: dict[Result, int | None] = {
    Result.WHITE_WINS: 2, Result.DRAW: 1, Result.BLACK_WINS: 0, Result.UNFINISHED: None,
}


class Termination(enum.Enum):
    """Why the rules ended (or allow ending) the game."""

    __hash__ = object.__hash__  # identity, as members compare (see GameTermination)

    CHECKMATE = "checkmate"
    STALEMATE = "stalemate"
    INSUFFICIENT_MATERIAL = "insufficient_material"
    SEVENTYFIVE_MOVES = "seventyfive_moves"
    FIVEFOLD_REPETITION = "fivefold_repetition"
    FIFTY_MOVES = "fifty_moves"
    THREEFOLD_REPETITION = "threefold_repetition"


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a game by the rules: a termination and the winner (``None`` for a draw)."""

    termination: Termination
    winner: bool | None

    @property
    def result(self) -> Result:
        """The PGN result: ``1-0``, ``0-1`` or ``1/2-1/2``."""
        if self.winner is None:
            return Result.DRAW
        return Result.WHITE_WINS if self.winner else Result.BLACK_WINS
