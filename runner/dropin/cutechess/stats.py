"""cutechess-cli's own Elo, LOS and SPRT figures, computed as it computes them.

The runner's statistics (`runner.stats`) follow fishtest: zero counts regularised, scores
clamped, exact normal quantiles. cutechess-cli 1.5 does none of that: its Elo error margin
uses an approximation of the inverse error function, a score of 100 % is an infinite Elo
(printed `inf`), an empty sample is `nan`, and its SPRT adds half a game to each count and
converts the bounds to BayesElo with a draw-rate scale. The printed digits differ, so the
Elo figures are computed here, in the same order of floating-point operations (IEEE results
for divisions by zero and logarithms of zero, where Python would raise); the SPRT is the
runner's own `llr_scaled_bayeselo` (the model `runner-cutechess` plays its -sprt with, so
the run stops where cutechess-cli stops) and `sprt_bounds`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from runner.stats.counts import Trinomial
from runner.stats.sprt import llr_scaled_bayeselo, sprt_bounds

__all__ = ["CutechessElo", "SprtStatus", "sprt_status"]

_PI = 3.1415926535897
"""The value of pi cutechess's inverse error function uses (truncated: it shows in the digits)."""


def _div(a: float, b: float) -> float:
    """a / b with IEEE 754's answers where Python raises: +-inf, or nan for 0/0."""
    if b != 0.0:
        return a / b
    if a == 0.0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _log(x: float) -> float:
    """Natural logarithm with C's answers at the edges (-inf at 0, nan below)."""
    if math.isnan(x) or x < 0.0:
        return math.nan
    if x == 0.0:
        return -math.inf
    return math.log(x)


def _log10(x: float) -> float:
    """Decimal logarithm with C's answers at the edges (-inf at 0, nan below)."""
    if math.isnan(x) or x < 0.0:
        return math.nan
    if x == 0.0:
        return -math.inf
    return math.log10(x)


def _sqrt(x: float) -> float:
    """Square root with C's answer below zero (nan)."""
    if math.isnan(x) or x < 0.0:
        return math.nan
    return math.sqrt(x)


def _erf_inv(x: float) -> float:
    """cutechess's closed-form approximation of the inverse error function."""
    a = 8.0 * (_PI - 3.0) / (3.0 * _PI * (4.0 - _PI))
    y = _log(1.0 - x * x)
    z = 2.0 / (_PI * a) + y / 2.0
    ret = _sqrt(_sqrt(z * z - y / a) - z)
    return -ret if x < 0.0 else ret


def _phi_inv(p: float) -> float:
    return math.sqrt(2.0) * _erf_inv(2.0 * p - 1.0)


def _elo_of(p: float) -> float:
    """The logistic Elo difference of a score ratio, unclamped (+-inf at 1 and 0)."""
    inner = _div(1.0, p) - 1.0
    return -400.0 * _log10(inner)


@dataclass(frozen=True)
class CutechessElo:
    """One player's (or one colour's) Elo figures as cutechess-cli's `Elo` class gives them."""

    wins: int
    losses: int
    draws: int

    @property
    def _n(self) -> float:
        return float(self.wins + self.losses + self.draws)

    @property
    def _mu_stdev(self) -> tuple[float, float]:
        n = self._n
        w, lo, d = _div(self.wins, n), _div(self.losses, n), _div(self.draws, n)
        mu = w + d / 2.0
        dev_w = w * math.pow(1.0 - mu, 2.0)
        dev_l = lo * math.pow(0.0 - mu, 2.0)
        dev_d = d * math.pow(0.5 - mu, 2.0)
        return mu, _div(_sqrt(dev_w + dev_l + dev_d), math.sqrt(n))

    @property
    def point_ratio(self) -> float:
        """Points per point possible (a draw is half)."""
        total = float((self.wins + self.losses + self.draws) * 2)
        return _div(float(self.wins * 2 + self.draws), total)

    @property
    def draw_ratio(self) -> float:
        """Draws per game."""
        return _div(float(self.draws), self._n)

    @property
    def diff(self) -> float:
        """The Elo difference (inf after wins only, nan before any game)."""
        return _elo_of(self._mu_stdev[0])

    @property
    def error_margin(self) -> float:
        """Half the width of the 95 % interval, in Elo."""
        mu, stdev = self._mu_stdev
        mu_min = mu + _phi_inv(0.025) * stdev
        mu_max = mu + _phi_inv(0.975) * stdev
        return (_elo_of(mu_max) - _elo_of(mu_min)) / 2.0

    @property
    def los(self) -> float:
        """Likelihood of superiority, in percent (draws ignored)."""
        spread = _sqrt(2.0 * (self.wins + self.losses))
        return 100 * (0.5 + 0.5 * math.erf(_div(float(self.wins - self.losses), spread)))


@dataclass(frozen=True)
class SprtStatus:
    """The log-likelihood ratio, Wald's bounds and the decision (`H0`, `H1` or None)."""

    llr: float
    lower: float
    upper: float
    accepted: str | None


def sprt_status(wins: int, losses: int, draws: int, elo0: float, elo1: float, alpha: float,
                beta: float) -> SprtStatus:
    """cutechess-cli's SPRT on the first player's wins, losses and draws (zero bounds and
    error rates when no -sprt was given, as its status line then shows: llr 0, bounds at
    minus and plus infinity)."""
    value = llr_scaled_bayeselo(Trinomial(wins=wins, draws=draws, losses=losses), elo0, elo1)
    if 0.0 < alpha < 1.0 and 0.0 < beta < 1.0:
        lower, upper = sprt_bounds(alpha, beta)
    else:
        lower = _log(_div(beta, 1.0 - alpha))
        upper = _log(_div(1.0 - beta, alpha))
    accepted = "H1" if value >= upper else "H0" if value <= lower else None
    return SprtStatus(value, lower, upper, accepted)
