"""The report's per-worker breakdown of faults, with fishtest's bad-worker rule.

A game played on a Dask worker is stored with the worker's name; each engine's games,
crashes (disconnects and stalls) and time losses are counted per worker, and a worker on
which one engine crashed more than 3 times or lost more than 10% of its games on time is
flagged, as fishtest flags a bad worker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runner.game.record import GameTermination

__all__ = ["BAD_WORKER_CRASHES", "BAD_WORKER_TIME_LOSSES", "WorkerFaults", "WorkerTally"]

BAD_WORKER_CRASHES = 3
"""More crashes than this of one engine on one worker flag the worker."""
BAD_WORKER_TIME_LOSSES = 0.10
"""A larger share of one engine's games lost on time on one worker flags the worker."""
_CRASHES = frozenset({GameTermination.DISCONNECT, GameTermination.STALL})


@dataclass(frozen=True)
class WorkerFaults:
    """One engine's games and faults on one Dask worker."""

    worker: str
    engine: str
    games: int = 0
    crashes: int = 0
    """Disconnections and stalls."""
    time_losses: int = 0

    @property
    def flagged(self) -> bool:
        """More than 3 crashes, or more than 10% of the games lost on time."""
        return (self.crashes > BAD_WORKER_CRASHES
                or (self.games > 0 and self.time_losses / self.games > BAD_WORKER_TIME_LOSSES))


class WorkerTally:
    """Counts, per (worker, engine): games, crashes, time losses."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], list[int]] = {}

    def add(self, worker: str, white: str, black: str, at_fault: str | None,
            termination: GameTermination | None) -> None:
        """Count one game played on `worker`, and the fault of the engine `at_fault`."""
        for name in (white, black):
            self.counts.setdefault((worker, name), [0, 0, 0])[0] += 1
        if at_fault is None or (worker, at_fault) not in self.counts:
            return
        if termination in _CRASHES:
            self.counts[(worker, at_fault)][1] += 1
        elif termination is GameTermination.TIME_FORFEIT:
            self.counts[(worker, at_fault)][2] += 1

    def faults(self, engines: Sequence[str]) -> tuple[WorkerFaults, ...]:
        """The breakdown, by worker, then engines in the report's order."""
        rank = {name: i for i, name in enumerate(engines)}
        keys = sorted(self.counts, key=lambda key: (key[0], rank.get(key[1], len(rank))))
        return tuple(WorkerFaults(worker, engine, *self.counts[(worker, engine)])
                     for worker, engine in keys)
