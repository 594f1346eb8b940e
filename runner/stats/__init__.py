"""Statistics of game results: the tally, Elo, error bars, LOS, pentanomial models, SPRT, ratings.

Pure functions over counts, no I/O; imports nothing of ours but the rules core's `Result`.
The rooms, each a step of the way from games to figures:

- `tally`: finished games -> per-engine W/D/L, per-pairing trinomial and pentanomial counts;
- `counts`: those counts as checked values (`Trinomial`, `Pentanomial`);
- `elo`: the Elo scale (score <-> Elo, the normal law, counts as a distribution);
- `match`: a two-engine match's figures (Elo +- 95%, LOS, draw ratios, nElo);
- `sprt`: the generalized SPRT;
- `ratings`: maximum-likelihood ratings of several engines;
- `standing`: each engine's standings figures, the one computation every view shows.
"""

from typing import TYPE_CHECKING, Any

from runner.stats.counts import Counts, Pentanomial, StatsInputError, Trinomial
from runner.stats.elo import NELO_PER_T, Z95, elo_from_score, score_from_elo
from runner.stats.match import MIN_SAMPLES, MatchStats, format_elo, format_percent, match_stats
from runner.stats.sprt import (
    EloModel,
    SprtDecision,
    SprtResult,
    SprtSpec,
    bayeselo_to_logistic,
    draw_elo,
    llr,
    llr_bayeselo_legacy,
    sprt,
    sprt_bounds,
)

if TYPE_CHECKING:
    from runner.stats.ratings import EngineRating, Pairing, Ratings, rate_engines
    from runner.stats.standing import StandingFigures, standing_figures, standings_basis
    from runner.stats.tally import EngineScore, PairingCounts, Tally


def __getattr__(name: str) -> Any:
    """`tally`'s names, imported on first use: it reads results with the rules core, which
    ``runner stats`` (figures from counts) does not need; `ratings`' too, which only a
    standing of more than two engines computes (a match's start-up need not build them);
    `standing`'s, which only a report or a ranking of more than two engines shows (issue 38:
    a match of two engines creates no `StandingFigures`)."""
    if name in ("EngineScore", "PairingCounts", "Tally"):
        from runner.stats import tally

        return getattr(tally, name)
    if name in ("EngineRating", "Pairing", "Ratings", "rate_engines"):
        from runner.stats import ratings

        return getattr(ratings, name)
    if name in ("StandingFigures", "standing_figures", "standings_basis"):
        from runner.stats import standing

        return getattr(standing, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "MIN_SAMPLES",
    "NELO_PER_T",
    "Z95",
    "Counts",
    "EloModel",
    "EngineRating",
    "EngineScore",
    "MatchStats",
    "Pairing",
    "PairingCounts",
    "Pentanomial",
    "Ratings",
    "SprtDecision",
    "SprtResult",
    "SprtSpec",
    "StandingFigures",
    "StatsInputError",
    "Tally",
    "Trinomial",
    "bayeselo_to_logistic",
    "draw_elo",
    "elo_from_score",
    "format_elo",
    "format_percent",
    "llr",
    "llr_bayeselo_legacy",
    "match_stats",
    "rate_engines",
    "score_from_elo",
    "sprt",
    "sprt_bounds",
    "standing_figures",
    "standings_basis",
]
