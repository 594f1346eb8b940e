"""Between the tournament and its games: play these jobs, report them as they go, stop.

A `Scheduler` takes `GameJob`s (plain, serialisable data) and reports events: a job started
(`JobStarted`), a job finished with its `GameRecord` (`JobFinished`), something to tell the
user (`Notice`), or a failure that stops the run (`SchedulerFailure`). The tournament owns
the schedule, the store and the SPRT; a scheduler owns engines and how games are run.

`LocalScheduler` plays the jobs in this process: one asyncio task per concurrency slot takes
the next job, starts (or reuses) the slot's two engines, plays the game and reports its
record. A slot takes its next job only once the consumer has handled the record (stored it,
updated the SPRT), so a decision the record causes is seen before anything new starts.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import itertools
import logging
import os
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator
from dataclasses import dataclass, field

from runner.game.job import GameJob
from runner.game.live import LiveMove, MoveWatch
from runner.game.play import play_game
from runner.game.record import GameRecord, GameTermination
from runner.protocol.engine import Engine, EngineConfig, EngineError
from runner.protocol.factory import make_engine
from runner.protocol.freeze import FreezeMonitor
from runner.protocol.lifetime import finish_uncancelled
from runner.tournament.events import Notice

__all__ = [
    "JobFinished",
    "JobMoved",
    "JobStarted",
    "LocalScheduler",
    "Scheduler",
    "SchedulerEvent",
    "SchedulerFailure",
]

RESTART_AFTER = frozenset({GameTermination.STALL, GameTermination.DISCONNECT,
                           GameTermination.ERROR})
"""Terminations after which the engine at fault is started afresh for its next game."""
log = logging.getLogger(__name__)

MAX_REPLAYS = 3
"""Runner-side failures of one job before the run stops (a bug, or the runner frozen as a
flag fell; not an engine fault)."""
MAX_START_FAILURES = 3
"""Consecutive failed starts of one engine before the run stops."""


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
class JobMoved:
    """A move of a running job's game (reported only by a scheduler that `watch_moves`)."""

    job: GameJob
    move: LiveMove


@dataclass(frozen=True)
class SchedulerFailure:
    """The run cannot go on (an engine that never starts, a game that cannot be set up, a
    job failing again and again); the scheduler already takes no new job."""

    text: str


SchedulerEvent = JobStarted | JobMoved | JobFinished | Notice | SchedulerFailure


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


@dataclass
class _Slot:
    """One concurrency slot: the engine processes it keeps between games."""

    number: int
    engines: dict[str, Engine] = field(default_factory=dict)

    async def drop(self, name: str) -> None:
        """Stop one engine of the slot (never raising)."""
        engine = self.engines.pop(name, None)
        if engine is not None:
            with contextlib.suppress(Exception):
                await engine.quit()

    async def drop_all(self, keep: frozenset[str] = frozenset()) -> None:
        """Stop every engine of the slot but those in `keep`."""
        await asyncio.gather(*(self.drop(n) for n in list(self.engines) if n not in keep))


_Queued = tuple[SchedulerEvent, "asyncio.Future[None] | None"] | None


class LocalScheduler(Scheduler):
    """Plays jobs in this process, `concurrency` games at a time, each slot keeping its engines.

    An engine is reused by its slot while it answers a ping; it is started afresh after a
    game it stalled, disconnected or erred in, and for every game when its name is in
    `fresh_engines` (``restart = "on"``). With `affinity`, each slot's engines are pinned to
    one CPU. A job that fails on the runner's side is played again, up to `MAX_REPLAYS` times.
    `freezes` watches the event loop while the jobs play (a game whose flag fell while the
    runner stood still is played again); one of its own unless the owner of the loop shares
    one between schedulers.
    """

    def __init__(self, concurrency: int, *, affinity: bool = False,
                 fresh_engines: frozenset[str] = frozenset(),
                 engine_factory: Callable[[EngineConfig], Engine] = make_engine,
                 freezes: FreezeMonitor | None = None) -> None:
        self.concurrency = max(1, concurrency)
        self.affinity = affinity
        self.fresh_engines = fresh_engines
        self._make_engine = engine_factory
        self.freezes = FreezeMonitor() if freezes is None else freezes
        self._jobs: Iterator[GameJob] = iter(())
        self._retry: deque[GameJob] = deque()
        self._replays: dict[int, int] = {}
        self._start_failures: dict[str, int] = {}
        self._soft_stop = False
        self._hard_stop = False
        self._tasks: list[asyncio.Task[None]] = []
        self._slots: list[_Slot] = []
        self._queue: asyncio.Queue[_Queued] | None = None

    # ----------------------------------------------------------------- the interface

    def submit(self, jobs: Iterable[GameJob]) -> None:
        """Queue jobs to play in their order (read lazily, one when a slot is free)."""
        self._jobs = itertools.chain(self._jobs, jobs)

    def stop(self, hard: bool = False) -> None:
        """Start no new job; with `hard`, cancel the running games (engines are stopped)."""
        self._soft_stop = True
        if hard and not self._hard_stop:
            self._hard_stop = True
            for task in self._tasks:
                task.cancel()

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
            await finish_uncancelled(asyncio.gather(*(slot.drop_all() for slot in self._slots)))
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
        queue.put_nowait(None)
        for outcome in outcomes:
            if isinstance(outcome, BaseException) and not isinstance(
                    outcome, asyncio.CancelledError):
                return outcome
        return None

    async def _emit(self, event: SchedulerEvent, *, wait: bool = False) -> None:
        """Report an event; with `wait`, return once the consumer has handled it."""
        assert self._queue is not None
        handled = asyncio.get_running_loop().create_future() if wait else None
        self._queue.put_nowait((event, handled))
        if handled is not None:
            await handled

    def _fail(self, text: str) -> None:
        """Stop taking jobs and tell the consumer why."""
        self._soft_stop = True
        assert self._queue is not None
        self._queue.put_nowait((SchedulerFailure(text), None))

    def _next_job(self) -> GameJob | None:
        if self._soft_stop or self._hard_stop:
            return None
        if self._retry:
            return self._retry.popleft()
        return next(self._jobs, None)

    def _open_slot(self) -> None:
        """Start one more slot. Slots open one at a time, each once the one before has a job:
        never more slots than games to play, whatever the concurrency asked for."""
        if len(self._slots) >= self.concurrency or self._soft_stop or self._hard_stop:
            return
        slot = _Slot(len(self._slots))
        self._slots.append(slot)
        self._tasks.append(asyncio.create_task(self._run_slot(slot), name=f"slot-{slot.number}"))

    async def _run_slot(self, slot: _Slot) -> None:
        try:
            opened = False
            while (job := self._next_job()) is not None:
                if not opened:
                    opened = True
                    self._open_slot()
                await self._play(slot, job)
        except Exception as exc:
            # A slot never dies silently (the run going on with fewer slots): whatever it
            # raises stops the run with the reason; its game in flight is played on resume.
            log.debug("slot %d failed", slot.number, exc_info=True)
            self._fail(f"game slot {slot.number + 1} failed: {type(exc).__name__}: {exc}")
        finally:
            # A second interrupt must not cut the engines' quit -> SIGTERM -> SIGKILL short.
            await finish_uncancelled(slot.drop_all())

    async def _play(self, slot: _Slot, job: GameJob) -> None:
        """Play one job in `slot`: engines ready, the game, its record, the engines' fate."""
        await slot.drop_all(frozenset(job.engines))
        try:
            white = await self._engine(slot, job.white)
            black = await self._engine(slot, job.black)
        except EngineError as exc:
            await self._emit(Notice(f"game {job.index + 1}: an engine failed to start: {exc}"))
            self._retry.appendleft(job)
            return
        except ValueError as exc:
            # The engine started but refuses what it was configured with (an option it does
            # not declare, say): every start would end alike, so stop with the reason.
            self._fail(f"game {job.index + 1} cannot be played: {exc}")
            self._retry.appendleft(job)
            await slot.drop_all()
            return
        await self._emit(JobStarted(job, slot.number))
        began = time.monotonic()
        watch = None
        if self.watch_moves:
            queue = self._queue
            assert queue is not None
            watch = MoveWatch(job.spec, lambda move: queue.put_nowait((JobMoved(job, move), None)))
        try:
            record = await play_game(white, black, job.spec, on_move=watch,
                                     freezes=self.freezes)
        except ValueError as exc:
            # A game the configuration cannot set up (a variant or a fixed depth an engine
            # cannot play): every such game would fail alike, so stop with the reason; the
            # game stays unplayed and a resumed run plays it.
            self._fail(f"game {job.index + 1} cannot be played: {exc}")
            self._retry.appendleft(job)
            await slot.drop_all()
            return
        await self._emit(JobFinished(job, record, time.monotonic() - began), wait=True)
        if record.replay:
            self._replay(job, record)
            await slot.drop_all()
        elif (self.fresh_engines.intersection(job.engines)
              or record.termination in RESTART_AFTER):
            await slot.drop_all()

    def _replay(self, job: GameJob, record: GameRecord) -> None:
        """Queue a job that failed on the runner's side again, or give up on it."""
        count = self._replays.get(job.index, 0) + 1
        self._replays[job.index] = count
        if count >= MAX_REPLAYS:
            self._fail(f"game {job.index + 1} failed on the runner's side {count} times "
                       f"(last: {record.reason}); stopping")
            return
        self._retry.append(job)

    async def _engine(self, slot: _Slot, config: EngineConfig) -> Engine:
        """The slot's engine `config.name`, reused when alive, else started afresh."""
        name = config.name
        engine = slot.engines.get(name)
        if engine is not None:
            try:
                await engine.ping()
                return engine
            except EngineError:
                await self._emit(Notice(f"{name} died between games; restarting it"))
                await slot.drop(name)
        engine = self._make_engine(config)
        try:
            await engine.start()
        except BaseException as exc:  # cancelled half-way too: the process must not leak
            with contextlib.suppress(Exception):
                await finish_uncancelled(engine.kill())
            if not isinstance(exc, EngineError):
                raise
            failures = self._start_failures.get(name, 0) + 1
            self._start_failures[name] = failures
            if failures >= MAX_START_FAILURES:
                self._fail(f"engine {name} failed to start {failures} times in a row: {exc}")
            raise
        self._start_failures[name] = 0
        slot.engines[name] = engine
        if self.affinity:
            await self._pin(engine, slot.number)
        return engine

    async def _pin(self, engine: Engine, slot: int) -> None:
        """Pin an engine process to the slot's CPU (its later threads and children follow)."""
        pid = engine.pid
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        if pid is None or not cpus:
            return
        try:
            os.sched_setaffinity(pid, {cpus[slot % len(cpus)]})
        except OSError as exc:
            await self._emit(Notice(f"cannot pin {engine.name} to CPU "
                                    f"{cpus[slot % len(cpus)]}: {exc}"))
