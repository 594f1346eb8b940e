"""SPSA's update rule as fishtest applies it, in pure functions.

The rule is fishtest's (official-stockfish/fishtest, server/fishtest/spsa_handler.py for the
per-iteration step, and its run creation for how ``c_end`` and ``r_end`` become the gain
constants); the code is ours. For a plan of ``N`` iterations (game pairs):

- ``A = int(0.1 * N)`` (fishtest truncates it), ``alpha = 0.602``, ``gamma = 0.101``;
- per parameter ``c = c_end * N**gamma`` and ``a = r_end * c_end**2 * (A + N)**alpha``, so that
  at the last iteration the step is exactly ``c_end`` and ``a_k / c_k**2`` is exactly ``r_end``;
- iteration ``k`` counts from 1: ``c_k = c / k**gamma``, ``R_k = a / (A + k)**alpha / c_k**2``;
- the pair is played between ``clamp(theta + c_k * flip)`` (the plus side) and
  ``clamp(theta - c_k * flip)``; with ``result`` the plus side's wins minus its losses over the
  pair, ``theta`` becomes ``clamp(theta + R_k * c_k * result * flip)``.

When several iterations are in flight, fishtest (``apply_spsa_result_updates``) applies each
one's step, made of the ``c_k``, ``R_k`` and flips it was issued with, to the theta current
when its result arrives; `step` takes that theta. The values an engine is given are integers:
fishtest's worker rounds each side's value stochastically, ``floor(value + U(0, 1))``, so that
a fractional theta is played at its mean; `spin_value` does the same with a draw fixed by the
seed and the iteration (`rounding_draws`), so a resumed run sends what an uninterrupted one would.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

ALPHA = 0.602
GAMMA = 0.101
A_RATIO = 0.1


@dataclass(frozen=True)
class SpinParameter:
    """One spin option to tune: where it starts, its bounds and fishtest's two end values."""

    name: str
    start: float
    minimum: float
    maximum: float
    c_end: float
    r_end: float

    def __post_init__(self) -> None:
        """Refuse bounds or ends the rule cannot use, naming the parameter and the value."""
        if not self.minimum <= self.maximum:
            raise ValueError(f"parameter {self.name}: min {self.minimum} is above max {self.maximum}")
        if not self.c_end > 0:
            raise ValueError(f"parameter {self.name}: c_end {self.c_end} must be above 0")
        if not self.r_end >= 0:
            raise ValueError(f"parameter {self.name}: r_end {self.r_end} must not be below 0")

    def clamp(self, value: float) -> float:
        """The value held inside the parameter's bounds."""
        return min(max(value, self.minimum), self.maximum)


@dataclass(frozen=True)
class Gains:
    """A parameter's gain constants for a plan: ``c`` and ``a`` of ``c/k**gamma`` and ``a/(A+k)**alpha``."""

    c: float
    a: float
    big_a: float


@dataclass(frozen=True)
class Probe:
    """What iteration ``k`` plays for one parameter: both sides' values and the step's factors."""

    plus: float
    minus: float
    c_k: float
    r_k: float
    flip: int


def gains(parameter: SpinParameter, iterations: int) -> Gains:
    """The gain constants that make the last of ``iterations`` end at ``c_end`` and ``r_end``."""
    if iterations < 1:
        raise ValueError(f"iterations {iterations} must be at least 1")
    big_a = float(int(A_RATIO * iterations))
    c = parameter.c_end * iterations**GAMMA
    a = parameter.r_end * parameter.c_end**2 * (big_a + iterations) ** ALPHA
    return Gains(c=c, a=a, big_a=big_a)


def probe(parameter: SpinParameter, plan: Gains, theta: float, k: int, flip: int) -> Probe:
    """Iteration ``k`` (from 1) around ``theta`` with sign ``flip``: the two sides and the factors."""
    if k < 1:
        raise ValueError(f"iteration {k} must be at least 1")
    if flip not in (-1, 1):
        raise ValueError(f"flip {flip} must be -1 or 1")
    c_k = plan.c / k**GAMMA
    r_k = plan.a / (plan.big_a + k) ** ALPHA / c_k**2
    return Probe(
        plus=parameter.clamp(theta + c_k * flip),
        minus=parameter.clamp(theta - c_k * flip),
        c_k=c_k,
        r_k=r_k,
        flip=flip,
    )


def step(parameter: SpinParameter, theta: float, played: Probe, result: int) -> float:
    """The new theta after a pair whose plus side scored ``result`` (its wins minus its losses)."""
    return parameter.clamp(theta + played.r_k * played.c_k * result * played.flip)


def flips(seed: int, k: int, count: int) -> tuple[int, ...]:
    """Iteration ``k``'s signs, one per parameter, drawn from ``seed`` and ``k`` alone.

    Deriving each iteration's signs from the seed and the iteration number (not from a generator
    carried along) lets a resumed run draw exactly the signs an uninterrupted one would.
    """
    draw = random.Random(f"{seed}:{k}")
    return tuple(draw.choice((-1, 1)) for _ in range(count))


def rounding_draws(seed: int, k: int, count: int) -> tuple[tuple[float, float], ...]:
    """Iteration ``k``'s uniform draws in [0, 1) for rounding, a (plus, minus) pair per parameter."""
    draw = random.Random(f"{seed}:{k}:round")
    return tuple((draw.random(), draw.random()) for _ in range(count))


def spin_value(value: float, draw: float) -> int:
    """The integer sent to the engine for a spin value, as fishtest's worker rounds it:
    ``floor(value + draw)`` with ``draw`` uniform in [0, 1) (up with the fraction's chance)."""
    if not 0 <= draw < 1:
        raise ValueError(f"rounding draw {draw} must be in [0, 1)")
    return math.floor(value + draw)
