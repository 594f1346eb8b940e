"""The tournament runner: a schedule of game pairs played N at a time, every game stored.

One asyncio task per concurrency slot takes the next job of the schedule, starts (or reuses)
the two engines in its slot, plays the game and hands the record to the writer. The writer is
a single thread that owns every database write and the ``--pgnout`` file, so a game is stored
in one transaction the moment it ends without blocking the event loop (a commit would
otherwise stall the clocks of the games still running).

Resume: a job's index is its key. A new run of the same configuration skips the jobs already
stored as played; a game that was in flight when the runner died is simply played again.
Stopping: `stop()` once lets running games finish and starts no new one; `stop(hard=True)`
cancels running games (they are not counted) and stops every engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import signal
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

from runner.books.openings import Opening, OpeningCursor, chess960_start_fen, open_book
from runner.config.model import (
    AdjudicationConfig,
    BookFormat,
    EngineEntry,
    RestartPolicy,
    TournamentConfig,
)
from runner.config.model import (
    Variant as ConfigVariant,
)
from runner.game.adjudication import AdjudicationRules
from runner.game.play import GameRecord, GameSpec, GameTermination, play_game
from runner.protocol.engine import Engine, EngineConfig, EngineError, Variant
from runner.protocol.factory import make_engine
from runner.stats.elo import EloModel, SprtDecision, SprtResult, SprtSpec
from runner.store import (
    Database,
    GameFilter,
    TournamentStatus,
    create_tournament,
    engine_ids,
    finish_tournament,
    finished_job_keys,
    mark_running,
    record_game,
    reset_unfinished,
    stream_games,
)
from runner.store.models import TournamentRow
from runner.store.recording import EngineSpec, save_book_state
from runner.store.resume import latest_named, reopen, replace_config
from runner.tournament.pairing import GameJob, Pairing, pairing_for
from runner.tournament.records import finished_game, game_pgn
from runner.tournament.scoreboard import Scoreboard

__all__ = [
    "GameFinished",
    "GameStarted",
    "Notice",
    "RunOutcome",
    "Tournament",
    "TournamentError",
    "adjudication_rules",
    "engine_config",
]

log = logging.getLogger(__name__)
_T = TypeVar("_T")

_RESTART_AFTER = frozenset({GameTermination.STALL, GameTermination.DISCONNECT,
                            GameTermination.ERROR})
"""Terminations after which the engine at fault is started afresh for its next game."""
_MAX_REPLAYS = 3
"""Runner-side failures of one job before the run stops (a bug, not an engine fault)."""
_MAX_START_FAILURES = 3
"""Consecutive failed starts of one engine before the run stops."""


class TournamentError(RuntimeError):
    """A run that cannot start or go on: a changed configuration, an engine that never starts."""


@dataclass(frozen=True)
class GameStarted:
    """A game began in a slot."""

    job: GameJob
    slot: int


@dataclass(frozen=True)
class GameFinished:
    """A game ended and was stored (or, with ``replay``, will be played again)."""

    job: GameJob
    result: str
    termination: str
    reason: str
    plies: int
    seconds: float
    replay: bool = False


@dataclass(frozen=True)
class Notice:
    """Something the user should read (a stop requested, an engine restarted...)."""

    text: str


Event = GameStarted | GameFinished | Notice


@dataclass
class RunOutcome:
    """How a run ended: the tournament, its status, the games played in this run."""

    tournament_id: int
    status: TournamentStatus
    total_games: int
    done: int
    played_now: int
    scoreboard: Scoreboard
    sprt: SprtResult | None = None
    resumed: bool = False
    error: str | None = None


def engine_config(entry: EngineEntry) -> EngineConfig:
    """The protocol layer's configuration for a tournament engine entry."""
    uci = entry.protocol.value == "uci"
    options: dict[str, str] = {}
    for name, value in entry.options:
        if isinstance(value, bool):
            options[name] = ("true" if value else "false") if uci else ("1" if value else "0")
        else:
            options[name] = str(value)
    return EngineConfig(
        name=entry.name, argv=entry.command, working_dir=entry.dir,
        env=dict(entry.env) or None, protocol=entry.protocol.value, options=options,
        init_strings=entry.init_strings, castling960=entry.castling960.value,
    )


def adjudication_rules(config: AdjudicationConfig) -> AdjudicationRules:
    """The game loop's adjudication rules from the configuration's tables."""
    values: dict[str, Any] = {"max_moves": config.maxmoves}
    if config.draw is not None:
        values.update(draw_move_number=config.draw.movenumber,
                      draw_move_count=config.draw.movecount, draw_score=config.draw.score)
    if config.resign is not None:
        values.update(resign_move_count=config.resign.movecount,
                      resign_score=config.resign.score,
                      resign_two_sided=config.resign.twosided)
    return AdjudicationRules(**values)


def sprt_spec(config: TournamentConfig) -> SprtSpec | None:
    """The SPRT a configuration asks for, if any."""
    if config.sprt is None:
        return None
    s = config.sprt
    return SprtSpec(elo0=s.elo0, elo1=s.elo1, alpha=s.alpha, beta=s.beta, model=EloModel(s.model))


class _Openings:
    """The opening of each game pair: from the book cursor, a Chess960 draw, or none."""

    def __init__(self, config: TournamentConfig) -> None:
        self.chess960 = config.variant is ConfigVariant.FISCHERANDOM
        self.cursor: OpeningCursor | None = None
        self._cache: dict[int, Opening | None] = {}
        self._seed = 0
        cfg = config.openings
        if cfg is not None:
            book = open_book(cfg.file, plies=cfg.plies, chess960=self.chess960 or None,
                             polyglot=cfg.format is BookFormat.POLYGLOT, seed=cfg.seed)
            self.cursor = OpeningCursor(book, order=cfg.order.value, seed=cfg.seed,
                                        start=cfg.start_index)
            self._seed = cfg.seed

    def for_pair(self, pair: int) -> Opening | None:
        """The opening both games of `pair` start from (None: the standard start position)."""
        if pair in self._cache:
            return self._cache[pair]
        opening: Opening | None = None
        if self.cursor is not None:
            self.cursor.served = pair
            opening = self.cursor.next()
        elif self.chess960:
            number = random.Random(f"chess960:{self._seed}:{pair}").randrange(960)
            opening = Opening(fen=chess960_start_fen(number), chess960=True, index=number,
                              source=f"chess960 #{number}")
        if len(self._cache) > 4096:
            self._cache.clear()
        self._cache[pair] = opening
        return opening

    def state(self, pairs_served: int) -> dict[str, Any] | None:
        """The cursor state to store (resumes recompute openings from pair numbers anyway)."""
        if self.cursor is None:
            return None
        state = self.cursor.state.to_dict()
        state["served"] = pairs_served
        return state


@dataclass
class _Slot:
    """One concurrency slot: the engine processes it keeps between games."""

    number: int
    engines: dict[str, Engine] = field(default_factory=dict)

    async def drop(self, name: str) -> None:
        """Stop one engine of the slot (never raising)."""
        engine = self.engines.pop(name, None)
        if engine is not None:
            with contextlib.suppress(Exception):
                await engine.quit()

    async def drop_all(self, keep: frozenset[str] = frozenset()) -> None:
        """Stop every engine of the slot but those in `keep`."""
        await asyncio.gather(*(self.drop(n) for n in list(self.engines) if n not in keep))


class _Writer:
    """The single writer: every database write and the PGN output file, on one thread."""

    def __init__(self, db: Database, pgnout: Path | None) -> None:
        self.db = db
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="runner-writer")
        self.pgnout = pgnout
        self._pgn_file: TextIO | None = None

    async def call(self, fn: Callable[..., _T], *args: Any) -> _T:
        """Run `fn(*args)` on the writer thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, fn, *args)

    def submit(self, fn: Callable[..., _T], *args: Any) -> asyncio.Future[_T]:
        """Queue `fn(*args)` on the writer thread without waiting; await the future later to
        see its outcome (writes run in the order they were queued)."""
        future = asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)
        # Retrieved here too, so an outcome nobody awaits (a cancelled game) is not reported.
        future.add_done_callback(lambda done: done.cancelled() or done.exception())
        return future

    def append_pgn(self, text: str) -> None:
        """Append one game to the ``--pgnout`` file (opened on first use), flushed at once."""
        if self.pgnout is None:
            return
        if self._pgn_file is None:
            self.pgnout.parent.mkdir(parents=True, exist_ok=True)
            self._pgn_file = open(self.pgnout, "a", encoding="utf-8")  # noqa: SIM115
        self._pgn_file.write(text if text.endswith("\n\n") else text.rstrip("\n") + "\n\n")
        self._pgn_file.flush()

    def close(self) -> None:
        """Finish pending writes and close the PGN file."""
        self.pool.shutdown(wait=True)
        if self._pgn_file is not None:
            self._pgn_file.close()
            self._pgn_file = None


class Tournament:
    """Plays a configured tournament into a database; resumable, stoppable, observable."""

    def __init__(
        self,
        config: TournamentConfig,
        db: Database,
        *,
        force: bool = False,
        new: bool = False,
        tournament_id: int | None = None,
        concurrency: int | None = None,
        pgnout: Path | None = None,
        on_event: Callable[[Event], None] | None = None,
    ) -> None:
        self.config = config
        self.db = db
        self.force = force
        self.new = new
        self.requested_id = tournament_id
        self.concurrency = max(1, concurrency or config.concurrency)
        self.pgnout = pgnout if pgnout is not None else config.pgnout
        self.on_event = on_event or (lambda _event: None)
        self.pairing: Pairing = pairing_for(config)
        self.scoreboard = Scoreboard(e.name for e in config.engines)
        for first, second in self.pairing.encounters:  # tallies oriented as scheduled
            self.scoreboard.pairing(first, second)
        self.sprt = sprt_spec(config)
        self.sprt_result: SprtResult | None = None
        self._engine_ids: dict[str, int] | None = None  # the writer thread's, fetched once
        self.tournament_id = -1
        self._entries = {e.name: e for e in config.engines}
        self._soft_stop = False
        self._hard_stop = False
        self._workers: list[asyncio.Task[None]] = []
        self._retry: deque[GameJob] = deque()
        self._replays: dict[int, int] = {}
        self._start_failures: dict[str, int] = {}
        self._jobs: Iterator[GameJob] = iter(())
        self._done: set[int] = set()
        self._played_now = 0
        self._max_pair = 0
        self._error: str | None = None
        self._resumed = False

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
        if hard:
            if not self._hard_stop:
                self._hard_stop = True
                self.on_event(Notice("aborting the running games and stopping the engines"))
                for task in self._workers:
                    task.cancel()
        elif not self._soft_stop:
            self._soft_stop = True
            self.on_event(Notice("stopping: no new games; running games will finish "
                                 "(interrupt again to abort them)"))

    def prepare(self) -> int:
        """Create or find the tournament in the database; returns its id (blocking)."""
        config = self.config
        fingerprint = config.fingerprint()
        with self.db.session() as session:
            row = None
            if self.requested_id is not None:
                row = session.get(TournamentRow, self.requested_id)
                if row is None:
                    raise TournamentError(f"no tournament {self.requested_id} in {self.db.url}")
            elif not self.new:
                row = latest_named(session, config.name)
                if row is not None and row.status is TournamentStatus.FINISHED:
                    row = None  # a finished tournament is not resumed: run a new one
            if row is not None and row.fingerprint != fingerprint:
                if not self.force:
                    raise TournamentError(
                        f"tournament {row.id} ({row.name!r}) in {self.db.url} was started with a "
                        "different configuration (engines, time control, openings, rounds or "
                        "adjudication changed); resume it unchanged, pass --force to continue "
                        "it with the new settings, or --new to start a new tournament")
                replace_config(session, row.id, config=config.to_json(),
                               fingerprint=fingerprint, total_games=self.total_games)
            if row is None:
                row = create_tournament(
                    session, name=config.name, config=config.to_json(), fingerprint=fingerprint,
                    engines=[EngineSpec(e.name, list(e.written_command), e.protocol.value,
                                        {k: v for k, v in e.options}) for e in config.engines],
                    total_games=self.total_games)
            else:
                self._resumed = True
                reopen(session, row.id)
                replaced = reset_unfinished(session, row.id)
                if replaced:
                    log.info("tournament %d: %d interrupted game(s) will be replayed",
                             row.id, replaced)
            self.tournament_id = row.id
            self._done = finished_job_keys(session, row.id)
            for game in stream_games(session, GameFilter(tournament_id=row.id)):
                if game.result is not None:
                    self.scoreboard.add(game.white, game.black, game.result, game.pair_index,
                                        game.termination)
                    self._max_pair = max(self._max_pair, game.pair_index + 1)
        if self.sprt is not None:
            self._check_sprt()
        return self.tournament_id

    async def run(self, *, handle_signals: bool = False) -> RunOutcome:
        """Play every missing game; returns how the run ended."""
        if self.tournament_id < 0:
            await asyncio.to_thread(self.prepare)
        openings = _Openings(self.config)
        writer = _Writer(self.db, self.pgnout)
        self._jobs = self.pairing.jobs(skip=frozenset(self._done))
        loop = asyncio.get_running_loop()
        installed: list[int] = []
        if handle_signals:
            installed = self._install_signals(loop)
        slots = [_Slot(n) for n in range(self.concurrency)]
        try:
            self._workers = [asyncio.create_task(self._worker(slot, openings, writer),
                                                 name=f"slot-{slot.number}") for slot in slots]
            results = await asyncio.gather(*self._workers, return_exceptions=True)
            for outcome in results:
                if isinstance(outcome, BaseException) and not isinstance(
                        outcome, asyncio.CancelledError):
                    raise outcome
        finally:
            for number in installed:
                loop.remove_signal_handler(number)
            await asyncio.shield(asyncio.gather(*(slot.drop_all() for slot in slots)))
            status = self._final_status()
            decision = None if self.sprt_result is None else self.sprt_result.decision.value
            await writer.call(self._close_tournament, status, decision,
                              openings.state(self._max_pair))
            writer.close()
        return RunOutcome(
            tournament_id=self.tournament_id, status=status, total_games=self.total_games,
            done=len(self._done), played_now=self._played_now, scoreboard=self.scoreboard,
            sprt=self.sprt_result, resumed=self._resumed, error=self._error,
        )

    # ----------------------------------------------------------------- scheduling

    def _install_signals(self, loop: asyncio.AbstractEventLoop) -> list[int]:
        presses = 0

        def on_interrupt() -> None:
            nonlocal presses
            presses += 1
            self.stop(hard=presses > 1)

        installed = []
        for number, handler in ((signal.SIGINT, on_interrupt),
                                (signal.SIGTERM, lambda: self.stop(hard=True))):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(number, handler)
                installed.append(number)
        return installed

    def _next_job(self) -> GameJob | None:
        if self._soft_stop or self._hard_stop:
            return None
        if self._retry:
            return self._retry.popleft()
        return next(self._jobs, None)

    def _final_status(self) -> TournamentStatus:
        if self.sprt_result is not None and self.sprt_result.decision is not SprtDecision.CONTINUE:
            return TournamentStatus.FINISHED
        if len(self._done) >= self.total_games:
            return TournamentStatus.FINISHED
        return TournamentStatus.INTERRUPTED

    async def _worker(self, slot: _Slot, openings: _Openings, writer: _Writer) -> None:
        try:
            while (job := self._next_job()) is not None:
                await self._play_job(slot, job, openings, writer)
        finally:
            await asyncio.shield(slot.drop_all())

    async def _engine(self, slot: _Slot, name: str) -> Engine:
        """The slot's engine `name`, reused when alive, else started afresh."""
        engine = slot.engines.get(name)
        if engine is not None:
            try:
                await engine.ping()
                return engine
            except EngineError:
                self.on_event(Notice(f"{name} died between games; restarting it"))
                await slot.drop(name)
        engine = make_engine(engine_config(self._entries[name]))
        try:
            await engine.start()
        except EngineError as exc:
            with contextlib.suppress(Exception):
                await engine.kill()
            failures = self._start_failures.get(name, 0) + 1
            self._start_failures[name] = failures
            if failures >= _MAX_START_FAILURES:
                self._error = f"engine {name} failed to start {failures} times in a row: {exc}"
                self.stop()
            raise
        self._start_failures[name] = 0
        slot.engines[name] = engine
        if self.config.affinity:
            self._pin(engine, slot.number)
        return engine

    def _pin(self, engine: Engine, slot: int) -> None:
        """Pin an engine process to the slot's CPU (its later threads and children follow)."""
        pid = engine.pid
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        if pid is None or not cpus:
            return
        try:
            os.sched_setaffinity(pid, {cpus[slot % len(cpus)]})
        except OSError as exc:
            self.on_event(Notice(f"cannot pin {engine.name} to CPU {cpus[slot % len(cpus)]}: {exc}"))

    def _spec(self, job: GameJob, opening: Opening | None) -> GameSpec:
        config = self.config
        variant = (Variant.FISCHERANDOM if config.variant is ConfigVariant.FISCHERANDOM
                   else Variant.STANDARD)
        return GameSpec(
            white_tc=config.time_control(job.white), black_tc=config.time_control(job.black),
            start_fen=None if opening is None else opening.fen,
            opening_moves=() if opening is None else opening.moves,
            variant=variant, adjudication=adjudication_rules(config.adjudication),
            tags={"Event": config.name, "Site": "cecp-runner",
                  "Round": f"{job.round}.{job.index % self.pairing.per_round + 1}"},
        )

    async def _play_job(self, slot: _Slot, job: GameJob, openings: _Openings,
                        writer: _Writer) -> None:
        opening = openings.for_pair(job.pair)
        spec = self._spec(job, opening)
        keep = frozenset(job.engines)
        await slot.drop_all(keep)
        try:
            white = await self._engine(slot, job.white)
            black = await self._engine(slot, job.black)
        except EngineError as exc:
            self.on_event(Notice(f"game {job.index + 1}: an engine failed to start: {exc}"))
            self._retry.appendleft(job)
            return
        # The row marked running is written while the game starts: the single writer thread
        # stores it before the finished game, and a game without a row is replayed anyway.
        marked = writer.submit(self._mark_running, job)
        self.on_event(GameStarted(job, slot.number))
        began = time.monotonic()
        try:
            record = await play_game(white, black, spec)
        except ValueError as exc:
            # A game the configuration cannot set up (a variant or a fixed depth an engine
            # cannot play): every such game would fail alike, so stop with the reason; the
            # game stays unplayed and a resumed run plays it.
            self._error = f"game {job.index + 1} cannot be played: {exc}"
            await marked
            self._retry.appendleft(job)
            self.stop()
            await slot.drop_all()
            return
        seconds = time.monotonic() - began
        await marked
        if record.replay:
            await self._replay(job, record, seconds)
            await slot.drop_all()
            return
        pgn = game_pgn(record, {"Round": spec.tags["Round"]})
        await writer.call(self._store, writer, job, record, pgn)
        self._done.add(job.index)
        self._played_now += 1
        self._max_pair = max(self._max_pair, job.pair + 1)
        self.scoreboard.add(job.white, job.black, record.result, job.pair,
                            record.termination.value)
        self.on_event(GameFinished(job, record.result, record.termination.value, record.reason,
                                   record.plies, seconds))
        if self.sprt is not None:
            self._check_sprt()
        fresh_each_game = any(self._entries[name].restart is RestartPolicy.ON
                              for name in job.engines)
        if fresh_each_game or record.termination in _RESTART_AFTER:
            await slot.drop_all()

    async def _replay(self, job: GameJob, record: GameRecord, seconds: float) -> None:
        count = self._replays.get(job.index, 0) + 1
        self._replays[job.index] = count
        self.on_event(GameFinished(job, record.result, record.termination.value, record.reason,
                                   record.plies, seconds, replay=True))
        if count >= _MAX_REPLAYS:
            self._error = (f"game {job.index + 1} failed on the runner's side {count} times "
                           f"(last: {record.reason}); stopping")
            self.stop()
            return
        self._retry.append(job)

    def _check_sprt(self) -> None:
        if self.sprt is None:
            return
        first, second = self.pairing.encounters[0]
        state = self.scoreboard.sprt_state(first, second, self.sprt)
        if state is None:
            return
        self.sprt_result = state
        if state.decision is not SprtDecision.CONTINUE and not self._soft_stop:
            self.on_event(Notice(f"SPRT decided {state.decision.value} (LLR {state.llr:.2f}, "
                                 f"bounds {state.lower_bound:.2f} .. {state.upper_bound:.2f})"))
            self._soft_stop = True

    # ----------------------------------------------------------------- writer-thread work

    def _mark_running(self, job: GameJob) -> None:
        with self.db.session() as session:
            if self._engine_ids is None:
                self._engine_ids = engine_ids(session, self.tournament_id)
            mark_running(session, self.tournament_id, job.key, engine_ids=self._engine_ids)

    def _store(self, writer: _Writer, job: GameJob, record: GameRecord, pgn: str) -> None:
        with self.db.session() as session:
            record_game(session, self.tournament_id, job.key, finished_game(record, pgn),
                        engine_ids=self._engine_ids)
        # The PGN file follows the database: a game is in the file only once it is stored.
        writer.append_pgn(pgn)

    def _close_tournament(self, status: TournamentStatus, decision: str | None,
                          book_state: dict[str, Any] | None) -> None:
        with self.db.session() as session:
            if status is not TournamentStatus.FINISHED:
                reset_unfinished(session, self.tournament_id)
            if book_state is not None:
                save_book_state(session, self.tournament_id, book_state)
            finish_tournament(session, self.tournament_id, status=status,
                              sprt_decision=decision)

