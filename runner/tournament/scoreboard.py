"""The live view of a tournament's results: standings, pairings, the SPRT, the summary lines.

A thin layer over `runner.stats.Tally` (the one tally of results), fed one finished game at a
time (from the database on resume, then from the games as they end). Pairings keep the
schedule's orientation, so the summary lines name each encounter as it was scheduled.
"""

from __future__ import annotations

from collections.abc import Iterable

from runner.game.record import GameTermination
from runner.rules import Result
from runner.stats import (
    EngineScore,
    PairingCounts,
    SprtResult,
    SprtSpec,
    Tally,
    format_elo,
    format_percent,
    match_stats,
    sprt,
)
from runner.text import shown

__all__ = ["Scoreboard", "summary_lines"]


class Scoreboard:
    """Standings and pairing counts for a set of engines, with counts of each termination."""

    def __init__(self, engines: Iterable[str]) -> None:
        self.tally = Tally(engines)
        self.terminations: dict[GameTermination, int] = {}

    @property
    def games(self) -> int:
        """Finished games counted."""
        return self.tally.games

    def pairing(self, first: str, second: str) -> PairingCounts:
        """Two engines' counts from `first`'s view; a new pairing keeps this orientation."""
        self.tally.open(first, second)
        return self.tally.pairing(first, second)

    def add(self, white: str, black: str, result: Result | str, pair: int,
            termination: GameTermination | None = None) -> None:
        """Count one finished game; an unfinished result (``*``) is ignored."""
        if self.tally.add(white, black, result, pair) and termination:
            self.terminations[termination] = self.terminations.get(termination, 0) + 1

    def ranked(self) -> list[EngineScore]:
        """Standings, best score first (entry order breaks ties)."""
        return sorted(self.tally.engines(),
                      key=lambda s: -(s.score if s.score is not None else -1.0))

    def sprt_state(self, first: str, second: str, spec: SprtSpec, *,
                   trinomial: bool = False) -> SprtResult | None:
        """The SPRT of `first` against `second` over complete game pairs, once there are any
        (with `trinomial`, or for a model whose test counts single games: over those)."""
        pairing = self.tally.pairing(first, second)
        if trinomial or spec.model.counts_games:
            return sprt(pairing.trinomial, spec) if pairing.trinomial.games else None
        counts = pairing.pentanomial
        if counts.pairs == 0:
            return None
        return sprt(counts, spec)

    def pairing_of(self, white: str, black: str) -> PairingCounts:
        """The counts of the pairing `white` and `black` belong to, as it was opened."""
        for counts in self.tally.pairings():
            if {counts.first, counts.second} == {white, black}:
                return counts
        return self.tally.pairing(white, black)

    def ranking_lines(self) -> list[str]:
        """A plain-text ranking as cutechess-cli prints for tournaments of several engines:
        rank, name, Elo and its 95% margin, games, score and draw ratio; "-" where a figure
        does not exist. The figures are `runner report`'s (`standing_figures`): relative to
        the first engine entered, whose Elo is 0 with no margin."""
        # Imported here: a match of two engines prints no ranking (issue 38: start-up).
        from runner.stats.standing import standing_figures

        engines = self.tally.engine_names
        figures, _ = standing_figures(
            engines, [(c.first, c.second, c.trinomial, c.pentanomial)
                      for c in self.tally.pairings()])
        label = {name: shown(name) for name in engines}
        # Names are shown as they print (stored names may predate the configuration's checks).
        width = max([28, *(len(text) for text in label.values())])
        lines = [f"{'Rank':>4} {'Name':<{width}} {'Elo':>6} {'+/-':>6} {'Games':>7} "
                 f"{'Score':>7} {'Draw':>7}"]
        # The report's order: by Elo (engines without one last), then points.
        ranked = sorted(self.tally.engines(), key=lambda s: (
            figures[s.name].elo is None, -(figures[s.name].elo or 0.0), -s.points, s.name))
        for rank, standing in enumerate(ranked, start=1):
            own = figures[standing.name]
            # "n/a": games played but no figure (the stats rule), "-": nothing played yet.
            rating = ("n/a" if standing.games else "-") if own.elo is None else f"{own.elo:.0f}"
            margin = "-" if own.elo_error95 is None else f"{own.elo_error95:.0f}"
            score = "-" if standing.score is None else f"{100 * standing.score:.1f}%"
            draws = "-" if not standing.games else f"{100 * standing.draws / standing.games:.1f}%"
            lines.append(f"{rank:>4} {label[standing.name]:<{width}} {rating:>6} {margin:>6} "
                         f"{standing.games:>7} {score:>7} {draws:>7}")
        return lines

    def ranking_basis(self) -> str:
        """What the Elo of `ranking_lines` is (head-to-head or the rating fit), one line."""
        from runner.stats.standing import standings_basis

        return standings_basis(self.tally.engine_names,
                               [(c.first, c.second, c.trinomial, c.pentanomial)
                                for c in self.tally.pairings()])

    def summary_lines(self) -> list[str]:
        """cutechess-cli style summary lines for every pairing, in the order they were opened."""
        lines: list[str] = []
        for counts in self.tally.pairings():
            lines.extend(summary_lines(counts))
        return lines


def summary_lines(counts: PairingCounts) -> list[str]:
    """The familiar cutechess-cli summary of one pairing (score line, Elo, LOS, draws).

    The Elo and LOS are the pairing's one figure, the one the standings and ``runner report``
    show: from complete game pairs when there are any (as fishtest), else from single games;
    the line ends saying which (the drop-ins print their peer's own lines instead)."""
    games, tri = counts.games, counts.trinomial
    first, second = shown(counts.first), shown(counts.second)
    if not games:
        return [f"Score of {first} vs {second}: 0 - 0 - 0  [0.000] 0"]
    points = tri.wins + tri.draws / 2
    lines = [f"Score of {first} vs {second}: {tri.wins} - {tri.losses} - "
             f"{tri.draws}  [{points / games:.3f}] {games}"]
    pairs = counts.pentanomial
    figures = match_stats(pairs if pairs.pairs else tri)
    basis = (f"from {pairs.pairs} game pair{'' if pairs.pairs == 1 else 's'}" if pairs.pairs
             else f"from {games} game{'' if games == 1 else 's'}")
    elo = format_elo(figures.elo, figures.elo_error95, ".1f")
    lines.append(f"Elo difference: {elo}, "
                 f"LOS: {format_percent(figures.los)}, DrawRatio: {100 * tri.draws / games:.1f} %"
                 f", {basis}")
    if pairs.pairs:
        lines.append(f"Ptnml(0-2): [{', '.join(str(n) for n in pairs.low_to_high)}], "
                     f"{pairs.pairs} pair{'' if pairs.pairs == 1 else 's'}")
    return lines
