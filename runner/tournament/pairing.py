"""Pairings: match, gauntlet and round-robin turned into a flat, resumable list of scheduled games.

Pure and deterministic: no I/O, no clocks. Every opening is played as a game pair by the same
two engines with colors swapped, one game after the other, so games ``2k`` and ``2k+1`` are
the two games of pair ``k`` and share opening ``k`` (the ``k``-th opening the book cursor
serves). A game's `index` is its key: a resumed tournament skips the indices already stored.
An entry says who plays whom where in the schedule; the worker's `GameJob` (runner.game.job)
is built from it by the tournament.

Order: round by round; inside a round, encounter by encounter (round-robin encounters follow
the circle method, so consecutive encounters involve different engines where possible);
inside an encounter, ``games / 2`` pairs. The engine that takes White in a pair's first game
alternates from pair to pair.

A configuration with another order style gets that style's schedule instead
(runner.tournament.styles): the same `Schedule` interface in another order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runner.config.model import TournamentConfig, TournamentFormat
from runner.tournament.schedule import IndexedSchedule, Schedule, ScheduledGame
from runner.tournament.styles import OrderImplementation, given

__all__ = ["Pairing", "Schedule", "ScheduledGame", "gauntlet", "match", "pairing_for",
           "round_robin"]


@dataclass(frozen=True)
class Pairing(IndexedSchedule):
    """A schedule: the encounters of one round, repeated `rounds` times, `games` games each."""

    encounters: tuple[tuple[str, str], ...]
    rounds: int = 1
    games: int = 2
    max_games: int | None = None
    """Stop after this many games (rounded down to whole pairs), e.g. an SPRT's limit."""

    def __post_init__(self) -> None:
        if self.rounds < 1:
            raise ValueError(f"rounds must be at least 1, not {self.rounds}")
        if self.games < 2 or self.games % 2:
            raise ValueError(f"games per encounter must be even and at least 2, not {self.games}")
        if not self.encounters:
            raise ValueError("a pairing needs at least one encounter")
        for first, second in self.encounters:
            if first == second:
                raise ValueError(f"engine {first!r} cannot play itself in one encounter")
        if self.max_games is not None and self.max_games < 2:
            raise ValueError(f"max_games must be at least 2, not {self.max_games}")

    @property
    def per_round(self) -> int:
        """Games in one round."""
        return len(self.encounters) * self.games

    def total(self) -> int:
        """How many games the schedule holds."""
        full = self.rounds * self.per_round
        if self.max_games is None:
            return full
        return min(full, self.max_games - self.max_games % 2)

    def job(self, index: int) -> ScheduledGame:
        """The game at `index` (random access: an index is all a resume needs to keep)."""
        if not 0 <= index < self.total():
            raise IndexError(f"game {index} is outside the schedule (0..{self.total() - 1})")
        round_index, in_round = divmod(index, self.per_round)
        encounter, in_encounter = divmod(in_round, self.games)
        pair_in_encounter, game_in_pair = divmod(in_encounter, 2)
        first, second = self.encounters[encounter]
        if pair_in_encounter % 2:
            first, second = second, first
        white, black = (first, second) if game_in_pair == 0 else (second, first)
        return ScheduledGame(
            index=index, round=round_index + 1, pair=index // 2, game_in_pair=game_in_pair,
            white=white, black=black, encounter=encounter,
        )

    def pair_games(self, pair: int) -> tuple[int, ...]:
        """The indices of the two games of game pair `pair` (those in the schedule)."""
        return tuple(i for i in (2 * pair, 2 * pair + 1) if i < self.total())


def match(first: str, second: str, *, rounds: int = 1, games: int = 2,
          max_games: int | None = None) -> Pairing:
    """Two engines against each other."""
    return Pairing(((first, second),), rounds, games, max_games)


def gauntlet(challenger: str, opponents: Sequence[str], *, rounds: int = 1, games: int = 2,
             max_games: int | None = None) -> Pairing:
    """One engine against each of the others."""
    return Pairing(tuple((challenger, other) for other in opponents), rounds, games, max_games)


def round_robin(engines: Sequence[str], *, rounds: int = 1, games: int = 2,
                max_games: int | None = None) -> Pairing:
    """Every engine against every other, encounters ordered by the circle method."""
    return Pairing(_circle(list(engines)), rounds, games, max_games)


def _circle(engines: list[str]) -> tuple[tuple[str, str], ...]:
    """All pairs of `engines`, grouped in circle-method rounds (one engine sits out if odd)."""
    if len(engines) < 2:
        raise ValueError("a round-robin needs at least 2 engines")
    if len(set(engines)) != len(engines):
        raise ValueError("engine names must be unique")
    seats: list[str | None] = [*engines, None] if len(engines) % 2 else list(engines)
    size = len(seats)
    result: list[tuple[str, str]] = []
    for turn in range(size - 1):
        for slot in range(size // 2):
            home, away = seats[slot], seats[size - 1 - slot]
            if home is None or away is None:
                continue
            # Alternate who is listed first, so no engine always opens its pairs with White.
            result.append((home, away) if (turn + slot) % 2 == 0 else (away, home))
        seats = [seats[0], seats[-1], *seats[1:-1]]
    return tuple(result)


def pairing_for(config: TournamentConfig, style: OrderImplementation | None = None) -> Schedule:
    """The schedule a tournament configuration asks for: its order style's (`style`, the
    implementation the run was handed), or the runner's own game pairs."""
    names = [engine.name for engine in config.engines]
    max_games = config.sprt.maxgames if config.sprt is not None else None
    if (ordered := given(config, style)) is not None:
        return ordered.schedule(config, names, max_games)
    rounds, games = config.rounds, config.games
    if config.format is TournamentFormat.MATCH:
        if len(names) != 2:
            raise ValueError(f"a match needs exactly 2 engines, not {len(names)}")
        return match(names[0], names[1], rounds=rounds, games=games, max_games=max_games)
    if config.format is TournamentFormat.GAUNTLET:
        return gauntlet(names[0], names[1:], rounds=rounds, games=games, max_games=max_games)
    return round_robin(names, rounds=rounds, games=games, max_games=max_games)
