"""Each engine's Elo, margin and LOS in a tournament's standings: one computation for every view.

The live ranking lines, the end-of-run table and ``runner report`` all read their standings
figures from `standing_figures`, so the same games always give the same numbers.

- The reference engine is the first one entered; it sits at Elo 0 with no margin or LOS.
- When every game involves the reference (a match or a gauntlet), an engine's figures are its
  head-to-head `match_stats` against the reference, from its own point of view (from complete
  game pairs when there are any, as fishtest does, else from single games).
- Otherwise (a round-robin), the Elo is the maximum-likelihood rating over every game,
  anchored at the reference, its margin that of the difference to the reference, and LOS the
  probability that this difference is positive: Phi(Elo / sd). LOS thus always agrees in sign
  with the Elo shown beside it.
- An engine with fewer than `MIN_SAMPLES` games, or (in a round-robin) one that won or lost
  every game, has no rating: its maximum-likelihood rating does not exist, only the
  regulariser's stand-in would. Likewise every engine when the reference won or lost all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from runner.stats.counts import Pentanomial, StatsInputError, Trinomial
from runner.stats.elo import Z95, normal_cdf
from runner.stats.match import MIN_SAMPLES, match_stats

__all__ = ["StandingFigures", "standing_figures", "standings_basis"]


@dataclass(frozen=True)
class StandingFigures:
    """One engine's standings figures relative to the reference; None where there is none."""

    name: str
    elo: float | None
    elo_error95: float | None
    los: float | None
    """Likelihood that the engine is stronger than the reference."""
    reference: bool


def standing_figures(
    engines: Sequence[str],
    pairings: Sequence[tuple[str, str, Trinomial, Pentanomial]],
) -> tuple[dict[str, StandingFigures], str | None]:
    """Every engine's figures, and a note when ratings could not be made (else None).

    `engines` is the entry order (the first is the reference); each pairing is
    (first, second, its W/D/L, its game pairs) from `first`'s point of view.
    """
    reference = engines[0]
    played = [p for p in pairings if p[2].games]
    games = dict.fromkeys(engines, 0)
    points = dict.fromkeys(engines, 0.0)
    for first, second, tri, _ in played:
        games[first] = games.get(first, 0) + tri.games
        games[second] = games.get(second, 0) + tri.games
        points[first] = points.get(first, 0.0) + tri.wins + tri.draws / 2
        points[second] = points.get(second, 0.0) + tri.losses + tri.draws / 2
    empty = {name: StandingFigures(name, None, None, None, name == reference) for name in engines}
    figures = dict(empty)
    if games.get(reference):
        figures[reference] = StandingFigures(reference, 0.0, None, None, True)
    note = None
    if all(reference in (p[0], p[1]) for p in played):
        for first, second, tri, penta in played:
            other = second if first == reference else first
            if first == reference:
                tri, penta = tri.swapped(), penta.swapped()
            stats = match_stats(penta if penta.pairs else tri)
            if stats.estimated:
                figures[other] = StandingFigures(other, stats.elo, stats.elo_error95, stats.los,
                                                 False)
        return figures, note
    # Here, not at the top: two engines' standings never need it (issue 38's start-up).
    from runner.stats.ratings import Pairing, rate_engines

    try:
        ratings = rate_engines((Pairing(p[0], p[1], p[2]) for p in played), anchor=reference)
    except StatsInputError as exc:
        return figures, f"no ratings: {exc}"

    def rated(name: str) -> bool:
        return games.get(name, 0) >= MIN_SAMPLES and 0.0 < points[name] < games[name]

    if not rated(reference):  # every difference to it is unbounded (or unmeasured)
        return figures, note
    for entry in ratings.engines:
        if entry.name == reference or not rated(entry.name):
            continue
        sd = entry.error95 / Z95
        los = normal_cdf(entry.elo / sd) if sd > 0.0 else math.nan
        figures[entry.name] = StandingFigures(
            entry.name, entry.elo, entry.error95 if sd > 0.0 else None,
            los if math.isfinite(los) else None, False)
    return figures, note


def standings_basis(
    engines: Sequence[str],
    pairings: Sequence[tuple[str, str, Trinomial, Pentanomial]],
) -> str:
    """What the Elo of `standing_figures` is, in words, for a caption beside the standings:
    head-to-head against the reference (from game pairs or single games) or the rating fit
    over every game. The pairings' own lines are head-to-head: where a table shows the fit,
    the caption tells the two apart."""
    reference = engines[0]
    played = [p for p in pairings if p[2].games]
    if not all(reference in (p[0], p[1]) for p in played):
        return (f"Elo: the rating that fits every game, {reference} = 0 (each pairing's own "
                "figures are head-to-head)")
    paired = [p[3].pairs > 0 for p in played]
    basis = ("game pairs" if paired and all(paired) else "games" if not any(paired)
             else "game pairs, or games where a pairing has no complete pair")
    return f"Elo: each engine against {reference}, from {basis}"
