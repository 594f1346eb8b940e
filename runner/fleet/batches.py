"""Batches: some game jobs of one tournament leased to one worker until a deadline that its
heartbeats push back. Pure bookkeeping, no clock of its own (times are passed in)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from runner.clock import TimeControl
from runner.fleet.speed import Scaling, scale_job
from runner.game.job import GameJob

__all__ = ["BATCH_SECONDS", "Batch", "WindDown", "batch_size", "by_share", "fits", "game_seconds"]

BATCH_SECONDS = 180.0
"""The play a batch is sized to (a few minutes): long enough that a worker asks rarely,
short enough that a lost batch costs little."""
_MOVES = 60
"""Moves per side a game is assumed to last when its length is estimated."""


def game_seconds(tc: TimeControl) -> float:
    """A generous estimate of the seconds one side's clock may use in a game under `tc`."""
    if tc.periods:
        first = tc.periods[0]
        last = tc.periods[-1]
        seconds = first.base + _MOVES * first.increment
        if first.moves and first.moves < _MOVES:
            seconds += last.base * math.ceil((_MOVES - first.moves) / max(1, last.moves or _MOVES))
        return max(seconds, 0.5)
    if tc.move_time is not None:
        return tc.move_time * _MOVES
    return 0.1 * _MOVES  # a depth or node limit: fast at the depths tests and fleets use


def batch_size(job: GameJob, slots: int, seconds: float = BATCH_SECONDS, *,
               factor: float = 1.0) -> int:
    """How many games like `job` make a batch for a worker of `slots` games at once whose
    clocks are `factor` times the job's: about `seconds` of play, an even number (both
    games of a pair), at least two."""
    one = (game_seconds(job.spec.white_tc) + game_seconds(job.spec.black_tc)) * factor
    per_slot = max(1, int(seconds // max(one, 0.1)))
    size = max(2, per_slot * max(1, slots))
    return size + size % 2


class WindDown(StrEnum):
    """What a worker is told of its batch's run in the answer to a heartbeat or an upload."""

    NONE = "none"
    """Play on."""
    FINISH = "finish"
    """The run stops softly (a stop request, the SPRT decided): finish the running games,
    upload them and hand the rest back, as a worker's own first Ctrl-C does."""
    CUT = "cut"
    """The run stopped hard: cut the running games and hand everything back, as a worker's
    second Ctrl-C does."""


@dataclass
class Batch:
    """A batch out with its worker: its jobs by index, which came back, and its deadline."""

    id: int
    worker_id: int
    jobs: dict[int, GameJob]
    deadline: float
    """When its lease ends (the event loop's clock), unless a heartbeat pushes it back."""
    factor: float = 1.0
    """Its clocks are the tournament's times this (the worker's machine speed factor), but
    for a job with a scaling of its own."""
    scalings: dict[int, Scaling] = field(default_factory=dict)
    """Each job's own factor (its engines' benches on this worker) and its source, by
    index."""
    stored: float = 0.0
    """When its deadline was last written to the store (the event loop's clock)."""
    delivered: dict[int, int] = field(default_factory=dict)
    """The games that came back, by index: a fingerprint of each record as counted."""
    started: set[int] = field(default_factory=set)
    """The games the worker said it started (or uploaded), by index."""

    def left(self) -> list[GameJob]:
        """Its jobs whose game has not come back, in schedule order (the tournament's own
        clocks: what goes back to the waiting line)."""
        return [job for index, job in sorted(self.jobs.items()) if index not in self.delivered]

    def scaling(self, index: int) -> Scaling:
        """The factor job `index` is played under, and which bench it comes from."""
        return self.scalings.get(index) or Scaling(self.factor, "machine")

    def given(self, index: int) -> GameJob | None:
        """Job `index` as the worker was given it (its clocks scaled), or None."""
        job = self.jobs.get(index)
        return None if job is None else scale_job(job, self.scaling(index).factor)

    @property
    def complete(self) -> bool:
        """Every game came back."""
        return len(self.delivered) == len(self.jobs)


def fits(job: GameJob, engines: Iterable[str], names: Mapping[str, str] | None = None) -> bool:
    """Whether a worker allowing `engines` may play `job` (both its engines allowed); `names`
    gives the allow-list name of an engine the job names otherwise (a tuning pair's sides)."""
    allowed = set(engines)
    known = names or {}
    return all(known.get(name, name) in allowed for name in (job.white.name, job.black.name))


def by_share(runs: list[tuple[int, float | None]]) -> list[int]:
    """The order in which runs are offered a worker, given each run's games out and its share
    (None: the run was given none): runs without a share first, oldest first (as given), then
    those with one by their games out per share, the least served first (a service's branch
    tests dividing the workers as they divide its own games)."""
    def key(index: int) -> tuple[int, float, int]:
        out, share = runs[index]
        return (0, 0.0, index) if share is None else (1, out / share, index)

    return sorted(range(len(runs)), key=key)
