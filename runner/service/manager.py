"""The service's tournaments: submitted, queued, played, stopped, resumed, watched.

Each tournament is taken and played by the run verb every front door uses (`runner.app.run`:
the same store, writer, resume, stop rule and SPRT) where the operator chose, its scheduler
set to report moves for the live boards; whether a stop or resume fits a tournament is the
application layer's rule too. Tournaments play `max_running` at a time, the others wait in
the order they came (the queue is the service's own). On start the service resumes the
tournaments it owns that were running or interrupted (not those stopped on request): the
same resume as ``runner run`` again.

What a tournament does is published on its `EventLog` (runner.service.hub); a detail or a
snapshot is read from the database (the report the CLI prints) plus the boards of the games
running now, which only this process knows.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from runner.app.lifecycle import NoSuchTournament, Refusal, resumable
from runner.app.modes import StartMode
from runner.app.run import Done, Placement, Refused, events_to, play, prepared
from runner.app.stop import stop
from runner.clock import Clock
from runner.config.model import TournamentConfig
from runner.protocol.engine import Variant
from runner.protocol.freeze import FreezeMonitor
from runner.report.tree import ReportJson
from runner.rules import Board
from runner.service.cache import SharedReads
from runner.service.hub import EventLog
from runner.service.offload import Offload, finished_games, report_html, report_json
from runner.service.payloads import (
    BoardState,
    GameFinishedEvent,
    GameStartedEvent,
    MoveEvent,
    NoticeEvent,
    SnapshotEvent,
    SprtEvent,
    StandingsEvent,
    StatusEvent,
    TournamentDetail,
    TournamentFinishedEvent,
    TournamentSummary,
)
from runner.service.settings import ServiceSettings
from runner.service.watchdog import ProgressWatch
from runner.store.store import SERVICE, Store, TournamentProgress, TournamentStatus
from runner.tournament.events import (
    DatabaseFailure,
    Event,
    GameFinished,
    GameStarted,
    MovePlayed,
    Notice,
    RunOutcome,
    TournamentError,
)
from runner.tournament.run import Tournament

__all__ = ["Conflict", "TournamentManager"]

log = logging.getLogger(__name__)

STANDINGS_EVERY = 1.0
"""Seconds between two standings updates at least (a report is read from the database)."""
SNAPSHOT_GAMES = 200
"""Finished games a snapshot carries (the newest)."""
PROGRESS_AGE = 0.5
"""Seconds the tournaments' progress (game counts) read from the database is shared for."""


class Conflict(Exception):
    """A request that does not fit the tournament's state (resume a finished one, say)."""


@dataclass
class _Run:
    """A tournament this process plays (or will play, once a place is free)."""

    config: TournamentConfig
    tournament: Tournament | None = None
    """Taken (a submission), or taken once a place is free (a resume)."""
    state: str = "queued"
    stop_requested: bool = False
    hard: bool = False
    task: asyncio.Task[None] | None = None
    boards: dict[int, BoardState] = field(default_factory=dict)
    standings_due: bool = False
    standings_task: asyncio.Task[None] | None = None
    watch: ProgressWatch | None = None
    """When the run last made progress (runs under the service's ceiling on a move)."""
    stalled: str | None = None
    """Why the watch stopped the run (None: it did not)."""


class TournamentManager:
    """Runs the service's tournaments and answers what the API and the page ask of them."""

    def __init__(self, settings: ServiceSettings, store: Store, *,
                 scheduler_factory: Callable[[TournamentConfig, int], Any] | None = None) -> None:
        """`scheduler_factory(config, concurrency)` builds a tournament's scheduler (None:
        the operator's choice, in this process or on Dask)."""
        self.settings = settings
        self.store = store
        """The results database, as the application layer reads it."""
        self._placement = Placement(
            # The operator's choice (never the submission's: it has no [cluster]); nothing
            # chosen plays in this process.
            workers=settings.workers if settings.workers or settings.cluster else 0,
            cluster=settings.cluster, from_file=False, freezes=FreezeMonitor(),
            scheduler=scheduler_factory)
        self._runs: dict[int, _Run] = {}
        self._logs: dict[int, EventLog] = {}
        self._places = asyncio.Semaphore(max(1, settings.max_running))
        self._closing = False
        self._reads = SharedReads()
        self._reasons: dict[int, str | None] = {}  # this process's word, the store's may lag
        self._offload = Offload(store, settings.render_workers)

    # ----------------------------------------------------------------- life

    async def start(self) -> list[int]:
        """Resume the unfinished tournaments this service owns; returns their ids."""
        found = await asyncio.to_thread(self._unfinished)
        resumed = []
        for tournament_id, stored in found:
            try:
                config = TournamentConfig.from_json(stored, where=f"tournament {tournament_id}")
            except ValueError as exc:
                log.error("tournament %d cannot be resumed: %s", tournament_id, exc)
                continue
            self._queue(tournament_id, _Run(config))
            resumed.append(tournament_id)
        return resumed

    async def close(self) -> None:
        """Stop every run (running games are cut: a restart plays them again) and wait."""
        self._closing = True
        for run in self._runs.values():
            if run.tournament is not None:
                run.tournament.stop(hard=True)
        tasks = [(tournament_id, run.task) for tournament_id, run in self._runs.items()
                 if run.task is not None]
        for tournament_id, task in tasks:
            try:
                await asyncio.wait_for(asyncio.shield(task), 30)
            except TimeoutError:
                # Its lease stays with this process until it exits: a restart in the same
                # process would find the tournament still held, so say which one.
                log.warning("tournament %d did not end within 30 s of the shutdown",
                            tournament_id)
            except (Exception, asyncio.CancelledError):
                pass  # its own end already reported it
        for event_log in self._logs.values():
            event_log.close()
        await asyncio.to_thread(self._offload.close)

    def end_streams(self) -> None:
        """End every open event stream (the service is shutting down)."""
        for event_log in self._logs.values():
            event_log.close()

    # ----------------------------------------------------------------- requests

    async def submit(self, config: TournamentConfig) -> int:
        """Store a checked configuration as a new tournament and queue it; returns its id."""
        # Stored as the service's in the transaction that creates it: a command-line run never
        # sees it as its own. The lease is the run's, once a place is free.
        found = await prepared(config, self.store, StartMode.NEW, placement=self._placement,
                               concurrency=self._games(config), origin=SERVICE, lease=False)
        if isinstance(found, Refused):
            raise (DatabaseFailure if found.database else TournamentError)(found.message)
        assert isinstance(found, Tournament)  # a new tournament is never finished
        tournament_id = found.tournament_id
        self._changed(tournament_id)
        self._queue(tournament_id, _Run(config, found))
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
            self._changed(tournament_id)
            # A status event always carries the reason (null clears the page's line): a stop
            # keeps the one known, as the tournament's summary does.
            reason = self._reasons.get(tournament_id,
                                       (await self._stored_reasons()).get(tournament_id))
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
        self._queue(tournament_id, _Run(found.config))
        self.log(tournament_id).publish(StatusEvent(status="queued"))
        return "queued"

    async def exists(self, tournament_id: int) -> bool:
        """Whether the tournament is in the database."""
        return await self._progress(tournament_id) is not None

    async def summaries(self) -> list[TournamentSummary]:
        """Every tournament, oldest first, with its progress and live status."""
        found, reasons = await self._all_shared()
        return [self._summary(progress, reasons) for progress in found]

    async def detail(self, tournament_id: int) -> TournamentDetail | None:
        """A tournament's status, report (standings, Elo, pentanomial, SPRT, plots' data) and
        running games; None when there is no such tournament."""
        progress = await self._progress(tournament_id)
        if progress is None:
            return None
        report = await self._report(tournament_id, progress.done)
        run = self._runs.get(tournament_id)
        reasons = await self._stored_reasons()
        games = [] if run is None else sorted(run.boards.values(), key=lambda b: b.index)
        return TournamentDetail(**dict(self._summary(progress, reasons)), report=report,
                                games=games)

    async def finished_games(self, tournament_id: int,
                             newest: int | None = None) -> list[GameFinishedEvent]:
        """The stored games of the tournament as ``game_finished`` data, oldest first: every
        one, or the `newest` few (shared by all callers until a game finishes)."""
        if newest != SNAPSHOT_GAMES:  # only the snapshot's (and the page's) size is shared
            found: list[GameFinishedEvent] = await self._offload.call(
                finished_games, tournament_id, newest)
            return found
        progress = await self._progress(tournament_id)
        games: list[GameFinishedEvent] = await self._reads.get(
            ("finished", tournament_id, newest),
            lambda: self._offload.call(finished_games, tournament_id, newest),
            tag=None if progress is None else progress.done)
        return games

    async def report_html(self, tournament_id: int) -> str:
        """The tournament's HTML report, built off the event loop once per number of games
        stored and shared by every reader meanwhile."""
        progress = await self._progress(tournament_id)
        html: str = await self._reads.get(
            ("html", tournament_id), lambda: self._offload.call(report_html, tournament_id),
            tag=None if progress is None else (progress.done, progress.status))
        return html

    async def snapshot(self, tournament_id: int) -> SnapshotEvent | None:
        """What a new event stream starts with: the detail and the newest finished games."""
        detail = await self.detail(tournament_id)
        if detail is None:
            return None
        return SnapshotEvent(**dict(detail), finished_games=await self.finished_games(
            tournament_id, SNAPSHOT_GAMES))

    async def is_finished(self, tournament_id: int) -> bool:
        """Whether the tournament is finished (and not being played by this process)."""
        progress = await self._progress(tournament_id)
        return (tournament_id not in self._runs and progress is not None
                and progress.status == TournamentStatus.FINISHED.value)

    def log(self, tournament_id: int) -> EventLog:
        """The tournament's event log (made on first use)."""
        event_log = self._logs.get(tournament_id)
        if event_log is None:
            event_log = EventLog(tournament_id, reader_limit=self.settings.stream_queue)
            self._logs[tournament_id] = event_log
        return event_log

    def streams(self) -> int:
        """Event streams open now, all tournaments together."""
        return sum(event_log.readers for event_log in self._logs.values())

    # ----------------------------------------------------------------- running

    def _games(self, config: TournamentConfig) -> int:
        """The games at once a tournament plays here: as it asks, up to the operator's cap."""
        return min(config.concurrency, self.settings.max_concurrency)

    def _queue(self, tournament_id: int, run: _Run) -> None:
        self._runs[tournament_id] = run
        run.task = asyncio.create_task(self._play(tournament_id, run),
                                       name=f"tournament-{tournament_id}")

    async def _taken(self, tournament_id: int, run: _Run) -> Tournament | Done | Refused:
        """`run`'s tournament, taken now if it was not (a resume), or why it does not play."""
        if run.tournament is not None:
            return run.tournament
        found = await prepared(run.config, self.store, StartMode.CONTINUE,
                               placement=self._placement, tournament_id=tournament_id,
                               concurrency=self._games(run.config), origin=SERVICE)
        if not isinstance(found, Tournament):
            return found
        run.tournament = found
        if run.stop_requested:  # asked while it was being taken: it plays nothing
            found.stop(hard=True)
        return found

    async def _play(self, tournament_id: int, run: _Run) -> None:
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
                if self._reasons.get(tournament_id) is not None or tournament_id in \
                        await self._stored_reasons():
                    await self._note_reason(tournament_id, None)  # this run starts afresh
                event_log.publish(StatusEvent(status="running"))
                taken = await self._taken(tournament_id, run)
                if isinstance(taken, Tournament):
                    guard = self._guard(tournament_id, run)
                    try:
                        result = await play(
                            taken, self.store, watch_moves=True,
                            view=events_to(functools.partial(self._on_event, tournament_id)),
                            stop_asked=lambda: run.stop_requested)
                    finally:
                        if guard is not None:
                            guard.cancel()
                else:
                    result = taken
            if isinstance(result, RunOutcome):
                status = result.status.value
                if result.error is not None:
                    reason = result.error
                    event_log.publish(NoticeEvent(text=f"the run stopped: {result.error}"))
            elif isinstance(result, Done):
                status = TournamentStatus.FINISHED.value
            elif isinstance(result, Refused):
                reason = result.message
                event_log.publish(NoticeEvent(text=reason))
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # a run's failure must not take the service down
            log.exception("tournament %d failed", tournament_id)
            reason = f"the run failed: {type(exc).__name__}: {exc}"
            event_log.publish(NoticeEvent(text=reason))
        finally:
            self._runs.pop(tournament_id, None)
            self._changed(tournament_id)
            if run.standings_task is not None:
                run.standings_task.cancel()
        if run.stop_requested and not isinstance(result, RunOutcome | Done):
            # Stopped before it played (queued, refused, failed): stopped as any tournament
            # nobody plays is (a run that played was marked by the run verb).
            with contextlib.suppress(Exception):
                await asyncio.to_thread(stop, self.store, tournament_id, origin=SERVICE)
            self._changed(tournament_id)
            status = TournamentStatus.STOPPED.value
        if run.stalled is not None:
            reason = run.stalled  # stopped, and why
        if reason is not None and (status != "stopped" or run.stalled is not None):
            reason = _one_line(reason)
            await self._note_reason(tournament_id, reason)
        else:
            reason = None
        await self._publish_standings(tournament_id)
        decision = None if run.tournament is None else run.tournament.sprt_result
        ending = TournamentFinishedEvent if status == "finished" else StatusEvent
        event_log.publish(ending(
            status=status, reason=reason,
            sprt_decision=None if decision is None else decision.decision.value))
        if status == TournamentStatus.FINISHED.value:
            event_log.close()

    def _guard(self, tournament_id: int, run: _Run) -> asyncio.Task[None] | None:
        """Watch a run under the ceiling on a move for standing still (None: no ceiling)."""
        ceiling = run.config.move_ceiling
        if ceiling is None:
            return None
        run.watch = ProgressWatch(ceiling)

        async def stalled(reason: str) -> None:
            run.stalled = reason
            log.warning("tournament %d: %s", tournament_id, reason)
            await self.stop(tournament_id, hard=True)

        return asyncio.create_task(run.watch.guard(stalled), name=f"watch-{tournament_id}")

    # ----------------------------------------------------------------- events

    def _on_event(self, tournament_id: int, event: Event) -> None:
        run = self._runs.get(tournament_id)
        event_log = self.log(tournament_id)
        if run is not None and run.watch is not None \
                and isinstance(event, MovePlayed | GameStarted | GameFinished):
            run.watch.progressed()
        if isinstance(event, MovePlayed):
            move = event.move
            now = time.time()  # in the event too: a client counts its clocks down from it
            played = MoveEvent(index=event.job.index, ply=move.ply, san=move.move.san,
                               uci=move.move.uci, fen=move.fen, white_clock=move.white_clock,
                               black_clock=move.black_clock, score_cp=move.move.score_cp,
                               mate=move.move.mate, depth=move.move.depth, moved_at=now)
            if run is not None and event.job.index in run.boards:
                board = run.boards[event.job.index]
                run.boards[event.job.index] = board.model_copy(update={
                    "fen": played.fen, "ply": played.ply, "white_clock": played.white_clock,
                    "black_clock": played.black_clock, "last_move": played.san,
                    "last_uci": played.uci, "score_cp": played.score_cp, "mate": played.mate,
                    "depth": played.depth, "moved_at": now})
            event_log.publish(played)
        elif isinstance(event, GameStarted):
            self._reads.drop("progress")
            board = _board(event)
            if run is not None:
                run.boards[event.job.index] = board
            event_log.publish(board)
        elif isinstance(event, GameFinished):
            if run is not None:
                run.boards.pop(event.job.index, None)
            job = event.job
            event_log.publish(GameFinishedEvent(
                index=job.index, round=job.round, white=job.white, black=job.black,
                result=event.result.value, termination=event.termination.value,
                reason=event.reason, plies=event.plies, seconds=round(event.seconds, 3),
                replay=event.replay))
            if not event.replay:
                self._changed(tournament_id)
            if run is not None and run.tournament is not None and not event.replay:
                self._standings_soon(tournament_id, run)
                sprt = run.tournament.sprt_result
                if sprt is not None:
                    event_log.publish(SprtEvent(
                        llr=sprt.llr, lower_bound=sprt.lower_bound,
                        upper_bound=sprt.upper_bound, decision=sprt.decision.value,
                        done_games=run.tournament.done_games))
        elif isinstance(event, Notice):
            event_log.publish(NoticeEvent(text=event.text))

    async def _note_reason(self, tournament_id: int, reason: str | None) -> None:
        """Remember why the run failed (None: forget it), here and in the database (where it
        outlives a restart) when the database can still be written."""
        self._reasons[tournament_id] = reason
        try:
            await asyncio.to_thread(self._set_reason, tournament_id, reason)
        except Exception as exc:  # a store error is often the reason itself
            log.warning("tournament %d: the reason could not be stored: %s", tournament_id,
                        _one_line(str(exc)))
        self._changed(tournament_id)

    async def _stored_reasons(self) -> dict[int, str]:
        reasons: dict[int, str] = (await self._all_shared())[1]
        return reasons

    def _changed(self, tournament_id: int) -> None:
        """The tournament's stored games or status changed: shared reads are stale."""
        self._reads.drop("progress")
        self._reads.drop(("report", tournament_id))
        self._reads.drop(("html", tournament_id))
        self._reads.drop(("finished", tournament_id, SNAPSHOT_GAMES))

    def _standings_soon(self, tournament_id: int, run: _Run) -> None:
        """Publish the standings after this game, at most every `STANDINGS_EVERY` seconds
        (longer when reading the report takes long: a big tournament)."""
        run.standings_due = True
        if run.standings_task is None or run.standings_task.done():
            run.standings_task = asyncio.create_task(self._standings_loop(tournament_id, run))

    async def _standings_loop(self, tournament_id: int, run: _Run) -> None:
        while run.standings_due:
            run.standings_due = False
            began = time.monotonic()
            await self._publish_standings(tournament_id)
            took = time.monotonic() - began
            await asyncio.sleep(max(STANDINGS_EVERY, 5 * took))

    async def _publish_standings(self, tournament_id: int) -> None:
        try:
            progress = await self._progress(tournament_id)
            if progress is None:
                return
            report = await self._report(tournament_id, progress.done)
        except Exception:  # the next game tries again; the stream goes on
            log.exception("standings of tournament %d", tournament_id)
            return
        else:
            self.log(tournament_id).publish(StandingsEvent(
                report=report, done_games=progress.done, total_games=progress.total_games))

    # ----------------------------------------------------------------- reading (threads)

    def _summary(self, progress: TournamentProgress,
                 stored_reasons: dict[int, str] | None = None) -> TournamentSummary:
        run = self._runs.get(progress.id)
        reason = (self._reasons[progress.id] if progress.id in self._reasons
                  else (stored_reasons or {}).get(progress.id))
        return TournamentSummary(
            id=progress.id, name=progress.name,
            status=run.state if run is not None else progress.status,
            total_games=progress.total_games, done_games=progress.done,
            running_games=progress.running if run is not None else 0,
            created_at=_iso(progress.created_at), finished_at=_iso(progress.finished_at),
            sprt_decision=progress.sprt_decision,
            reason=None if run is not None and run.state != "stopping" else reason)

    def _all_progress(self) -> tuple[list[TournamentProgress], dict[int, str]]:
        return self.store.tournaments(), self.store.failures()

    async def _all_shared(self) -> tuple[list[TournamentProgress], dict[int, str]]:
        found: tuple[list[TournamentProgress], dict[int, str]] = await self._reads.get(
            "progress", lambda: asyncio.to_thread(self._all_progress), PROGRESS_AGE)
        return found

    async def _all_progress_shared(self) -> list[TournamentProgress]:
        return (await self._all_shared())[0]

    async def _report(self, tournament_id: int, done: int | None = None) -> ReportJson:
        """The tournament's report, read again only after a game finished (or stopped), or
        when `done` (the games stored, if known) differs from the last read's."""
        report: ReportJson = await self._reads.get(
            ("report", tournament_id),
            lambda: self._offload.call(report_json, tournament_id), tag=done)
        return report

    async def _progress(self, tournament_id: int) -> TournamentProgress | None:
        found = await self._all_progress_shared()
        return next((p for p in found if p.id == tournament_id), None)

    def _set_reason(self, tournament_id: int, reason: str | None) -> None:
        self.store.set_reason(tournament_id, reason)

    def _unfinished(self) -> list[tuple[int, dict[str, Any]]]:
        return self.store.unfinished_owned(SERVICE)


def _conflict(refusal: Refusal) -> Conflict:
    """The service's words for a stop or resume the tournament's state refuses."""
    if refusal.why == "not owned":  # the command line runs it, not the service
        return Conflict(f"tournament {refusal.tournament_id} was not submitted to this "
                        "service (run it with 'runner run')")
    return Conflict(str(refusal))


def _board(event: GameStarted) -> GameStartedEvent:
    """A running game's board as it starts: position after the opening, full clocks."""
    job, spec = event.job, event.spec
    fen: str | None = None
    ply = 0
    clocks: tuple[float | None, float | None] = (None, None)
    if spec is not None:
        chess960 = spec.variant is Variant.FISCHERANDOM
        board = Board(spec.start_fen, chess960=chess960) if spec.start_fen else Board()
        for uci in spec.opening_moves:
            board.push_uci(uci)
        fen, ply = board.fen(), len(board.move_stack)
        clocks = (Clock(spec.white_tc).remaining, Clock(spec.black_tc).remaining)
    return GameStartedEvent(
        index=job.index, round=job.round, white=job.white, black=job.black, fen=fen, ply=ply,
        white_clock=clocks[0], black_clock=clocks[1], last_move=None, last_uci=None,
        score_cp=None, mate=None, depth=None, moved_at=time.time())


def _one_line(text: str, limit: int = 500) -> str:
    """A reason fit for one line of a page or a log: whitespace runs (line breaks included)
    made one space, control characters dropped, at most `limit` characters."""
    flat = " ".join("".join(c for c in text if c.isprintable() or c.isspace()).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _iso(value: Any) -> str | None:
    return None if value is None else value.isoformat()
