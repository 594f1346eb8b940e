"""The service's tournaments: submitted, queued, played, stopped, resumed, watched.

Each tournament is taken and played by the run verb every front door uses (`runner.app.run`:
the same store, writer, resume, stop rule and SPRT) where the operator chose, its scheduler
set to report moves for the live boards; whether a stop or resume fits a tournament is the
application layer's rule too. Tournaments play `max_running` at a time, the others wait in
the order they came (the queue is the service's own). On start the service resumes the
tournaments it owns that were running or interrupted (not those stopped on request): the
same resume as ``runner run`` again.

What a tournament does is published on its `EventLog` (runner.service.hub) by the live feed
(`runner.service.live`); a detail or a snapshot is read from the database through the shared
reads (`runner.service.reading`: the report the CLI prints) plus the boards of the games
running now, which only this process knows.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable
from typing import Any

from runner.app.lifecycle import NoSuchTournament, Refusal, resumable
from runner.app.modes import StartMode
from runner.app.run import Done, Refused, events_to, play, prepared
from runner.app.stop import stop
from runner.config.model import TournamentConfig
from runner.service.hub import EventLog, EventLogs
from runner.service.live import LiveFeed, ServiceRun, summary
from runner.service.payloads import (
    GameFinishedEvent,
    NoticeEvent,
    SnapshotEvent,
    StatusEvent,
    TournamentDetail,
    TournamentFinishedEvent,
    TournamentSummary,
)
from runner.service.placing import Placements
from runner.service.reading import SNAPSHOT_GAMES, TournamentReads, one_line
from runner.service.settings import ServiceSettings
from runner.store.store import SERVICE, Store, TournamentProgress, TournamentStatus
from runner.tournament.events import (
    DatabaseFailure,
    Event,
    MachineBuilt,
    RunOutcome,
    TournamentError,
)
from runner.tournament.run import Tournament

__all__ = ["SNAPSHOT_GAMES", "Conflict", "TournamentManager"]

log = logging.getLogger(__name__)


class Conflict(Exception):
    """A request that does not fit the tournament's state (resume a finished one, say)."""


class TournamentManager:
    """Runs the service's tournaments and answers what the API and the page ask of them."""

    def __init__(self, settings: ServiceSettings, store: Store, *,
                 scheduler_factory: Callable[[TournamentConfig, int], Any] | None = None) -> None:
        """`scheduler_factory(config, concurrency)` builds a tournament's scheduler (None:
        the operator's choice, in this process or on Dask)."""
        self.settings = settings
        self.store = store
        """The results database, as the application layer reads it."""
        self.placements = Placements(settings, store, scheduler_factory=scheduler_factory)
        self._runs: dict[int, ServiceRun] = {}
        self._built: dict[int, list[dict[str, Any]]] = {}
        """The builds workers reported for each tournament's run, until taken."""
        self._logs = EventLogs(settings.stream_queue)
        self._places = asyncio.Semaphore(max(1, settings.max_running))
        self._closing = False
        self._data = TournamentReads(store, settings.render_workers)  # reads; why runs failed
        self._feed = LiveFeed(self.log, self._data)  # what the runs do, on their event logs

    # ----------------------------------------------------------------- life

    async def start(self) -> list[int]:
        """Resume the unfinished tournaments this service owns; returns their ids."""
        resumed = _resumable(await asyncio.to_thread(self._data.unfinished))
        for tournament_id, config in resumed:
            self._queue(tournament_id, ServiceRun(config))
        return [tournament_id for tournament_id, _ in resumed]

    async def close(self) -> None:
        """Stop every run (running games are cut: a restart plays them again) and wait."""
        self._closing = True
        for run in self._runs.values():
            if run.tournament is not None:
                run.tournament.stop(hard=True)
        for tournament_id, task in [(i, r.task) for i, r in self._runs.items() if r.task]:
            try:
                await asyncio.wait_for(asyncio.shield(task), 30)
            except TimeoutError:
                # Its lease stays with this process until it exits: a restart in the same
                # process would find the tournament still held, so say which one.
                log.warning("tournament %d did not end within 30 s of the shutdown",
                            tournament_id)
            except (Exception, asyncio.CancelledError):
                pass  # its own end already reported it
        self._logs.close()
        await self._data.close()

    def end_streams(self) -> None:
        """End every open event stream (the service is shutting down)."""
        self._logs.close()

    # ----------------------------------------------------------------- requests

    async def submit(self, config: TournamentConfig, placement: str | None = None) -> int:
        """Store and queue a checked configuration, played where `placement` says; its id."""
        # Stored as the service's in the transaction that creates it: a command-line run never
        # sees it as its own. The lease is the run's, once a place is free.
        found = await prepared(config, self.store, StartMode.NEW,
                               placement=self.placements.of(placement),
                               concurrency=self._games(config), origin=SERVICE, lease=False)
        if isinstance(found, Refused):
            raise (DatabaseFailure if found.database else TournamentError)(found.message)
        assert isinstance(found, Tournament)  # a new tournament is never finished
        tournament_id = found.tournament_id
        await self.placements.taken(found, placement)
        self._data.changed(tournament_id)
        self._queue(tournament_id, ServiceRun(config, found))
        return tournament_id

    async def stop(self, tournament_id: int, *, hard: bool = False) -> str:
        """Stop a tournament: no new games (with `hard`, the running ones are cut too)."""
        run = self._runs.get(tournament_id)
        if run is None:
            try:
                await asyncio.to_thread(stop, self.store, tournament_id, origin=SERVICE)
            except NoSuchTournament:
                raise KeyError(tournament_id) from None
            except Refusal as exc:
                raise _conflict(exc) from None
            self._data.changed(tournament_id)
            # A status event always carries the reason (null clears the page's line): a stop
            # keeps the one known, as the tournament's summary does.
            reason = self._data.known_reason(tournament_id, await self._data.stored_reasons())
            self.log(tournament_id).publish(StatusEvent(status="stopped", reason=reason))
            return "stopped"
        run.stop_requested = True
        run.hard = run.hard or hard
        if run.state == "queued":
            if run.task is not None:
                run.task.cancel()
            return "stopped"
        run.state = "stopping"
        if run.tournament is not None:  # else it is being taken: it stops once taken
            stop(self.store, tournament_id, origin=SERVICE, hard=hard, running=run.tournament)
        self.log(tournament_id).publish(StatusEvent(status="stopping"))
        return "stopping"

    async def resume(self, tournament_id: int) -> str:
        """Play a stopped or interrupted tournament's missing games."""
        if tournament_id in self._runs:
            raise Conflict(f"tournament {tournament_id} is {self._runs[tournament_id].state}")
        try:
            found = await asyncio.to_thread(resumable, self.store, tournament_id, origin=SERVICE)
        except NoSuchTournament:
            raise KeyError(tournament_id) from None
        except Refusal as exc:
            raise _conflict(exc) from None
        self._queue(tournament_id, ServiceRun(found.config))
        self.log(tournament_id).publish(StatusEvent(status="queued"))
        return "queued"

    async def ended(self, tournament_id: int) -> None:
        """Return once the tournament's run here has ended (at once when none is running)."""
        if (run := self._runs.get(tournament_id)) is not None and run.task is not None:
            await asyncio.wait({run.task})  # neither its result nor its cancellation is ours

    def resize(self, tournament_id: int, games: int) -> None:
        """Play `games` of a tournament at once from now on (a branch test's share): at once
        when it runs, from its start when it is queued to resume (a restart)."""
        if (run := self._runs.get(tournament_id)) is None:
            return
        if run.tournament is not None:
            run.tournament.scheduler.resize(games)
        else:
            run.games = games

    async def exists(self, tournament_id: int) -> bool:
        """Whether the tournament is in the database."""
        return await self._data.progress(tournament_id) is not None

    async def summaries(self) -> list[TournamentSummary]:
        """Every tournament, oldest first, with its progress and live status."""
        found, reasons = await self._data.all_progress()
        return [self._summary(progress, reasons) for progress in found]

    def _summary(self, progress: TournamentProgress,
                 stored_reasons: dict[int, str] | None = None) -> TournamentSummary:
        return summary(progress, self._runs.get(progress.id),
                       self._data.known_reason(progress.id, stored_reasons or {}))

    async def detail(self, tournament_id: int) -> TournamentDetail | None:
        """A tournament's status, report (standings, Elo, pentanomial, SPRT, plots' data) and
        running games; None when there is no such tournament."""
        progress = await self._data.progress(tournament_id)
        if progress is None:
            return None
        report = await self._data.report(tournament_id, progress.done)
        run = self._runs.get(tournament_id)
        reasons = await self._data.stored_reasons()
        games = [] if run is None else sorted(run.boards.values(), key=lambda b: b.index)
        return TournamentDetail(**dict(self._summary(progress, reasons)), report=report,
                                games=games)

    async def finished_games(self, tournament_id: int,
                             newest: int | None = None) -> list[GameFinishedEvent]:
        """The stored games of the tournament as ``game_finished`` data, oldest first: every
        one, or the `newest` few (shared by all callers until a game finishes)."""
        return await self._data.finished_games(tournament_id, newest)

    async def report_html(self, tournament_id: int) -> str:
        """The tournament's HTML report, built off the event loop once per number of games
        stored and shared by every reader meanwhile."""
        return await self._data.report_html(tournament_id)

    async def snapshot(self, tournament_id: int) -> SnapshotEvent | None:
        """What a new event stream starts with: the detail and the newest finished games."""
        detail = await self.detail(tournament_id)
        if detail is None:
            return None
        return SnapshotEvent(**dict(detail), finished_games=await self.finished_games(
            tournament_id, SNAPSHOT_GAMES))

    async def is_finished(self, tournament_id: int) -> bool:
        """Whether the tournament is finished (and not being played by this process)."""
        progress = await self._data.progress(tournament_id)
        return (tournament_id not in self._runs and progress is not None
                and progress.status == TournamentStatus.FINISHED.value)

    def log(self, tournament_id: int) -> EventLog:
        """The tournament's event log (made on first use)."""
        return self._logs.of(tournament_id)

    def streams(self) -> int:
        """Event streams open now, all tournaments together."""
        return self._logs.readers()

    # ----------------------------------------------------------------- running

    def _games(self, config: TournamentConfig) -> int:
        """The games at once a tournament plays here: as it asks, up to the operator's cap."""
        return min(config.concurrency, self.settings.max_concurrency)

    def _queue(self, tournament_id: int, run: ServiceRun) -> None:
        self._runs[tournament_id] = run
        run.task = asyncio.create_task(self._play(tournament_id, run),
                                       name=f"tournament-{tournament_id}")

    async def _taken(self, tournament_id: int, run: ServiceRun) -> Tournament | Done | Refused:
        """`run`'s tournament, taken now if it was not (a resume), or why it does not play."""
        if run.tournament is not None:
            return run.tournament
        if isinstance(placed := await self.placements.stored(tournament_id), Refused):
            return placed
        games = self._games(run.config) if run.games is None else min(
            run.games, self.settings.max_concurrency)
        found = await prepared(run.config, self.store, StartMode.CONTINUE, placement=placed,
                               tournament_id=tournament_id, concurrency=games, origin=SERVICE)
        if not isinstance(found, Tournament):
            return found
        await self.placements.taken(found)
        run.tournament = found
        if run.stop_requested:  # asked while it was being taken: it plays nothing
            found.stop(hard=True)
        return found

    async def _play(self, tournament_id: int, run: ServiceRun) -> None:
        event_log = self.log(tournament_id)
        event_log.closed = False
        status = TournamentStatus.INTERRUPTED.value
        reason: str | None = None
        result: RunOutcome | Done | Refused | None = None
        try:
            async with self._places:
                if run.stop_requested or self._closing:
                    raise asyncio.CancelledError
                run.state = "running"
                await self._data.forget_reason(tournament_id)  # this run starts afresh
                event_log.publish(StatusEvent(status="running"))
                taken = await self._taken(tournament_id, run)
                if isinstance(taken, Tournament):
                    guard = run.guard(tournament_id,
                                      lambda: self.stop(tournament_id, hard=True))
                    try:
                        result = await play(
                            taken, self.store, watch_moves=True,
                            view=events_to(functools.partial(self._tell, tournament_id)),
                            stop_asked=lambda: run.stop_requested)
                    finally:
                        if guard is not None:
                            guard.cancel()
                else:
                    result = taken
            status, reason, notice = _ended_as(result, status)
            if notice is not None:
                event_log.publish(NoticeEvent(text=notice))
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # a run's failure must not take the service down
            log.exception("tournament %d failed", tournament_id)
            reason = f"the run failed: {type(exc).__name__}: {exc}"
            event_log.publish(NoticeEvent(text=reason))
        finally:
            self._data.changed(tournament_id)
            if run.standings_task is not None:
                run.standings_task.cancel()
        try:
            await self._end(tournament_id, run, result, status, reason)
        finally:
            # Only now: until the ending is published, a reader must not take the stored
            # "finished" for a tournament nobody plays and close the log under it.
            self._runs.pop(tournament_id, None)

    async def _end(self, tournament_id: int, run: ServiceRun,
                   result: RunOutcome | Done | Refused | None, status: str,
                   reason: str | None) -> None:
        event_log = self.log(tournament_id)
        if run.stop_requested and not isinstance(result, RunOutcome | Done):
            # Stopped before it played (queued, refused, failed): stopped as any tournament
            # nobody plays is (a run that played was marked by the run verb).
            with contextlib.suppress(Exception):
                await asyncio.to_thread(stop, self.store, tournament_id, origin=SERVICE)
            self._data.changed(tournament_id)
            status = TournamentStatus.STOPPED.value
        reason = _kept_reason(status, reason, run.stalled)
        if reason is not None:
            await self._data.note_reason(tournament_id, reason)
        await self._feed.publish_standings(tournament_id)
        decision = None if run.tournament is None else run.tournament.sprt_result
        ending = TournamentFinishedEvent if status == "finished" else StatusEvent
        event_log.publish(ending(
            status=status, reason=reason,
            sprt_decision=None if decision is None else decision.decision.value))
        if status == TournamentStatus.FINISHED.value:
            event_log.close()

    # ----------------------------------------------------------------- events

    def _tell(self, tournament_id: int, event: Event) -> None:
        if isinstance(event, MachineBuilt):
            self._built.setdefault(tournament_id, []).append(dict(event.record))
        self._feed.tell(tournament_id, self._runs.get(tournament_id), event)

    def take_machine_builds(self, tournament_id: int) -> list[dict[str, Any]]:
        """The builds the tournament's workers reported since last asked (a branch test
        keeps them with its own)."""
        return self._built.pop(tournament_id, [])


# ----------------------------------------------------------------- what a run's end means

def _resumable(found: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, TournamentConfig]]:
    """The stored configurations of the unfinished tournaments to resume at the start; one
    that no longer reads is left where it is, with why in the log."""
    resumable: list[tuple[int, TournamentConfig]] = []
    for tournament_id, stored in found:
        try:
            config = TournamentConfig.from_json(stored, where=f"tournament {tournament_id}")
        except ValueError as exc:
            log.error("tournament %d cannot be resumed: %s", tournament_id, exc)
            continue
        resumable.append((tournament_id, config))
    return resumable


def _ended_as(result: RunOutcome | Done | Refused | None,
              status: str) -> tuple[str, str | None, str | None]:
    """What a run's result makes of the tournament: its status (`status` when the run gave
    none), the reason kept, and the notice its readers get (None: none)."""
    if isinstance(result, RunOutcome):
        if result.error is None:
            return result.status.value, None, None
        return result.status.value, result.error, f"the run stopped: {result.error}"
    if isinstance(result, Done):
        return TournamentStatus.FINISHED.value, None, None
    if isinstance(result, Refused):
        return status, result.message, result.message
    return status, None, None


def _kept_reason(status: str, reason: str | None, stalled: str | None) -> str | None:
    """The one-line reason kept with an ended tournament: a stall's (it was stopped, and
    why), else the run's own unless it was stopped on request."""
    if stalled is not None:
        reason = stalled
    if reason is not None and (status != "stopped" or stalled is not None):
        return one_line(reason)
    return None


def _conflict(refusal: Refusal) -> Conflict:
    """The service's words for a stop or resume the tournament's state refuses."""
    if refusal.why == "not owned":  # the command line runs it, not the service
        return Conflict(f"tournament {refusal.tournament_id} was not submitted to this "
                        "service (run it with 'runner run')")
    return Conflict(str(refusal))
