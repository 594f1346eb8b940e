"""Fishtest's bad-worker statistics (runner.stats.residual), number for number on hand-made
counts. The expected figures are worked out here from fishtest's formulas
(official-stockfish/fishtest, server/fishtest/util.py: get_chi2, get_bad_workers,
crash_or_time), by hand in fractions: Pearson's chi-squared of the workers' folded pair
counts, the tail of a chi-squared of 2k degrees of freedom as exp(-x/2) times the first k
terms of exp(x/2)'s series, and the normal quantiles by bisection on math.erfc (not the
module's own quantile function)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from runner.stats.residual import (
    Colour,
    WorkerCounts,
    bad_worker,
    colour,
    crash_or_time,
    pair_columns,
    worker_test,
)


def _upper_z(tail: float) -> float:
    """The z whose standard normal upper tail is `tail`, by bisection on erfc."""
    low, high = -40.0, 40.0
    for _ in range(200):
        middle = (low + high) / 2
        if 0.5 * math.erfc(middle / math.sqrt(2)) > tail:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def test_folding_into_won_lost_even_pairs() -> None:
    # (LL, LD, WL+DD, WD, WW) -> (WD+WW, LL+LD, WL+DD), as fishtest's wld list.
    assert pair_columns((4, 6, 30, 15, 5)) == (20.0, 10.0, 30.0)


def test_two_workers_mirrored() -> None:
    # Rows (won, lost, even): A (20, 10, 30), B (10, 20, 30); column sums 30, 30, 60 of 120,
    # so every expected row is (15, 15, 30): each row's chi2 is 25/15 + 25/15 = 10/3.
    counts = {"a": (4, 6, 30, 15, 5), "b": (15, 5, 30, 6, 4),
              "thin": (0, 1, 2, 1, 0)}  # expected counts under 5: left out of the test
    test = worker_test(counts)
    row = Fraction(10, 3)
    assert test.dof == 2
    assert test.chi2 == pytest.approx(float(2 * row), rel=1e-12)
    assert test.p == pytest.approx(math.exp(-float(row)), rel=1e-12)  # 2 dof: exp(-chi2/2)
    adjusted = row / (1 - Fraction(60, 120))  # the row against the other rows collapsed
    expected_z = _upper_z(math.exp(-float(adjusted) / 2))
    assert set(test.residual) == {"a", "b"}
    assert test.residual["a"] == pytest.approx(expected_z, abs=1e-9)
    assert test.residual["b"] == pytest.approx(expected_z, abs=1e-9)
    assert expected_z == pytest.approx(1.80, abs=0.01)
    # Bonferroni over two workers: the 97.5% and 99.5% normal points.
    assert test.z_95 == pytest.approx(1.959963984540054, abs=1e-9)
    assert test.z_99 == pytest.approx(2.5758293035489004, abs=1e-9)
    assert bad_worker(test) is None  # p = 0.036, residuals 1.8: nothing to flag
    assert colour(test, "a", WorkerCounts(counts["a"], games=120)) is Colour.GREEN


def test_one_bad_worker_among_three() -> None:
    # Rows: two honest (20, 20, 60) and mallory (50, 10, 40); sums 90, 50, 160 of 300, each
    # row 100, so every expected row is (30, 50/3, 160/3). Honest rows: 10/3 + 2/3 + 5/6 =
    # 29/6; mallory: 40/3 + 8/3 + 10/3 = 58/3; chi2 = 29 on 4 degrees of freedom.
    counts = {"honest1": (10, 10, 60, 10, 10), "honest2": (5, 15, 60, 15, 5),
              "mallory": (0, 10, 40, 30, 20)}
    test = worker_test(counts)
    assert test.dof == 4
    assert test.chi2 == pytest.approx(29.0, rel=1e-12)
    assert test.p == pytest.approx(math.exp(-14.5) * (1 + 14.5), rel=1e-12)
    honest = float(Fraction(29, 6) / (1 - Fraction(1, 3)))  # 29/4
    bad = float(Fraction(58, 3) / (1 - Fraction(1, 3)))  # 29
    assert test.residual["honest1"] == pytest.approx(_upper_z(math.exp(-honest / 2)), abs=1e-9)
    assert test.residual["mallory"] == pytest.approx(_upper_z(math.exp(-bad / 2)), abs=1e-9)
    assert test.z_95 == pytest.approx(_upper_z(0.05 / 3), abs=1e-9)
    assert test.z_99 == pytest.approx(_upper_z(0.01 / 3), abs=1e-9)
    assert bad_worker(test) == "mallory"  # p = 7.8e-6 < 0.001: the largest residual
    assert colour(test, "mallory", WorkerCounts(counts["mallory"], games=200)) is Colour.RED
    assert colour(test, "honest1", WorkerCounts(counts["honest1"], games=200)) is Colour.GREEN
    # Over 7 the worst is flagged whatever the p-value; under both thresholds nobody is.
    assert bad_worker(test, p=0.0, res=4.0) == "mallory"
    assert bad_worker(test, p=0.0, res=7.0) is None


def test_no_test_with_fewer_than_two_workers() -> None:
    test = worker_test({"only": (10, 10, 60, 10, 10), "thin": (0, 0, 1, 0, 0)})
    assert math.isnan(test.chi2) and math.isnan(test.p) and test.residual == {}
    assert bad_worker(test) is None


def test_crashes_and_time_losses() -> None:
    counts = (10, 10, 60, 10, 10)
    assert crash_or_time(WorkerCounts(counts, games=200, crashes=4))
    assert not crash_or_time(WorkerCounts(counts, games=200, crashes=3))
    assert crash_or_time(WorkerCounts(counts, games=21, time_losses=3))  # 1/7 > 1/10
    assert not crash_or_time(WorkerCounts(counts, games=20, time_losses=5))  # 20 is not > 20
    assert not crash_or_time(WorkerCounts(counts, games=30, time_losses=3))  # exactly 1/10
    test = worker_test({"a": counts, "b": counts})
    assert colour(test, "a", WorkerCounts(counts, games=200)) is Colour.GREEN
    assert colour(test, "a", WorkerCounts(counts, games=200, crashes=5)) is Colour.RED
