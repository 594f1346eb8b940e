"""The jobs a scheduler has yet to play: in order, retries first, a replay budget, stops.

Both schedulers (in-process and Dask) take their jobs from a `JobQueue`; where a job runs is
theirs, which job comes next and when to give up is decided here only.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Iterator

from runner.game.job import GameJob

__all__ = ["MAX_REPLAYS", "JobQueue"]

MAX_REPLAYS = 3
"""Runner-side failures of one job before the run stops (a bug, a worker lost, or the runner
frozen as a flag fell; not an engine fault)."""


class JobQueue:
    """Submitted jobs read lazily, a retry line served first, per-job replays, soft/hard stop."""

    def __init__(self, max_replays: int = MAX_REPLAYS) -> None:
        self.max_replays = max_replays
        self._jobs: Iterator[GameJob] = iter(())
        self._retry: deque[GameJob] = deque()
        self._replays: dict[int, int] = {}
        self._start_failures: dict[str, int] = {}
        self.stopped = False
        """No job is handed out any more (a soft stop, a hard one, or a failure)."""
        self.hard = False
        """The stop was hard: the running games are to be aborted too."""

    def submit(self, jobs: Iterable[GameJob]) -> None:
        """Queue jobs after those already submitted (read one at a time, when asked for)."""
        self._jobs = itertools.chain(self._jobs, jobs)

    def next(self) -> GameJob | None:
        """The next job to play: a retry first, else the next submitted; None once stopped or
        when none is left (an error raised while reading the jobs passes through)."""
        if self.stopped:
            return None
        if self._retry:
            return self._retry.popleft()
        return next(self._jobs, None)

    def stop(self, hard: bool = False) -> bool:
        """Hand out no more jobs; with `hard`, mark the stop hard. True when this call is the
        first to make it hard (the caller aborts the running games then)."""
        self.stopped = True
        first_hard = hard and not self.hard
        self.hard = self.hard or hard
        return first_hard

    def retry(self, job: GameJob) -> None:
        """Put a job that was not played back at the head of the line (it goes next)."""
        self._retry.appendleft(job)

    def replay(self, job: GameJob, reason: str) -> str | None:
        """A job that failed on the runner's side: queue it again (after the other retries),
        or, once it failed `max_replays` times, stop and return why."""
        count = self._replays.get(job.index, 0) + 1
        self._replays[job.index] = count
        if count >= self.max_replays:
            self.stopped = True
            return (f"game {job.index + 1} failed on the runner's side {count} times "
                    f"(last: {reason}); stopping")
        self._retry.append(job)
        return None

    def engine_failed(self, job: GameJob, engine: str) -> int:
        """An engine of `job` did not start: the job goes back to the head of the line.
        Returns that engine's failed starts in a row (reset by `started`)."""
        self.retry(job)
        count = self._start_failures.get(engine, 0) + 1
        self._start_failures[engine] = count
        return count

    def started(self, job: GameJob) -> None:
        """Both engines of `job` started: their runs of failed starts are over."""
        for name in job.engines:
            self._start_failures.pop(name, None)
