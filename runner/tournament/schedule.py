"""One game of a schedule (`ScheduledGame`), apart from the schedules that make them.

`runner.tournament.pairing` (the runner's own game pairs, re-exported there) and
`runner.tournament.cutechess` (cutechess-cli's order) both build these; keeping the type here
lets the two import it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from runner.store import JobKey

__all__ = ["ScheduledGame"]


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One entry of the schedule: who has which color, which opening, where it sits."""

    index: int
    """Position in the schedule (0-based), unique in a tournament: the resume key."""
    round: int
    """Round number, 1-based."""
    pair: int
    """Game-pair number in the whole tournament (0-based); also the opening index."""
    game_in_pair: int
    """0 for the pair's first game, 1 for the color-swapped second game."""
    white: str
    black: str
    encounter: int
    """Which engine pairing of the round (0-based)."""

    @property
    def opening_index(self) -> int:
        """Which opening the cursor serves for this game (both games of a pair share it)."""
        return self.pair

    @property
    def engines(self) -> tuple[str, str]:
        """The two engines, White first."""
        return (self.white, self.black)

    @property
    def key(self) -> JobKey:
        """The game's place in the schedule as the store keeps it."""
        return JobKey(self.index, self.round, self.pair, self.game_in_pair, self.white,
                      self.black, self.opening_index)
