"""Ratings of several engines: maximum-likelihood logistic Elo over all their games."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from runner.stats.counts import StatsInputError, Trinomial
from runner.stats.elo import Z95

__all__ = ["EngineRating", "Pairing", "Ratings", "rate_engines"]


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
    names, tallies = _fold(pairings)
    if anchor is not None and anchor not in names:
        raise StatsInputError(f"anchor engine {anchor!r} played no game")
    tallies = {key: t for key, t in tallies.items() if sum(t) > 0}
    if not names:
        return Ratings((), anchor, anchor_elo)
    _check_connected(names, tallies)

    weight = {key: sum(t) + prior_draws for key, t in tallies.items()}
    scored = {key: t[0] + 0.5 * t[1] + 0.5 * prior_draws for key, t in tallies.items()}
    size = len(names)
    fixed = names.index(anchor) if anchor is not None else 0
    free = [k for k in range(size) if k != fixed]
    ratings = _maximise_likelihood(weight, scored, size, free)
    covariance = _covariance(ratings, weight, scored, size, free)
    dispersion = _dispersion(ratings, tallies)
    if anchor is None:  # re-express relative to the mean: r' = (I - J/n) r
        mean = sum(ratings) / size
        ratings = [r - mean for r in ratings]
        covariance = _centre(covariance)

    per_engine_games, per_engine_points = _totals(tallies, size)
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


def _totals(tallies: dict[tuple[int, int], list[int]], size: int) -> tuple[list[int], list[float]]:
    """Games and points of each engine, summed over its pairings."""
    games = [0] * size
    points = [0.0] * size
    for (i, j), (wins, draws, losses) in tallies.items():
        games[i] += wins + draws + losses
        games[j] += wins + draws + losses
        points[i] += wins + 0.5 * draws
        points[j] += losses + 0.5 * draws
    return games, points


def _fold(pairings: Iterable[Pairing]) -> tuple[list[str], dict[tuple[int, int], list[int]]]:
    """Engines in order of appearance, and each unordered pair (i < j) as i's [W, D, L]."""
    names: list[str] = []
    index: dict[str, int] = {}
    tallies: dict[tuple[int, int], list[int]] = {}
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
    return names, tallies


def _maximise_likelihood(weight: dict[tuple[int, int], float],
                         scored: dict[tuple[int, int], float], size: int,
                         free: Sequence[int]) -> list[float]:
    """Ratings maximising the likelihood, by damped Newton steps on the `free` engines."""
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
    return ratings


def _covariance(ratings: Sequence[float], weight: dict[tuple[int, int], float],
                scored: dict[tuple[int, int], float], size: int,
                free: Sequence[int]) -> list[list[float]]:
    """Covariance of the ratings: the inverse information of the free engines, the fixed
    engine's row and column zero."""
    _, information = _likelihood_derivatives(ratings, weight, scored, size)
    covariance_free = _inverse([[information[a][b] for b in free] for a in free])
    covariance = [[0.0] * size for _ in range(size)]
    for x, a in enumerate(free):
        for y, b in enumerate(free):
            covariance[a][b] = covariance_free[x][y]
    return covariance


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
