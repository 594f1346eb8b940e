"""The service's side of the fleet: the workers that joined and the workers-placed runs
playing now, between the HTTP routes and each run's `FleetScheduler`.

A worker registers once (stored with what it says of itself: cores, memory, OS, runner
version, tablebases, the engines and the repositories its own allow-list permits), then asks
for batches; the hub gives it one from the oldest run that has a waiting game of engines it
allows (an engine built where it plays: of a repository it allows, `runner.fleet.builds`). Heartbeats,
uploads and a batch's end go to the run holding the batch, and their answers say whether its
run winds down (`WindDown`); a batch a hard stop took back (its run may have ended) is
remembered a while so that its worker is told to cut its games. A blocked worker gets
nothing.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from runner.config.model import TournamentConfig
from runner.config.recipes import BuildOrder
from runner.fleet import WIRE_VERSION
from runner.fleet.batches import Batch, WindDown, by_share
from runner.fleet.builds import WorkerBuild
from runner.fleet.ledger import CountedLedger
from runner.fleet.scheduler import Cut, FleetScheduler, Refusal
from runner.fleet.speed import EngineSpeed, Scaling, SpeedTerms
from runner.game.record import GameRecord
from runner.store.store import Store
from runner.tournament.run import Tournament

__all__ = ["CUTS_KEPT", "RECHECK", "SEEN_EVERY", "FleetHub", "Joined", "Leased"]

RECHECK = 2.0
"""Seconds a worker's stored record (blocked, its token) is trusted before it is read again."""
SEEN_EVERY = 10.0
"""The least time between two writes of when a worker was last heard from (each counted
game notes it too): the time is for people reading the table, not for the leases."""
CUTS_KEPT = 4096
"""Batches taken back by a hard stop remembered to tell their workers (the oldest forgotten
first: a worker not heard from by then is told its batch is no longer out, and stops it
alike)."""


@dataclass(frozen=True)
class Joined:
    """A registered worker as the hub serves it."""

    id: int
    name: str
    engines: frozenset[str]
    slots: int
    factor: float = 1.0
    """Its batches' clocks are the tournament's times this (its machine's speed factor)."""
    principal: str | None = None
    """The token's name it registered with."""
    repositories: frozenset[str] = frozenset()
    """The repositories its own allow-list permits it to build (its recipes')."""
    nps: int = 0
    """Its machine's bench speed per game slot (the bundled engine's)."""
    engine_factors: Mapping[str, float] = field(default_factory=dict)
    """The factor of each engine whose own bench it measured and this service has a
    reference for: that engine's games are scaled by it (`SpeedTerms.scaling`)."""
    slow_engines: tuple[str, ...] = ()
    """Its engines whose own bench is too slow for their reference (not in `engines`)."""

    def scaling(self, terms: SpeedTerms, built: Mapping[str, float], white: str,
                black: str) -> Scaling:
        """The clock factor of a game of `white` against `black` on this worker (`built`:
        the factors of the engines it built, from their builds' benches)."""
        return terms.scaling(self.nps, {**self.engine_factors, **built}, (white, black))


@dataclass(frozen=True)
class Leased:
    """A batch handed to a worker, with the tournament it belongs to."""

    tournament_id: int
    batch: Batch
    lease_seconds: float
    names: Mapping[str, str] = field(default_factory=dict)
    """The allow-list name of each engine its jobs name otherwise (`FleetScheduler.names`)."""
    orders: Mapping[str, BuildOrder] = field(default_factory=dict)
    """The build orders of the engines its jobs name that the worker builds itself."""


class FleetHub:
    """The workers and the workers-placed runs of one service."""

    def __init__(self, store: Store, lease_seconds: float,
                 speed: SpeedTerms | None = None) -> None:
        self.store = store
        self.lease_seconds = lease_seconds
        """Seconds a batch is leased for; each heartbeat gives it as many again."""
        self.speed = speed or SpeedTerms()
        """How each worker's clocks are scaled to its machine, and the slowest accepted."""
        self.ledger = CountedLedger(store)
        """The counted games' notes of every run, written together."""
        self._runs: list[FleetScheduler] = []
        self._joined: dict[int, Joined] = {}
        self._checked: dict[int, float] = {}
        """When each worker's stored record (its token, blocked) was last read."""
        self._seen: dict[int, float] = {}
        """When each worker's `last_seen` was last written."""
        self._cuts: OrderedDict[int, Cut] = OrderedDict()
        """The batches hard stops took back, by id, until their workers end them."""

    # ----------------------------------------------------------------- runs

    def scheduler(self, config: TournamentConfig, _concurrency: int,
                  names: Mapping[str, str] | None = None) -> FleetScheduler:
        """A workers-placed run's scheduler (`Placement.scheduler`'s factory); `names` maps
        an engine its jobs name otherwise to the allow-list name workers know it by; an
        engine carrying a build order is built by each worker that plays it."""
        orders = {e.name: e.built_from for e in config.engines if e.built_from is not None}
        return FleetScheduler(self.store, self.lease_seconds, on_open=self._runs.append,
                              on_close=self._closed, on_cut=self._cut, names=names,
                              ledger=self.ledger, orders=orders)

    @staticmethod
    def attach(tournament: Tournament) -> None:
        """Tell a workers-placed run's scheduler its tournament (once it is stored)."""
        if isinstance(tournament.scheduler, FleetScheduler):
            tournament.scheduler.tournament_id = tournament.tournament_id

    def _closed(self, scheduler: FleetScheduler) -> None:
        if scheduler in self._runs:
            self._runs.remove(scheduler)

    def _cut(self, cuts: Iterable[Cut]) -> None:
        """Remember batches a hard stop took back (their workers are told to cut)."""
        for cut in cuts:
            self._cuts[cut.batch_id] = cut
        while len(self._cuts) > CUTS_KEPT:
            self._cuts.popitem(last=False)

    def _was_cut(self, worker: Joined, batch_id: int) -> Cut | None:
        cut = self._cuts.get(batch_id)
        return cut if cut is not None and cut.worker_id == worker.id else None

    # ----------------------------------------------------------------- workers

    async def register(self, name: str, principal: str | None,
                       info: Mapping[str, Any]) -> Joined:
        """Store a newly joined worker; a `Refusal` when it speaks another version of the
        exchange or its machine is too slow."""
        wire = int(info.get("wire", 1))
        if wire != WIRE_VERSION:
            raise Refusal(409, f"this worker speaks version {wire} of the workers' exchange "
                          f"(cecp-runner {info.get('version', '?')}) and this service version "
                          f"{WIRE_VERSION}: run the service's cecp-runner release on the worker")
        nps = int(info.get("nps", 0))
        if (why := self.speed.refusal(nps)) is not None:
            raise Refusal(403, why)
        measured = _engine_speeds(info)
        worker_id = await asyncio.to_thread(
            self.store.fleet.register, name, principal,
            {**info, "factor": self.speed.factor(nps),
             "engine_factors": self.speed.engine_factors(measured),
             "slow_engines": self.speed.too_slow(measured)})
        joined = self._known(worker_id, name, principal, info)
        self._joined[worker_id] = joined
        return joined

    def _known(self, worker_id: int, name: str, principal: str | None,
               info: Mapping[str, Any]) -> Joined:
        """The worker as the hub serves it, from what it registered and this service's
        terms now (they may have changed since it joined): an engine its own bench finds
        too slow for the engine's reference is left out of its engines."""
        nps = int(info.get("nps", 0))
        measured = _engine_speeds(info)
        slow = tuple(self.speed.too_slow(measured))
        return Joined(worker_id, name,
                      frozenset(str(e) for e in info.get("engines", ()) if str(e) not in slow),
                      max(1, int(info.get("concurrency", 1))), self.speed.factor(nps),
                      principal, frozenset(str(r) for r in info.get("repositories", ())),
                      nps, self.speed.engine_factors(measured), slow)

    async def joined(self, worker_id: int, principal: str) -> Joined:
        """The worker `worker_id` registered by `principal`; a `Refusal` when there is none
        or it is blocked (after a restart, a worker is read back from the store). The stored
        record is read again at most every `RECHECK` seconds: a block by ``runner worker
        block`` from another process takes that long to be seen."""
        known = self._joined.get(worker_id)
        now = time.monotonic()
        if known is not None and known.principal == principal \
                and now - self._checked.get(worker_id, -RECHECK) < RECHECK:
            return known
        record = await asyncio.to_thread(self.store.fleet.worker, worker_id)
        if record is None or record.principal != principal:
            raise Refusal(404, f"no worker {worker_id} registered with this token: register "
                          "again")
        if record.blocked:
            self._checked.pop(worker_id, None)
            raise Refusal(403, f"worker {worker_id} is blocked by an admin of this service")
        self._checked[worker_id] = now
        if known is None:
            known = self._known(record.id, record.name, principal, record.info)
            self._joined[worker_id] = known
        return known

    async def request(self, worker: Joined) -> Leased | None:
        """A batch for the worker, from the oldest run with a game it may play (runs given
        shares by `resize`: the least served for its share, `by_share`); None when there is
        none."""
        await self._heard(worker.id)
        runs = list(self._runs)
        for index in by_share([(run.out, run.share) for run in runs]):
            run = runs[index]
            allowed = run.builds.playable(worker.engines, worker.repositories)
            if run.tournament_id is None or not run.wants(allowed):
                continue
            batch = await run.lease(worker.id, allowed, worker.slots, worker.factor,
                                    functools.partial(worker.scaling, self.speed,
                                                      run.builds.factors(worker.id)))
            if batch is not None:
                return Leased(run.tournament_id, batch, self.lease_seconds, run.names,
                              run.builds.for_batch(batch))
        return None

    def _holder(self, batch_id: int) -> FleetScheduler:
        for run in self._runs:
            if run.holds(batch_id):
                return run
        raise Refusal(409, f"batch {batch_id} is no longer out (its lease ran out, it ended, "
                      "or the service restarted): ask for another")

    async def heartbeat(self, worker: Joined, batch_id: int,
                        started: Iterable[int] = ()) -> tuple[float, WindDown]:
        """Extend the worker's batch and report the games it `started`; the seconds it now
        has and whether its run winds down (a `Refusal` flags it when it must)."""
        await self._heard(worker.id)
        if self._was_cut(worker, batch_id) is not None:
            return self.lease_seconds, WindDown.CUT
        run = self._holder(batch_id)
        try:
            seconds = await run.heartbeat(worker.id, batch_id, started)
        except Refusal as refusal:
            if refusal.flag:
                await asyncio.to_thread(self.store.fleet.flag, worker.id, refusal.text)
            raise
        return seconds, run.wind_down

    async def upload(self, worker: Joined, batch_id: int, index: int, record: GameRecord,
                     seconds: float) -> WindDown:
        """Count one game of the worker's batch (a `Refusal` flags it when it must); whether
        its run winds down now (the game itself may have decided it)."""
        if (cut := self._was_cut(worker, batch_id)) is not None:
            raise Refusal(409, f"batch {batch_id} was taken back by a hard stop of its "
                          f"tournament: game {index + 1} and its {cut.left - 1} others not "
                          "uploaded are not counted")
        run = self._holder(batch_id)
        try:
            await run.upload(worker.id, batch_id, record, index, seconds, worker.name)
        except Refusal as refusal:
            if refusal.flag:
                await asyncio.to_thread(self.store.fleet.flag, worker.id, refusal.text)
            raise
        return run.wind_down

    async def built(self, worker: Joined, batch_id: int,
                    reports: Iterable[WorkerBuild]) -> None:
        """The worker's builds of its batch's engines (a `Refusal` when they end the run,
        flagging it when no honest worker sends them)."""
        try:
            await self._holder(batch_id).built(worker.id, batch_id, reports,
                                               f"remote worker {worker.name}")
        except Refusal as refusal:
            if refusal.flag:
                await asyncio.to_thread(self.store.fleet.flag, worker.id, refusal.text)
            raise

    def recheck(self, worker_id: int) -> None:
        """Read the worker's stored record at its next request (an admin blocked it here)."""
        self._checked.pop(worker_id, None)

    async def _heard(self, worker_id: int) -> None:
        """Note that the worker was heard from (written at most every `SEEN_EVERY`
        seconds)."""
        now = time.monotonic()
        if now - self._seen.get(worker_id, -SEEN_EVERY) >= SEEN_EVERY:
            self._seen[worker_id] = now
            await asyncio.to_thread(self.store.fleet.seen, worker_id)

    async def end(self, worker: Joined, batch_id: int) -> int:
        """The worker ends its batch; how many of its games go back (to other workers while
        its run goes on; none is played for a run that ended)."""
        if (cut := self._was_cut(worker, batch_id)) is not None:
            del self._cuts[batch_id]
            return cut.left
        return await self._holder(batch_id).end(worker.id, batch_id)


def _engine_speeds(info: Mapping[str, Any]) -> list[EngineSpeed]:
    """The engines' own benches a worker registered (the route checked their types)."""
    return [EngineSpeed(str(e.get("engine", "")), int(e.get("nps", 0)), int(e.get("nodes", 0)),
                        e.get("failed")) for e in info.get("engine_speeds", ())
            if isinstance(e, Mapping)]
