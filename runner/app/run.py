"""The run verb: play a tournament, the one sequence every front door translates into.

`run_tournament` owns, in this order: where the games are played (`Placement`: this process,
local workers when one process could not relay the games in time, a Dask cluster, or a
scheduler the caller builds, the seam a remote fleet plugs into), asking engines given no
protocol which one they speak, the "finished / settings changed" rule
(`runner.app.lifecycle`), taking the tournament (its lease), the stop policy
(`runner.app.signals`) and what a failure ends as. What comes back is a value with an exit
status (`RunResult`); the front doors keep only their view: the command line's lines and live
standings, a peer's output, the service's event stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path

from runner.app.lifecycle import Finished, finished, start
from runner.app.modes import StartMode
from runner.app.protocols import ask_protocols
from runner.app.signals import Interrupted, StopGuard, StopPolicy
from runner.cluster import make_scheduler
from runner.cluster.sizing import default_local_workers
from runner.config.model import TournamentConfig
from runner.protocol.freeze import FreezeMonitor
from runner.store.store import Store, TournamentStatus
from runner.tournament.events import (
    AlreadyFinished,
    DatabaseFailure,
    Event,
    RunOutcome,
    TournamentError,
)
from runner.tournament.run import Tournament
from runner.tournament.scheduler import Scheduler
from runner.tournament.styles import OrderImplementation
from runner.tournament.writer import GameWriter, PgnFileError

__all__ = ["Done", "MissingExtra", "Placement", "Refused", "RunResult", "RunView",
           "WorkersChosen", "events_to", "play", "prepared", "run_tournament"]

SchedulerFactory = Callable[[TournamentConfig, int], Scheduler]
"""Builds a run's scheduler for its configuration and games at once."""

RunView = Callable[[Tournament], AbstractAsyncContextManager[Callable[[Event], None]]]
"""What a front door shows of a taken tournament: entered before its first game, it gives the
handler of the run's events, and is left once the run ended."""


class MissingExtra(ImportError):
    """Games are to be played on Dask and the ``cluster`` extra is not installed (said
    before any engine is started)."""


@dataclass(frozen=True)
class Placement:
    """Where a run's games are played."""

    workers: int | None = None
    """Local Dask worker processes; 0: this process; None: the file's ``[cluster]``, else
    local workers when the games at once are more than one process relays in time."""
    cluster: str | None = None
    """A running Dask scheduler's address."""
    from_file: bool = True
    """Whether the file's ``[cluster]`` may choose (a service decides, not a submission)."""
    freezes: FreezeMonitor | None = None
    """The loop's freeze monitor, when one loop plays several runs (a service)."""
    scheduler: SchedulerFactory | None = None
    """A scheduler built by the caller instead (a test's, or a fleet of remote workers)."""

    def settled(self, config: TournamentConfig, concurrency: int) -> Placement:
        """This placement with the default decided: local workers past what one process
        relays in time, when nothing else says where to play."""
        if (self.scheduler is not None or self.workers is not None or self.cluster is not None
                or (self.from_file and config.cluster is not None)):
            return self
        workers = default_local_workers(concurrency)
        return Placement(workers=workers or None, from_file=self.from_file,
                         freezes=self.freezes) if workers else self

    @property
    def on_dask(self) -> bool:
        """Whether the games go to Dask (the ``cluster`` extra needed)."""
        return self.scheduler is None and bool(self.workers or self.cluster)

    def build(self, config: TournamentConfig, concurrency: int) -> Scheduler:
        """The scheduler that plays `concurrency` games of `config` at once here."""
        if self.scheduler is not None:
            return self.scheduler(config, concurrency)
        return make_scheduler(config, concurrency, workers=self.workers, cluster=self.cluster,
                              from_file=self.from_file, freezes=self.freezes)


@dataclass(frozen=True)
class WorkersChosen:
    """Nothing said where to play and `games` at once are more than one process relays in
    time: they are played on `workers` local worker processes."""

    games: int
    workers: int


@dataclass(frozen=True)
class Done:
    """The tournament a start would continue is finished: nothing was played."""

    finished: Finished
    repaired: int
    """Stored games written again to its PGN file, which lacked them."""

    @property
    def exit_status(self) -> int:
        """Nothing failed: 0."""
        return 0


@dataclass(frozen=True)
class Refused:
    """The tournament could not be taken or played (a changed setting under the same name,
    another live runner on it, an engine or opening refused, a database or PGN file failing);
    `message` says why in one line."""

    message: str
    exit_status: int
    database: bool = False
    """The database failed (not the user's input: a service answers 503, not 422)."""

    @classmethod
    def of(cls, exc: TournamentError) -> Refused:
        """The refusal `exc` says."""
        return cls(str(exc), exc.exit_code or 1, isinstance(exc, DatabaseFailure))


RunResult = RunOutcome | Done | Refused | Interrupted
"""How a run ended, each with the exit status a process ends with."""


def _quiet(_note: str | WorkersChosen) -> None:
    """Say nothing of the preparation."""


def events_to(handler: Callable[[Event], None]) -> RunView:
    """A view that hands every event of the run to `handler` and shows nothing else."""

    @contextlib.asynccontextmanager
    async def view(_tournament: Tournament) -> AsyncIterator[Callable[[Event], None]]:
        yield handler

    return view


_unwatched = events_to(lambda _event: None)
"""A view that shows nothing."""


async def prepared(config: TournamentConfig, store: Store, mode: StartMode, *,
                   placement: Placement = Placement(), tournament_id: int | None = None,
                   concurrency: int | None = None, origin: str | None = None,
                   lease_timeout: float | None = None, lease: bool = True,
                   say: Callable[[str | WorkersChosen], None] = _quiet,
                   style: OrderImplementation | None = None,
                   ) -> Tournament | Done | Refused:
    """The tournament a start in `mode` plays, found or created in `store` (its lease taken
    with `lease`; without, its run takes it), on the scheduler `placement` settles on; `Done`
    when it is finished, `Refused` when it cannot be played. `say` hears what was decided on
    the way (an engine's protocol, local workers chosen). MissingExtra before anything starts
    when the games go to Dask and the cluster extra is missing."""
    found = await _found(config, store, mode, placement=placement, tournament_id=tournament_id,
                         concurrency=concurrency, origin=origin, lease_timeout=lease_timeout,
                         say=say, style=style)
    return found if not isinstance(found, Tournament) else await _taken(found, store, lease)


async def _found(config: TournamentConfig, store: Store, mode: StartMode, *,
                 placement: Placement, tournament_id: int | None, concurrency: int | None,
                 origin: str | None, lease_timeout: float | None,
                 say: Callable[[str | WorkersChosen], None],
                 style: OrderImplementation | None = None) -> Tournament | Done | Refused:
    """`prepared` up to the tournament's row: nothing is stored or held yet, so that a stop
    signal may cut it anywhere."""
    games = max(1, concurrency or config.concurrency)
    settled = placement.settled(config, games)
    if settled.on_dask or (settled.from_file and settled.scheduler is None
                           and config.cluster is not None and settled.workers != 0):
        _require_dask()
    if settled.workers and placement.workers is None:
        say(WorkersChosen(games, settled.workers))
    # Before anything is compared or stored: the detected protocol is part of the config.
    config = await ask_protocols(config, say)
    if tournament_id is None and (done := finished(store, config, mode)) is not None:
        return await _done(store, config, done)
    return start(config, store, mode, tournament_id=tournament_id, concurrency=concurrency,
                 scheduler=settled.build(config, games), origin=origin,
                 lease_timeout=lease_timeout, style=style)


async def _taken(tournament: Tournament, store: Store, lease: bool) -> Tournament | Done | Refused:
    """`tournament` found or created in the store (`Tournament.prepare`), its lease taken
    with `lease`. Not cut by a signal: the row and the lease are then the run's to close."""
    try:
        await asyncio.to_thread(tournament.prepare, lease=lease)
    except AlreadyFinished as exc:  # finished while this run waited for the first's lock
        return await _done(store, tournament.config, Finished(
            exc.tournament_id, exc.total_games, exc.changed))
    except TournamentError as exc:
        return Refused.of(exc)
    return tournament


async def play(tournament: Tournament, store: Store, guard: StopGuard | None = None, *,
               view: RunView = _unwatched, watch_moves: bool = False,
               stop_asked: Callable[[], bool] = lambda: False) -> RunOutcome | Refused:
    """Play `tournament`'s missing games (taken by `prepared`), shown by `view` (every move
    too with `watch_moves`), stopped by the signals `guard` handles. A run its owner asked to
    stop (`stop_asked`, not a signal) that ends unfinished is stored as stopped: the owner's
    next start does not resume it, as it does an interrupted one."""
    if guard is not None:
        guard.hand_to(tournament)
    async with view(tournament) as on_event:
        try:
            outcome = await tournament.run(on_event=on_event, watch_moves=watch_moves)
        except TournamentError as exc:  # another runner took the tournament meanwhile
            return Refused.of(exc)
    if guard is not None and guard.first is not None:
        outcome.signal = guard.first
    if stop_asked() and outcome.status is not TournamentStatus.FINISHED:
        # The database may be what failed: the run's own error says so, this adds nothing.
        with contextlib.suppress(Exception):
            await asyncio.to_thread(store.set_stopped, tournament.tournament_id)
        outcome.status = TournamentStatus.STOPPED
    return outcome


async def run_tournament(config: TournamentConfig, store: Store, mode: StartMode, *,
                         placement: Placement = Placement(),
                         stop_policy: StopPolicy = StopPolicy.GENTLE,
                         view: RunView = _unwatched,
                         say: Callable[[str | WorkersChosen], None] = _quiet,
                         tournament_id: int | None = None, concurrency: int | None = None,
                         origin: str | None = None, lease_timeout: float | None = None,
                         watch_moves: bool = False,
                         style: OrderImplementation | None = None) -> RunResult:
    """Play `config`'s tournament in `store` as a start in `mode` finds it (by id with
    `tournament_id`: a resume), on `placement`, signals handled as `stop_policy` says; see
    `prepared` and `play`. A signal before the tournament is found ends the run there
    (`Interrupted`, no engine left); from then on it stops the tournament, which ends as
    interrupted with its outcome (nothing played when it came before the first game).
    `style`: the implementation of the configuration's order style its builder hands the run
    (a drop-in's own; None: the one installed for the style, runner.tournament.styles)."""
    with StopGuard(stop_policy) as guard:
        found = await guard.guarded(_found(
            config, store, mode, placement=placement, tournament_id=tournament_id,
            concurrency=concurrency, origin=origin, lease_timeout=lease_timeout, say=say,
            style=style))
        if not isinstance(found, Tournament):
            return found
        guard.hand_to(found)
        taken = await _taken(found, store, lease=True)
        if not isinstance(taken, Tournament):
            return taken
        return await play(taken, store, guard, view=view, watch_moves=watch_moves)


def _require_dask() -> None:
    """MissingExtra when the cluster extra (``distributed``) does not import."""
    try:
        import distributed  # noqa: F401 - only whether it imports
    except ImportError as exc:
        raise MissingExtra(str(exc), name=exc.name) from None


async def _done(store: Store, config: TournamentConfig, found: Finished) -> Done | Refused:
    """`found` finished, its PGN file made whole first, as every run and resume does before
    playing (a run with nothing to play used to leave a deleted or cut file missing)."""
    try:
        repaired = await asyncio.to_thread(_repair_pgn, store, found.tournament_id,
                                           config.pgnout)
    except PgnFileError as exc:
        return Refused(str(exc), 1)
    return Done(found, repaired)


def _repair_pgn(store: Store, tournament_id: int, pgnout: Path | None) -> int:
    """Write the stored games of `tournament_id` its PGN file `pgnout` lacks; how many."""
    if pgnout is None:
        return 0
    writer = GameWriter(store, tournament_id, pgnout)
    try:
        return writer.repair_pgn()
    finally:
        writer.close()
