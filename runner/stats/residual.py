"""Bad workers: fishtest's per-worker residual over the pentanomial counts, and its crash and
time-loss rule.

Fishtest (server/fishtest/util.py: get_chi2, get_bad_workers, crash_or_time) asks whether
every worker's games of one test come from the same distribution. Each worker's pentanomial
pair counts (LL, LD, WL+DD, WD, WW) are folded into three columns (pairs won: WD+WW, lost:
LL+LD, even: WL+DD), since the outer counts are too rare for the test; a worker any of whose
expected counts is 5 or less is left out, again until none is (with fewer than two workers
left there is no test). On that table, Pearson's chi-squared with (rows-1)(columns-1)
degrees of freedom gives the test's p-value; each worker's own chi-squared, divided by one
minus its share of the pairs, is the chi-squared of its row against all the others collapsed
(columns-1 degrees of freedom), which is turned into a standard normal "residual" (its upper
tail probability read back as a z value, floored at 0). Yellow and red start at the 95% and
99% points with Bonferroni's correction for the number of workers. The worker to flag is the
one with the largest residual, when the whole table's p-value is under 0.001 or its residual
is over 7. Apart from that, a worker with more than 3 crashes, or more than 20 games of which
over a tenth were lost on time, is flagged with a residual of 10.

The normal and chi-squared tails are computed here in closed form (three columns give even
degrees of freedom, whose chi-squared tail is a finite sum), with no numerical library.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

__all__ = ["BAD_P", "BAD_RESIDUAL", "CRASH_RESIDUAL", "Colour", "WorkerCounts", "WorkerTest",
           "bad_worker", "colour", "crash_or_time", "pair_columns", "worker_test"]

BAD_P = 0.001
"""The table's p-value under which its worst worker is flagged (fishtest's ``p``)."""
BAD_RESIDUAL = 7.0
"""The residual over which a worker is flagged whatever the table's p-value (``res``)."""
CRASH_RESIDUAL = 10.0
"""The residual fishtest shows for a worker flagged by its crashes or time losses."""
_MIN_EXPECTED = 5.0
"""A worker with an expected count of at most this in any column is left out of the test."""
_Z_CAP = 38.0
"""The largest residual reported: past it the normal tail is below a double's range."""


@dataclass(frozen=True)
class WorkerCounts:
    """One worker's games of one tournament: its pentanomial pair counts (LL, LD, WL+DD, WD,
    WW, from the first engine's side), its games, crashes and losses on time."""

    pentanomial: tuple[int, int, int, int, int]
    games: int = 0
    crashes: int = 0
    time_losses: int = 0


@dataclass(frozen=True)
class WorkerTest:
    """The chi-squared test over the workers that qualified, and each one's residual."""

    chi2: float
    """Pearson's chi-squared of the table (NaN: no test, fewer than two workers qualify)."""
    dof: int
    p: float
    """The table's p-value (NaN without a test)."""
    residual: Mapping[str, float]
    """Each qualifying worker's residual (a standard normal value, 0 or more)."""
    z_95: float
    """The residual from which a worker shows yellow (NaN without a test)."""
    z_99: float
    """The residual from which a worker shows red (NaN without a test)."""


class Colour(enum.Enum):
    """How a worker's residual is shown, as fishtest colours it."""

    GREEN = "green"
    YELLOW = "yellow"
    RED = "red"


_NO_TEST = WorkerTest(math.nan, 0, math.nan, {}, math.nan, math.nan)
_NORMAL = NormalDist()


def pair_columns(pentanomial: Sequence[int]) -> tuple[float, float, float]:
    """A pentanomial count folded into fishtest's three columns: won, lost, even pairs."""
    ll, ld, even, wd, ww = pentanomial
    return float(wd + ww), float(ll + ld), float(even)


def _chi2_sf_even(x: float, dof: int) -> float:
    """The upper tail of the chi-squared distribution for an even `dof` (a finite sum)."""
    if x <= 0.0:
        return 1.0
    half = x / 2.0
    term = 1.0
    total = 1.0
    for i in range(1, dof // 2):
        term *= half / i
        total += term
    return math.exp(-half) * total


def _upper_z(tail: float) -> float:
    """The standard normal value whose upper tail is `tail` (scipy's ``norm.isf``)."""
    if tail <= 0.0:
        return _Z_CAP
    if tail >= 1.0:
        return -_Z_CAP
    return min(_Z_CAP, -_NORMAL.inv_cdf(tail))


def worker_test(counts: Mapping[str, Sequence[int]]) -> WorkerTest:
    """Fishtest's chi-squared test of the workers' pentanomial counts (by worker name)."""
    rows = {name: pair_columns(pentanomial) for name, pentanomial in counts.items()}
    while True:
        if len(rows) <= 1:
            return _NO_TEST
        column_sums = [sum(row[c] for row in rows.values()) for c in range(3)]
        total = sum(column_sums)
        if total == 0:
            return _NO_TEST
        expected = {name: [sum(row) * column_sums[c] / total for c in range(3)]
                    for name, row in rows.items()}
        thin = [name for name, cells in expected.items() if min(cells) <= _MIN_EXPECTED]
        if not thin:
            break
        for name in thin:
            del rows[name]
    count = len(rows)
    dof = (count - 1) * 2
    row_chi2 = {name: sum((row[c] - expected[name][c]) ** 2 / expected[name][c]
                          for c in range(3))
                for name, row in rows.items()}
    chi2 = sum(row_chi2.values())
    residual = {name: max(0.0, _upper_z(_chi2_sf_even(
                    value / (1.0 - sum(rows[name]) / total), 2)))
                for name, value in row_chi2.items()}
    z_95, z_99 = (_upper_z(level / count) for level in (0.05, 0.01))
    return WorkerTest(chi2, dof, _chi2_sf_even(chi2, dof), residual, z_95, z_99)


def crash_or_time(worker: WorkerCounts) -> bool:
    """Fishtest's rule apart from the test: more than 3 crashes, or over 20 games of which
    more than a tenth were lost on time."""
    return worker.crashes > 3 or (worker.games > 20 and worker.time_losses / worker.games > 0.1)


def colour(test: WorkerTest, name: str, worker: WorkerCounts) -> Colour:
    """How `name`'s residual shows: red by the crash and time rule or past the 99% point,
    yellow past the 95% one. A worker left out of the test (too few games) shows red, as
    fishtest's infinite residual for it does."""
    if crash_or_time(worker):
        return Colour.RED
    value = test.residual.get(name, math.inf)
    if value < test.z_95:
        return Colour.GREEN
    if value < test.z_99:
        return Colour.YELLOW
    return Colour.RED


def bad_worker(test: WorkerTest, *, p: float = BAD_P, res: float = BAD_RESIDUAL) -> str | None:
    """The worker fishtest flags: the largest residual when the table's p-value is under `p`
    or that residual is over `res` (the first such by name order on a tie); None if none."""
    worst: str | None = None
    for name in sorted(test.residual):
        value = test.residual[name]
        if (test.p < p or value > res) and (worst is None or value > test.residual[worst]):
            worst = name
    return worst
