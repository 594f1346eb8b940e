"""The one tally of finished games: W/D/L per engine and per pairing, and complete game pairs.

Pure bookkeeping, fed one finished game at a time in any order (from a database on resume or
for a report, then from games as they end). The live standings, the SPRT's counts, the
cutechess-style summary lines and the report all read their counts from here.

A game pair is two games of one pair index played by the same two engines with the colors
swapped; it counts once both of its games are in, whatever order they arrive in.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from runner.rules.outcome import Result
from runner.stats.counts import Pentanomial, Trinomial

__all__ = ["EngineScore", "PairingCounts", "Tally"]


@dataclass(frozen=True)
class EngineScore:
    """One engine's results over every game it played."""

    name: str
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        """Games played."""
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        """Points scored (a draw is half a point)."""
        return self.wins + self.draws / 2

    @property
    def score(self) -> float | None:
        """Points per game, or None before the first game."""
        return self.points / self.games if self.games else None


@dataclass(frozen=True)
class PairingCounts:
    """Two engines' results against each other, from `first`'s point of view."""

    first: str
    second: str
    trinomial: Trinomial
    """Single games."""
    pentanomial: Pentanomial
    """Complete game pairs, with how many of the DD+WL pairs were a win and a loss."""

    @property
    def games(self) -> int:
        """Games counted."""
        return self.trinomial.games

    def swapped(self) -> PairingCounts:
        """The same results from `second`'s point of view."""
        return PairingCounts(self.second, self.first, self.trinomial.swapped(),
                             self.pentanomial.swapped())


class _Pairing:
    """Mutable counts of one pairing, in half points from its first engine's point of view."""

    __slots__ = ("first", "second", "wdl", "pairs")

    def __init__(self, first: str, second: str) -> None:
        self.first = first
        self.second = second
        self.wdl = [0, 0, 0]
        """[wins, draws, losses]"""
        self.pairs = [0, 0, 0, 0, 0, 0]
        """[LL, LD, DD+WL, WD, WW, WL]: complete pairs by their half points, then the WL pairs."""

    def frozen(self) -> PairingCounts:
        """The counts as an immutable value."""
        ll, ld, dd_wl, wd, ww, wl = self.pairs
        return PairingCounts(self.first, self.second, Trinomial(*self.wdl),
                             Pentanomial(ll, ld, dd_wl, wd, ww, wl_pairs=wl))


class Tally:
    """Counts of finished games for a set of engines, updated one game at a time.

    A pairing's point of view is fixed when it is opened: explicitly with `open` (a schedule's
    orientation), else at its first game, the engine entered first (in `engines`, then in
    order of first appearance) being its first engine.
    """

    def __init__(self, engines: Iterable[str] = ()) -> None:
        self._rank: dict[str, int] = {}
        self._wdl: dict[str, list[int]] = {}
        for name in engines:
            self._enter(name)
        self._pairings: dict[tuple[str, str], _Pairing] = {}
        self._waiting: dict[int, tuple[str, str, int]] = {}
        """Pair index -> (white, black, White's half points) of a pair's first-arrived game."""
        self.games = 0
        """Games counted (every finished game; ``*`` games are not counted)."""

    def _enter(self, name: str) -> None:
        """Know an engine (its place in the entry order, empty counts)."""
        if name not in self._rank:
            self._rank[name] = len(self._rank)
            self._wdl[name] = [0, 0, 0]

    @property
    def engine_names(self) -> list[str]:
        """Every engine, in entry order."""
        return list(self._rank)

    def open(self, first: str, second: str) -> None:
        """Open the pairing of two engines from `first`'s point of view, unless already open."""
        if first == second:
            raise ValueError(f"engine {first!r} cannot play itself")
        self._enter(first)
        self._enter(second)
        if (first, second) not in self._pairings and (second, first) not in self._pairings:
            self._pairings[(first, second)] = _Pairing(first, second)

    def _pairing(self, white: str, black: str) -> _Pairing:
        """The pairing of two engines, opened in entry order at their first game."""
        found = self._pairings.get((white, black)) or self._pairings.get((black, white))
        if found is not None:
            return found
        if self._rank[white] < self._rank[black]:
            self.open(white, black)
            return self._pairings[(white, black)]
        self.open(black, white)
        return self._pairings[(black, white)]

    def add(self, white: str, black: str, result: Result | str, pair: int) -> bool:
        """Count one game of pair index `pair`; False (and nothing counted) for ``*``."""
        white_half = (result if isinstance(result, Result) else Result(result)).white_half_points
        if white_half is None:
            return False
        wdl = self._wdl
        if white not in wdl:
            self._enter(white)
        if black not in wdl:
            self._enter(black)
        self.games += 1
        wdl[white][2 - white_half] += 1
        wdl[black][white_half] += 1
        tally = self._pairings.get((white, black)) or self._pairing(white, black)
        first_half = white_half if tally.first == white else 2 - white_half
        tally.wdl[2 - first_half] += 1
        self._pair(tally, white, black, white_half, pair)
        return True

    def _pair(self, tally: _Pairing, white: str, black: str, white_half: int, pair: int) -> None:
        """Complete a game pair when its other game is in: same engines, colors swapped."""
        other = self._waiting.pop(pair, None)
        if other is None:
            self._waiting[pair] = (white, black, white_half)
            return
        other_white, other_black, other_white_half = other
        if (other_white, other_black) != (black, white):
            return  # not the two games of one pair: neither can complete a pair any more
        # `other` had this game's black as White: its White half points are black's.
        first_half = white_half if tally.first == white else 2 - white_half
        other_first_half = 2 - other_white_half if tally.first == white else other_white_half
        total = first_half + other_first_half
        tally.pairs[total] += 1
        if total == 2 and first_half != 1:
            tally.pairs[5] += 1

    def engine(self, name: str) -> EngineScore:
        """One engine's results (all zero for an engine that has not played)."""
        wins, draws, losses = self._wdl.get(name, (0, 0, 0))
        return EngineScore(name, wins, draws, losses)

    def engines(self) -> list[EngineScore]:
        """Every engine's results, in entry order."""
        return [self.engine(name) for name in self._rank]

    def pairing(self, first: str, second: str) -> PairingCounts:
        """Two engines' results from `first`'s point of view (zero counts if they never met)."""
        found = self._pairings.get((first, second))
        if found is not None:
            return found.frozen()
        found = self._pairings.get((second, first))
        if found is not None:
            return found.frozen().swapped()
        return _Pairing(first, second).frozen()

    def pairings(self) -> list[PairingCounts]:
        """Every open pairing in its own point of view, in the order they were opened."""
        return [tally.frozen() for tally in self._pairings.values()]
