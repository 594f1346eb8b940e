"""Figures of a two-engine match: score, Elo and its 95% margin, LOS, draw ratios, nElo.

Fishtest's formulas: the 95% margins use the exact normal quantile, half the width of the
interval mapped to Elo; LOS is Phi((mu - 1/2) / sigma_mu), so draws and game pairing count;
the normalized-Elo margin uses the delta method (skewness and kurtosis of the sample).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from runner.stats.counts import Counts, Trinomial
from runner.stats.elo import NELO_PER_T, Z95, distribution, elo_from_score, mean_var, normal_cdf
from runner.stats.sprt import SprtResult, SprtSpec, sprt

__all__ = ["MatchStats", "format_elo", "match_stats"]


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
    sweep: int = 0
    """+1 when the first side scored every point, -1 when it scored none, else 0: the Elo and
    nElo above are then fishtest's regularised finite stand-ins for an unbounded value, and
    `format_elo` shows them as +inf/-inf with no margin."""


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

    if isinstance(counts, Trinomial):
        draw_ratio: float | None = probs[1]
        pair_draw_ratio: float | None = None
        pairs: int | None = None
    else:
        draw_ratio = None
        pair_draw_ratio = probs[2]
        pairs = counts.pairs
    return MatchStats(
        games=counts.games,
        pairs=pairs,
        score=mean,
        elo=elo_from_score(mean),
        elo_error95=elo_error,
        los=los,
        draw_ratio=draw_ratio,
        pair_draw_ratio=pair_draw_ratio,
        nelo=nelo,
        nelo_error95=nelo_error,
        sprt=None if sprt_spec is None else sprt(counts, sprt_spec),
        sweep=_sweep(counts.low_to_high),
    )


def _sweep(counts: tuple[int, ...] | list[int]) -> int:
    """+1 if only the best outcome occurred, -1 if only the worst did, else 0 (none too)."""
    if not any(counts):
        return 0
    if not any(counts[:-1]):
        return 1
    if not any(counts[1:]):
        return -1
    return 0


def format_elo(value: float, error: float, sweep: int = 0, spec: str = "+.1f") -> str:
    """An Elo figure with its 95% margin as text; a sweep's is "+inf"/"-inf" with the margin
    "n/a" (no finite estimate exists), a non-finite value "n/a"."""
    if sweep:
        return f"{'+' if sweep > 0 else '-'}inf +/- n/a"
    if not math.isfinite(value):
        return "n/a"
    margin = format(error, spec.lstrip("+")) if math.isfinite(error) else "n/a"
    return f"{format(value, spec)} +/- {margin}"

