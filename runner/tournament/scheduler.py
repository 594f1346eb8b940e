"""Between the tournament and its games: play these jobs, report them as they go, stop.

A `Scheduler` takes `GameJob`s (plain, serialisable data) and reports events: a job started
(`JobStarted`), a job finished with its `GameRecord` (`JobFinished`), something to tell the
user (`Notice`), or a failure that stops the run (`SchedulerFailure`). The tournament owns
the schedule, the store and the SPRT; a scheduler owns engines and how games are run.

`LocalScheduler` plays the jobs in this process: one asyncio task per concurrency slot takes
the next job from the `JobQueue` and has its `GameSlot` (runner.game.slot: engines reused or
started, the game played) return the outcome, which it reports. A slot takes its next job
only once the consumer has handled the record (stored it, updated the SPRT), so a decision
the record causes is seen before anything new starts.
"""

from __future__ import annotations

import abc
import asyncio
import logging
from collections.abc import AsyncGenerator, Callable, Iterable
from dataclasses import dataclass

from runner.game.job import GameJob
from runner.game.live import LiveMove
from runner.game.record import GameRecord
from runner.game.slot import (
    MAX_START_FAILURES,
    CannotSetUp,
    EngineFailed,
    GameSlot,
    Played,
    SlotPool,
)
from runner.protocol.engine import Engine, EngineConfig
from runner.protocol.factory import make_engine
from runner.protocol.freeze import FreezeMonitor
from runner.protocol.lifetime import finish_uncancelled
from runner.tournament.events import EngineNotStarted, Notice
from runner.tournament.jobs import JobQueue

__all__ = [
    "JobFinished",
    "JobMoved",
    "JobStarted",
    "JobsFinished",
    "LocalScheduler",
    "Scheduler",
    "SchedulerEvent",
    "SchedulerFailure",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobStarted:
    """A job's engines are ready and its game begins (in `slot`, for a local scheduler)."""

    job: GameJob
    slot: int


@dataclass(frozen=True)
class JobFinished:
    """A job's game ended. With ``record.replay`` it failed on the runner's side: the
    scheduler plays it again (or gives up with a `SchedulerFailure`)."""

    job: GameJob
    record: GameRecord
    seconds: float


@dataclass(frozen=True)
class JobsFinished:
    """Several jobs' games that ended together (a scheduler that receives games in bursts,
    such as the remote workers' uploads): stored in one transaction, then each counted in
    its order as a `JobFinished` would be."""

    finished: tuple[JobFinished, ...]


@dataclass(frozen=True)
class JobMoved:
    """A move of a running job's game (reported only by a scheduler that `watch_moves`)."""

    job: GameJob
    move: LiveMove


@dataclass(frozen=True)
class SchedulerFailure:
    """The run cannot go on (an engine that never starts, a game that cannot be set up, a
    job failing again and again); the scheduler already takes no new job."""

    text: str
    refused: bool = False
    """The engines refuse the configuration (an option, a variant, a limit): running the same
    configuration again fails alike."""
    games_lost: bool = False
    """The games that were out are lost with what failed (the Dask scheduler killed): none
    of them will finish here; a resume plays them."""


SchedulerEvent = JobStarted | JobMoved | JobFinished | JobsFinished | Notice | SchedulerFailure


class Scheduler(abc.ABC):
    """Plays game jobs and reports them as they start and finish; stops soft or hard."""

    watch_moves: bool = False
    """Report every move (`JobMoved`) as well: set by a watcher with live boards (the service)."""

    @abc.abstractmethod
    def submit(self, jobs: Iterable[GameJob]) -> None:
        """Queue jobs to play in their order (read lazily); call before `events`."""

    @abc.abstractmethod
    def events(self) -> AsyncGenerator[SchedulerEvent, None]:
        """Play the submitted jobs; yields events until every job is played or the run stops.

        Close the generator (``contextlib.aclosing``) when leaving early: that stops hard.
        """

    @abc.abstractmethod
    def stop(self, hard: bool = False) -> None:
        """Start no new job; with `hard`, also abort the running ones (they report nothing)."""

    def resize(self, concurrency: int) -> None:  # noqa: B027 - not every scheduler has slots
        """Play `concurrency` games at once from now on (a service re-dividing its slots
        between runs); a scheduler without slots of its own (remote workers) ignores it."""


_Queued = tuple[SchedulerEvent, "asyncio.Future[None] | None"] | None


class LocalScheduler(Scheduler):
    """Plays jobs in this process, `concurrency` games at a time on `GameSlot`s.

    The slots keep their engines between games (runner.game.slot says when they restart;
    every game when an engine's name is in `fresh_engines`, ``restart = "on"``). With
    `affinity`, each slot's engines are pinned to one CPU. The jobs come from a `JobQueue`:
    an engine that did not start is tried again first (the run stops after
    `MAX_START_FAILURES` in a row), a job that failed on the runner's side is played again
    up to `MAX_REPLAYS` times. `freezes` watches the event loop while the jobs play (a game
    whose flag fell while the runner stood still is played again); one of its own unless the
    owner of the loop shares one between schedulers. With a `pool`, the slots are taken
    from it and given back to it, their engines up, when their run ends without a fault.
    """

    def __init__(self, concurrency: int, *, affinity: bool = False,
                 fresh_engines: frozenset[str] = frozenset(),
                 engine_factory: Callable[[EngineConfig], Engine] = make_engine,
                 freezes: FreezeMonitor | None = None, wait: float = 0.0,
                 start_delay: float = 0.0, pool: SlotPool | None = None) -> None:
        self.concurrency = max(1, concurrency)
        self.wait = wait
        """Seconds a slot pauses after each game (fastchess's -wait), 0: none."""
        self.start_delay = start_delay
        """Seconds waited before a game starts once some game has finished (cutechess-cli's
        ``-wait``)."""
        self._finished = 0
        self.affinity = affinity
        self.fresh_engines = fresh_engines
        self._make_engine = engine_factory
        self.freezes = FreezeMonitor() if freezes is None else freezes
        self._jobs = JobQueue()
        self._tasks: list[asyncio.Task[None]] = []
        self._slots: list[GameSlot] = []
        self._pool = pool
        self._given: list[GameSlot] = []
        """Slots given back to the pool: theirs, not closed with this run's."""
        self._open: set[int] = set()
        """The slots taking jobs (by id): one above the concurrency leaves after its game."""
        self._ending = False
        self._queue: asyncio.Queue[_Queued] | None = None

    # ----------------------------------------------------------------- the interface

    def submit(self, jobs: Iterable[GameJob]) -> None:
        """Queue jobs to play in their order (read lazily, one when a slot is free)."""
        self._jobs.submit(jobs)

    def stop(self, hard: bool = False) -> None:
        """Start no new job; with `hard`, cancel the running games (engines are stopped)."""
        if self._jobs.stop(hard):
            for task in self._tasks:
                task.cancel()

    def resize(self, concurrency: int) -> None:
        """Play `concurrency` games at once from now on: a slot over it leaves when its game
        ends; under it another opens (which opens the next as it takes a job, as at the
        start)."""
        self.concurrency = max(1, concurrency)
        if self._queue is not None:
            self._open_slot()

    async def events(self) -> AsyncGenerator[SchedulerEvent, None]:
        """Run the slots; yields their events until all are done, then raises what one raised."""
        queue: asyncio.Queue[_Queued] = asyncio.Queue()
        self._queue = queue
        self.freezes.acquire()
        self._open_slot()
        supervisor = asyncio.create_task(self._supervise(queue))
        try:
            while (item := await queue.get()) is not None:
                event, handled = item
                try:
                    yield event
                finally:
                    if handled is not None and not handled.done():
                        handled.set_result(None)
        finally:
            self.freezes.release()  # first: nothing below may skip it
            if not supervisor.done():
                self.stop(hard=True)
            failure = await finish_uncancelled(supervisor)
            await finish_uncancelled(asyncio.gather(
                *(slot.close() for slot in self._slots if slot not in self._given)))
        if failure is not None:
            raise failure

    # ----------------------------------------------------------------- the slots

    async def _supervise(self, queue: asyncio.Queue[_Queued]) -> BaseException | None:
        """Wait for every slot; then end the event stream. Returns the first slot's crash."""
        outcomes: list[BaseException | None] = []
        waited = 0
        while waited < len(self._tasks):  # slots opened meanwhile are waited for in turn
            tasks = self._tasks[waited:]
            waited = len(self._tasks)
            outcomes += await asyncio.gather(*tasks, return_exceptions=True)
        self._ending = True  # no slot opens now: nothing would wait for it
        queue.put_nowait(None)
        for outcome in outcomes:
            if isinstance(outcome, BaseException) and not isinstance(
                    outcome, asyncio.CancelledError):
                return outcome
        return None

    def _put(self, event: SchedulerEvent) -> None:
        """Report an event without waiting for the consumer."""
        assert self._queue is not None
        self._queue.put_nowait((event, None))

    async def _emit_handled(self, event: SchedulerEvent) -> None:
        """Report an event and return once the consumer has handled it."""
        assert self._queue is not None
        handled = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((event, handled))
        await handled

    def _fail(self, text: str, *, refused: bool = False) -> None:
        """Stop taking jobs and tell the consumer why."""
        self._jobs.stop()
        self._put(SchedulerFailure(text, refused))

    def _open_slot(self) -> None:
        """Start one more slot. Slots open one at a time, each once the one before has a job:
        never more slots than games to play, whatever the concurrency asked for."""
        if len(self._open) >= self.concurrency or self._jobs.stopped or self._ending:
            return
        slot = None if self._pool is None else self._pool.take()
        if slot is None:
            slot = GameSlot(len(self._slots), engine_factory=self._make_engine)
        slot.fresh_engines, slot.affinity = self.fresh_engines, self.affinity
        slot.freezes, slot.notify = self.freezes, lambda text: self._put(Notice(text))
        self._slots.append(slot)
        self._open.add(id(slot))
        self._tasks.append(asyncio.create_task(self._run_slot(slot), name=f"slot-{slot.number}"))

    async def _run_slot(self, slot: GameSlot) -> None:
        keep = False
        try:
            opened = False
            while (len(self._open) <= self.concurrency
                   and (job := self._jobs.next()) is not None):
                if not opened:
                    opened = True
                    self._open_slot()
                if self.start_delay > 0 and self._finished:
                    await asyncio.sleep(self.start_delay)
                await self._play(slot, job)
                if self.wait > 0:
                    await asyncio.sleep(self.wait)
            keep = self._pool is not None
        except Exception as exc:
            # A slot never dies silently (the run going on with fewer slots): whatever it
            # raises stops the run with the reason; its game in flight is played on resume.
            log.debug("slot %d failed", slot.number, exc_info=True)
            self._fail(f"game slot {slot.number + 1} failed: {type(exc).__name__}: {exc}")
        finally:
            self._open.discard(id(slot))
            if keep and self._pool is not None:
                self._given.append(slot)
                self._pool.give(slot)
            else:
                await finish_uncancelled(slot.close())

    async def _play(self, slot: GameSlot, job: GameJob) -> None:
        """Play one job in `slot` and act on its outcome."""
        async def ready() -> None:
            self._jobs.started(job)
            self._put(JobStarted(job, slot.number))

        watch = None
        if self.watch_moves:
            def watch(move: LiveMove) -> None:
                self._put(JobMoved(job, move))

        outcome = await slot.play(job, on_ready=ready, on_move=watch)
        match outcome:
            case Played(record, seconds):
                self._finished += 1
                await self._emit_handled(JobFinished(job, record, seconds))
                if record.replay:
                    failure = self._jobs.replay(job, record.reason)
                    if failure is not None:
                        self._fail(failure)
            case EngineFailed(engine, reason, os_error=os_error):
                self._put(EngineNotStarted(
                    f"game {job.index + 1}: an engine failed to start: {reason}",
                    game=job.index, white=job.white.name, black=job.black.name, engine=engine,
                    command=next((tuple(c.argv) for c in (job.white, job.black)
                                  if c.name == engine), ()), os_error=os_error))
                failures = self._jobs.engine_failed(job, engine)
                if failures >= MAX_START_FAILURES:
                    self._fail(f"engine {engine} failed to start {failures} times in a row: "
                               f"{reason}")
            case CannotSetUp(reason):
                # Every such game would fail alike: stop with the reason; the game stays
                # unplayed and a resumed run plays it.
                self._jobs.retry(job)
                self._fail(f"game {job.index + 1} cannot be played: {reason}", refused=True)
