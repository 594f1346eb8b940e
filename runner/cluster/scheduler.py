"""Games on Dask distributed: a `Scheduler` whose games run on worker processes or machines.

`DaskScheduler` connects to a Dask scheduler (``address``) or starts a LocalCluster of
``workers`` processes on this machine, and keeps up to `concurrency` game jobs in flight as
Dask tasks (`runner.cluster.worker.play_job`, a ``slots`` resource of 1 each). Jobs go
out as `GameJob` JSON and come back as a `JobReply` (the game slot's typed outcome) in JSON;
the tournament stores the records here, on the coordinator, through its single writer. The
jobs waiting, retried and replayed are a `JobQueue`, as for the in-process scheduler.

Failures: a worker that dies mid-game has its task run again elsewhere by Dask, and a job
whose result already came back is never reported twice. A worker that cannot start an
engine takes no more jobs needing it; one that fails `MAX_WORKER_FAILURES` jobs takes no
more jobs of this run. The scheduler gone ends the run with one `SchedulerFailure` line;
the games not stored are played by the next run.

Live moves: a scheduler that `watch_moves` subscribes to the workers' move events
(`runner.cluster.worker.MOVES_TOPIC`, Dask's ``log_event``/``subscribe_topic``) and reports
them as `JobMoved`, in order per game, for the jobs in flight only: a move arriving after its
job's record is dropped, and so is the oldest waiting move when the consumer falls
`MOVE_BACKLOG` behind. Unwatched, nothing is subscribed and the workers send no move.

Only `distributed` is imported here, never by the default in-process run.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import uuid
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from distributed import Client, Future, KilledWorker, LocalCluster

from runner.cluster.cluster_builds import ClusterBuilds, first_line
from runner.cluster.roster import MAX_WORKER_FAILURES, WorkerRoster
from runner.cluster.worker import (
    MOVES_TOPIC,
    JobReply,
    MoveMessage,
    abort_games,
    executing_keys,
    play_job,
    release_pool,
)
from runner.config.recipes import BuildOrder
from runner.game.job import GameJob
from runner.game.play import FROZEN_REPLAY
from runner.game.slot import CannotSetUp, EngineFailed, Played
from runner.tournament.events import Notice
from runner.tournament.jobs import JobQueue
from runner.tournament.scheduler import (
    JobFinished,
    JobMoved,
    JobStarted,
    Scheduler,
    SchedulerEvent,
    SchedulerFailure,
)
from runner.tournament.slots import no_slots_message, workers_without

__all__ = ["MAX_WORKER_FAILURES", "MOVE_BACKLOG", "SLOTS", "DaskScheduler", "start_local_cluster"]

SLOTS = "slots"
"""The worker resource a game job needs one of (``dask worker --resources "slots=8"``)."""
AHEAD = 2
"""Jobs in flight per concurrency slot: the next game waits on its worker, so a slot starts
it the moment its game ends instead of idling a round trip to the coordinator."""
CONNECT_TIMEOUT = 10.0
"""Seconds to reach a Dask scheduler before the run gives up."""
MOVE_BACKLOG = 2000
"""Live moves kept waiting for a slow consumer; beyond that the oldest are dropped (the
records stay complete: a live board only misses a few positions)."""


@dataclass
class _InFlight:
    """A job out on the cluster: its Dask future and the slot number it shows in."""

    job: GameJob
    future: Future
    slot: int


@dataclass
class _Watched:
    """A job in flight whose moves are reported: the last ply reported."""

    job: GameJob
    ply: int = 0


class _Moves:
    """The moves the workers send, of the jobs in flight only, waiting for the consumer."""

    def __init__(self, backlog: int = MOVE_BACKLOG) -> None:
        self.waiting: deque[tuple[str, JobMoved]] = deque(maxlen=backlog)
        self.arrived = asyncio.Event()
        self.jobs: dict[str, _Watched] = {}
        self.dropped = 0

    def receive(self, event: tuple[float, Any]) -> None:
        """Dask's handler of a topic event ``(time, message)``, on the client's loop."""
        read = MoveMessage.read(event[1])
        if read is None:
            return
        key, move = read.key, read.move
        watched = self.jobs.get(key)
        if watched is None or move.ply <= watched.ply:
            return  # another run's job, a game already reported finished, or out of order
        watched.ply = move.ply
        if len(self.waiting) == self.waiting.maxlen:
            self.dropped += 1
        self.waiting.append((key, JobMoved(watched.job, move)))
        self.arrived.set()

    def take(self) -> list[JobMoved]:
        """The waiting moves of the jobs still in flight, oldest first."""
        self.arrived.clear()
        moved = [event for key, event in self.waiting if key in self.jobs]
        self.waiting.clear()
        return moved


class DaskScheduler(Scheduler):
    """Plays jobs on Dask workers, `concurrency` at a time; the caller stores the records."""

    def __init__(self, concurrency: int, *, workers: int | None = None,
                 address: str | None = None, fresh_engines: frozenset[str] = frozenset(),
                 tournament: str = "runner",
                 builds: Mapping[str, BuildOrder] | None = None,
                 keep_engines: bool = False) -> None:
        if (workers is None) == (address is None):
            raise ValueError("give either a number of local workers or a scheduler address")
        self.keep_engines = keep_engines
        """The workers' engines stay up at the end (a cluster kept for several runs in turn,
        each sending its own option values to them: a tuning run's pairs)."""
        self.concurrency = max(1, concurrency)
        self.local_workers = workers
        self.address = address
        self.fresh = tuple(sorted(fresh_engines))
        self.builds = ClusterBuilds(builds)
        """Engines each worker builds itself before it plays them."""
        self.tag = "".join(c if c.isalnum() else "-" for c in tournament)[:40]
        self.run_id = uuid.uuid4().hex[:8]
        """In every task key: runs of the same tournament on one cluster never share a key."""
        self._jobs = JobQueue()
        self._delivered: set[int] = set()
        self._flight: dict[asyncio.Task[Any], _InFlight] = {}
        self._workers = WorkerRoster()
        self._attempts = itertools.count()
        self._client: Client | None = None
        self._failure: str | None = None
        self._cannot_set_up = False
        self._scheduler_lost = False  # the games out are lost with it: none will finish
        self._moves: _Moves | None = None
        self._waker: asyncio.Task[Any] | None = None

    # ----------------------------------------------------------------- the interface

    def submit(self, jobs: Iterable[GameJob]) -> None:
        """Queue jobs to play in their order (read lazily, as slots free up)."""
        self._jobs.submit(jobs)

    def stop(self, hard: bool = False) -> None:
        """Start no new job and cancel the queued ones; with `hard`, abort running games too."""
        first = not self._jobs.stopped
        if self._jobs.stop(hard):
            for task in self._flight:
                task.cancel()
            _in_background(_abort_running(self._client, self._flight))
        elif first:
            _in_background(_cancel_queued(self._client, self._flight))

    async def events(self) -> AsyncGenerator[SchedulerEvent, None]:
        """Connect, keep jobs in flight, report them; closes the client (and cluster) at the end."""
        cluster: LocalCluster | None = None
        # The client's own reconnect tracebacks would bury the one line this run prints.
        logging.getLogger("distributed.client").setLevel(logging.CRITICAL)
        try:
            cluster, client = await self._connect()
        except (OSError, TimeoutError) as exc:
            where = self.address or f"a local cluster of {self.local_workers} workers"
            yield SchedulerFailure(f"cannot reach the Dask scheduler ({where}): "
                                   f"{first_line(exc)}")
            return
        self._client = client
        if self.address is not None:
            # Workers without the resource would leave every job waiting, silently, forever.
            lacking, connected = await workers_without(client, SLOTS)
            if connected and len(lacking) == connected:
                await asyncio.shield(self._close(client, cluster))
                yield SchedulerFailure(no_slots_message(self.address, lacking, SLOTS))
                return
            if not connected:  # the games wait for a worker: say so rather than look hung
                yield Notice(f"no Dask worker is connected to {self.address} yet: the games "
                             f"wait for one (dask worker {self.address} --nthreads N "
                             '--resources "slots=N")')
            for notice in await self._workers.check_versions(client):
                yield notice
        if self.builds.orders_json is not None:
            async for built in self.builds.build_everywhere(client, self._workers):
                yield built
                if isinstance(built, SchedulerFailure):
                    await asyncio.shield(self._close(client, cluster))
                    return
        if self.watch_moves:
            self._moves = _Moves()
            client.subscribe_topic(MOVES_TOPIC, self._moves.receive)
        try:
            async for event in self._play_all(client):
                yield event
        finally:
            for task in [*self._flight, *([self._waker] if self._waker else [])]:
                task.cancel()
            await asyncio.shield(self._close(client, cluster))

    # ----------------------------------------------------------------- connecting

    async def _connect(self) -> tuple[LocalCluster | None, Client]:
        """A client of the given scheduler, or of a new LocalCluster on this machine."""
        if self.address is not None:
            client = await asyncio.wait_for(
                Client(self.address, asynchronous=True, timeout=CONNECT_TIMEOUT,
                       name=f"runner-{self.tag}"), CONNECT_TIMEOUT + 5)
            return None, client
        cluster = await start_local_cluster(self.local_workers or 1, self.concurrency)
        client = await Client(cluster, asynchronous=True)
        return cluster, client

    async def _close(self, client: Client, cluster: LocalCluster | None) -> None:
        """Stop the engines kept on the workers, then the client and a local cluster."""
        if client.status == "running":
            if self._moves is not None:
                with contextlib.suppress(Exception):
                    client.unsubscribe_topic(MOVES_TOPIC)
            if not self.keep_engines or self._jobs.hard:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(client.run(release_pool), 20)
        closing: list[Any] = [client.close()]  # coroutines for an asynchronous client
        if cluster is not None:
            closing.append(cluster.close())
        for step in closing:
            if step is not None:
                with contextlib.suppress(Exception):
                    await step

    # ----------------------------------------------------------------- the jobs

    async def _play_all(self, client: Client) -> AsyncGenerator[SchedulerEvent, None]:
        """Keep the slots busy; report starts, moves, records and notices until nothing is
        left."""
        finished = True  # a job came back: the cluster may have changed
        while True:
            if finished:  # a job came back: the cluster may have changed since
                for notice in await self._workers.game_came_back(client):
                    yield notice
            while (len(self._flight) < AHEAD * self.concurrency
                   and (job := self._jobs.next()) is not None):
                started = self._launch(client, job)
                if started is None:
                    break
                yield started
            if not self._flight:
                break
            done, _ = await asyncio.wait(self._waiting(), return_when=asyncio.FIRST_COMPLETED)
            finished = done != {self._waker}
            for task in done:
                if task is self._waker:
                    continue
                for moved in self._moves.take() if self._moves is not None else ():
                    yield moved  # this game's last moves before its record
                flight = self._flight.pop(task)
                if self._moves is not None:
                    self._moves.jobs.pop(str(flight.future.key), None)
                async for event in self._outcome(client, flight, task):
                    yield event
            for moved in self._moves.take() if self._moves is not None else ():
                yield moved
            if self._failure is not None:
                yield SchedulerFailure(self._failure, refused=self._cannot_set_up,
                                       games_lost=self._scheduler_lost)
                self._failure = None
        if self._failure is not None:
            yield SchedulerFailure(self._failure, refused=self._cannot_set_up,
                                       games_lost=self._scheduler_lost)

    def _waiting(self) -> set[asyncio.Task[Any]]:
        """What to wait for: the jobs in flight and, when watching, the next move."""
        waiting: set[asyncio.Task[Any]] = set(self._flight)
        if self._moves is not None:
            if self._waker is None or self._waker.done():
                self._waker = asyncio.create_task(self._moves.arrived.wait())
            waiting.add(self._waker)
        return waiting

    def _launch(self, client: Client, job: GameJob) -> JobStarted | None:
        """Send one job to the cluster (None: no worker may take it, the run stops).

        It is reported started now: it is queued on a worker's slot, or playing.
        """
        used = {flight.slot for flight in self._flight.values()}
        slot = next(n for n in itertools.count() if n not in used)
        allowed = self._allowed(job)
        if allowed == []:
            self._jobs.retry(job)
            return None
        key = f"game-{self.tag}-{self.run_id}-{job.index}-{next(self._attempts)}"
        args: tuple[Any, ...] = (job.to_json(), self.fresh)
        if self._moves is not None:  # the task's key: its moves are sent back tagged with it
            args += (key,)
            self._moves.jobs[key] = _Watched(job)
        if self.builds.orders_json is not None:
            args += (None,) * (3 - len(args)) + (self.builds.orders_json,)
        future = client.submit(
            play_job, *args, key=key, resources={SLOTS: 1}, pure=False, workers=allowed,
            allow_other_workers=False)
        # An asynchronous client's result() is a coroutine.
        task = asyncio.ensure_future(cast("Awaitable[str]", future.result()))
        self._flight[task] = _InFlight(job, future, slot)
        return JobStarted(job, slot)

    def _allowed(self, job: GameJob) -> list[str] | None:
        """The workers a job may run on (None: any; none left stops the run)."""
        allowed = self._workers.allowed(job.engines)
        if allowed == []:
            needed = " and ".join(dict.fromkeys(job.engines))
            self._failure = (f"no worker left that can play game {job.index + 1} ({needed}): "
                             "see the notices above; fix the workers and run again")
            self._jobs.stop()
        return allowed

    async def _outcome(self, client: Client, flight: _InFlight,
                       task: asyncio.Task[Any]) -> AsyncGenerator[SchedulerEvent, None]:
        """What one finished task means: a record, a replay, a notice, or the end of the run."""
        job = flight.job
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            async for event in self._task_failed(client, job, error):
                yield event
            return
        reply = JobReply.from_json(task.result())
        outcome = reply.outcome
        built, wrong = self.builds.came_back(reply)  # a worker that joined late built now
        for made in built:
            yield made
        if wrong is not None and self._failure is None:
            self._failure = wrong
            self._cannot_set_up = True  # the same builds give the same benches again
            self._jobs.stop()
        if str(reply.address) in self._workers.other_versions:
            self._jobs.retry(job)  # played by a version left out (its notice said so): again
        elif isinstance(outcome, EngineFailed):
            # Where an engine does not start, it is not sent again: the other workers play
            # its games (no limit of failed starts in a row, as in this process: a worker
            # left out is the run's answer here, and none left stops it).
            notice = self._workers.engine_failed(reply, outcome)
            if notice is not None:
                yield notice
            self._jobs.retry(job)
        elif isinstance(outcome, CannotSetUp):
            self._jobs.retry(job)
            if not self._cannot_set_up:  # the jobs sent ahead come back alike: say it once
                self._cannot_set_up = True
                self._failure = f"game {job.index + 1} cannot be played: {outcome.reason}"
                self._jobs.stop()
        elif job.index in self._delivered:
            yield Notice(f"game {job.index + 1} came back twice (from {reply.worker}); "
                         "stored once only")
        else:
            assert isinstance(outcome, Played)
            record = outcome.record
            if not record.replay:
                self._delivered.add(job.index)
            yield JobFinished(job, record, outcome.seconds)
            if record.replay:
                self._replay(job, record.reason)
                # A worker whose loop stood still under the machine's load is not a broken
                # worker: counted, a busy machine left no worker and ended the run.
                if not record.reason.startswith(FROZEN_REPLAY):
                    notice = self._workers.worker_failed(reply)
                    if notice is not None:
                        yield notice

    async def _task_failed(self, client: Client, job: GameJob,
                           error: BaseException) -> AsyncGenerator[SchedulerEvent, None]:
        """A task that raised: the scheduler lost, workers dying under it, or a bug."""
        if client.status != "running" or isinstance(error, asyncio.CancelledError):
            if not self._jobs.hard:
                self._failure = (f"lost the Dask scheduler ({self.address or 'local cluster'}) "
                                 f"while game {job.index + 1} was out: {first_line(error)}")
                self._jobs.stop()
                self._scheduler_lost = True
            return
        if isinstance(error, KilledWorker):
            yield Notice(f"game {job.index + 1}: the workers playing it died "
                         f"{error.args[1] if len(error.args) > 1 else ''}".rstrip())
        else:
            yield Notice(f"game {job.index + 1} failed on a worker: "
                         f"{type(error).__name__}: {error}")
        self._replay(job, f"{type(error).__name__}: {error}")

    def _replay(self, job: GameJob, reason: str) -> None:
        """Send a failed job out again, or stop the run when it failed too often."""
        failure = self._jobs.replay(job, reason)
        if failure is not None:
            self._failure = failure


# ----------------------------------------------------------------- stopping the cluster's work

def _in_background(coroutine: Any) -> None:
    """Run a clean-up coroutine on the running loop (stop() is called from a handler)."""
    try:
        task = asyncio.get_running_loop().create_task(coroutine)
    except RuntimeError:
        coroutine.close()
        return
    task.add_done_callback(lambda done: done.cancelled() or done.exception())


async def _cancel_queued(client: Client | None,
                         flights: dict[asyncio.Task[Any], _InFlight]) -> None:
    """Cancel the jobs waiting for a free slot (the games already running finish)."""
    if client is None or client.status != "running":
        return
    try:
        executing = await client.run(executing_keys)
    except Exception:  # a worker gone: its jobs are not running anyway
        executing = {}
    running = {key for keys in executing.values() for key in keys}
    for task, flight in list(flights.items()):
        if flight.future.key not in running:
            task.cancel()
            await client.cancel([flight.future])


async def _abort_running(client: Client | None,
                         flights: dict[asyncio.Task[Any], _InFlight]) -> None:
    """A hard stop: cancel every job and abort the games on every worker."""
    if client is None or client.status != "running":
        return
    await client.cancel([flight.future for flight in flights.values()], force=True)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(client.run(abort_games), 20)


async def start_local_cluster(workers: int, concurrency: int) -> LocalCluster:
    """A LocalCluster of `workers` processes (at least one) on this machine with
    `concurrency` game slots in all, each worker preloading `runner.cluster.worker`."""
    workers = max(1, workers)
    per_worker = max(1, math.ceil(max(1, concurrency) / workers))
    cluster: LocalCluster = await LocalCluster(
        n_workers=workers, threads_per_worker=per_worker, processes=True,
        resources={SLOTS: per_worker}, dashboard_address="127.0.0.1:0", asynchronous=True,
        silence_logs=logging.ERROR, preload=["runner.cluster.worker"])
    return cluster

