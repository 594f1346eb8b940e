"""The tune verb: SPSA over game pairs, each pair a match played through the run verb's steps.

Iteration ``k`` (from 1) draws its flips and rounding from the run's seed and ``k``
(`runner.tuning.spsa`), plays one game pair (the book's ``k``-th opening, colours swapped)
between the engine at ``theta + c*flip`` and at ``theta - c*flip`` as the tournament
``NAME #k`` (`prepared` and `play`: placement, leases and resume are the run verb's), then
applies fishtest's step and stores the iteration in one transaction. A run stopped anywhere
(Ctrl-C, kill -9) continues from its last stored iteration with the same draws; a pair it
had begun is resumed as any tournament is, one it had finished is read back.

Pairs in flight. A file's ``concurrency`` C plays ``P = C // 2`` pairs at once (at least
one), as fishtest's workers each play pairs against the theta they were given: the
iterations are issued in rounds of P (1..P, P+1..2P, ...), every pair of a round around the
theta of the round's start and with the gains of its first iteration (fishtest computes them
from the iterations counted when a worker asks, the same for every worker that asks before a
result comes in). Each pair's step (its own flips and result) is applied in the order of
``k`` to the theta current then (fishtest applies each report to the theta current when it
arrives): the order of ``k``, not of arrival, so that a resumed run steps exactly as an
uninterrupted one. With ``P = 1`` this is one pair after another, each around the last theta.

Engines reused. Played here (no Dask placement given), the pairs' games run on slots kept
from one pair to the next (`SlotPool`): the sides' engines stay up and are sent the next
pair's values (`Engine.change_options`: CECP ``option``, UCI ``setoption``) instead of being
started again; an engine whose protocol cannot take new values live is started afresh.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

from runner.app.modes import StartMode
from runner.app.run import Done, MissingExtra, Placement, Refused, play, prepared
from runner.app.signals import Interrupted, StopGuard, StopPolicy
from runner.cluster import cluster_scheduler, local_cluster
from runner.config.model import TournamentConfig
from runner.config.tune import PLUS, TuneConfig
from runner.game.slot import SlotPool
from runner.protocol.engine import Engine, EngineConfig
from runner.protocol.factory import make_engine
from runner.protocol.freeze import FreezeMonitor
from runner.store.store import GameFilter, PlanChanged, Store, TuneIteration
from runner.tournament.events import TournamentStatus
from runner.tournament.run import Tournament
from runner.tournament.runtime import local_scheduler
from runner.tournament.scheduler import Scheduler
from runner.tuning.spsa import Gains, Probe, flips, gains, probe, rounding_draws, spin_value, step

__all__ = ["PairPlayer", "Played", "TuneControl", "TuneOutcome", "tune"]


@dataclass(frozen=True)
class Played:
    """A played pair: the plus side's wins minus its losses, and the pair's tournament."""

    result: int
    tournament_id: int


PairPlayer = Callable[[TournamentConfig, Store, Placement], Awaitable[Played | Refused | Interrupted]]
"""Plays one iteration's pair (`_Pairs.play`; a test's scripted source)."""


@dataclass(frozen=True)
class TuneOutcome:
    """How a tuning run ended: theta (by parameter name), iterations stored, why it stopped."""

    theta: dict[str, float]
    values: dict[str, int]
    """Theta rounded to the nearest integers, as ``option.NAME=VALUE`` words give them."""
    done: int
    total: int
    tune_id: int
    message: str | None = None
    exit_status: int = 0


class TuneControl:
    """A tuning run's stop from outside (a service's admin): `stop` does what a stop signal
    does, whenever it comes (before the run's pairs exist too)."""

    def __init__(self) -> None:
        self._asked: bool | None = None
        """None: no stop asked; else whether the last asked was hard."""
        self._pairs: _Pairs | None = None

    @property
    def asked(self) -> bool:
        """Whether a stop was asked."""
        return self._asked is not None

    def stop(self, hard: bool = False) -> None:
        """No new pair; the pairs in flight stopped, their running games cut with `hard`."""
        self._asked = bool(self._asked) or hard
        if self._pairs is not None:
            self._pairs.stop(hard)

    def attach(self, pairs: _Pairs) -> None:
        """The run's pairs, stopped at once when a stop came first."""
        self._pairs = pairs
        if self._asked is not None:
            pairs.stop(self._asked)


@dataclass(eq=False)
class _Pairs:
    """The pairs a tuning run plays: one stop guard for all of them (a signal stops every
    pair in flight and issues no more), and the slots kept from pair to pair."""

    guard: StopGuard
    pool: SlotPool = field(default_factory=SlotPool)
    freezes: FreezeMonitor = field(default_factory=FreezeMonitor)
    engine_factory: Callable[[EngineConfig], Engine] = make_engine
    taken: Callable[[Tournament], None] = lambda _t: None
    """Told of each pair's tournament once it is stored, before it plays (a fleet's
    scheduler learns its id)."""
    live: set[Tournament] = field(default_factory=set)
    stopping: bool = False
    hard: bool = False

    def stop(self, hard: bool = False) -> None:
        """A stop signal: no new pair; the pairs in flight stopped as the policy says."""
        self.stopping = True
        self.hard = self.hard or hard
        for tournament in list(self.live):
            tournament.stop(hard=self.hard)

    def placed(self, placement: Placement, config: TuneConfig) -> Placement:
        """`placement`, or slots from the pool when neither it nor the file (``[cluster]``)
        sends the games elsewhere."""
        if (placement.workers or placement.cluster or placement.scheduler is not None
                or (placement.from_file and config.base.cluster is not None
                    and placement.workers != 0)):
            return placement
        return Placement(workers=0, from_file=False, freezes=self.freezes,
                         scheduler=self._scheduler)

    def _scheduler(self, config: TournamentConfig, concurrency: int) -> Scheduler:
        """A pair's in-process scheduler on the pool's slots."""
        return local_scheduler(config, concurrency, self.freezes, pool=self.pool,
                               engines=self.engine_factory)

    def interrupted(self) -> Interrupted:
        """The stop as the tuning run's outcome."""
        return Interrupted(self.guard.exit_status or 130)

    async def play(self, config: TournamentConfig, store: Store, placement: Placement,
                   ) -> Played | Refused | Interrupted:
        """Play `config`'s game pair (continuing it when it was begun) and read its result
        back from the store."""
        if self.stopping:
            return self.interrupted()
        found = await prepared(config, store, StartMode.CONTINUE, placement=placement)
        if isinstance(found, Refused):
            return found
        if isinstance(found, Done):
            return await _result(store, found.finished.tournament_id)
        self.taken(found)
        self.live.add(found)
        try:
            if self.stopping:  # the signal came while it was prepared: nothing of it starts
                found.stop(hard=True)
            outcome = await play(found, store)
        finally:
            self.live.discard(found)
        if isinstance(outcome, Refused):
            return outcome
        if outcome.status is not TournamentStatus.FINISHED:
            if self.stopping:
                return self.interrupted()
            return Refused(outcome.error or f"the pair {config.name!r} ended unfinished",
                           outcome.exit_status or 1)
        return await _result(store, outcome.tournament_id)


async def _result(store: Store, tournament_id: int) -> Played:
    """The stored pair's result: the plus side's wins minus its losses."""
    games = await asyncio.to_thread(
        lambda: list(store.games(GameFilter(tournament_id=tournament_id))))
    result = 0
    for game in games:
        if game.result is None or game.result.value == "1/2-1/2":
            continue
        white_won = game.result.value == "1-0"
        result += 1 if white_won == (game.white == PLUS) else -1
    return Played(result, tournament_id)


_HERE = Placement()
"""Where games go unless told: on slots kept from pair to pair, in this process."""


async def tune(config: TuneConfig, store: Store, *, placement: Placement = _HERE,
               on_iteration: Callable[[TuneIteration], None] = lambda _i: None,
               player: PairPlayer | None = None, stop_policy: StopPolicy = StopPolicy.GENTLE,
               engine_factory: Callable[[EngineConfig], Engine] = make_engine,
               control: TuneControl | None = None,
               taken: Callable[[Tournament], None] = lambda _t: None) -> TuneOutcome:
    """Run (or continue) `config`'s tuning in `store`; `on_iteration` hears each stored one.
    `player` replaces the real pairs (a test's scripted results); `engine_factory` starts
    the engines of the real ones; `control` stops the run from outside; `taken` hears of
    each pair's tournament before it plays."""
    try:
        run = await asyncio.to_thread(store.tunes.open, config.name, config.plan())
    except PlanChanged as exc:
        return _outcome(config, [p.start for p in config.parameters], 0, -1, str(exc), 2)
    stored = await asyncio.to_thread(store.tunes.iterations, run.id)
    with StopGuard(stop_policy) as guard:
        pairs = _Pairs(guard, engine_factory=engine_factory, taken=taken)
        guard.hand_to(pairs)
        if control is not None:
            control.attach(pairs)
        try:
            async with _one_cluster(config, placement) as placed:
                return await _rounds(config, store, run.id, stored, pairs.placed(placed, config),
                                     player or pairs.play, on_iteration)
        finally:
            await pairs.pool.close()


def _local_workers(config: TuneConfig, placement: Placement) -> int | None:
    """The local Dask workers `placement` (or, when it may, the file's ``[cluster]`` without
    an address) asks for; None when the games go elsewhere."""
    if placement.scheduler is not None or placement.cluster is not None:
        return None
    if placement.workers is not None:
        return placement.workers or None
    cluster = config.base.cluster if placement.from_file else None
    if cluster is None or cluster.address is not None:
        return None
    return cluster.workers or None


@contextlib.asynccontextmanager
async def _one_cluster(config: TuneConfig, placement: Placement) -> AsyncIterator[Placement]:
    """`placement`; or, when it asks for local Dask workers, one local cluster for the whole
    run (not one per pair: seconds each), every pair's games on it and the engines kept up
    on its workers from pair to pair (sent each pair's values, as on this process's slots)."""
    workers = _local_workers(config, placement)
    if workers is None:
        yield placement
        return
    try:
        import distributed  # noqa: F401 - only whether it imports
    except ImportError as exc:
        raise MissingExtra(str(exc), name=exc.name) from None
    async with local_cluster(workers, 2 * config.pairs_at_once) as address:

        def scheduler(pair: TournamentConfig, concurrency: int) -> Scheduler:
            found = cluster_scheduler(pair, concurrency, address=address, from_file=False,
                                      keep_engines=True)
            assert found is not None  # an address always gives one
            return found

        yield Placement(from_file=False, freezes=placement.freezes, scheduler=scheduler)


async def _rounds(config: TuneConfig, store: Store, tune_id: int, stored: list[TuneIteration],
                  placement: Placement, player: PairPlayer,
                  on_iteration: Callable[[TuneIteration], None]) -> TuneOutcome:
    """Play the rounds of pairs from the first iteration not stored (see the module)."""
    start = [p.start for p in config.parameters]
    theta = list(stored[-1].theta) if stored else start
    plans = [gains(p, config.iterations) for p in config.parameters]
    size = config.pairs_at_once
    first = len(stored) // size * size + 1
    while first <= config.iterations:
        base = list(stored[first - 2].theta) if first > 1 else start
        ks = range(first, min(first + size, config.iterations + 1))
        issued = {k: _issue(config, plans, base, first, k) for k in ks}
        missing = [k for k in ks if k > len(stored)]
        # Every pair ends before anything is raised: none is left playing on the pool's slots.
        played = await asyncio.gather(*(player(config.pair(k, *issued[k][1:]), store, placement)
                                        for k in missing), return_exceptions=True)
        if (failed := next((p for p in played if isinstance(p, BaseException)), None)) is not None:
            raise failed
        for k, pair in zip(missing, played, strict=True):
            if isinstance(pair, BaseException):  # raised above; the type checker's narrowing
                raise pair
            if isinstance(pair, (Refused, Interrupted)):
                message = pair.message if isinstance(pair, Refused) else "interrupted"
                return _outcome(config, theta, k - 1, tune_id, message, pair.exit_status)
            probes, plus, minus = issued[k]
            theta = [step(p, t, q, pair.result) for p, t, q in
                     zip(config.parameters, theta, probes, strict=True)]
            record = TuneIteration(k, tuple(q.flip for q in probes), plus, minus, pair.result,
                                   tuple(theta), pair.tournament_id)
            await asyncio.to_thread(store.tunes.record, tune_id, record)
            stored.append(record)
            on_iteration(record)
        first += size
    return _outcome(config, theta, config.iterations, tune_id)


def _issue(config: TuneConfig, plans: list[Gains], base: list[float], gain_k: int, k: int,
           ) -> tuple[list[Probe], tuple[int, ...], tuple[int, ...]]:
    """Iteration `k`'s probes around `base` with the gains of iteration `gain_k`, and the
    integers each side is given."""
    count = len(config.parameters)
    signs = flips(config.seed, k, count)
    draws = rounding_draws(config.seed, k, count)
    probes = [probe(p, plan, t, gain_k, s) for p, plan, t, s in
              zip(config.parameters, plans, base, signs, strict=True)]
    plus = tuple(spin_value(q.plus, d[0]) for q, d in zip(probes, draws, strict=True))
    minus = tuple(spin_value(q.minus, d[1]) for q, d in zip(probes, draws, strict=True))
    return probes, plus, minus


def _outcome(config: TuneConfig, theta: list[float], done: int, tune_id: int,
             message: str | None = None, exit_status: int = 0) -> TuneOutcome:
    """The outcome with theta named by parameter."""
    names = [p.name for p in config.parameters]
    return TuneOutcome(dict(zip(names, theta, strict=True)),
                       {n: round(t) for n, t in zip(names, theta, strict=True)}, done,
                       config.iterations, tune_id, message, exit_status)
