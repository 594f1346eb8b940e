"""`GameTermination`: why a game ended, as the runner records it.

A module of its own with nothing heavy behind it: the command line offers these values as
``runner export --termination`` choices, and building the command line for every command
must not import the rules core and the game record (about 50 ms).
"""

from __future__ import annotations

import enum

__all__ = ["GameTermination"]


class GameTermination(enum.Enum):
    """Why a game ended, as the runner records it."""

    # Members are singletons compared by identity: hashed by identity too, in C, instead of
    # enum's hash of the name in Python (every game's tallies look terminations up by key).
    __hash__ = object.__hash__

    CHECKMATE = "checkmate"
    STALEMATE = "stalemate"
    INSUFFICIENT_MATERIAL = "insufficient material"
    THREEFOLD_REPETITION = "threefold repetition"
    FIVEFOLD_REPETITION = "fivefold repetition"
    FIFTY_MOVES = "fifty moves"
    SEVENTYFIVE_MOVES = "seventy-five moves"
    RESIGNATION = "resignation"
    DRAW_AGREEMENT = "draw agreement"
    ADJUDICATION = "adjudication"
    TABLEBASE = "tablebase"
    """Adjudicated by the Syzygy tables (kept apart from score adjudication in reports)."""
    MAX_MOVES = "max moves"
    TIME_FORFEIT = "time forfeit"
    ILLEGAL_MOVE = "illegal move"
    FALSE_CLAIM = "false claim"
    DISCONNECT = "disconnect"
    STALL = "stall"
    ERROR = "error"

    @property
    def pgn_tag(self) -> str:
        """The PGN ``Termination`` tag value for this end."""
        return _PGN_TERMINATION.get(self, "normal")


_PGN_TERMINATION = {
    GameTermination.ADJUDICATION: "adjudication",
    GameTermination.TABLEBASE: "adjudication",
    GameTermination.MAX_MOVES: "adjudication",
    GameTermination.TIME_FORFEIT: "time forfeit",
    GameTermination.ILLEGAL_MOVE: "rules infraction",
    GameTermination.FALSE_CLAIM: "rules infraction",
    GameTermination.DISCONNECT: "abandoned",
    GameTermination.STALL: "stalled connection",
    GameTermination.ERROR: "unterminated",
}
