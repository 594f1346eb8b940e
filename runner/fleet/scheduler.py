"""A tournament's games on remote workers: the `Scheduler` a service's workers-placed run
plays on (runner.app.run's `Placement.scheduler`, so the run sequence is the usual one).

Nothing is pushed: a worker asks the `FleetHub` for work, which leases it a `Batch` of this
scheduler's waiting jobs (only of engines its own allow-list has). A game is reported as
started when the worker says it started it (its heartbeat lists the games it started; an
upload of a game not listed yet starts it too), not when it is leased. Each game the worker
uploads is reported as finished and answered once the tournament handled it (stored through
its writer, counted, the SPRT updated): the same path as every local game.

Stopping follows the local rule (runner.tournament.stopping): a soft stop leases nothing
more, and the answers to each batch's heartbeats and uploads tell its worker to wind down
(`WindDown.FINISH`): it finishes the games it started, uploads them (counted, as a local
run's running games are) and hands the rest back; the run ends once every batch is back. A
hard stop takes every batch back at once and its worker is told to cut its games
(`WindDown.CUT`, through `on_cut`: the hub answers for batches of runs that ended).
A batch whose deadline passes without a heartbeat is taken back: its games not yet uploaded
wait for another worker, and anything its first worker sends for it later is refused (a
`Refusal`), so no game is counted twice or lost. The store notes every batch and its fate.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from runner.config.recipes import BuildOrder
from runner.fleet.batches import Batch, WindDown, batch_size
from runner.fleet.builds import BogusReport, FleetBuilds, WorkerBuild
from runner.fleet.ledger import CountedLedger
from runner.fleet.speed import Scaling
from runner.fleet.waiting import WaitingJobs
from runner.game.job import GameJob
from runner.game.record import GameRecord
from runner.referee import verify_game
from runner.store.store import FleetGameRecord, Store
from runner.tournament.events import Notice
from runner.tournament.scheduler import (
    JobFinished,
    JobsFinished,
    JobStarted,
    Scheduler,
    SchedulerEvent,
    SchedulerFailure,
)

__all__ = ["Cut", "FleetScheduler", "Refusal"]

_Queued = tuple[SchedulerEvent, "asyncio.Future[None] | None"]


@dataclass(eq=False)  # not frozen: raising sets __traceback__, which a frozen one refuses
class Refusal(Exception):
    """An upload, heartbeat or end the service refuses: the HTTP status and why; `flag`
    when the worker sent what no honest worker sends (it is flagged)."""

    status: int
    text: str
    flag: bool = False

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Cut:
    """A batch taken back from its worker by a hard stop (or its run's end): the worker is
    told to cut its running games."""

    batch_id: int
    worker_id: int
    left: int
    """Its games not uploaded (none of them counts)."""


def _fingerprint(record: GameRecord) -> int:
    """What makes two uploads of one game the same game: its players, moves (with what the
    engines said), result, termination and final position; not its transcripts or times of
    day. A hash for this process only (nothing stores it)."""
    return hash((record.white, record.black, record.moves, record.result, record.termination,
                 record.reason, record.final_fen))


class FleetScheduler(Scheduler):
    """Hands one tournament's jobs out to remote workers in leased batches."""

    def __init__(self, store: Store, lease_seconds: float, *,
                 on_open: Callable[[FleetScheduler], None] = lambda _s: None,
                 on_close: Callable[[FleetScheduler], None] = lambda _s: None,
                 on_cut: Callable[[Iterable[Cut]], None] = lambda _c: None,
                 names: Mapping[str, str] | None = None,
                 ledger: CountedLedger | None = None,
                 orders: Mapping[str, BuildOrder] | None = None) -> None:
        self.store = store
        self.builds = FleetBuilds(orders)
        """The engines the workers build themselves (a branch test's sides)."""
        self.names: dict[str, str] = dict(names or {})
        """The allow-list name of each engine its jobs name otherwise: a tuning pair's
        ``plus`` and ``minus`` are both the tuned engine (sent with each batch)."""
        self.ledger = ledger or CountedLedger(store)
        """Where each counted game's worker, batch and factor are noted (group commits)."""
        self.lease_seconds = lease_seconds
        self.tournament_id: int | None = None
        """Set by the hub once the tournament is in the store (before it plays)."""
        self._on_open = on_open
        self._on_close = on_close
        self._on_cut = on_cut
        self._jobs = WaitingJobs(self.names)
        self._batches: dict[int, Batch] = {}
        self._taken: list[int] = []
        """The batches a hard stop took back (noted lost in the store when the run ends)."""
        self._queue: deque[_Queued] = deque()
        self._wake = asyncio.Event()
        self._leasing = 0
        """Leases being written: their jobs are out of the waiting line but not in a batch
        yet, so the run is not done while any is (it would end a game short)."""
        self._closed = False
        """The run's events ended: a lease written since is handed back, not given out."""
        self.share: float | None = None
        """The games at once a service asked of this run (`resize`): the hub offers workers
        to such runs by their games out per share (None: never asked, oldest first)."""

    # ----------------------------------------------------------------- the interface

    def resize(self, concurrency: int) -> None:
        """Weigh this run against the other resized runs by `concurrency` when the hub
        hands out batches (a service re-dividing its games between branch tests)."""
        self.share = float(max(1, concurrency))

    @property
    def out(self) -> int:
        """Its games leased to workers and not back yet."""
        return sum(len(batch.jobs) - len(batch.delivered) for batch in self._batches.values())

    def submit(self, jobs: Iterable[GameJob]) -> None:
        """Queue jobs to hand out in their order (read lazily, as workers ask)."""
        self._jobs.submit(jobs)

    def stop(self, hard: bool = False) -> None:
        """Lease no new batch, and tell each worker to wind its batch down (finish its
        running games, hand the rest back); with `hard`, take back every batch out at once
        (its workers cut their games; their later uploads are refused; a resume plays its
        games)."""
        self._jobs.stop(hard)
        if hard:
            self._cut()
        self._wake.set()

    @property
    def wind_down(self) -> WindDown:
        """What the workers of its batches are told: play on, finish, or cut."""
        if self._jobs.hard:
            return WindDown.CUT
        return WindDown.FINISH if self._jobs.stopped else WindDown.NONE

    async def events(self) -> AsyncGenerator[SchedulerEvent, None]:
        """Report the games the workers start and upload until every job is played (or the
        run stops and no batch is out)."""
        assert self.tournament_id is not None, "the hub attaches the tournament first"
        await asyncio.to_thread(self.store.fleet.lose_open, self.tournament_id)
        self._on_open(self)
        try:
            while True:
                for notice in await self._expire():
                    yield notice
                if self._done():
                    return
                self._wake.clear()
                if not self._queue:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), 1.0)
                    continue
                event, waiting = _next(self._queue)
                try:
                    yield event
                except BaseException:
                    # The run failed handling it (a lost lease, the database gone): nothing
                    # of it is acknowledged as counted.
                    _answer(waiting, Refusal(503, "the tournament's run stopped before this "
                                                  "game was stored: it is played again"))
                    raise
                _answer(waiting, None)
        finally:
            self._closed = True
            self._on_close(self)
            self._cut()
            out = self._taken
            self._jobs.stop(hard=True)
            while self._queue:
                _event, handled = self._queue.popleft()
                _answer([handled], Refusal(503, "the tournament's run ended"))
            for batch_id in out:
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(self.store.fleet.set_batch, batch_id, state="lost")

    # ----------------------------------------------------------------- the hub's calls

    def wants(self, engines: Iterable[str]) -> bool:
        """Whether a job a worker allowing `engines` may play is waiting."""
        return self._jobs.take(set(engines), 1, peek=True) != []

    async def lease(self, worker_id: int, engines: Iterable[str], slots: int,
                    factor: float = 1.0,
                    scaling: Callable[[str, str], Scaling] | None = None) -> Batch | None:
        """A batch of waiting jobs for the worker (None: nothing it may play), its clocks
        `factor` times the tournament's (the worker's machine speed), or each job's as
        `scaling` gives it for its two engines' allow-list names."""
        assert self.tournament_id is not None
        allowed = set(engines)
        first = self._jobs.take(allowed, 1, peek=True)
        if not first:
            return None
        if scaling is not None:
            factor = _scaled(first[0], scaling, self.names).factor
        jobs = self._jobs.take(allowed, batch_size(first[0], slots, factor=factor))
        deadline = datetime.now(UTC) + timedelta(seconds=self.lease_seconds)
        self._leasing += 1
        try:
            batch_id = await asyncio.to_thread(self.store.fleet.lease, self.tournament_id,
                                               worker_id, [job.index for job in jobs], deadline)
        except BaseException:
            self._jobs.put_back(jobs)
            raise
        finally:
            self._leasing -= 1
            self._wake.set()
        if self._closed or self._jobs.stopped:
            # Stopped (or ended) while the lease was written: a stop leases nothing more,
            # so the jobs go back and the row says the batch never went out.
            self._jobs.put_back(jobs)
            await asyncio.to_thread(self.store.fleet.set_batch, batch_id, state="lost")
            return None
        now = time.monotonic()
        batch = Batch(batch_id, worker_id, {job.index: job for job in jobs},
                      now + self.lease_seconds, factor,
                      _scalings(jobs, scaling, self.names), stored=now)
        self._batches[batch_id] = batch
        return batch

    def holds(self, batch_id: int) -> bool:
        """Whether the batch is one of this tournament's out now."""
        return batch_id in self._batches

    async def built(self, worker_id: int, batch_id: int, reports: Iterable[WorkerBuild],
                    machine: str) -> None:
        """The worker's builds of the batch's ordered engines, benched on `machine`: each
        new one a notice; a failed build or a wrong bench ends the run (a `Refusal` tells
        the worker so), as does a report no honest worker sends (flagged)."""
        batch = self._own(worker_id, batch_id)
        try:
            checked = self.builds.reported(worker_id, machine, batch, reports)
        except BogusReport as exc:
            await self.end(worker_id, batch_id, state="refused")
            raise Refusal(422, f"build report refused: {exc}", flag=True) from None
        for notice in checked.notices:
            self._queue.append((notice, None))
        if checked.failure is not None:
            self._queue.append((SchedulerFailure(checked.failure, refused=True), None))
            self.stop(hard=True)
            raise Refusal(409, checked.failure)
        self._wake.set()

    async def heartbeat(self, worker_id: int, batch_id: int,
                        started: Iterable[int] = ()) -> float:
        """Push the batch's deadline back by a lease and report the games the worker says it
        `started` (indexes); the seconds it now has. A `Refusal` (flagged) for an index not
        in the batch."""
        batch = self._own(worker_id, batch_id)
        for index in started:
            if index not in batch.jobs:
                raise Refusal(422, f"game {index + 1} is not in batch {batch_id}", flag=True)
            self._started(batch, index)
        now = time.monotonic()
        batch.deadline = now + self.lease_seconds
        # The stored deadline is for people reading the table (a restart loses every batch
        # out anyway): written again only once it is a quarter of a lease behind.
        if now - batch.stored >= self.lease_seconds / 4:
            batch.stored = now
            await asyncio.to_thread(self.store.fleet.set_batch, batch_id,
                                    deadline=datetime.now(UTC)
                                    + timedelta(seconds=self.lease_seconds))
        return self.lease_seconds

    async def upload(self, worker_id: int, batch_id: int, record: GameRecord,
                     index: int, seconds: float, worker_name: str | None = None) -> None:
        """Count game `index` of the batch: returns once the tournament stored it; a
        `Refusal` when it is not the worker's to send or not the game it was given. The
        same game sent again (an answer lost on the way) is refused without a flag; another
        game for an index already counted flags the worker."""
        batch = self._own(worker_id, batch_id)
        given = batch.given(index)
        if given is None:
            raise Refusal(422, f"game {index + 1} is not in batch {batch_id}", flag=True)
        if (why := self.builds.unreported(worker_id, given)) is not None:
            raise Refusal(409, why)
        digest = _fingerprint(record)
        if index in batch.delivered:
            if batch.delivered[index] != digest:
                raise Refusal(409, f"game {index + 1} of batch {batch_id} was already counted, "
                              "and this is another game", flag=True)
            raise Refusal(409, f"game {index + 1} of batch {batch_id} was already uploaded")
        # Refereed again against the job as this worker was given it (its scaled clocks):
        # moves, result, clocks, engines, colours, opening.
        verdict = verify_game(given, record)
        if not verdict.ok:
            # Not counted, and nothing more of this batch is taken from this worker: its
            # games not yet counted go to another.
            await self.end(worker_id, batch_id, state="refused")
            where = "" if verdict.ply is None else f" (ply {verdict.ply})"
            raise Refusal(422, f"game {index + 1} refused{where}: {verdict.reason}", flag=True)
        batch.delivered[index] = digest
        self._started(batch, index)
        # The spec the worker was given (the worker's cannot change what is stored: its
        # clocks are the ones it played under), and who played it (the worker's name as the
        # service knows it).
        counted = replace(record, spec=given.spec, worker=worker_name or record.worker)
        handled: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append((JobFinished(batch.jobs[index], counted, seconds), handled))
        self._wake.set()
        await handled
        assert self.tournament_id is not None
        scaled = batch.scaling(index)
        await self.ledger.note(FleetGameRecord(self.tournament_id, index, worker_id, batch_id,
                                               scaled.factor, scaled.source))
        if batch.complete:
            await self.end(worker_id, batch_id, state="ended")

    async def end(self, worker_id: int, batch_id: int, state: str = "ended") -> int:
        """The worker ends its batch: the games it did not upload wait for another worker
        (at the head of the line); how many."""
        batch = self._own(worker_id, batch_id)
        del self._batches[batch_id]
        left = batch.left()
        self._jobs.put_back(left)
        await asyncio.to_thread(self.store.fleet.set_batch, batch_id, state=state)
        self._wake.set()
        return len(left)

    # ----------------------------------------------------------------- inside

    def _started(self, batch: Batch, index: int) -> None:
        """Report game `index` of the batch as started, once (not after it came back)."""
        if index in batch.started:
            return
        batch.started.add(index)
        self._queue.append((JobStarted(batch.jobs[index], batch.worker_id), None))
        self._wake.set()

    def _cut(self) -> None:
        """Take back every batch out at once; their workers are told to cut their games."""
        cut = [Cut(batch.id, batch.worker_id, len(batch.left()))
               for batch in self._batches.values()]
        self._taken += self._batches
        self._batches.clear()
        if cut:
            self._on_cut(cut)

    def _own(self, worker_id: int, batch_id: int) -> Batch:
        batch = self._batches.get(batch_id)
        if batch is None or batch.worker_id != worker_id:
            raise Refusal(409, f"batch {batch_id} is no longer this worker's (its lease ran "
                          "out or the run ended): its games are played elsewhere")
        return batch

    async def _expire(self) -> list[Notice]:
        """Take back the batches whose deadline passed; a notice for each."""
        now = time.monotonic()
        notices = []
        for batch in [b for b in self._batches.values() if b.deadline < now]:
            left = await self.end(batch.worker_id, batch.id, state="expired")
            notices.append(Notice(f"batch {batch.id} of worker {batch.worker_id} was not "
                                  f"heard from in {self.lease_seconds:g} s: its {left} games "
                                  "not uploaded go to another worker"))
        return notices

    def _done(self) -> bool:
        """Nothing left to report: no batch out or being leased, nothing queued, no job left
        (or stopped)."""
        return (not self._batches and not self._leasing and not self._queue
                and self._jobs.exhausted())


def _next(queue: deque[_Queued]) -> tuple[SchedulerEvent, list[asyncio.Future[None] | None]]:
    """The next event of `queue` to report and the uploads waiting for it to be handled: the
    finished games queued one after another go as one `JobsFinished` (stored in one
    transaction while the uploads behind them queue for the next); a game started among
    them (the upload of a game no heartbeat said started) is reported first."""
    for position, (queued, _handled) in enumerate(queue):
        if isinstance(queued, JobStarted):
            if position:
                started = queue[position]
                del queue[position]
                return started[0], [started[1]]
            break
        if not isinstance(queued, JobFinished):
            break
    event, handled = queue.popleft()
    if not isinstance(event, JobFinished):
        return event, [handled]
    finished, waiting = [event], [handled]
    while queue and isinstance(queue[0][0], JobFinished):
        more, handled = queue.popleft()
        assert isinstance(more, JobFinished)
        finished.append(more)
        waiting.append(handled)
    if len(finished) == 1:
        return event, waiting
    return JobsFinished(tuple(finished)), waiting


def _scalings(jobs: Iterable[GameJob], scaling: Callable[[str, str], Scaling] | None,
              names: Mapping[str, str]) -> dict[int, Scaling]:
    """Each job's scaling by index (none without a `scaling`: the batch's factor)."""
    return {} if scaling is None else {job.index: _scaled(job, scaling, names) for job in jobs}


def _scaled(job: GameJob, scaling: Callable[[str, str], Scaling],
            names: Mapping[str, str]) -> Scaling:
    """The job's scaling, by its engines' allow-list names."""
    return scaling(names.get(job.white.name, job.white.name),
                   names.get(job.black.name, job.black.name))


def _answer(waiting: Iterable[asyncio.Future[None] | None], error: Refusal | None) -> None:
    """Tell the uploads waiting on an event how it went (None: stored and counted)."""
    for handled in waiting:
        if handled is None or handled.done():
            continue
        if error is None:
            handled.set_result(None)
        else:
            handled.set_exception(error)
