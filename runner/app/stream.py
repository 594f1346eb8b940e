"""A run's events as `runner.report.stream` models, and the ``--events`` file that keeps them.

The service's live feed (`runner.service.live`) and the command line's and drop-ins'
``--events FILE`` turn the tournament's events into the same models with the builders here;
`EventFile` writes them one JSON object a line, flushed line by line, appended to what an
earlier run of the same tournament wrote.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

from runner.app.report import report
from runner.app.run import Done, Refused, RunResult, RunView
from runner.app.signals import Interrupted
from runner.clock import Clock
from runner.report.stream import (
    GameFinishedEvent,
    GameStartedEvent,
    MoveEvent,
    NoticeEvent,
    RunFinishedEvent,
    SprtEvent,
    StandingsEvent,
    StreamEvent,
    event_line,
)
from runner.report.tree import ReportJson
from runner.rules import Board
from runner.stats import SprtResult
from runner.store.store import Store
from runner.tournament.events import Event, GameFinished, GameStarted, MovePlayed, Notice, RunOutcome
from runner.tournament.run import Tournament
from runner.types import Variant

__all__ = ["STANDINGS_EVERY", "STDOUT", "EventFile", "EventsError", "EventsTarget", "finished_event",
           "move_event", "notice_event", "run_finished", "sprt_event", "started_event",
           "with_events"]

STDOUT = "-"
"""The ``--events`` value that writes the lines on standard output."""

STANDINGS_EVERY = 1.0
"""Seconds between two standings events at least (each reads the report from the database)."""


def started_event(event: GameStarted, now: float | None = None) -> GameStartedEvent:
    """A game's board as it starts: the position after its opening, full clocks."""
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
        clocks = (Clock(spec.white_tc, spec.clock_head_start).remaining,
                  Clock(spec.black_tc, spec.clock_head_start).remaining)
    return GameStartedEvent(
        index=job.index, round=job.round, white=job.white, black=job.black, fen=fen, ply=ply,
        white_clock=clocks[0], black_clock=clocks[1], last_move=None, last_uci=None,
        score_cp=None, mate=None, depth=None, moved_at=time.time() if now is None else now)


def move_event(event: MovePlayed, now: float | None = None) -> MoveEvent:
    """A move and the clocks after it, as of `now` (Unix time; a client counts down from it)."""
    move = event.move
    return MoveEvent(index=event.job.index, ply=move.ply, san=move.move.san, uci=move.move.uci,
                     fen=move.fen, white_clock=move.white_clock, black_clock=move.black_clock,
                     score_cp=move.move.score_cp, mate=move.move.mate, depth=move.move.depth,
                     moved_at=time.time() if now is None else now)


def finished_event(event: GameFinished) -> GameFinishedEvent:
    """A game's end: its result and termination."""
    job = event.job
    return GameFinishedEvent(
        index=job.index, round=job.round, white=job.white, black=job.black,
        result=event.result.value, termination=event.termination.value, reason=event.reason,
        plies=event.plies, seconds=round(event.seconds, 3), replay=event.replay)


def sprt_event(sprt: SprtResult, done_games: int) -> SprtEvent:
    """Where the SPRT stands after `done_games` games."""
    return SprtEvent(llr=sprt.llr, lower_bound=sprt.lower_bound, upper_bound=sprt.upper_bound,
                     decision=sprt.decision.value, done_games=done_games)


def notice_event(event: Notice) -> NoticeEvent:
    """A notice's text."""
    return NoticeEvent(text=event.text)


def run_finished(result: RunResult) -> RunFinishedEvent:
    """How a command-line or drop-in run ended, with its exit status."""
    if isinstance(result, RunOutcome):
        return RunFinishedEvent(
            exit_status=result.exit_status, tournament_id=result.tournament_id,
            status=result.status.value, done_games=result.done,
            total_games=result.total_games, played_now=result.played_now,
            sprt_decision=None if result.sprt is None else result.sprt.decision.value,
            error=result.error, signal=result.signal)
    if isinstance(result, Done):
        found = result.finished
        return RunFinishedEvent(
            exit_status=result.exit_status, tournament_id=found.tournament_id,
            status="finished", done_games=found.total_games, total_games=found.total_games,
            played_now=0)
    error = result.message if isinstance(result, Refused) else None
    signal = result.exit_status - 128 if isinstance(result, Interrupted) else None
    return RunFinishedEvent(exit_status=result.exit_status, tournament_id=None, status=None,
                            done_games=None, total_games=None, played_now=None, error=error,
                            signal=signal)


class EventsError(OSError):
    """The ``--events`` file cannot be opened or written: the message names it."""


@dataclass(frozen=True)
class EventsTarget:
    """Where a run's events go and what they include (``--events``, ``--events-moves``)."""

    path: str
    """A file (appended to), or ``-`` for standard output."""
    moves: bool = False
    """Every move too (else games, standings, SPRT, notices and the run's end)."""

    @property
    def on_stdout(self) -> bool:
        """Whether the lines take standard output (the human lines then go to stderr)."""
        return self.path == STDOUT


class EventFile:
    """The ``--events`` lines of one run: each written whole with one system call and flushed
    (a script tailing the file reads whole lines, and a killed run leaves whole lines only);
    a file is appended to, so a resumed run goes on after its earlier lines."""

    def __init__(self, target: EventsTarget) -> None:
        """Open `target` (EventsError naming the file when it cannot be)."""
        self.target = target
        self._own = not target.on_stdout
        if target.on_stdout:
            self._fd = 1
        else:
            try:
                self._fd = os.open(Path(target.path).expanduser(),
                                   os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            except OSError as exc:
                raise EventsError(exc.errno, f"--events {target.path}: cannot open it: "
                                  f"{exc.strerror}") from None
        self.failed: str | None = None
        """Why lines could not be written (a full disk, a reader gone): nothing more is
        written, the run goes on (its games are stored), and its front door says so."""

    def write(self, event: StreamEvent) -> None:
        """Write one event's line; a failure is kept in `failed`, not raised, so that the
        run's games are not cut by their log."""
        if self.failed is not None:
            return
        data = event_line(event).encode("utf-8")
        try:
            while data:
                data = data[os.write(self._fd, data):]
        except OSError as exc:
            gone = exc.errno == errno.EPIPE
            self.failed = (f"--events {self.target.path}: "
                           + ("its reader went away" if gone else
                              f"cannot write it: {exc.strerror}") + "; no more lines written")

    def close(self) -> None:
        """Close the file (standard output stays open)."""
        if self._own:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._own = False


def with_events(view: RunView, events: EventFile, store: Store) -> RunView:
    """`view`, with every event of the run also written to `events`: each game's start and
    end, the SPRT's state after each game, notices, the moves when the target asks for them,
    the standings (its report, read from `store` off the event loop) after the games, at most
    every `STANDINGS_EVERY` seconds, and once more as the run ends."""

    @contextlib.asynccontextmanager
    async def both(tournament: Tournament) -> AsyncIterator[Callable[[Event], None]]:
        standings = _Standings(events, store, tournament)
        async with view(tournament) as shown:
            def on_event(event: Event) -> None:
                shown(event)
                for line in _lines(event, tournament, events.target.moves):
                    events.write(line)
                if isinstance(event, GameFinished) and not event.replay:
                    standings.soon()

            try:
                yield on_event
            finally:
                await standings.last()

    return both


class _Standings:
    """The standings events of one run: read after a game, not more often than every
    `STANDINGS_EVERY` seconds (longer when a read takes long: a big tournament)."""

    def __init__(self, events: EventFile, store: Store, tournament: Tournament) -> None:
        self.events = events
        self.store = store
        self.tournament = tournament
        self.due = False
        self.task: asyncio.Task[None] | None = None

    def soon(self) -> None:
        """A game was counted: standings after it, when the last ones are old enough."""
        self.due = True
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._loop())

    async def _loop(self) -> None:
        while self.due:
            self.due = False
            began = time.monotonic()
            await self._write()
            await asyncio.sleep(max(STANDINGS_EVERY, 5 * (time.monotonic() - began)))

    async def last(self) -> None:
        """The run ended: the pending read dropped, the final standings written."""
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
        await self._write()

    async def _write(self) -> None:
        with contextlib.suppress(Exception):  # a failed read skips a line; the run goes on
            read = await asyncio.to_thread(report, self.store, self.tournament.tournament_id)
            self.events.write(StandingsEvent(
                report=ReportJson.of(read), done_games=self.tournament.done_games,
                total_games=self.tournament.total_games))


def _lines(event: Event, tournament: Tournament, moves: bool) -> list[StreamEvent]:
    """The lines one event of `tournament` gives."""
    if isinstance(event, MovePlayed):
        return [move_event(event)] if moves else []
    if isinstance(event, GameStarted):
        return [started_event(event)]
    if isinstance(event, GameFinished):
        found: list[StreamEvent] = [finished_event(event)]
        sprt = tournament.sprt_result
        if sprt is not None and not event.replay:
            found.append(sprt_event(sprt, tournament.done_games))
        return found
    if isinstance(event, Notice):
        return [notice_event(event)]
    return []
