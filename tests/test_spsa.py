"""SPSA's update rule against fishtest's, number for number on scripted flips and results.

The expected numbers were computed apart from runner.tuning, from fishtest's end-state form of
its gains (server/fishtest/spsa_handler.py and its run creation): with N iterations,
A = int(0.1 * N), c_k = c_end * (N / k)**0.101, a_k = r_end * c_end**2 * ((A + N) / (A + k))**0.602,
the plus side at clamp(theta + c_k * flip) and theta moved to clamp(theta + a_k / c_k * result * flip).
By hand for the first row: c_1 = 4 * 10**0.101 = 5.04731; a_1 = 0.2 * 16 * (11 / 2)**0.602
= 8.93108; theta = 100 + 8.93108 / 5.04731 * 2 = 103.53849.
"""

from __future__ import annotations

import pytest

from runner.tuning.spsa import (
    SpinParameter,
    flips,
    gains,
    probe,
    rounding_draws,
    spin_value,
    step,
)

SCRIPTED_FLIPS = (1, -1, -1, 1, 1, -1, 1, 1, -1, 1)
SCRIPTED_RESULTS = (2, -1, 0, 1, -2, 2, 1, 0, -1, 2)

# (plus side's value, theta after the pair) for iterations 1..10
WIDE = (
    (105.047310138, 103.538492845),
    (98.832449079, 105.025063028),
    (100.507848205, 105.025063028),
    (109.41291464, 106.197356914),
    (110.487423381, 104.048599952),
    (99.836809894, 102.053876768),
    (106.200600376, 102.988643211),
    (107.079816758, 102.988643211),
    (98.945850278, 103.826918911),
    (107.826918911, 105.426918911),
)
# the same script on a narrow range, so both the probes and theta hit the bounds
NARROW = (
    (12, 12),
    (9.646978117, 12),
    (9.741392588, 12.0),
    (12, 12),
    (12, 9.314053797),
    (7.208158769, 6.820649818),
    (8.894011622, 7.989107871),
    (10.034694645, 7.989107871),
    (5.967711405, 9.036952496),
    (11.036952496, 11.036952496),
)


@pytest.mark.parametrize(
    ("parameter", "expected"),
    [
        (SpinParameter("Wide", start=100, minimum=0, maximum=200, c_end=4, r_end=0.2), WIDE),
        (SpinParameter("Narrow", start=10, minimum=0, maximum=12, c_end=2, r_end=0.5), NARROW),
    ],
)
def test_update_rule_matches_fishtests_numbers(parameter: SpinParameter, expected: tuple) -> None:
    """Ten scripted iterations give fishtest's plus-side values and thetas to 1e-6."""
    plan = gains(parameter, 10)
    theta = parameter.start
    for k, (flip, result, (plus, after)) in enumerate(
        zip(SCRIPTED_FLIPS, SCRIPTED_RESULTS, expected, strict=True), 1
    ):
        played = probe(parameter, plan, theta, k, flip)
        assert played.plus == pytest.approx(plus, abs=1e-6), k
        theta = step(parameter, theta, played, result)
        assert theta == pytest.approx(after, abs=1e-6), k


def test_minus_side_mirrors_the_plus_side_and_is_clamped() -> None:
    """The minus side sits as far below theta as the plus side above, held at the bounds."""
    parameter = SpinParameter("P", start=10, minimum=0, maximum=12, c_end=2, r_end=0.5)
    plan = gains(parameter, 10)
    played = probe(parameter, plan, 6, 1, -1)
    assert played.plus + played.minus == pytest.approx(12)
    edge = probe(parameter, plan, 11, 1, 1)
    assert (edge.plus, edge.minus) == (12, pytest.approx(11 - edge.c_k))


def test_last_iteration_ends_at_c_end_and_r_end() -> None:
    """At iteration N the step is c_end and a_k / c_k**2 is r_end, as fishtest's plan intends."""
    parameter = SpinParameter("P", start=50, minimum=0, maximum=100, c_end=3, r_end=0.0025)
    played = probe(parameter, gains(parameter, 400), 50, 400, 1)
    assert played.c_k == pytest.approx(3)
    assert played.r_k == pytest.approx(0.0025)


def test_flips_are_fixed_by_seed_and_iteration() -> None:
    """The same seed and iteration give the same signs; other seeds give other sequences."""
    assert flips(7, 3, 5) == flips(7, 3, 5)
    assert set(flips(7, 3, 64)) == {-1, 1}
    assert [flips(7, k, 4) for k in range(1, 30)] != [flips(8, k, 4) for k in range(1, 30)]


def test_refusals_name_the_parameter_and_value() -> None:
    """Bounds or ends the rule cannot use are refused with the parameter's name and the value."""
    with pytest.raises(ValueError, match="parameter Q: c_end 0"):
        SpinParameter("Q", start=1, minimum=0, maximum=2, c_end=0, r_end=0.1)
    with pytest.raises(ValueError, match="parameter Q: min 3"):
        SpinParameter("Q", start=1, minimum=3, maximum=2, c_end=1, r_end=0.1)


def test_spin_value_rounds_as_fishtests_worker() -> None:
    """Spin values go to the engine as floor(value + U): fishtest's worker's stochastic rounding."""
    assert [spin_value(v, d) for v, d in ((2.5, 0.5), (2.5, 0.49), (-2.5, 0.0), (7.0, 0.99),
                                          (-0.2, 0.3))] == [3, 2, -3, 7, 0]
    with pytest.raises(ValueError, match="draw 1"):
        spin_value(1.0, 1)


def test_rounding_is_unbiased_and_fixed_by_seed() -> None:
    """Over many iterations a fractional value is sent at its mean; the draws repeat by seed."""
    assert rounding_draws(3, 5, 2) == rounding_draws(3, 5, 2)
    sent = [spin_value(10.25, rounding_draws(3, k, 1)[0][0]) for k in range(1, 2001)]
    assert set(sent) == {10, 11}
    assert sum(sent) / len(sent) == pytest.approx(10.25, abs=0.05)


def test_a_is_truncated_as_fishtest_does() -> None:
    """fishtest stores A as int(0.1 * iterations): 25 iterations give A = 2, not 2.5."""
    parameter = SpinParameter("P", start=50, minimum=0, maximum=100, c_end=3, r_end=0.0025)
    assert gains(parameter, 25).big_a == 2
