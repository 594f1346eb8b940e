"""A workers-placed run's jobs not handed out yet: the schedule, read as workers ask, and
the jobs looked at for one worker but left for another (whose allow-list has their
engines), or handed back by a batch's end, which go out first."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping

from runner.fleet.batches import fits
from runner.game.job import GameJob
from runner.tournament.jobs import JobQueue

__all__ = ["WaitingJobs"]

_SCAN = 4096
"""Waiting jobs looked through for ones a worker may play (its engines)."""


class WaitingJobs:
    """The jobs a `FleetScheduler` has still to lease, in schedule order."""

    def __init__(self, names: Mapping[str, str]) -> None:
        """`names`: the allow-list name of each engine its jobs name otherwise."""
        self._names = names
        self._jobs = JobQueue()
        self._left: deque[GameJob] = deque()

    @property
    def stopped(self) -> bool:
        """Whether the run stopped handing out jobs (softly or hard)."""
        return self._jobs.stopped

    @property
    def hard(self) -> bool:
        """Whether the stop was a hard one."""
        return self._jobs.hard

    def submit(self, jobs: Iterable[GameJob]) -> None:
        """Queue jobs in their order (read lazily, as workers ask)."""
        self._jobs.submit(jobs)

    def stop(self, hard: bool = False) -> None:
        """Hand out nothing more."""
        self._jobs.stop(hard)

    def take(self, engines: set[str], count: int, *, peek: bool = False) -> list[GameJob]:
        """Up to `count` jobs a worker allowing `engines` may play, in schedule order (left
        waiting with `peek`); none once stopped."""
        if self._jobs.stopped:
            return []
        taken: list[GameJob] = []
        looked = 0
        kept: deque[GameJob] = deque()
        while len(taken) < count and looked < _SCAN:
            if not self._left:
                job = self._jobs.next()
                if job is None:
                    break
                self._left.append(job)
            job = self._left.popleft()
            looked += 1
            (taken if fits(job, engines, self._names) else kept).append(job)
        if peek:
            kept.extend(taken)
            kept = deque(sorted(kept, key=lambda j: j.index))
        self._left.extendleft(reversed(kept))
        return taken

    def put_back(self, jobs: Iterable[GameJob]) -> None:
        """Jobs leased but not played: they go out first, in their order."""
        self._left.extendleft(reversed(list(jobs)))

    def exhausted(self) -> bool:
        """Whether no job is left to hand out (or the run stopped)."""
        if self._jobs.stopped:
            return True
        if self._left:
            return False
        job = self._jobs.next()
        if job is None:
            return True
        self._left.append(job)
        return False
