"""fastchess's statistics, computed as it computes them, so that every printed digit agrees.

fastchess prints its Elo, error bars, LOS, ratios and LLR with two decimals from IEEE doubles,
including the special values a young match produces (``inf``, ``-nan``: a zero variance, no
pair yet). The runner's own statistics (`runner.stats`) solve the same SPRT to a tighter
tolerance with another root finder and refuse the degenerate inputs; here the arithmetic is
fastchess's step by step (its ITP root finder and tolerances, its regularisation, its order
of operations) and the C semantics of division by zero and of logarithms outside their
domain are kept, including the sign of a NaN that x86 gives (``0/0`` is ``-nan``), which fmt
prints. Also the header's figures of a run: its game count and each engine's limit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from runner.dropin.fastchess.settings import EngineSummary, FastchessSettings

__all__ = [
    "EloFigures",
    "FcStats",
    "FcSprt",
    "elo_figures",
    "elo_score",
    "fixed",
    "time_label",
    "total_games",
]

_NEG_NAN = -math.nan  # the x86 "default NaN" an invalid operation yields (sign bit set)
_CI95 = 1.959963984540054
_NELO = 800.0 / math.log(10)


def _div(a: float, b: float) -> float:
    """``a / b`` as a C double division: no exception for a zero divisor."""
    if b != 0:
        return a / b
    if math.isnan(a):
        return a
    if a == 0:
        return _NEG_NAN
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _log10(x: float) -> float:
    """C's log10: -inf at zero, NaN below."""
    if x == 0:
        return -math.inf
    if x < 0:
        return _NEG_NAN
    return math.log10(x)


def _log(x: float) -> float:
    """C's log: -inf at zero, NaN below."""
    if x == 0:
        return -math.inf
    if x < 0:
        return _NEG_NAN
    return math.log(x)


def _sqrt(x: float) -> float:
    """C's sqrt: NaN below zero."""
    return _NEG_NAN if x < 0 else math.sqrt(x)


def fixed(value: float, decimals: int = 2) -> str:
    """``{:.Nf}`` as fmt writes it: ``inf``, ``-inf``, ``nan`` and ``-nan`` (the sign bit shown)."""
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return f"{value:.{decimals}f}"


@dataclass
class FcStats:
    """fastchess's ``Stats``: game counts and pair (pentanomial) counts from one side's view."""

    wins: int = 0
    losses: int = 0
    draws: int = 0
    penta_ww: int = 0
    penta_wd: int = 0
    penta_wl: int = 0
    penta_dd: int = 0
    penta_ld: int = 0
    penta_ll: int = 0

    def __iadd__(self, other: FcStats) -> FcStats:
        self.wins += other.wins
        self.losses += other.losses
        self.draws += other.draws
        self.penta_ww += other.penta_ww
        self.penta_wd += other.penta_wd
        self.penta_wl += other.penta_wl
        self.penta_dd += other.penta_dd
        self.penta_ld += other.penta_ld
        self.penta_ll += other.penta_ll
        return self

    def __add__(self, other: FcStats) -> FcStats:
        total = self.copy()
        total += other
        return total

    def copy(self) -> FcStats:
        """An independent copy."""
        return FcStats(self.wins, self.losses, self.draws, self.penta_ww, self.penta_wd,
                       self.penta_wl, self.penta_dd, self.penta_ld, self.penta_ll)

    def inverted(self) -> FcStats:
        """The same counts from the other side's view (fastchess's ``operator~``)."""
        return FcStats(self.losses, self.wins, self.draws, self.penta_ll, self.penta_ld,
                       self.penta_wl, self.penta_dd, self.penta_wd, self.penta_ww)

    @property
    def games(self) -> int:
        """Games counted."""
        return self.wins + self.losses + self.draws

    @property
    def pairs(self) -> int:
        """Pairs counted."""
        return (self.penta_ww + self.penta_wd + self.penta_wl + self.penta_dd + self.penta_ld
                + self.penta_ll)

    @property
    def points(self) -> float:
        """Wins plus half the draws."""
        return self.wins + 0.5 * self.draws

    def points_ratio(self) -> float:
        """Points in percent of the games."""
        return _div(self.points, float(self.games)) * 100

    def draw_ratio(self) -> float:
        """Draws in percent of the games."""
        return _div(100.0 * self.draws, float(self.games))

    def draw_ratio_penta(self) -> float:
        """Even pairs (win-loss or two draws) in percent of the pairs."""
        return _div(float(self.penta_wl + self.penta_dd), float(self.pairs)) * 100.0

    def pairs_ratio(self) -> float:
        """Pairs won (WW, WD) over pairs lost (LD, LL)."""
        return _div(float(self.penta_ww + self.penta_wd), float(self.penta_ld + self.penta_ll))

    def wl_dd_ratio(self) -> float:
        """Win-loss pairs over double-draw pairs."""
        return _div(float(self.penta_wl), float(self.penta_dd))

    def penta_text(self) -> str:
        """``[LL, LD, WL+DD, WD, WW]``."""
        return (f"[{self.penta_ll}, {self.penta_ld}, {self.penta_wl + self.penta_dd}, "
                f"{self.penta_wd}, {self.penta_ww}]")


@dataclass(frozen=True)
class EloFigures:
    """One Elo estimate as fastchess prints it."""

    diff: float
    error: float
    nelo_diff: float
    nelo_error: float
    los: float
    """In percent."""

    def elo_text(self) -> str:
        """``x +/- y``."""
        return f"{fixed(self.diff)} +/- {fixed(self.error)}"

    def nelo_text(self) -> str:
        """``x +/- y`` in normalized Elo."""
        return f"{fixed(self.nelo_diff)} +/- {fixed(self.nelo_error)}"

    def los_text(self) -> str:
        """``x %``."""
        return f"{fixed(self.los)} %"


def _score_to_elo(score: float) -> float:
    return -400.0 * _log10(_div(1.0, score) - 1.0)


def elo_figures(stats: FcStats, penta: bool) -> EloFigures:
    """fastchess's ``EloPentanomial`` (pairs) or ``EloWDL`` (games) of `stats`."""
    if penta:
        n = float(stats.pairs)
        ww, wd, wl = _div(stats.penta_ww, n), _div(stats.penta_wd, n), _div(stats.penta_wl, n)
        dd, ld, ll = _div(stats.penta_dd, n), _div(stats.penta_ld, n), _div(stats.penta_ll, n)
        score = ww + 0.75 * wd + 0.5 * (wl + dd) + 0.25 * ld
        variance = (ww * math.pow(1 - score, 2) + wd * math.pow(0.75 - score, 2)
                    + (wl + dd) * math.pow(0.5 - score, 2) + ld * math.pow(0.25 - score, 2)
                    + ll * math.pow(0 - score, 2))
        spread = 2 * variance
    else:
        n = float(stats.games)
        w, d, lo = _div(stats.wins, n), _div(stats.draws, n), _div(stats.losses, n)
        score = w + 0.5 * d
        variance = (w * math.pow(1 - score, 2) + d * math.pow(0.5 - score, 2)
                    + lo * math.pow(0 - score, 2))
        spread = variance
    per_unit = _div(variance, n)
    upper = score + _CI95 * _sqrt(per_unit)
    lower = score - _CI95 * _sqrt(per_unit)

    def nelo(s: float) -> float:
        return _div(s - 0.5, _sqrt(spread)) * _NELO

    los = (1 - math.erf(_div(-(score - 0.5), _sqrt(2.0 * per_unit)))) / 2.0
    return EloFigures(
        diff=_score_to_elo(score),
        error=(_score_to_elo(upper) - _score_to_elo(lower)) / 2.0,
        nelo_diff=nelo(score),
        nelo_error=(nelo(upper) - nelo(lower)) / 2.0,
        los=los * 100.0,
    )


def elo_score(stats: FcStats) -> float:
    """The score (wins and half the draws over the games) of fastchess's ``EloWDL``."""
    n = float(stats.games)
    return _div(stats.wins, n) + 0.5 * _div(stats.draws, n)


def _regularize(count: int) -> float:
    return 1e-3 if count == 0 else float(count)


def _itp(f: Callable[[float], float], a: float, b: float, f_a: float, f_b: float,
         k_1: float, k_2: float, n_0: float, epsilon: float) -> float:
    """The ITP root finder (Oliveira and Takahashi, 2020) with fastchess's arguments."""
    if f_a > 0:
        a, b = b, a
        f_a, f_b = f_b, f_a
    n_half = math.ceil(math.log2(abs(b - a) / (2.0 * epsilon)))
    n_max = n_half + n_0
    i = 0
    while abs(b - a) > 2.0 * epsilon:
        x_half = (a + b) / 2.0
        r = epsilon * math.pow(2.0, n_max - i) - (b - a) / 2.0
        delta = k_1 * math.pow(b - a, k_2)
        x_f = _div(f_b * a - f_a * b, f_b - f_a)
        sigma = _div(x_half - x_f, abs(x_half - x_f))
        x_t = x_f + sigma * delta if delta <= abs(x_half - x_f) else x_half
        x_itp = x_t if abs(x_t - x_half) <= r else x_half - sigma * r
        f_itp = f(x_itp)
        if f_itp == 0:
            a = b = x_itp
        elif math.copysign(1.0, f_itp) < 0:
            a, f_a = x_itp, f_itp
        else:
            b, f_b = x_itp, f_itp
        i += 1
    return (a + b) / 2.0


def _mean(x: Sequence[float], p: Sequence[float]) -> float:
    result = 0.0
    for xi, pi in zip(x, p, strict=True):
        result += xi * pi
    return result


def _llr_logistic(total: float, scores: Sequence[float], probs: Sequence[float], s0: float,
                  s1: float) -> float:
    def mle(s: float) -> list[float]:
        def f(x: float) -> float:
            result = 0.0
            for a_i, p_i in zip(scores, probs, strict=True):
                result += p_i * (a_i - s) / (1.0 + x * (a_i - s))
            return result

        theta = _itp(f, _div(-1.0, scores[-1] - s), _div(-1.0, scores[0] - s), math.inf,
                     -math.inf, 0.1, 2.0, 0.99, 1e-3)
        return [p_i / (1 + theta * (a_i - s)) for a_i, p_i in zip(scores, probs, strict=True)]

    p0, p1 = mle(s0), mle(s1)
    lpr = [_log(b) - _log(a) for a, b in zip(p0, p1, strict=True)]
    return total * _mean(lpr, probs)


def _llr_normalized(total: float, scores: Sequence[float], probs: Sequence[float], t0: float,
                    t1: float) -> float:
    n = len(scores)

    def mle(mu_ref: float, t_star: float) -> list[float]:
        p = [1.0 / n] * n
        for _ in range(10):
            mu = _mean(scores, p)
            var = 0.0
            for a_i, p_i in zip(scores, p, strict=True):
                var += p_i * (a_i - mu) * (a_i - mu)
            sigma = _sqrt(var)
            phi = [a_i - mu_ref - 0.5 * t_star * sigma
                   * (1.0 + _div(a_i - mu, sigma) * _div(a_i - mu, sigma)) for a_i in scores]
            u, v = min(phi), max(phi)

            def f(x: float, phi: list[float] = phi) -> float:
                result = 0.0
                for phat_i, phi_i in zip(probs, phi, strict=True):
                    result += phat_i * phi_i / (1.0 + x * phi_i)
                return result

            theta = _itp(f, _div(-1.0, v), _div(-1.0, u), math.inf, -math.inf, 0.1, 2.0, 0.99,
                         1e-7)
            max_diff = 0.0
            for i in range(n):
                new = probs[i] / (1.0 + theta * phi[i])
                max_diff = max(max_diff, abs(new - p[i]))
                p[i] = new
            if max_diff < 1e-4:
                break
        return p

    p0, p1 = mle(0.5, t0), mle(0.5, t1)
    lpr = [_log(b) - _log(a) for a, b in zip(p0, p1, strict=True)]
    return total * _mean(lpr, probs)


def _lelo_to_score(lelo: float) -> float:
    return 1 / (1 + math.pow(10, -lelo / 400))


def _bayeselo_to_score(bayeselo: float, drawelo: float) -> float:
    pwin = 1.0 / (1.0 + math.pow(10.0, (-bayeselo + drawelo) / 400.0))
    ploss = 1.0 / (1.0 + math.pow(10.0, (bayeselo + drawelo) / 400.0))
    return pwin + 0.5 * (1.0 - pwin - ploss)


@dataclass(frozen=True)
class FcSprt:
    """fastchess's SPRT: bounds, the LLR of a count and the decision."""

    elo0: float
    elo1: float
    alpha: float
    beta: float
    model: str = "normalized"

    @property
    def lower(self) -> float:
        """The H0 bound, log(beta / (1 - alpha))."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """The H1 bound, log((1 - beta) / alpha)."""
        return math.log((1 - self.beta) / self.alpha)

    def llr(self, stats: FcStats, penta: bool) -> float:
        """The log-likelihood ratio of `stats` (pairs when `penta`)."""
        if penta:
            counts = [_regularize(stats.penta_ll), _regularize(stats.penta_ld),
                      _regularize(stats.penta_dd + stats.penta_wl), _regularize(stats.penta_wd),
                      _regularize(stats.penta_ww)]
            # fastchess sums in the order WW, WD, WL+DD, LD, LL
            total = counts[4] + counts[3] + counts[2] + counts[1] + counts[0]
            probs = [c / total for c in counts]
            scores = [0.0, 0.25, 0.5, 0.75, 1.0]
            if self.model == "normalized":
                t0 = math.sqrt(2.0) * self.elo0 / _NELO
                t1 = math.sqrt(2.0) * self.elo1 / _NELO
                return _llr_normalized(total, scores, probs, t0, t1)
            return _llr_logistic(total, scores, probs, _lelo_to_score(self.elo0),
                                 _lelo_to_score(self.elo1))
        loss, draw, win = (_regularize(stats.losses), _regularize(stats.draws),
                           _regularize(stats.wins))
        total = loss + draw + win
        probs = [loss / total, draw / total, win / total]
        scores3 = [0.0, 0.5, 1.0]
        if self.model == "normalized":
            return _llr_normalized(total, scores3, probs, self.elo0 / _NELO, self.elo1 / _NELO)
        if self.model == "bayesian":
            if stats.wins == 0 or stats.losses == 0:
                return 0.0
            lo, w = probs[0], probs[2]
            drawelo = 200 * _log10((1 - lo) / lo * (1 - w) / w)
            return _llr_logistic(total, scores3, probs, _bayeselo_to_score(self.elo0, drawelo),
                                 _bayeselo_to_score(self.elo1, drawelo))
        return _llr_logistic(total, scores3, probs, _lelo_to_score(self.elo0),
                             _lelo_to_score(self.elo1))

    def fraction(self, llr: float) -> float:
        """How far the LLR has gone towards the bound on its side (1.0: reached)."""
        return llr / self.upper if llr >= 0 else -llr / self.lower

    def decision(self, llr: float) -> str | None:
        """``H1``, ``H0`` or None (go on)."""
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return None

    def bounds_text(self) -> str:
        """``(lower, upper)``."""
        return f"({fixed(self.lower)}, {fixed(self.upper)})"

    def elo_text(self) -> str:
        """``[elo0, elo1]``."""
        return f"[{fixed(self.elo0)}, {fixed(self.elo1)}]"


def total_games(settings: FastchessSettings) -> int:
    """The games the schedule holds (fastchess's ``Started game N of M``)."""
    players = max(2, len(settings.engines))
    if settings.tournament == "gauntlet":
        seeds = min(settings.seeds, players - 1)
        pairings = seeds * players - seeds * (seeds + 1) // 2
    else:
        pairings = players * (players - 1) // 2
    return pairings * settings.rounds * settings.games


def _short(value: float) -> str:
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def time_label(engine: EngineSummary) -> str:
    """The limit as the results header shows it (``10+0.1``, ``0.5/move``, ``7 plies``)."""
    if engine.tc_time_ms + engine.tc_increment_ms > 0:
        moves = f"{engine.tc_moves}/" if engine.tc_moves > 0 else ""
        increment = (f"+{engine.tc_increment_ms / 1000.0:.2g}"
                     if engine.tc_increment_ms > 0 else "")
        return f"{moves}{_short(engine.tc_time_ms / 1000.0)}{increment}"
    if engine.fixed_time_ms > 0:
        return f"{_short(engine.fixed_time_ms / 1000.0)}/move"
    if engine.plies > 0:
        return f"{engine.plies} plies"
    if engine.nodes > 0:
        return f"{engine.nodes} nodes"
    return ""
