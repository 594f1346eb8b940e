"""Engines that never move: a run whose engine lost every game before its first move stops.

Such games (an engine that does not speak the protocol it is spoken to in, a command that
starts something else) are time forfeits, stalls or disconnections that the standings would
count as ordinary losses: twenty of them read as "+240 Elo" with exit status 0. After the second such
game an engine lost without having moved in any game of the run, the run stops and says why.
"""

from __future__ import annotations

from collections import Counter

from runner.game.record import GameRecord
from runner.game.termination import GameTermination

__all__ = ["SILENT_GAMES", "Silence", "sides_that_moved"]

SILENT_GAMES = 2
"""Games an engine lost before its first move (and none with a move) that stop the run."""

_NOT_PLAYING = frozenset({GameTermination.TIME_FORFEIT, GameTermination.DISCONNECT,
                          GameTermination.STALL, GameTermination.ERROR})
"""Ends that say the engine is not playing at all; a false claim, an illegal move or a
resignation at its first move are its own play, told in its game's result."""


def sides_that_moved(record: GameRecord) -> tuple[bool, bool]:
    """Whether white's and black's engine each made a move of its own (book moves are not)."""
    own = sum(1 for move in record.moves if not move.book)
    book = len(record.moves) - own
    fen = record.spec.start_fen
    white_starts = fen is None or fen.split()[1:2] != ["b"]
    # The engine to move after the book moves moved if any engine did; the other if two did.
    white_first = white_starts == (book % 2 == 0)
    first, second = own >= 1, own >= 2
    return (first, second) if white_first else (second, first)


class Silence:
    """Per engine, the games of this run it moved in and those it lost before its first move."""

    def __init__(self) -> None:
        self.moved: Counter[str] = Counter()
        self.silent: Counter[str] = Counter()

    def add(self, record: GameRecord) -> str | None:
        """Count a finished game; the line that stops the run when an engine never moves."""
        losers = {"1-0": (record.black,), "0-1": (record.white,)}.get(record.result, ())
        if record.termination not in _NOT_PLAYING:
            losers = ()
        for name, moved in zip((record.white, record.black), sides_that_moved(record), strict=True):
            if moved:
                self.moved[name] += 1
            elif name in losers:  # its opponent, waiting for a move, is not to blame
                self.silent[name] += 1
        for name in (record.white, record.black):
            if not self.moved[name] and self.silent[name] >= SILENT_GAMES:
                return (f"engine {name!r} lost {self.silent[name]} games without making a "
                        f"move (the last: {record.reason}) and moved in none: the scores would "
                        "mean nothing, so the run stops; check its command and its protocol "
                        "(proto=uci or proto=cecp) with 'runner engine check'")
        return None
