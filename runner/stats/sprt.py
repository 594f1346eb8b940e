"""The sequential probability ratio test (SPRT) of fishtest: a generalized SPRT.

The log-likelihood ratio compares the maximum-likelihood distributions of the results under
each hypothesis (H0: elo = elo0, H1: elo = elo1), with fishtest's strict decision rule
(LLR < lower -> H0, LLR > upper -> H1) and no overshoot correction. Bounds are given in
logistic Elo, normalized Elo or BayesElo.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from runner.stats.counts import Counts, StatsInputError, Trinomial
from runner.stats.elo import NELO_PER_T, distribution, elo_from_score, mean_var, regularised, score_from_elo

__all__ = [
    "EloModel",
    "SprtDecision",
    "SprtResult",
    "SprtSpec",
    "bayeselo_to_logistic",
    "draw_elo",
    "llr",
    "llr_bayeselo_legacy",
    "llr_scaled_bayeselo",
    "sprt",
    "sprt_bounds",
]

_SECULAR_INSET = 1e-9  # keeps the root bracket off the poles of the secular equation
_T_ITERATIONS = 10  # fixed-point iterations of the t-value MLE (fishtest's cap)
_T_TOLERANCE = 1e-9  # ... stopped early when no probability moves by more than this


class EloModel(StrEnum):
    """Units of SPRT bounds: logistic Elo, normalized Elo or BayesElo."""

    LOGISTIC = "logistic"
    NORMALIZED = "normalized"
    BAYESELO = "bayeselo"
    SCALED_BAYESELO = "scaled-bayeselo"
    """A trinomial BayesElo test of single games: half a game added to each count (a
    Jeffreys prior), the bounds read as Elo and turned into BayesElo by the sample's
    draw-rate scale, decided when the LLR reaches a bound (cutechess-cli's -sprt)."""

    @property
    def counts_games(self) -> bool:
        """Whether the model's test reads single games (a trinomial), never game pairs."""
        return self is EloModel.SCALED_BAYESELO


class SprtDecision(StrEnum):
    """State of a sequential test: keep playing, accept H0 (fail) or accept H1 (pass)."""

    CONTINUE = "continue"
    H0 = "H0"
    H1 = "H1"


@dataclass(frozen=True)
class SprtSpec:
    """An SPRT's hypotheses H0: elo = elo0, H1: elo = elo1 (in ``model`` units), alpha, beta."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: EloModel = EloModel.NORMALIZED

    def __post_init__(self) -> None:
        if not (math.isfinite(self.elo0) and math.isfinite(self.elo1)):
            raise StatsInputError("elo0 and elo1 must be finite numbers")
        if not self.elo0 < self.elo1:
            raise StatsInputError(f"elo0 ({self.elo0}) must be below elo1 ({self.elo1})")
        if not (0.0 < self.alpha < 1.0 and 0.0 < self.beta < 1.0):
            raise StatsInputError("alpha and beta must lie strictly between 0 and 1")
        if self.alpha + self.beta >= 1.0:
            raise StatsInputError("alpha + beta must be below 1")
        if not isinstance(self.model, EloModel):
            raise StatsInputError(f"unknown Elo model {self.model!r}")


@dataclass(frozen=True)
class SprtResult:
    """The log-likelihood ratio of an SPRT, its two decision bounds and the decision."""

    llr: float
    lower_bound: float
    upper_bound: float
    decision: SprtDecision
    spec: SprtSpec


def _brent(f: Callable[[float], float], a: float, b: float, xtol: float = 2e-12) -> float:
    """A root of f in [a, b] (f(a), f(b) of opposite signs) by Brent's method."""
    eps = 2.220446049250313e-16
    fa, fb = f(a), f(b)
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    if (fa > 0.0) == (fb > 0.0):
        raise ArithmeticError("root not bracketed")
    c, fc = a, fa
    step = prev_step = b - a
    for _ in range(200):
        if (fb > 0.0) == (fc > 0.0):
            c, fc = a, fa
            step = prev_step = b - a
        if abs(fc) < abs(fb):
            a, fa = b, fb
            b, fb = c, fc
            c, fc = a, fa
        tol = 2.0 * eps * abs(b) + 0.5 * xtol
        half = 0.5 * (c - b)
        if abs(half) <= tol or fb == 0.0:
            return b
        if abs(prev_step) >= tol and abs(fa) > abs(fb):
            s = fb / fa
            if a == c:  # secant step
                p, q = 2.0 * half * s, 1.0 - s
            else:  # inverse quadratic interpolation
                qa, r = fa / fc, fb / fc
                p = s * (2.0 * half * qa * (qa - r) - (b - a) * (r - 1.0))
                q = (qa - 1.0) * (r - 1.0) * (s - 1.0)
            if p > 0.0:
                q = -q
            else:
                p = -p
            if 2.0 * p < min(3.0 * half * q - abs(tol * q), abs(prev_step * q)):
                prev_step, step = step, p / q
            else:
                step = prev_step = half
        else:
            step = prev_step = half
        a, fa = b, fb
        b += step if abs(step) > tol else math.copysign(tol, half)
        fb = f(b)
    return b


def _tilted(probs: Sequence[float], shifts: Sequence[float]) -> list[float]:
    """The distribution p_i / (1 + theta * shift_i) whose shifts average to zero (MLE)."""
    lo_shift, hi_shift = min(shifts), max(shifts)
    if not lo_shift < 0.0 < hi_shift:
        raise ArithmeticError("hypothesis outside the range of the outcomes")

    def weighted_mean(theta: float) -> float:
        return sum(p * h / (1.0 + theta * h) for p, h in zip(probs, shifts, strict=True))

    theta = _brent(
        weighted_mean, -1.0 / hi_shift + _SECULAR_INSET, -1.0 / lo_shift - _SECULAR_INSET
    )
    return [p / (1.0 + theta * h) for p, h in zip(probs, shifts, strict=True)]


def _mle_with_mean(values: Sequence[float], probs: Sequence[float], s: float) -> list[float]:
    """Most likely distribution on ``values`` with expectation s, given the empirical probs."""
    return _tilted(probs, [a - s for a in values])


def _mle_with_t(values: Sequence[float], probs: Sequence[float], t: float) -> list[float]:
    """Most likely distribution on ``values`` with (mean - 1/2) / sd = t (fixed-point search)."""
    current = [1.0 / len(values)] * len(values)
    for _ in range(_T_ITERATIONS):
        mean, var = mean_var(values, current)
        sd = math.sqrt(var)
        shifts = [a - 0.5 - t * sd * (1.0 + ((mean - a) / sd) ** 2) / 2.0 for a in values]
        updated = _tilted(probs, shifts)
        moved = max(abs(x - y) for x, y in zip(updated, current, strict=True))
        current = updated
        if moved < _T_TOLERANCE:
            break
    return current


def _llr_per_sample(probs: Sequence[float], p0: Sequence[float], p1: Sequence[float]) -> float:
    return sum(p * (math.log(b) - math.log(a)) for p, a, b in zip(probs, p0, p1, strict=True))


# ---------------------------------------------------------------------------------------------
# SPRT


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's LLR bounds (ln(beta/(1-alpha)), ln((1-beta)/alpha))."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def draw_elo(trinomial: Trinomial) -> float:
    """BayesElo drawElo estimated from the (regularised) sample."""
    losses, _, wins = regularised(trinomial.low_to_high)
    total = sum(regularised(trinomial.low_to_high))
    p_win, p_loss = wins / total, losses / total
    return 200.0 * math.log10((1.0 - p_loss) / p_loss * (1.0 - p_win) / p_win)


def _bayeselo_probabilities(belo: float, drawelo: float) -> tuple[float, float, float]:
    """(loss, draw, win) probabilities of the BayesElo model."""
    p_win = 1.0 / (1.0 + 10.0 ** ((drawelo - belo) / 400.0))
    p_loss = 1.0 / (1.0 + 10.0 ** ((drawelo + belo) / 400.0))
    return p_loss, 1.0 - p_win - p_loss, p_win


def bayeselo_to_logistic(belo: float, drawelo: float) -> float:
    """Logistic Elo of a BayesElo difference under a given drawElo (score clamped)."""
    p_loss, p_draw, p_win = _bayeselo_probabilities(belo, drawelo)
    return elo_from_score(p_win + 0.5 * p_draw)


def _trinomial_view(counts: Counts) -> Trinomial:
    if isinstance(counts, Trinomial):
        return counts
    tri = counts.trinomial()
    if tri is None:
        raise StatsInputError(
            "BayesElo bounds need the draw rate of single games: give the pentanomial's "
            "wl_pairs (how many DD+WL pairs were a win and a loss)"
        )
    return tri


def llr_scaled_bayeselo(trinomial: Trinomial, elo0: float, elo1: float) -> float:
    """The LLR of `EloModel.SCALED_BAYESELO`, in cutechess-cli's order of operations (its
    `Sprt::status`, which runner-cutechess matches to the last digit): each count plus one
    half (a Jeffreys prior), drawElo from the sample, elo0/elo1 divided by the draw-rate
    scale into BayesElo, then the trinomial log-likelihood ratio."""
    wins, draws, losses = trinomial.wins + 0.5, trinomial.draws + 0.5, trinomial.losses + 0.5
    count = wins + losses + draws
    p_win, p_loss = wins / count, losses / count
    drawelo = 200.0 * math.log10((1.0 - p_loss) / p_loss * (1.0 - p_win) / p_win)
    x = math.pow(10.0, -drawelo / 400.0)
    scale = 4.0 * x / ((1.0 + x) * (1.0 + x))
    l0, d0, w0 = _bayeselo_probabilities(elo0 / scale, drawelo)
    l1, d1, w1 = _bayeselo_probabilities(elo1 / scale, drawelo)
    return (wins * math.log(w1 / w0) + losses * math.log(l1 / l0)
            + draws * math.log(d1 / d0))


def llr(counts: Counts, elo0: float, elo1: float, model: EloModel) -> float:
    """Generalized log-likelihood ratio of H1 (elo1) against H0 (elo0), bounds in ``model``."""
    if model is EloModel.SCALED_BAYESELO:
        return llr_scaled_bayeselo(_trinomial_view(counts), elo0, elo1)
    if model is EloModel.BAYESELO:
        drawelo = draw_elo(_trinomial_view(counts))
        elo0, elo1 = bayeselo_to_logistic(elo0, drawelo), bayeselo_to_logistic(elo1, drawelo)
        model = EloModel.LOGISTIC
    total, values, probs = distribution(counts.low_to_high)
    if model is EloModel.LOGISTIC:
        p0 = _mle_with_mean(values, probs, score_from_elo(elo0))
        p1 = _mle_with_mean(values, probs, score_from_elo(elo1))
    else:
        # nElo is per game; a pair's t-value is sqrt(2) times a game's.
        per_sample = 1.0 if isinstance(counts, Trinomial) else math.sqrt(2.0)
        p0 = _mle_with_t(values, probs, per_sample * elo0 / NELO_PER_T)
        p1 = _mle_with_t(values, probs, per_sample * elo1 / NELO_PER_T)
    return total * _llr_per_sample(probs, p0, p1)


def llr_bayeselo_legacy(trinomial: Trinomial, belo0: float, belo1: float) -> float:
    """Classic trinomial BayesElo LLR with drawElo from the sample (fishtest's LLRlegacy)."""
    counts = regularised(trinomial.low_to_high)
    drawelo = draw_elo(trinomial)
    p0 = _bayeselo_probabilities(belo0, drawelo)
    p1 = _bayeselo_probabilities(belo1, drawelo)
    return sum(n * math.log(b / a) for n, a, b in zip(counts, p0, p1, strict=True))


def sprt(counts: Counts, spec: SprtSpec) -> SprtResult:
    """Evaluate an SPRT once on the counts so far (strict bounds, no overshoot correction)."""
    value = llr(counts, spec.elo0, spec.elo1, spec.model)
    lower, upper = sprt_bounds(spec.alpha, spec.beta)
    # The scaled BayesElo test decides when the LLR reaches a bound (as cutechess-cli), the
    # others once it is past it.
    at_bound = spec.model is EloModel.SCALED_BAYESELO
    if value < lower or (at_bound and value <= lower):
        decision = SprtDecision.H0
    elif value > upper or (at_bound and value >= upper):
        decision = SprtDecision.H1
    else:
        decision = SprtDecision.CONTINUE
    return SprtResult(value, lower, upper, decision, spec)

