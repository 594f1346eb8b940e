"""The report's view of the machines its games ran on: each engine's faults per worker, and
each worker's standing by fishtest's bad-worker rules (runner.stats.residual, the one rule
for Dask workers and remote workers alike).

A game played off the runner's own process is stored with its worker's name (a Dask worker's,
or a remote worker's as it registered). Per worker and engine the report counts games,
crashes (disconnects and stalls) and time losses; per worker it also counts the pentanomial
pairs played whole on it (both games of a pair on one machine), from the side of each
pairing's first engine in the report's order. On those, fishtest's residual test and its
crash/time-loss rule say which worker to flag.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from runner.game.record import GameTermination
from runner.rules import Result
from runner.stats.residual import (
    WorkerCounts,
    bad_worker,
    colour,
    crash_or_time,
    worker_test,
)

__all__ = ["WorkerFaults", "WorkerStanding", "WorkerTally"]

_CRASHES = frozenset({GameTermination.DISCONNECT, GameTermination.STALL})
_POINTS = {Result.WHITE_WINS: (1.0, 0.0), Result.BLACK_WINS: (0.0, 1.0), Result.DRAW: (0.5, 0.5)}


@dataclass(frozen=True)
class WorkerFaults:
    """One engine's games and faults on one worker."""

    worker: str
    engine: str
    games: int = 0
    crashes: int = 0
    """Disconnections and stalls."""
    time_losses: int = 0

    @property
    def flagged(self) -> bool:
        """Fishtest's crash and time-loss rule on these counts (`crash_or_time`)."""
        return crash_or_time(WorkerCounts((0, 0, 0, 0, 0), self.games, self.crashes,
                                          self.time_losses))


@dataclass(frozen=True)
class WorkerStanding:
    """One worker over the whole tournament: its games, faults and whole pairs, its residual
    in fishtest's test, how that shows, whether it is the one to flag, and the factor its
    clocks were scaled by (a remote worker's; None for a Dask worker)."""

    worker: str
    games: int
    crashes: int
    time_losses: int
    pentanomial: tuple[int, int, int, int, int]
    """Its whole pairs: LL, LD, WL+DD, WD, WW from each pairing's first engine's side."""
    residual: float | None
    """Its residual (None: too few pairs to be in the test, or no test)."""
    colour: str
    """green, yellow or red, as fishtest shows the residual."""
    flagged: bool
    """The worker fishtest's rules flag: the crash/time rule, or the test's worst worker."""
    why: str = ""
    factor: float | None = None


class WorkerTally:
    """Counts, per (worker, engine): games, crashes, time losses; and per worker the points
    of each pairing's first engine in every pair."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], list[int]] = {}
        self.games: dict[str, int] = {}
        self.halves: dict[tuple[str, str, str, int], list[float]] = {}

    def add(self, worker: str, white: str, black: str, at_fault: str | None,
            termination: GameTermination | None, result: Result | None = None,
            pair_index: int | None = None, rank: Mapping[str, int] | None = None) -> None:
        """Count one game played on `worker`, the fault of the engine `at_fault`, and its
        result towards the pair `pair_index` (the first engine by `rank`'s order)."""
        self.games[worker] = self.games.get(worker, 0) + 1
        for name in (white, black):
            self.counts.setdefault((worker, name), [0, 0, 0])[0] += 1
        if at_fault is not None and (worker, at_fault) in self.counts:
            if termination in _CRASHES:
                self.counts[(worker, at_fault)][1] += 1
            elif termination is GameTermination.TIME_FORFEIT:
                self.counts[(worker, at_fault)][2] += 1
        points = _POINTS.get(result) if result is not None else None
        if points is None or pair_index is None:
            return
        order = rank or {}
        first_is_white = order.get(white, 0) <= order.get(black, 0)
        first, second = (white, black) if first_is_white else (black, white)
        self.halves.setdefault((worker, first, second, pair_index), []).append(
            points[0] if first_is_white else points[1])

    def faults(self, engines: Sequence[str]) -> tuple[WorkerFaults, ...]:
        """The breakdown, by worker, then engines in the report's order."""
        rank = {name: i for i, name in enumerate(engines)}
        keys = sorted(self.counts, key=lambda key: (key[0], rank.get(key[1], len(rank))))
        return tuple(WorkerFaults(worker, engine, *self.counts[(worker, engine)])
                     for worker, engine in keys)

    def standings(self, factors: Mapping[str, float] | None = None
                  ) -> tuple[WorkerStanding, ...]:
        """Each worker's standing by fishtest's rules, by name."""
        totals = {worker: [games, 0, 0] for worker, games in self.games.items()}
        for (worker, _engine), (_games, crashes, losses) in self.counts.items():
            totals[worker][1] += crashes
            totals[worker][2] += losses
        pentanomial = {worker: [0, 0, 0, 0, 0] for worker in totals}
        for (worker, *_pair), points in self.halves.items():
            if len(points) == 2:
                pentanomial[worker][int(round(2 * sum(points)))] += 1
        counts = {worker: WorkerCounts(_five(pentanomial[worker]), *totals[worker])
                  for worker in totals}
        test = worker_test({worker: c.pentanomial for worker, c in counts.items()})
        worst = bad_worker(test)
        rows = []
        for worker in sorted(counts):
            c = counts[worker]
            residual = test.residual.get(worker)
            crashed = crash_or_time(c)
            why = ("more than 3 crashes, or over a tenth of 20+ games lost on time" if crashed
                   else f"the residual test's worst (p = {test.p:.2g})" if worker == worst
                   else "")
            shown = colour(test, worker, c).value if crashed or not math.isnan(test.p) \
                else "green"  # no test (one worker, or too few pairs): nothing to compare
            rows.append(WorkerStanding(worker, c.games, c.crashes, c.time_losses,
                                       c.pentanomial, residual, shown,
                                       crashed or worker == worst, why,
                                       (factors or {}).get(worker)))
        return tuple(rows)


def _five(counts: Sequence[int]) -> tuple[int, int, int, int, int]:
    ll, ld, even, wd, ww = counts
    return ll, ld, even, wd, ww
