"""The tournament: a schedule of game pairs handed to a scheduler, every game stored.

The tournament keeps the schedule, the openings, the standings and the SPRT, and owns the
single writer (runner.tournament.writer); how games are played (engines, slots, restarts,
replays) is the scheduler's business (runner.tournament.scheduler). It turns each schedule
entry into a plain `GameJob` and reads the scheduler's events: a started game is marked
running, a finished one stored, counted and checked against the SPRT.

Resume: a game's index is its key. A new run of the same configuration skips the games
already stored as played; a game that was in flight when the runner died is simply played
again. Stopping: `stop()` once lets running games finish and starts no new one;
`stop(hard=True)` cancels running games (they are not counted) and stops every engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from runner.config.model import TournamentConfig
from runner.game.job import GameJob
from runner.game.record import GameTermination, game_pgn
from runner.stats import SprtDecision, SprtResult
from runner.store import DuplicateGameError, TournamentStatus
from runner.store.store import LeaseLostError, Store, database_errors
from runner.tournament.events import (
    DatabaseFailure,
    Event,
    GameFinished,
    GameStarted,
    MovePlayed,
    Notice,
    RunOutcome,
)
from runner.tournament.finding import Wanted, find_or_create
from runner.tournament.leasing import RunLease
from runner.tournament.openings import OpeningPolicy
from runner.tournament.pairing import Schedule, pairing_for
from runner.tournament.positions import refuse_untellable_openings
from runner.tournament.runtime import (
    engine_configs,
    game_job,
    local_scheduler,
    sprt_spec,
)
from runner.tournament.scheduler import (
    JobFinished,
    JobMoved,
    JobsFinished,
    JobStarted,
    Scheduler,
    SchedulerEvent,
    SchedulerFailure,
)
from runner.tournament.scoreboard import Scoreboard
from runner.tournament.silence import Silence
from runner.tournament.stopping import RunStop
from runner.tournament.styles import OrderImplementation, given
from runner.tournament.writer import GameWriter, PgnFileError

if TYPE_CHECKING:
    from runner.books.openings import Opening
    from runner.store.store import Database

__all__ = ["Tournament"]


class Tournament:
    """Plays a configured tournament into a database; resumable, stoppable, observable."""

    def __init__(
        self,
        config: TournamentConfig,
        store: Store | Database,
        *,
        force: bool = False,
        new: bool = False,
        tournament_id: int | None = None,
        concurrency: int | None = None,
        pgnout: Path | None = None,
        scheduler: Scheduler | None = None,
        origin: str | None = None,
        lease_timeout: float | None = None,
        continue_only: bool = False,
        same_only: bool = False,
        style: OrderImplementation | None = None,
    ) -> None:
        self.config = config
        self.style = given(config, style)
        """How the configuration's order style plays (None: the runner's own game pairs): the
        implementation the run's builder handed it, else the installed one."""
        self.store = Store.of(store)
        """The results database (a `Database` opened directly is taken as the store over it)."""
        self.pgnout = pgnout if pgnout is not None else config.pgnout
        # The observer of the run in progress (`run` is given it): events come only from a run.
        self._on_event: Callable[[Event], None] = lambda _event: None
        self.concurrency = max(1, concurrency or config.concurrency)
        self.scheduler = scheduler or local_scheduler(config, self.concurrency)
        self._stop = RunStop(self.scheduler, self._describe, self._tell)
        """Whether and why the run stops."""
        self.pairing: Schedule = pairing_for(config, self.style)
        self.scoreboard = Scoreboard(e.name for e in config.engines)
        for first, second in self.pairing.encounters:  # tallies oriented as scheduled
            self.scoreboard.pairing(first, second)
        self.sprt = sprt_spec(config)
        self.sprt_result: SprtResult | None = None
        self.tournament_id = -1
        self._done: set[int] = set()
        self._played_now = 0
        self._max_pair = 0
        self._silence = Silence()
        self._resumed = False
        self.lease = RunLease(self.store, lease_timeout)
        """This run's hold on the tournament's lease."""
        self.wanted = Wanted(
            config, self.pairing, self.lease.owner, self.lease.timeout, self.store.shown_url,
            requested_id=tournament_id, origin=origin, new=new, force=force,
            continue_only=continue_only, same_only=same_only)
        """Which tournament the run plays (see `runner.tournament.finding`)."""
        self._half_pairs: dict[int, Opening] = {}
        self._openings: OpeningPolicy | None = None
        self.changes: list[str] = []
        """What a forced resume changed (told as a notice when the run starts)."""

    # ----------------------------------------------------------------- public

    @property
    def total_games(self) -> int:
        """Games in the schedule."""
        return self.pairing.total()

    @property
    def done_games(self) -> int:
        """Games stored as played (earlier runs included)."""
        return len(self._done)

    def stop(self, hard: bool = False) -> None:
        """Start no new game; with `hard`, also abort the running ones (they are not counted)."""
        self._stop.stop(hard)

    def prepare(self, *, lease: bool = True) -> int:
        """Create or find the tournament in the database and, with `lease`, take its lease;
        returns its id (blocking).

        Finding or creating the tournament and taking its lease are one transaction under a
        lock (`Store.preparing`, `runner.tournament.finding`): of two runners of one
        configuration started together, the second finds the first's tournament and lease
        and is refused, as when it starts later. Without `lease` (the service queueing a
        submission) `run` takes it.

        TournamentError when it cannot be run: a changed configuration without `force`,
        another live runner on it, one that another origin owns, a database that fails, an
        opening book that cannot deal the openings the schedule needs (checked before any
        row is written)."""
        # Every opening the schedule deals (the last game's pair number is the highest).
        total = self.total_games
        self._opening_policy().check(self.pairing.job(total - 1).pair + 1 if total else 0)
        try:
            found = self.store.prepare(
                lambda prep: find_or_create(prep, self.wanted, self.scoreboard, lease=lease))
            self.lease.held = lease
        except database_errors() as exc:
            raise DatabaseFailure(self.store.failure(exc)) from None
        finally:
            if not self.lease.held:
                self.lease.let_go()  # nothing held: a lease row rolled back with the rest
        self.tournament_id = found.tournament_id
        self._resumed = found.resumed
        self.changes = found.changes
        self._done = found.done
        self._half_pairs = found.half_pairs
        self._max_pair = found.max_pair
        if self.sprt is not None:
            self._check_sprt()
        return self.tournament_id

    async def run(self, *, on_event: Callable[[Event], None] | None = None,
                  watch_moves: bool = False) -> RunOutcome:
        """Play every missing game, telling `on_event` what happens (every move as well, with
        `watch_moves`); returns how the run ended."""
        if on_event is not None:
            self._on_event = on_event
        if watch_moves:
            self.scheduler.watch_moves = True  # before the scheduler's events are asked for
        if self.tournament_id < 0:
            await asyncio.to_thread(self.prepare)
        notice = concurrency_notice(self.concurrency, self.total_games - len(self._done),
                                    os.cpu_count() or 1)
        if notice is not None:
            self._on_event(Notice(notice))
        if not self.lease.held:
            await asyncio.to_thread(self.lease.take, self.tournament_id)
        openings = self._opening_policy()
        writer = GameWriter(self.store, self.tournament_id, self.pgnout, self.lease.owner)
        if self.changes:
            self._on_event(Notice(f"tournament {self.tournament_id} continues with a changed "
                                 f"configuration: {'; '.join(self.changes)}"))
        self.scheduler.submit(self._game_jobs(openings))
        beats = asyncio.create_task(self.lease.keep(writer, lambda exc: self._stop_for(exc,
                                                                                    writer)))
        try:
            # Before the first game: an opening some engine cannot be told stops the run
            # (TournamentError, the row closed as interrupted below).
            await refuse_untellable_openings(
                openings.edit_misstates, self._half_pairs, self.pairing, self._done,
                engine_configs(self.config), self.config.variant)
            await writer.call(writer.repair_pgn)
            await self._follow(writer)
        except database_errors(PgnFileError, LeaseLostError) as exc:
            # The game in flight is not stored: its row stays "running" and is played again
            # on resume. One line says what failed; the scheduler has stopped every slot.
            # A lost lease drops the game: the runner that took over plays it.
            await self._stop_for(exc, writer)
        finally:
            beats.cancel()
            status = final_status(self.sprt_result, len(self._done), self.total_games)
            decision = None if self.sprt_result is None else self.sprt_result.decision.value
            try:
                await writer.call(writer.close_tournament, status, decision,
                                  openings.state(self._max_pair), self._stop.error)
            except database_errors(LeaseLostError) as exc:  # the database still failing, or
                self._stop.fail(exc, stop=False)  # the tournament is another runner's: as is
            finally:
                self.lease.let_go()
            writer.close()
        return RunOutcome(
            tournament_id=self.tournament_id, status=status, total_games=self.total_games,
            done=len(self._done), played_now=self._played_now, scoreboard=self.scoreboard,
            sprt=self.sprt_result, resumed=self._resumed, error=self._stop.error,
            taken_over=self._stop.taken_over, void=self._stop.void,
            refused=self._stop.refused,
        )

    def _tell(self, event: Event) -> None:
        """Tell the run's observer (the one `run` was given, when it was given one)."""
        self._on_event(event)

    def _describe(self, exc: BaseException) -> str:
        """The one line a failure that stops the run is told by."""
        return self.store.failure(exc) if isinstance(exc, database_errors()) else str(exc)

    async def _stop_for(self, exc: BaseException, writer: GameWriter) -> None:
        """Stop the run for a failed write or heartbeat, told as the lease lost when that is
        what the failure was (`RunLease.cause`)."""
        self._stop.fail(exc if self._stop.taken_over else await self.lease.cause(exc, writer))

    # ----------------------------------------------------------------- running

    def _opening_policy(self) -> OpeningPolicy:
        """The run's one opening policy: the book is opened (and, in random order, counted
        through) once, and the openings `prepare` checked are dealt again from its cache."""
        if self._openings is None:
            self._openings = OpeningPolicy(self.config, style=self.style)
        return self._openings

    def _game_jobs(self, openings: OpeningPolicy) -> Iterator[GameJob]:
        """The jobs of the games still to play, built as the scheduler asks for them."""
        engines = engine_configs(self.config)
        per_round = self.pairing.per_round
        for game in self.pairing.jobs(skip=frozenset(self._done)):
            opening = self._half_pairs.get(game.pair)
            if opening is None:
                opening = openings.for_pair(game.pair)
            yield game_job(self.config, game, opening, per_round, engines, self.style)

    async def _follow(self, writer: GameWriter) -> None:
        """Read the scheduler's events until it is done: mark, store, count, report."""
        marks: dict[int, asyncio.Future[None]] = {}
        async with contextlib.aclosing(self.scheduler.events()) as events:
            async for event in events:
                await self._handle(event, writer, marks)

    async def _handle(self, event: SchedulerEvent, writer: GameWriter,
                      marks: dict[int, asyncio.Future[None]]) -> None:
        if isinstance(event, JobStarted):
            game = self.pairing.job(event.job.index)
            # The row marked running is written while the game starts: the single writer
            # thread stores it before the finished game, and a game without a row is
            # replayed anyway.
            marks[game.index] = writer.mark_soon(game.key)
            self._on_event(GameStarted(game, event.slot, event.job.spec))
        elif isinstance(event, JobMoved):
            self._on_event(MovePlayed(self.pairing.job(event.job.index), event.move))
        elif isinstance(event, JobFinished | JobsFinished):
            finished = (event,) if isinstance(event, JobFinished) else event.finished
            await _marked(marks, finished)
            await self._finished(finished, writer)
        elif isinstance(event, SchedulerFailure):
            self._stop.scheduler_failed(event.text, event.refused, event.games_lost)
        else:
            self._on_event(event)

    async def _finished(self, events: Sequence[JobFinished], writer: GameWriter) -> None:
        """Store finished games (several at once: in one transaction) and count each in
        order; a replayed one is only reported, one stored already by another runner (one
        that held the lease before this one) is dropped with a notice: that game stands."""
        played = [event for event in events if not event.record.replay]
        try:
            stored = await _stored(writer, self.pairing, played)
        except PgnFileError:
            # Stored: only the file lacks them (the next run adds them).
            self._done.update(event.job.index for event in played)
            self._played_now += len(played)
            raise
        outcome = dict(zip(map(id, played), stored, strict=True))
        for event in events:
            record = event.record
            if record.replay:
                self._on_event(GameFinished(self.pairing.job(event.job.index), record.result,
                                           record.termination, record.reason, record.plies,
                                           event.seconds, replay=True, record=record))
            elif outcome[id(event)]:
                self._count(event)
            else:
                self._done.add(event.job.index)
                self._on_event(Notice(f"game {event.job.index + 1} was already stored by "
                                      "another run: this result is dropped"))

    def _count(self, event: JobFinished) -> None:
        """Count a stored game: the scoreboard, the stop rules, the SPRT."""
        game = self.pairing.job(event.job.index)
        record = event.record
        self._done.add(game.index)
        self._played_now += 1
        self._max_pair = max(self._max_pair, game.pair + 1)
        self.scoreboard.add(game.white, game.black, record.result, game.pair,
                            record.termination)
        self._on_event(GameFinished(game, record.result, record.termination, record.reason,
                                   record.plies, event.seconds, record=record))
        if (self.config.crash_stops and not self._stop.hard
                and record.termination in _CRASHES):
            # As fastchess without -recover: the first crash or stall ends the run.
            self._stop.stop(hard=True)
            return
        silent = self._silence.add(record)
        if silent is not None and self._stop.silent(silent):
            return
        if self.sprt is not None:
            self._check_sprt()

    def _check_sprt(self) -> None:
        if self.sprt is None:
            return
        first, second = self.pairing.encounters[0]
        state = self.scoreboard.sprt_state(first, second, self.sprt,
                                           trinomial=self.config.sprt_trinomial)
        if state is None:
            return
        self.sprt_result = state
        if state.decision is not SprtDecision.CONTINUE:
            self._stop.decided(f"SPRT decided {state.decision.value} (LLR {state.llr:.2f}, "
                               f"bounds {state.lower_bound:.2f} .. {state.upper_bound:.2f})")


async def _stored(writer: GameWriter, pairing: Schedule,
                  played: Sequence[JobFinished]) -> list[bool]:
    """Store the finished games, one alone in its own transaction and several together in
    one (`GameWriter.store_many`); for each, whether it was stored (False: played already)."""
    games = [(pairing.job(e.job.index).key, e.record, game_pgn(e.record)) for e in played]
    if len(games) != 1:
        return await writer.call(writer.store_many, games) if games else []
    try:
        await writer.call(writer.store, *games[0])
    except DuplicateGameError:
        return [False]
    return [True]


async def _marked(marks: dict[int, asyncio.Future[None]],
                  events: Iterable[JobFinished]) -> None:
    """Wait until the finished jobs' rows are marked running (a row already played, by a
    runner before this one, refuses the mark: storing the game then says so)."""
    for event in events:
        mark = marks.pop(event.job.index, None)
        if mark is not None:
            with contextlib.suppress(DuplicateGameError):
                await mark


_CRASHES = frozenset({GameTermination.DISCONNECT, GameTermination.STALL})
"""The ends of a game that `TournamentConfig.crash_stops` stops the run at."""


def final_status(sprt: SprtResult | None, done: int, total: int) -> TournamentStatus:
    """How a run leaves its tournament: finished when the SPRT decided or every game of the
    schedule is played (`done` of `total`), else interrupted (a next run continues it)."""
    if sprt is not None and sprt.decision is not SprtDecision.CONTINUE:
        return TournamentStatus.FINISHED
    if done >= total:
        return TournamentStatus.FINISHED
    return TournamentStatus.INTERRUPTED


def concurrency_notice(concurrency: int, left: int, cores: int) -> str | None:
    """What to say (one line) when more games would run at once than there are CPU `cores`,
    or when the `concurrency` asked for is more than the games `left`: the scheduler never
    opens more slots than there are games to play; None when there is nothing to say."""
    slots = min(concurrency, max(1, left))
    capped = f" (capped at {slots}, the games left to play)" if slots < concurrency else ""
    if slots > cores:
        return (f"concurrency {concurrency}{capped} is more than the {cores} CPU core(s) "
                "here: the engines will compete for CPU time and may lose on time")
    if concurrency > cores:
        return f"concurrency {concurrency}{capped}"
    return None
