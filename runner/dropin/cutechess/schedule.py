"""cutechess-cli's schedule: its game order, colours, rounds and which games share an opening.

``runner-cutechess`` must play game N of a command line as cutechess-cli 1.5 plays its game
N. cutechess-cli does not plan its games up front: each time it starts one it asks the
tournament type for the next pair of players, the pair remembers (and, unless ``-noswap``,
flips) its colours from game to game, ``-reverse`` flips a pair when the players change, and
an opening is dealt anew or repeated by a counter that ``-repeat``, the opening policy and a
change of players reset. Nothing of it depends on results (knockout does, and is not here),
so `cutechess_pairing` runs that machine once, through every game, and keeps the outcome as
a schedule with the runner's `Schedule` interface (runner.tournament.schedule).

A game's ``pair`` is the number of the opening it starts from (the n-th the suite deals, from
0), its ``game_in_pair`` how many games before it repeated that opening.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from runner.config.model import PlayOrder
from runner.tournament.schedule import ScheduledGame

__all__ = ["CutechessPairing", "cutechess_pairing", "games_per_cycle"]

_FOREVER = 2**31 - 1
"""cutechess's INT_MAX repetitions (policies encounter and round repeat until reset)."""


class _Pair:
    """A TournamentPair: two players in their current colour order."""

    def __init__(self, first: int, second: int) -> None:
        self.first = first
        self.second = second

    def same_players(self, other: _Pair | None) -> bool:
        """Whether `other` is a pair of the same two players, in either order."""
        return other is not None and {other.first, other.second} == {self.first, self.second}

    def swap(self) -> None:
        """Exchange the colours."""
        self.first, self.second = self.second, self.first


def games_per_cycle(schedule: PlayOrder, players: int) -> int:
    """Encounters in one cycle of the tournament type (before the round multiplier)."""
    if schedule.tournament == "gauntlet":
        seeds = min(max(1, schedule.seeds), players - 1)
        return (players - seeds) * seeds
    return players * (players - 1) // 2


class _Pairer:
    """The tournament type's ``nextPair``: which players meet next, and the round."""

    def __init__(self, schedule: PlayOrder, players: int) -> None:
        self.kind = schedule.tournament
        self.players = players
        self.games = schedule.games
        self.round = 1
        self.current: _Pair | None = None
        self._pairs: dict[tuple[int, int], _Pair] = {}
        if self.kind == "round-robin":
            count = players + players % 2
            self.top = list(range(count // 2))
            self.bottom = list(range(count - 1, count // 2 - 1, -1))
            self.number = 0
        elif self.kind == "gauntlet":
            self.seeds = min(max(1, schedule.seeds), players - 1)
            self.opponent = self.seeds
            self.player = 0
        else:  # pyramid
            self.number = 0
            self.player = 1

    def pair(self, first: int, second: int) -> _Pair:
        """The one pair object of two players (created oriented as asked, then kept)."""
        for key in ((first, second), (second, first)):
            if key in self._pairs:
                return self._pairs[key]
        made = _Pair(first, second)
        self._pairs[(first, second)] = made
        return made

    def next(self, game_number: int) -> _Pair:
        """The pair of game `game_number` (0-based): the current one inside an encounter."""
        if game_number % self.games and self.current is not None:
            return self.current
        if self.kind == "round-robin":
            return self._round_robin()
        if self.kind == "gauntlet":
            if self.opponent >= self.players:
                self.opponent = self.seeds
                self.player += 1
                if self.player >= self.seeds:
                    self.player = 0
                    self.round += 1
            white, black = self.player, self.opponent
            self.opponent += 1
            return self.pair(white, black)
        if self.number >= self.player:
            self.number = 0
            self.round += 1
            self.player += 1
            if self.player >= self.players:
                self.player = 1
        white, black = self.player, self.number
        self.number += 1
        return self.pair(white, black)

    def _round_robin(self) -> _Pair:
        while True:
            if self.number >= len(self.top):
                self.number = 0
                self.round += 1
                self.top.insert(1, self.bottom.pop(0))
                self.bottom.append(self.top.pop())
            white, black = self.top[self.number], self.bottom[self.number]
            self.number += 1
            # The extra seat of an odd field is a bye: no game, the next pair is asked for.
            if white < self.players and black < self.players:
                return self.pair(white, black)


@dataclass(frozen=True)
class CutechessPairing:
    """A cutechess-cli schedule, computed in full: random access by game index."""

    games_list: tuple[ScheduledGame, ...]
    encounters: tuple[tuple[str, str], ...]
    rounds: int = 1
    games: int = 1
    max_games: int | None = None
    _by_pair: dict[int, tuple[int, ...]] = field(default_factory=dict, compare=False)

    @property
    def per_round(self) -> int:
        """Games in one cycle of the tournament type (cutechess's rounds may be shorter)."""
        return max(1, len(self.games_list) // max(1, self.rounds))

    def total(self) -> int:
        """How many games the schedule holds."""
        return len(self.games_list)

    def job(self, index: int) -> ScheduledGame:
        """The game at `index`."""
        if not 0 <= index < len(self.games_list):
            raise IndexError(f"game {index} is outside the schedule "
                             f"(0..{len(self.games_list) - 1})")
        return self.games_list[index]

    def pair_games(self, pair: int) -> tuple[int, ...]:
        """The indices of the games that start from opening number `pair`."""
        return self._by_pair.get(pair, ())

    def jobs(self, start: int = 0, skip: frozenset[int] | set[int] = frozenset(),
             ) -> Iterator[ScheduledGame]:
        """Games in schedule order from `start`, leaving out the indices in `skip`."""
        for game in self.games_list[start:]:
            if game.index not in skip:
                yield game

    def __iter__(self) -> Iterator[ScheduledGame]:
        return self.jobs()

    def __len__(self) -> int:
        return len(self.games_list)


def cutechess_pairing(schedule: PlayOrder, names: list[str],
                      max_games: int | None = None) -> CutechessPairing:
    """Every game cutechess-cli would start for `schedule` with players `names` (in the
    order of their ``-engine`` options), in its order."""
    players = len(names)
    if players < 2:
        raise ValueError("at least two engines are needed")
    if schedule.tournament not in ("round-robin", "gauntlet", "pyramid"):
        raise ValueError(f"no fixed schedule for tournament type {schedule.tournament!r}")
    final = games_per_cycle(schedule, players) * schedule.games * schedule.rounds
    if max_games is not None:
        final = min(final, max_games)
    repetitions = _FOREVER if schedule.policy in ("encounter", "round") else schedule.repeat
    pairer = _Pairer(schedule, players)
    games: list[ScheduledGame] = []
    encounters: dict[frozenset[int], tuple[int, tuple[str, str]]] = {}
    by_pair: dict[int, list[int]] = {}
    opening = -1
    counter = 0
    saved = False
    old_round = -1
    for number in range(final):
        pair = pairer.next(number)
        same = pair.same_players(pairer.current)
        if not same and schedule.reverse:
            pair.swap()
        if ((not same and players > 2 and schedule.policy != "round")
                or (pairer.round > old_round and schedule.policy == "round")):
            saved = False
            old_round = pairer.round
        if saved:
            counter += 1
        else:
            counter = 1
            opening += 1
        saved = counter < repetitions
        pairer.current = pair
        white, black = names[pair.first], names[pair.second]
        key = frozenset((pair.first, pair.second))
        if key not in encounters:
            encounters[key] = (len(encounters), (white, black))
        games.append(ScheduledGame(index=number, round=pairer.round, pair=opening,
                                   game_in_pair=counter - 1, white=white, black=black,
                                   encounter=encounters[key][0]))
        by_pair.setdefault(opening, []).append(number)
        if schedule.swap:
            pair.swap()
    return CutechessPairing(
        games_list=tuple(games), encounters=tuple(e for _, e in encounters.values()),
        rounds=schedule.rounds, games=schedule.games, max_games=max_games,
        _by_pair={k: tuple(v) for k, v in by_pair.items()})
