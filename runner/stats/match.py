"""Figures of a two-engine match: score, Elo and its 95% margin, LOS, draw ratios, nElo.

Fishtest's formulas: the 95% margins use the exact normal quantile, half the width of the
interval mapped to Elo; LOS is Phi((mu - 1/2) / sigma_mu), so draws and game pairing count;
the normalized-Elo margin uses the delta method (skewness and kurtosis of the sample).

The one rule for small and degenerate samples, which every view (text, JSON, HTML, the live
lines) shows as it is here:

- zero counts are regularised and the score clamped, as fishtest does: a sweep (every game or
  pair won) has fishtest's finite figures (3-0-0: +1199.8 +/- 276.5), never "+inf";
- below `MIN_SAMPLES` samples (games for W/D/L figures, pairs for pair figures) no spread can
  be measured (OpenBench gives nothing for n <= 1 too; fishtest would show its regulariser):
  score aside, every figure is NaN, which the views show as "n/a" and JSON as null;
- draw ratios are the counts' own (drawn games / games, DD+WL pairs / pairs), never the
  regularised frequency: a ratio is data, not a model figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from runner.stats.counts import Counts, Trinomial
from runner.stats.elo import NELO_PER_T, Z95, distribution, elo_from_score, mean_var, normal_cdf
from runner.stats.sprt import SprtResult, SprtSpec, sprt

__all__ = ["MIN_SAMPLES", "MatchStats", "format_elo", "format_percent", "match_stats"]

MIN_SAMPLES = 2
"""Fewest samples (games, or pairs for pair figures) from which a figure is estimated."""


@dataclass(frozen=True)
class MatchStats:
    """Figures of a two-engine match; a field that does not apply to the counts is None."""

    games: int
    pairs: int | None
    score: float
    elo: float
    elo_error95: float
    los: float
    draw_ratio: float | None
    pair_draw_ratio: float | None
    nelo: float
    nelo_error95: float
    sprt: SprtResult | None = None

    @property
    def estimated(self) -> bool:
        """Whether the sample is large enough for figures (see `MIN_SAMPLES`)."""
        return math.isfinite(self.elo)


def match_stats(counts: Counts, sprt_spec: SprtSpec | None = None) -> MatchStats:
    """Score, Elo +- 95%, LOS, draw ratios and nElo +- 95% of a match (and its SPRT if asked)."""
    total, values, probs = distribution(counts.low_to_high)
    mean, var = mean_var(values, probs)
    sd = math.sqrt(var)
    per_game_sd_of_mean = sd / math.sqrt(total)  # sigma_mu: same formula for games or pairs
    lo = mean - Z95 * per_game_sd_of_mean
    hi = mean + Z95 * per_game_sd_of_mean
    elo_error = (elo_from_score(hi) - elo_from_score(lo)) / 2.0
    los = normal_cdf((mean - 0.5) / per_game_sd_of_mean)

    t_value = (mean - 0.5) / sd
    m3 = sum(p * (a - mean) ** 3 for a, p in zip(values, probs, strict=True))
    m4 = sum(p * (a - mean) ** 4 for a, p in zip(values, probs, strict=True))
    skew = m3 / var**1.5
    excess_kurtosis = m4 / var**2 - 3.0
    # Delta-method variance of the sample t-value, per sample.
    var_t = max(1.0 - t_value * skew + 0.25 * t_value**2 * (excess_kurtosis + 2.0), 0.0)
    scale = NELO_PER_T if isinstance(counts, Trinomial) else NELO_PER_T / math.sqrt(2.0)
    nelo = scale * t_value
    nelo_error = scale * Z95 * math.sqrt(var_t / total)

    samples = sum(counts.low_to_high)
    draw_ratio: float | None = None
    pair_draw_ratio: float | None = None
    pairs: int | None = None
    if isinstance(counts, Trinomial):
        draw_ratio = counts.draws / samples if samples else math.nan
    else:
        pair_draw_ratio = counts.dd_wl / samples if samples else math.nan
        pairs = counts.pairs
    elo = elo_from_score(mean)
    if samples < MIN_SAMPLES:  # a figure here would be the regulariser's, not the games'
        elo = elo_error = los = nelo = nelo_error = math.nan
    return MatchStats(
        games=counts.games,
        pairs=pairs,
        score=mean,
        elo=elo,
        elo_error95=elo_error,
        los=los,
        draw_ratio=draw_ratio,
        pair_draw_ratio=pair_draw_ratio,
        nelo=nelo,
        nelo_error95=nelo_error,
        sprt=None if sprt_spec is None else sprt(counts, sprt_spec),
    )


def format_elo(value: float, error: float, spec: str = "+.1f") -> str:
    """An Elo figure with its 95% margin as text; "n/a" for a figure the sample cannot give
    (see the module's rule), the margin alone "n/a" when only it is missing."""
    if not math.isfinite(value):
        return "n/a"
    margin = format(error, spec.lstrip("+")) if math.isfinite(error) else "n/a"
    return f"{format(value, spec)} +/- {margin}"



def format_percent(value: float | None, spec: str = ".1f") -> str:
    """A ratio as a percentage ("97.1 %"), "n/a" when the sample gives none."""
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{format(100 * value, spec)} %"
