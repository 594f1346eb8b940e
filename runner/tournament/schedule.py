"""A schedule's interface (`Schedule`) and its entries (`ScheduledGame`), apart from the
schedules that make them.

`runner.tournament.pairing` (the runner's own game pairs, re-exported there) and the other
order styles (runner.tournament.styles: their implementations live with the drop-ins that
need them) all build these; keeping the types here lets them import these without importing
each other.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from runner.store import JobKey

__all__ = ["IndexedSchedule", "Schedule", "ScheduledGame"]


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


class Schedule(Protocol):
    """Every game a tournament plays, in order, with random access by index: what the run,
    its resume and its reports ask of a schedule, whichever style made it."""

    @property
    def encounters(self) -> tuple[tuple[str, str], ...]:
        """The pairs of engines that meet, in the order their first game is played."""
        ...

    @property
    def per_round(self) -> int:
        """Games in one round (the PGN's round tag counts games inside it)."""
        ...

    def total(self) -> int:
        """How many games the schedule holds."""
        ...

    def job(self, index: int) -> ScheduledGame:
        """The game at `index`; IndexError outside the schedule."""
        ...

    def pair_games(self, pair: int) -> tuple[int, ...]:
        """The indices of the games that start from opening number `pair`."""
        ...

    def jobs(self, start: int = 0, skip: frozenset[int] | set[int] = frozenset(),
             ) -> Iterator[ScheduledGame]:
        """Games in schedule order from `start`, leaving out the indices in `skip`."""
        ...

    def __iter__(self) -> Iterator[ScheduledGame]:
        """Every game, in schedule order."""
        ...

    def __len__(self) -> int:
        """How many games the schedule holds."""
        ...


class IndexedSchedule(abc.ABC):
    """The walk over a schedule that computes each game from its index: `jobs`, iteration and
    length from `total` and `job` (the runner's pairs and fastchess's encounters share it; a
    schedule built as a list walks its list)."""

    @abc.abstractmethod
    def total(self) -> int:
        """How many games the schedule holds."""

    @abc.abstractmethod
    def job(self, index: int) -> ScheduledGame:
        """The game at `index`; IndexError outside the schedule."""

    def jobs(self, start: int = 0, skip: frozenset[int] | set[int] = frozenset(),
             ) -> Iterator[ScheduledGame]:
        """Games in schedule order from `start`, leaving out the indices in `skip`."""
        for index in range(start, self.total()):
            if index not in skip:
                yield self.job(index)

    def __iter__(self) -> Iterator[ScheduledGame]:
        """Every game, in schedule order."""
        return self.jobs()

    def __len__(self) -> int:
        """How many games the schedule holds."""
        return self.total()
