"""Match statistics: Elo, error margins, LOS, normalized Elo, GSPRT and multi-engine ratings.

Pure functions over result counts; no I/O. The figures follow fishtest (the Stockfish testing
framework), the reference the community trusts:

- zero counts are regularised (each zero becomes 0.001) before anything else, and the score is
  clamped into [0.001, 0.999] before it is turned into Elo, so no figure is ever inf or NaN;
- the 95% margins use the exact normal quantile, half the width of the interval mapped to Elo;
- LOS is Phi((mu - 1/2) / sigma_mu), so draws and game pairing count;
- the normalized-Elo margin uses the delta method (skewness and kurtosis of the sample);
- the SPRT is a generalized SPRT (maximum-likelihood distributions under each hypothesis),
  with fishtest's strict decision rule (LLR < lower -> H0, LLR > upper -> H1).

Sign convention: every figure is from the FIRST engine's point of view ("wins" are its wins).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from statistics import NormalDist

__all__ = [
    "NELO_PER_T",
    "Z95",
    "EloModel",
    "EngineRating",
    "MatchStats",
    "Pairing",
    "Pentanomial",
    "Ratings",
    "SprtDecision",
    "SprtResult",
    "SprtSpec",
    "StatsInputError",
    "Trinomial",
    "bayeselo_to_logistic",
    "draw_elo",
    "elo_from_score",
    "llr",
    "llr_bayeselo_legacy",
    "match_stats",
    "rate_engines",
    "score_from_elo",
    "sprt",
    "sprt_bounds",
]

Z95: float = NormalDist().inv_cdf(0.975)
"""Two-sided 95% quantile of the standard normal law (1.959963984540054)."""

NELO_PER_T: float = 800.0 / math.log(10.0)
"""Normalized Elo per unit of t-value, 800/ln 10 (so nElo ~ Elo when nothing is drawn)."""

_REGULARISE = 1e-3  # what a zero count becomes (fishtest's rule)
_SCORE_CLAMP = 1e-3  # scores are clamped into [0.001, 0.999] before conversion to Elo
_SECULAR_INSET = 1e-9  # keeps the root bracket off the poles of the secular equation
_T_ITERATIONS = 10  # fixed-point iterations of the t-value MLE (fishtest's cap)
_T_TOLERANCE = 1e-9  # ... stopped early when no probability moves by more than this


class StatsInputError(ValueError):
    """Counts or test parameters that cannot describe a match (negative counts, bad alpha...)."""


class EloModel(StrEnum):
    """Units of SPRT bounds: logistic Elo, normalized Elo or BayesElo."""

    LOGISTIC = "logistic"
    NORMALIZED = "normalized"
    BAYESELO = "bayeselo"


class SprtDecision(StrEnum):
    """State of a sequential test: keep playing, accept H0 (fail) or accept H1 (pass)."""

    CONTINUE = "continue"
    H0 = "H0"
    H1 = "H1"


def _check_count(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise StatsInputError(f"{name} must be an integer count, got {value!r}")
    if value < 0:
        raise StatsInputError(f"{name} must not be negative, got {value}")


@dataclass(frozen=True)
class Trinomial:
    """Single-game counts from the first engine's point of view."""

    wins: int
    draws: int
    losses: int

    def __post_init__(self) -> None:
        for name in ("wins", "draws", "losses"):
            _check_count(name, getattr(self, name))

    @property
    def games(self) -> int:
        """Number of games."""
        return self.wins + self.draws + self.losses

    @property
    def low_to_high(self) -> tuple[int, int, int]:
        """Counts ordered by outcome, worst first: (losses, draws, wins)."""
        return (self.losses, self.draws, self.wins)

    def swapped(self) -> Trinomial:
        """The same games seen from the second engine."""
        return Trinomial(self.losses, self.draws, self.wins)


@dataclass(frozen=True)
class Pentanomial:
    """Game-pair counts [LL, LD, DD+WL, WD, WW]: pairs scoring 0, 1/2, 1, 3/2 and 2 points.

    ``wl_pairs`` optionally says how many of the ``dd_wl`` pairs were a win and a loss (the
    rest being two draws); only the trinomial view (and so the BayesElo model) needs it.
    """

    ll: int
    ld: int
    dd_wl: int
    wd: int
    ww: int
    wl_pairs: int | None = None

    def __post_init__(self) -> None:
        for name in ("ll", "ld", "dd_wl", "wd", "ww"):
            _check_count(name, getattr(self, name))
        if self.wl_pairs is not None:
            _check_count("wl_pairs", self.wl_pairs)
            if self.wl_pairs > self.dd_wl:
                raise StatsInputError(
                    f"wl_pairs ({self.wl_pairs}) cannot exceed the DD+WL pairs ({self.dd_wl})"
                )

    @property
    def pairs(self) -> int:
        """Number of game pairs."""
        return self.ll + self.ld + self.dd_wl + self.wd + self.ww

    @property
    def games(self) -> int:
        """Number of games (two per pair)."""
        return 2 * self.pairs

    @property
    def low_to_high(self) -> tuple[int, int, int, int, int]:
        """Counts ordered by pair score, worst first."""
        return (self.ll, self.ld, self.dd_wl, self.wd, self.ww)

    def swapped(self) -> Pentanomial:
        """The same pairs seen from the second engine."""
        return Pentanomial(self.ww, self.wd, self.dd_wl, self.ld, self.ll, self.wl_pairs)

    def trinomial(self) -> Trinomial | None:
        """The single-game counts of the same games, or None when the WL/DD split is unknown."""
        if self.wl_pairs is None:
            return None
        wl = self.wl_pairs
        dd = self.dd_wl - wl
        return Trinomial(
            wins=2 * self.ww + self.wd + wl,
            draws=self.ld + 2 * dd + self.wd,
            losses=2 * self.ll + self.ld + wl,
        )


Counts = Trinomial | Pentanomial


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

    def to_json(self) -> dict[str, float | str]:
        """JSON-ready mapping with the keys of the examples file."""
        return {
            "llr": self.llr,
            "lower_bound": self.lower_bound,
            "upper_bound": self.upper_bound,
            "decision": self.decision.value,
        }


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

    def to_json(self) -> dict[str, object]:
        """JSON-ready mapping with exactly the issue's key names (never inf or NaN)."""
        return {
            "games": self.games,
            "pairs": self.pairs,
            "score": _finite(self.score),
            "elo": _finite(self.elo),
            "elo_error95": _finite(self.elo_error95),
            "los": _finite(self.los),
            "draw_ratio": _finite(self.draw_ratio),
            "pair_draw_ratio": _finite(self.pair_draw_ratio),
            "nelo": _finite(self.nelo),
            "nelo_error95": _finite(self.nelo_error95),
            "sprt": None if self.sprt is None else self.sprt.to_json(),
        }


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


# ---------------------------------------------------------------------------------------------
# Elementary conversions


def _phi(x: float) -> float:
    # erfc keeps full relative precision far in the lower tail, unlike 1 + erf.
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def score_from_elo(elo: float) -> float:
    """Expected score of a logistic Elo difference: 1 / (1 + 10^(-elo/400))."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_from_score(score: float) -> float:
    """Logistic Elo of a score, the score clamped into [0.001, 0.999] (|Elo| <= 1199.83)."""
    x = min(max(score, _SCORE_CLAMP), 1.0 - _SCORE_CLAMP)
    return -400.0 * math.log10(1.0 / x - 1.0) + 0.0  # + 0.0 turns -0.0 into 0.0


def _regularised(counts: Sequence[int]) -> list[float]:
    return [float(c) if c != 0 else _REGULARISE for c in counts]


def _distribution(counts: Sequence[int]) -> tuple[float, list[float], list[float]]:
    """(regularised total, outcomes a_i in [0, 1], empirical probabilities)."""
    reg = _regularised(counts)
    total = sum(reg)
    last = len(reg) - 1
    return total, [i / last for i in range(len(reg))], [c / total for c in reg]


def _mean_var(values: Sequence[float], probs: Sequence[float]) -> tuple[float, float]:
    mean = sum(p * a for a, p in zip(values, probs, strict=True))
    var = sum(p * (a - mean) ** 2 for a, p in zip(values, probs, strict=True))
    return mean, var


# ---------------------------------------------------------------------------------------------
# Two-engine figures


def match_stats(counts: Counts, sprt_spec: SprtSpec | None = None) -> MatchStats:
    """Score, Elo +- 95%, LOS, draw ratios and nElo +- 95% of a match (and its SPRT if asked)."""
    total, values, probs = _distribution(counts.low_to_high)
    mean, var = _mean_var(values, probs)
    sd = math.sqrt(var)
    per_game_sd_of_mean = sd / math.sqrt(total)  # sigma_mu: same formula for games or pairs
    lo = mean - Z95 * per_game_sd_of_mean
    hi = mean + Z95 * per_game_sd_of_mean
    elo_error = (elo_from_score(hi) - elo_from_score(lo)) / 2.0
    los = _phi((mean - 0.5) / per_game_sd_of_mean)

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
    )


# ---------------------------------------------------------------------------------------------
# Root finding and constrained maximum-likelihood distributions


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
        mean, var = _mean_var(values, current)
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
    losses, _, wins = _regularised(trinomial.low_to_high)
    total = sum(_regularised(trinomial.low_to_high))
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


def llr(counts: Counts, elo0: float, elo1: float, model: EloModel) -> float:
    """Generalized log-likelihood ratio of H1 (elo1) against H0 (elo0), bounds in ``model``."""
    if model is EloModel.BAYESELO:
        drawelo = draw_elo(_trinomial_view(counts))
        elo0, elo1 = bayeselo_to_logistic(elo0, drawelo), bayeselo_to_logistic(elo1, drawelo)
        model = EloModel.LOGISTIC
    total, values, probs = _distribution(counts.low_to_high)
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
    counts = _regularised(trinomial.low_to_high)
    drawelo = draw_elo(trinomial)
    p0 = _bayeselo_probabilities(belo0, drawelo)
    p1 = _bayeselo_probabilities(belo1, drawelo)
    return sum(n * math.log(b / a) for n, a, b in zip(counts, p0, p1, strict=True))


def sprt(counts: Counts, spec: SprtSpec) -> SprtResult:
    """Evaluate an SPRT once on the counts so far (strict bounds, no overshoot correction)."""
    value = llr(counts, spec.elo0, spec.elo1, spec.model)
    lower, upper = sprt_bounds(spec.alpha, spec.beta)
    if value < lower:
        decision = SprtDecision.H0
    elif value > upper:
        decision = SprtDecision.H1
    else:
        decision = SprtDecision.CONTINUE
    return SprtResult(value, lower, upper, decision, spec)


# ---------------------------------------------------------------------------------------------
# Ratings of several engines


@dataclass(frozen=True)
class Pairing:
    """Aggregated results of ``first`` against ``second`` (wins are ``first``'s wins)."""

    first: str
    second: str
    results: Trinomial

    def __post_init__(self) -> None:
        if self.first == self.second:
            raise StatsInputError(f"an engine cannot play itself ({self.first!r})")


@dataclass(frozen=True)
class EngineRating:
    """One engine's maximum-likelihood rating, its 95% margin, games and points."""

    name: str
    elo: float
    error95: float
    games: int
    points: float

    @property
    def score(self) -> float:
        """Points per game (0.5 when the engine played no game)."""
        return self.points / self.games if self.games else 0.5


@dataclass(frozen=True)
class Ratings:
    """Ratings of every engine, strongest first, relative to ``anchor`` (None: the average)."""

    engines: tuple[EngineRating, ...]
    anchor: str | None
    anchor_elo: float

    def by_name(self, name: str) -> EngineRating:
        """The rating of one engine."""
        for entry in self.engines:
            if entry.name == name:
                return entry
        raise KeyError(name)


_ELO_SLOPE = math.log(10.0) / 400.0  # d ln(odds) / d Elo


def rate_engines(
    pairings: Iterable[Pairing],
    *,
    anchor: str | None = None,
    anchor_elo: float = 0.0,
    prior_draws: float = 1e-3,
) -> Ratings:
    """Logistic-Elo ratings maximising the likelihood of all games (Ordo/BayesElo-like).

    Each game scores s in {0, 1/2, 1} and contributes s ln E + (1 - s) ln(1 - E), with
    E = 1 / (1 + 10^((R_opponent - R) / 400)); colours are not modelled. ``prior_draws``
    virtual drawn games are added to every pairing that was played, so that an engine with a
    perfect score still gets a finite rating (the same purpose as fishtest's regularisation).
    Ratings are shifted so that ``anchor`` (or, when None, the average) is at ``anchor_elo``.

    The 95% margins come from the inverse of the information matrix, scaled by the observed
    dispersion of game scores around the model (a quasi-likelihood correction, so that draws
    narrow the margins); for two engines this is the delta-method margin of the score.
    """
    if prior_draws < 0.0 or not math.isfinite(prior_draws):
        raise StatsInputError("prior_draws must be a finite non-negative number")
    names: list[str] = []
    index: dict[str, int] = {}
    tallies: dict[tuple[int, int], list[int]] = {}  # (i, j), i < j: i's [wins, draws, losses]
    for pairing in pairings:
        for name in (pairing.first, pairing.second):
            if name not in index:
                index[name] = len(names)
                names.append(name)
        i, j = index[pairing.first], index[pairing.second]
        res = pairing.results if i < j else pairing.results.swapped()
        tally = tallies.setdefault((min(i, j), max(i, j)), [0, 0, 0])
        tally[0] += res.wins
        tally[1] += res.draws
        tally[2] += res.losses
    if anchor is not None and anchor not in index:
        raise StatsInputError(f"anchor engine {anchor!r} played no game")
    tallies = {key: t for key, t in tallies.items() if sum(t) > 0}
    if not names:
        return Ratings((), anchor, anchor_elo)
    _check_connected(names, tallies)

    weight = {key: sum(t) + prior_draws for key, t in tallies.items()}
    scored = {key: t[0] + 0.5 * t[1] + 0.5 * prior_draws for key, t in tallies.items()}
    size = len(names)
    fixed = index[anchor] if anchor is not None else 0
    free = [k for k in range(size) if k != fixed]
    ratings = [0.0] * size
    for _ in range(200):
        gradient, information = _likelihood_derivatives(ratings, weight, scored, size)
        reduced = [[information[a][b] for b in free] for a in free]
        step = _solve(reduced, [gradient[a] for a in free])
        largest = max((abs(x) for x in step), default=0.0)
        damping = min(1.0, 400.0 / largest) if largest > 0.0 else 1.0  # Elo per iteration
        for k, delta in zip(free, step, strict=True):
            ratings[k] += damping * delta
        if largest < 1e-9:
            break

    _, information = _likelihood_derivatives(ratings, weight, scored, size)
    covariance_free = _inverse([[information[a][b] for b in free] for a in free])
    covariance = [[0.0] * size for _ in range(size)]
    for x, a in enumerate(free):
        for y, b in enumerate(free):
            covariance[a][b] = covariance_free[x][y]
    dispersion = _dispersion(ratings, tallies)
    if anchor is None:  # re-express relative to the mean: r' = (I - J/n) r
        mean = sum(ratings) / size
        ratings = [r - mean for r in ratings]
        covariance = _centre(covariance)

    per_engine_games = [0] * size
    per_engine_points = [0.0] * size
    for (i, j), (wins, draws, losses) in tallies.items():
        per_engine_games[i] += wins + draws + losses
        per_engine_games[j] += wins + draws + losses
        per_engine_points[i] += wins + 0.5 * draws
        per_engine_points[j] += losses + 0.5 * draws
    entries = [
        EngineRating(
            name=names[k],
            elo=anchor_elo + ratings[k],
            error95=Z95 * math.sqrt(max(covariance[k][k], 0.0) * dispersion),
            games=per_engine_games[k],
            points=per_engine_points[k],
        )
        for k in range(size)
    ]
    entries.sort(key=lambda e: (-e.elo, e.name))
    return Ratings(tuple(entries), anchor, anchor_elo)


def _expected(ri: float, rj: float) -> float:
    return 1.0 / (1.0 + math.exp(-_ELO_SLOPE * (ri - rj)))


def _likelihood_derivatives(
    ratings: Sequence[float],
    weight: dict[tuple[int, int], float],
    scored: dict[tuple[int, int], float],
    size: int,
) -> tuple[list[float], list[list[float]]]:
    """Gradient of the log-likelihood and the (positive) information matrix, in Elo units."""
    gradient = [0.0] * size
    information = [[0.0] * size for _ in range(size)]
    for (i, j), n in weight.items():
        e = _expected(ratings[i], ratings[j])
        g = _ELO_SLOPE * (scored[(i, j)] - n * e)
        gradient[i] += g
        gradient[j] -= g
        h = _ELO_SLOPE**2 * n * e * (1.0 - e)
        information[i][i] += h
        information[j][j] += h
        information[i][j] -= h
        information[j][i] -= h
    return gradient, information


def _dispersion(ratings: Sequence[float], tallies: dict[tuple[int, int], list[int]]) -> float:
    """Observed variance of game scores around the model over its binomial variance."""
    observed = expected = 0.0
    for (i, j), (wins, draws, losses) in tallies.items():
        e = _expected(ratings[i], ratings[j])
        observed += wins * (1.0 - e) ** 2 + draws * (0.5 - e) ** 2 + losses * e**2
        expected += (wins + draws + losses) * e * (1.0 - e)
    return observed / expected if expected > 0.0 else 0.0


def _check_connected(names: Sequence[str], tallies: dict[tuple[int, int], list[int]]) -> None:
    neighbours: dict[int, set[int]] = {k: set() for k in range(len(names))}
    for i, j in tallies:
        neighbours[i].add(j)
        neighbours[j].add(i)
    seen = {0}
    todo = [0]
    while todo:
        for other in neighbours[todo.pop()]:
            if other not in seen:
                seen.add(other)
                todo.append(other)
    if len(seen) != len(names):
        apart = sorted(names[k] for k in range(len(names)) if k not in seen)
        raise StatsInputError(
            f"engines {', '.join(apart)} are not connected by games to {names[0]}: "
            "their ratings cannot be compared"
        )


def _solve(matrix: list[list[float]], rhs: list[float]) -> list[float]:
    """Solve matrix @ x = rhs by Gaussian elimination with partial pivoting."""
    size = len(rhs)
    rows = [list(row) + [value] for row, value in zip(matrix, rhs, strict=True)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(rows[r][col]))
        if rows[pivot][col] == 0.0:
            raise ArithmeticError("singular information matrix")
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(col + 1, size):
            factor = rows[r][col] / rows[col][col]
            if factor:
                for c in range(col, size + 1):
                    rows[r][c] -= factor * rows[col][c]
    solution = [0.0] * size
    for r in range(size - 1, -1, -1):
        acc = rows[r][size] - sum(rows[r][c] * solution[c] for c in range(r + 1, size))
        solution[r] = acc / rows[r][r]
    return solution


def _inverse(matrix: list[list[float]]) -> list[list[float]]:
    size = len(matrix)
    columns = [_solve(matrix, [1.0 if r == c else 0.0 for r in range(size)]) for c in range(size)]
    return [[columns[c][r] for c in range(size)] for r in range(size)]


def _centre(cov: list[list[float]]) -> list[list[float]]:
    """Covariance of r - mean(r) given the covariance of r."""
    size = len(cov)
    row_mean = [sum(row) / size for row in cov]
    col_mean = [sum(cov[r][c] for r in range(size)) / size for c in range(size)]
    total_mean = sum(row_mean) / size
    return [
        [cov[r][c] - row_mean[r] - col_mean[c] + total_mean for c in range(size)]
        for r in range(size)
    ]
