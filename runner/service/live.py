"""The service's live view of the tournaments it plays: each run's state and its event feed.

A `ServiceRun` is a tournament this process plays or has queued, with the boards of its
games in progress, which only this process knows. `LiveFeed` turns the run's events into
the tournament's stream (`runner.service.hub.EventLog`), with the models and builders the
command line's ``--events`` uses (`runner.app.stream`): boards as games start, each move,
finished games, the SPRT's state and, at most every `STANDINGS_EVERY` seconds, the standings.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from runner.app.stream import (
    STANDINGS_EVERY,
    finished_event,
    move_event,
    notice_event,
    sprt_event,
    started_event,
)
from runner.config.model import TournamentConfig
from runner.service.hub import EventLog
from runner.service.payloads import BoardState, StandingsEvent, TournamentSummary
from runner.service.reading import TournamentReads
from runner.service.watchdog import ProgressWatch
from runner.store.store import TournamentProgress
from runner.tournament.events import Event, GameFinished, GameStarted, MovePlayed, Notice
from runner.tournament.run import Tournament

__all__ = ["STANDINGS_EVERY", "LiveFeed", "ServiceRun", "summary"]

log = logging.getLogger(__name__)



@dataclass
class ServiceRun:
    """A tournament this process plays (or will play, once a place is free)."""

    config: TournamentConfig
    tournament: Tournament | None = None
    """Taken (a submission), or taken once a place is free (a resume)."""
    state: str = "queued"
    games: int | None = None
    """Games at once asked before it was taken (a branch test's share, for a resume):
    the run starts with that many rather than its stored concurrency."""
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

    def guard(self, tournament_id: int,
              stop: Callable[[], Awaitable[object]]) -> asyncio.Task[None] | None:
        """Watch the run under the ceiling on a move for standing still, and `stop` it hard
        when it does (None: no ceiling)."""
        ceiling = self.config.move_ceiling
        if ceiling is None:
            return None
        self.watch = ProgressWatch(ceiling)

        async def stalled(reason: str) -> None:
            self.stalled = reason
            log.warning("tournament %d: %s", tournament_id, reason)
            await stop()

        return asyncio.create_task(self.watch.guard(stalled), name=f"watch-{tournament_id}")


class LiveFeed:
    """Publishes what the service's runs do on their tournaments' event logs."""

    def __init__(self, logs: Callable[[int], EventLog], data: TournamentReads) -> None:
        self._log = logs
        """A tournament's event log, by its id."""
        self._data = data

    def tell(self, tournament_id: int, run: ServiceRun | None, event: Event) -> None:
        """Publish one event of a run (`run` None: no longer this process's)."""
        event_log = self._log(tournament_id)
        if run is not None and run.watch is not None \
                and isinstance(event, MovePlayed | GameStarted | GameFinished):
            run.watch.progressed()
        if isinstance(event, MovePlayed):
            now = time.time()  # in the event too: a client counts its clocks down from it
            played = move_event(event, now)
            if run is not None and event.job.index in run.boards:
                board = run.boards[event.job.index]
                run.boards[event.job.index] = board.model_copy(update={
                    "fen": played.fen, "ply": played.ply, "white_clock": played.white_clock,
                    "black_clock": played.black_clock, "last_move": played.san,
                    "last_uci": played.uci, "score_cp": played.score_cp, "mate": played.mate,
                    "depth": played.depth, "moved_at": now})
            event_log.publish(played)
        elif isinstance(event, GameStarted):
            self._data.started()
            started = started_event(event)
            if run is not None:
                run.boards[event.job.index] = started
            event_log.publish(started)
        elif isinstance(event, GameFinished):
            if run is not None:
                run.boards.pop(event.job.index, None)
            event_log.publish(finished_event(event))
            if not event.replay:
                self._data.changed(tournament_id)
            if run is not None and run.tournament is not None and not event.replay:
                self.standings_soon(tournament_id, run)
                sprt = run.tournament.sprt_result
                if sprt is not None:
                    event_log.publish(sprt_event(sprt, run.tournament.done_games))
        elif isinstance(event, Notice):
            event_log.publish(notice_event(event))

    def standings_soon(self, tournament_id: int, run: ServiceRun) -> None:
        """Publish the standings after this game, at most every `STANDINGS_EVERY` seconds
        (longer when reading the report takes long: a big tournament)."""
        run.standings_due = True
        if run.standings_task is None or run.standings_task.done():
            run.standings_task = asyncio.create_task(self._standings_loop(tournament_id, run))

    async def _standings_loop(self, tournament_id: int, run: ServiceRun) -> None:
        while run.standings_due:
            run.standings_due = False
            began = time.monotonic()
            await self.publish_standings(tournament_id)
            took = time.monotonic() - began
            await asyncio.sleep(max(STANDINGS_EVERY, 5 * took))

    async def publish_standings(self, tournament_id: int) -> None:
        """Publish the tournament's standings now (read from the database)."""
        try:
            progress = await self._data.progress(tournament_id)
            if progress is None:
                return
            report = await self._data.report(tournament_id, progress.done)
        except Exception:  # the next game tries again; the stream goes on
            log.exception("standings of tournament %d", tournament_id)
            return
        else:
            self._log(tournament_id).publish(StandingsEvent(
                report=report, done_games=progress.done, total_games=progress.total_games))


def summary(progress: TournamentProgress, run: ServiceRun | None,
            reason: str | None) -> TournamentSummary:
    """A tournament's line in the list: its stored progress, the live status of a run of
    this process, and why its last run failed (shown when no run of it is going on)."""
    return TournamentSummary(
        id=progress.id, name=progress.name,
        status=run.state if run is not None else progress.status,
        total_games=progress.total_games, done_games=progress.done,
        running_games=progress.running if run is not None else 0,
        created_at=_iso(progress.created_at), finished_at=_iso(progress.finished_at),
        sprt_decision=progress.sprt_decision,
        reason=None if run is not None and run.state != "stopping" else reason)


def _iso(value: Any) -> str | None:
    return None if value is None else value.isoformat()
