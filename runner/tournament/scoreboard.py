"""Running tallies of a tournament: per-engine standings, per-pairing W/D/L and game pairs.

Pure bookkeeping, fed one finished game at a time (from the database on resume, then from
the games as they end). It gives the live view its standings, the SPRT its pentanomial
counts and the end of a run its cutechess-style summary lines.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from runner.stats import Pentanomial, SprtResult, SprtSpec, Trinomial, match_stats, sprt

__all__ = ["EngineStanding", "PairingTally", "Scoreboard", "white_points"]

_POINTS = {"1-0": 2, "0-1": 0, "1/2-1/2": 1}
"""White's score in half points, by result."""


def white_points(result: str) -> int | None:
    """White's score in half points (2, 1, 0), or None for an unfinished result."""
    return _POINTS.get(result)


@dataclass
class EngineStanding:
    """One engine's results over the whole tournament."""

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


@dataclass
class PairingTally:
    """Results between two engines, from `first`'s point of view, with complete game pairs.

    A game pair counts once both of its games are in, whatever order they arrive in.
    """

    first: str
    second: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    penta: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])
    wl_pairs: int = 0
    _open: dict[int, int] = field(default_factory=dict)
    """Pair index -> the first engine's half points in the pair's first-arrived game."""

    def add(self, pair: int, first_points: int) -> None:
        """Count one game worth `first_points` half points (0, 1, 2) to `first`."""
        if first_points == 2:
            self.wins += 1
        elif first_points == 1:
            self.draws += 1
        else:
            self.losses += 1
        earlier = self._open.pop(pair, None)
        if earlier is None:
            self._open[pair] = first_points
            return
        self.penta[earlier + first_points] += 1
        if {earlier, first_points} == {0, 2}:
            self.wl_pairs += 1

    @property
    def trinomial(self) -> Trinomial:
        """Single-game counts from `first`'s view."""
        return Trinomial(self.wins, self.draws, self.losses)

    @property
    def pentanomial(self) -> Pentanomial:
        """Complete pairs [LL, LD, DD+WL, WD, WW] from `first`'s view."""
        ll, ld, dd_wl, wd, ww = self.penta
        return Pentanomial(ll, ld, dd_wl, wd, ww, self.wl_pairs)

    @property
    def games(self) -> int:
        """Games counted."""
        return self.wins + self.draws + self.losses

    def summary_lines(self) -> list[str]:
        """The familiar cutechess-cli summary of this pairing (score line, Elo, LOS, draws)."""
        games = self.games
        if not games:
            return [f"Score of {self.first} vs {self.second}: 0 - 0 - 0  [0.000] 0"]
        points = self.wins + self.draws / 2
        lines = [f"Score of {self.first} vs {self.second}: {self.wins} - {self.losses} - "
                 f"{self.draws}  [{points / games:.3f}] {games}"]
        figures = match_stats(self.trinomial)
        lines.append(f"Elo difference: {figures.elo:.1f} +/- {figures.elo_error95:.1f}, "
                     f"LOS: {100 * figures.los:.1f} %, DrawRatio: {100 * self.draws / games:.1f} %")
        pairs = self.pentanomial
        if pairs.pairs:
            lines.append(f"Ptnml(0-2): [{', '.join(str(n) for n in self.penta)}], "
                         f"{pairs.pairs} pairs")
        return lines


class Scoreboard:
    """Standings and pairing tallies for a set of engines."""

    def __init__(self, engines: Iterable[str]) -> None:
        self.order = list(engines)
        self.standings = {name: EngineStanding(name) for name in self.order}
        self.pairings: dict[tuple[str, str], PairingTally] = {}
        self.games = 0
        self.terminations: dict[str, int] = {}

    def pairing(self, first: str, second: str) -> PairingTally:
        """The tally of two engines, created in schedule orientation on first use."""
        key = (first, second)
        if key in self.pairings:
            return self.pairings[key]
        if (second, first) in self.pairings:
            return self.pairings[(second, first)]
        tally = self.pairings[key] = PairingTally(first, second)
        return tally

    def add(self, white: str, black: str, result: str, pair: int,
            termination: str | None = None) -> None:
        """Count one finished game; an unfinished result (``*``) is ignored."""
        points = white_points(result)
        if points is None:
            return
        self.games += 1
        for name, own in ((white, points), (black, 2 - points)):
            standing = self.standings.setdefault(name, EngineStanding(name))
            if own == 2:
                standing.wins += 1
            elif own == 1:
                standing.draws += 1
            else:
                standing.losses += 1
        tally = self.pairing(white, black)
        tally.add(pair, points if tally.first == white else 2 - points)
        if termination:
            self.terminations[termination] = self.terminations.get(termination, 0) + 1

    def ranked(self) -> list[EngineStanding]:
        """Standings, best score first (schedule order breaks ties)."""
        position = {name: i for i, name in enumerate(self.order)}
        return sorted(self.standings.values(),
                      key=lambda s: (-(s.score if s.score is not None else -1.0),
                                     position.get(s.name, len(position))))

    def sprt_state(self, first: str, second: str, spec: SprtSpec) -> SprtResult | None:
        """The SPRT of `first` against `second` over complete game pairs, once there are any."""
        tally = self.pairing(first, second)
        counts = tally.pentanomial
        if tally.first != first:
            counts = counts.swapped()
        if counts.pairs == 0:
            return None
        return sprt(counts, spec)

    def summary_lines(self) -> list[str]:
        """cutechess-cli style summary lines for every pairing, in the order they first met."""
        lines: list[str] = []
        for tally in self.pairings.values():
            lines.extend(tally.summary_lines())
        return lines
