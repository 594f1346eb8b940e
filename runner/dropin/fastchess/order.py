"""fastchess 1.8's order: its schedule and its opening deal: `OrderStyle.INDEX`.

fastchess numbers games encounter by encounter in the engines' index order (engine 0 against
1, 2, ..., then 1 against 2, ...), gives White to the first engine of an encounter in
odd-numbered games, and deals one opening per encounter from a book shuffled with
mt19937_64 (runner.dropin.fastchess.mt64), rotated by ``start`` and cut to ``rounds``
entries. runner-fastchess hands `INDEX_STYLE` to its runs; a stored tournament of this style
finds it again on resume through pyproject's entry point (runner.tournament.styles).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from runner.books.openings import Opening
from runner.config.model import OrderStyle, PlayOrder, TournamentConfig, TournamentFormat
from runner.dropin.fastchess.mt64 import FastchessShuffle
from runner.tournament.openings import RunnerDealer
from runner.tournament.schedule import IndexedSchedule, ScheduledGame
from runner.tournament.styles import OrderImplementation

__all__ = ["INDEX_STYLE", "FastchessDealer", "FastchessPairing", "fastchess_order",
           "fastchess_pairing"]


def fastchess_order(*, noswap: bool = False, reverse: bool = False, seeds: int = 1,
                    ) -> PlayOrder:
    """The order of fastchess's ``-noswap``, ``-reverse`` and ``-seeds``."""
    return PlayOrder(style=OrderStyle.INDEX, swap=not noswap, reverse=reverse, seeds=seeds)


@dataclass(frozen=True)
class FastchessPairing(IndexedSchedule):
    """fastchess 1.8's schedule: its game numbers, colours and one opening per encounter.

    Inside a round, encounters in engine index order (0-1, 0-2, ..., 1-2, ...; a gauntlet
    only those whose first engine is one of its seeds), ``games`` games each (1 or 2). Game
    number ``index + 1`` gives White to the encounter's first engine when it is odd (always
    without swapping), the other way round with ``reverse``. Every encounter played is a
    "pair" of its own: ``pair`` counts them through the whole run and picks the opening.
    """

    encounters: tuple[tuple[str, str], ...]
    rounds: int = 1
    games: int = 2
    """Games per encounter: 1 or 2."""
    max_games: int | None = None
    """Stop after this many games (cut to whole encounters), e.g. an SPRT's limit."""
    order: PlayOrder = field(default_factory=fastchess_order)

    def __post_init__(self) -> None:
        if self.rounds < 1:
            raise ValueError(f"rounds must be at least 1, not {self.rounds}")
        if self.games < 1:
            raise ValueError(f"games per encounter must be at least 1, not {self.games}")
        if not self.encounters:
            raise ValueError("a pairing needs at least one encounter")

    @property
    def per_round(self) -> int:
        """Games in one round."""
        return len(self.encounters) * self.games

    def total(self) -> int:
        """How many games the schedule holds (an SPRT's limit cut to whole encounters)."""
        full = self.rounds * self.per_round
        if self.max_games is None:
            return full
        return min(full, self.max_games - self.max_games % self.games)

    def job(self, index: int) -> ScheduledGame:
        """The game at `index`: fastchess's game number ``index + 1``."""
        if not 0 <= index < self.total():
            raise IndexError(f"game {index} is outside the schedule (0..{self.total() - 1})")
        round_index, in_round = divmod(index, self.per_round)
        encounter, game_in_pair = divmod(in_round, self.games)
        first, second = self.encounters[encounter]
        swap = (index + 1) % 2 == 0 and self.order.swap
        if swap != self.order.reverse:
            first, second = second, first
        return ScheduledGame(
            index=index, round=round_index + 1, pair=index // self.games,
            game_in_pair=game_in_pair, white=first, black=second, encounter=encounter,
        )

    def pair_games(self, pair: int) -> tuple[int, ...]:
        """The indices of encounter `pair`'s games (one or two: those in the schedule); they
        start from the same opening."""
        return tuple(i for i in range(pair * self.games, (pair + 1) * self.games)
                     if i < self.total())


def fastchess_pairing(engines: Sequence[str], order: PlayOrder, *, gauntlet: bool,
                      rounds: int, games: int, max_games: int | None = None,
                      ) -> FastchessPairing:
    """fastchess's round-robin (or, with `gauntlet`, its seeded gauntlet) of `engines`."""
    if len(engines) < 2:
        raise ValueError("fastchess needs at least 2 engines")
    count = len(engines)
    limit = min(max(order.seeds, 0), count - 1) if gauntlet else count - 1
    encounters = tuple((engines[a], engines[b]) for a in range(limit)
                       for b in range(a + 1, count))
    return FastchessPairing(encounters, rounds, games, max_games, order)


class FastchessDealer:
    """fastchess's deal: encounter ``pair`` starts from book entry ``pair % rounds``, rotated
    by ``start - 1`` through the book (shuffled by mt19937_64 from the seed in random order);
    without a book, the runner's own deal."""

    def __init__(self, config: TournamentConfig) -> None:
        self.config = config
        self.own = RunnerDealer(config)
        self._shuffle: FastchessShuffle | None = None
        self._size = 0

    def _index(self, pair: int) -> int:
        """The book entry dealt to encounter `pair`."""
        assert self.own.cursor is not None and self.config.openings is not None
        cfg = self.config.openings
        if self._size == 0:
            self._size = len(self.own.cursor.book)
            if self._size == 0:
                raise ValueError(f"{cfg.file}: the book is empty")
            if cfg.order.value == "random":
                self._shuffle = FastchessShuffle(self._size, cfg.seed)
        kept = min(self._size, max(self.config.rounds, 1))
        position = (pair % kept + cfg.start_index) % self._size
        return position if self._shuffle is None else self._shuffle[position]

    def deal(self, pair: int) -> Opening | None:
        """The opening of encounter `pair`."""
        if self.own.cursor is None:
            return self.own.deal(pair)
        return self.own.cursor.book.opening(self._index(pair))

    def pairs_to_check(self, pairs: int) -> int:
        """fastchess deals its book round and round after `rounds` entries: the pairs past
        the first `rounds` repeat openings already checked."""
        if self.own.cursor is None:
            return pairs
        return min(pairs, max(self.config.rounds, 1), len(self.own.cursor.book))

    def state(self, pairs_served: int) -> dict[str, Any] | None:
        """The book cursor's state, as the runner's own deal stores it."""
        return self.own.state(pairs_served)


def _schedule(config: TournamentConfig, names: list[str], max_games: int | None,
              ) -> FastchessPairing:
    assert config.order is not None
    return fastchess_pairing(names, config.order,
                             gauntlet=config.format is TournamentFormat.GAUNTLET,
                             rounds=config.rounds, games=config.games, max_games=max_games)


# fastchess starts each clock with its increment added, as cutechess-cli does: its first
# ``go`` for tc=1+0.5 says ``wtime 1500``, and a first move of 1.26 s is not lost on time
# (one of 1.6 s is, "103ms overrun"; measured with the binary in ../shared/peers).
INDEX_STYLE = OrderImplementation(schedule=_schedule, dealer=FastchessDealer,
                                  clock_head_start=True)
"""`OrderStyle.INDEX`: handed by runner-fastchess to its runs, and declared under that
style's value in pyproject's runner.order_styles entry points for a run rebuilt from the
store."""
