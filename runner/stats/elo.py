"""The Elo scale: score <-> Elo conversions, the normal law, and counts as a distribution.

Fishtest's conventions (the Stockfish testing framework, the reference the community trusts):
zero counts are regularised (each zero becomes 0.001) before anything else, and the score is
clamped into [0.001, 0.999] before it is turned into Elo, so no figure is ever inf or NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = [
    "NELO_PER_T", "Z95", "distribution", "elo_from_score", "mean_var", "normal_cdf", "regularised",
    "score_from_elo",
]

Z95: float = 1.9599639845400536
"""Two-sided 95% quantile of the standard normal law, ``statistics.NormalDist().inv_cdf(0.975)``
(written out: importing `statistics` cost every run a few milliseconds of start-up;
tests/test_stats.py checks the two agree)."""

NELO_PER_T: float = 800.0 / math.log(10.0)
"""Normalized Elo per unit of t-value, 800/ln 10 (so nElo ~ Elo when nothing is drawn)."""

_REGULARISE = 1e-3  # what a zero count becomes (fishtest's rule)
_SCORE_CLAMP = 1e-3  # scores are clamped into [0.001, 0.999] before conversion to Elo


def normal_cdf(x: float) -> float:
    """Phi(x), the standard normal law's distribution function."""
    # erfc keeps full relative precision far in the lower tail, unlike 1 + erf.
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def score_from_elo(elo: float) -> float:
    """Expected score of a logistic Elo difference: 1 / (1 + 10^(-elo/400))."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def elo_from_score(score: float) -> float:
    """Logistic Elo of a score, the score clamped into [0.001, 0.999] (|Elo| <= 1199.83)."""
    x = min(max(score, _SCORE_CLAMP), 1.0 - _SCORE_CLAMP)
    return -400.0 * math.log10(1.0 / x - 1.0) + 0.0  # + 0.0 turns -0.0 into 0.0


def regularised(counts: Sequence[int]) -> list[float]:
    """The counts as floats, each zero replaced by a small positive count (fishtest's rule)."""
    return [float(c) if c != 0 else _REGULARISE for c in counts]


def distribution(counts: Sequence[int]) -> tuple[float, list[float], list[float]]:
    """(regularised total, outcomes a_i in [0, 1], empirical probabilities)."""
    reg = regularised(counts)
    total = sum(reg)
    last = len(reg) - 1
    return total, [i / last for i in range(len(reg))], [c / total for c in reg]


def mean_var(values: Sequence[float], probs: Sequence[float]) -> tuple[float, float]:
    """Mean and variance of the outcomes `values` under the probabilities `probs`."""
    mean = sum(p * a for a, p in zip(values, probs, strict=True))
    var = sum(p * (a - mean) ** 2 for a, p in zip(values, probs, strict=True))
    return mean, var

