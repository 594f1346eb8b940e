"""One tournament as its run writes it: the games' start and end under the lease, the close.

`TournamentStore` is what `Store.tournament` hands a run's writer (runner.tournament.writer):
every method is one transaction that first proves the run still holds the tournament's lease,
so a runner that lost it writes nothing (`LeaseLostError`, the transaction rolled back whole).
The writer calls it from its one thread, in the order the writes were queued.

How a game's start and end reach the database is this module's choice, not the writer's: on a
SQLite file they go by the standard library's sqlite3 (`runner.store.fast`, about a tenth of
SQLAlchemy's CPU per game), elsewhere, when ``RUNNER_SQLALCHEMY=1``, or when the statements
cannot be compiled, through SQLAlchemy (`runner.store.recording`). The choice is settled on the
first write; both ways write the same rows (`runner.store.rows`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from runner.store.fast import FastWrites, enabled
from runner.store.records import DuplicateGameError, FinishedGame, JobKey, PgnGame, TournamentStatus
from runner.store.rows import done_values, finish_values, pgn_offsets

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from runner.game.record import GameRecord
    from runner.store.db import Database
    from runner.store.fast import WriteStatements
    from runner.store.guard import FileWatch


class _Owner(Protocol):
    """What a `TournamentStore` asks of the store it belongs to (`runner.store.store.Store`)."""

    @property
    def url(self) -> str: ...

    @property
    def watch(self) -> FileWatch | None: ...

    @property
    def db(self) -> Database: ...

    def pragmas(self) -> list[str]: ...

    def statements(self, cache: Path | None = None) -> WriteStatements | None: ...

__all__ = ["TournamentStore"]

_REASON_CHARS = 500
"""The longest failure reason kept (`runner report` and `runner list` show it on one line)."""


class TournamentStore:
    """The writes of one run of one tournament, each fenced by the run's lease (`owner`)."""

    def __init__(self, store: _Owner, tournament_id: int, owner: str | None = None, *,
                 statements: Path | None = None, fast: bool | None = None) -> None:
        """`store`: the store whose tournament this is. `owner`: the run's lease owner id
        (None: a write outside any run, such as mending a finished tournament's PGN file).
        `statements`: where the compiled statements of `runner.store.fast` are kept (default:
        the user's cache directory). `fast`: whether a game's writes may go by sqlite3 (None:
        unless ``RUNNER_SQLALCHEMY=1``)."""
        self._store = store
        self.tournament_id = tournament_id
        """The tournament written."""
        self.owner = owner
        """The run's lease owner id: heartbeats refresh it, closing the tournament releases it."""
        self.statements = statements
        """Where the compiled statements of `runner.store.fast` are kept (None: the store's
        choice, the user's cache directory)."""
        self._fast: FastWrites | None = None
        self._fast_wanted = enabled() if fast is None else fast
        self._engine_ids: dict[str, int] | None = None  # fetched once, by the first start
        self._game_ids: dict[int, int] = {}  # job index -> row id of the games marked running

    def fast_writes(self) -> FastWrites | None:
        """The sqlite3 way for the games' writes, set up on the first call: None for a
        database other than a SQLite file, when ``RUNNER_SQLALCHEMY=1``, or when the
        statements cannot be compiled (SQLAlchemy's way then)."""
        if not self._fast_wanted:
            return self._fast
        self._fast_wanted = False
        db_file = FastWrites.database_file(self._store.url)
        if db_file is None:
            return None
        statements = self._store.statements(self.statements)
        if statements is None:
            return None
        fast = FastWrites(db_file, statements, self._store.pragmas(), self._store.watch)
        try:
            with fast.transaction():  # the schema checked once, the connection set up
                pass
        except Exception:  # anything unexpected: SQLAlchemy's way, which says what is wrong
            fast.close()
            return None
        self._fast = fast
        return fast

    @property
    def db(self) -> Database:
        """The store's database, for SQLAlchemy's way."""
        return self._store.db

    def close(self) -> None:
        """Close the sqlite3 connection, if one was opened (the next write opens it again)."""
        if self._fast is not None:
            self._fast.close()

    # -- a game's start and end ------------------------------------------------------------------

    def mark_running(self, job: JobKey) -> None:
        """Note that `job` is being played (DuplicateGameError: it is stored as played)."""
        fast = self.fast_writes()
        if fast is not None:
            with fast.transaction():
                if self.owner is not None:
                    fast.hold(self.tournament_id, self.owner)
                if self._engine_ids is None:
                    self._engine_ids = fast.engine_ids(self.tournament_id)
                self._game_ids[job.index] = fast.mark_running(self.tournament_id, job,
                                                              self._engine_ids)
            return
        from runner.store.recording import engine_ids, mark_running

        with self.db.session() as session:
            self._hold(session)
            if self._engine_ids is None:
                self._engine_ids = engine_ids(session, self.tournament_id)
            self._game_ids[job.index] = mark_running(session, self.tournament_id, job,
                                                     engine_ids=self._engine_ids)

    def record_game(self, job: JobKey, record: GameRecord, pgn: str,
                    pgn_offset: int | None) -> None:
        """Store a finished game and its moves, with the offset its text goes to in the PGN
        file (None: no file); DuplicateGameError when it is stored as played already."""
        fast = self.fast_writes()
        if fast is not None:
            values = done_values(record, pgn, pgn_offset)
            with fast.transaction():
                if self.owner is not None:  # first: the game is stored only under the lease
                    fast.hold(self.tournament_id, self.owner)
                fast.record_game(self.tournament_id, job, values, record, self._engine_ids,
                                 self._game_ids.pop(job.index, None))
            return
        from runner.store.recording import record_game

        with self.db.session() as session:
            self._hold(session)  # first: the game is stored only under the lease
            record_game(session, self.tournament_id, job, record, pgn=pgn,
                        engine_ids=self._engine_ids, pgn_offset=pgn_offset,
                        game_id=self._game_ids.pop(job.index, None))

    # -- several at once (the batch write, `runner.store.batch`) ------------------------------

    def mark_running_many(self, jobs: Sequence[JobKey]) -> list[DuplicateGameError | None]:
        """`mark_running` for each job in one transaction (the lease proved once): None for
        a job marked, DuplicateGameError for one stored as played (nothing written for it)."""
        fast = self.fast_writes()
        outcomes: list[int | DuplicateGameError] = []
        if fast is not None:
            with fast.transaction():
                if self.owner is not None:
                    fast.hold(self.tournament_id, self.owner)
                if self._engine_ids is None:
                    self._engine_ids = fast.engine_ids(self.tournament_id)
                for job in jobs:
                    try:
                        outcomes.append(fast.mark_running(self.tournament_id, job,
                                                          self._engine_ids))
                    except DuplicateGameError as exc:
                        outcomes.append(exc)
        else:
            from runner.store.batch import mark_running_many
            from runner.store.recording import engine_ids

            with self.db.session() as session:
                self._hold(session)
                if self._engine_ids is None:
                    self._engine_ids = engine_ids(session, self.tournament_id)
                outcomes = mark_running_many(session, self.tournament_id, jobs,
                                             self._engine_ids)
        # Kept only once committed: a failed transaction leaves no id behind.
        for job, outcome in zip(jobs, outcomes, strict=True):
            if not isinstance(outcome, DuplicateGameError):
                self._game_ids[job.index] = outcome
        return [outcome if isinstance(outcome, DuplicateGameError) else None
                for outcome in outcomes]

    pgn_offsets = staticmethod(pgn_offsets)
    """Where each game `record_games` stored goes in the PGN file."""

    def record_games(self, games: Sequence[FinishedGame], pgn_start: int | None) -> list[bool]:
        """Store the finished games and their moves in one transaction (the lease proved
        once); for each, whether it was stored (False: played already, by a runner before
        this one or earlier in `games`). The stored games' texts go to the PGN file one after
        another from `pgn_start` (`pgn_offsets`; None: no file). LeaseLostError, and nothing
        written, when another runner took the tournament over."""
        kept: dict[int, int | None] = {}
        for game in games:  # whatever happens, a row id kept for a start is not used again
            kept.setdefault(game.job.index, self._game_ids.pop(game.job.index, None))
        fast = self.fast_writes()
        if fast is not None:
            return self._record_fast(fast, games, pgn_start, kept)
        from runner.store.batch import playable, record_games

        with self.db.session() as session:
            self._hold(session)  # first: the games are stored only under the lease
            free, rows = playable(session, self.tournament_id, [g.job for g in games])
            record_games(session, self.tournament_id, games,
                         pgn_offsets(games, free, pgn_start), free, rows, self._engine_ids)
        return free

    def _record_fast(self, fast: FastWrites, games: Sequence[FinishedGame],
                     pgn_start: int | None, ids: Mapping[int, int | None]) -> list[bool]:
        """`record_games` by sqlite3: each game's statements in one transaction (a game
        already played raises before anything of it is written, so the others go on)."""
        stored: list[bool] = []
        at = pgn_start
        with fast.transaction():
            if self.owner is not None:
                fast.hold(self.tournament_id, self.owner)
            for game in games:
                try:
                    fast.record_game(self.tournament_id, game.job,
                                     done_values(game.record, game.pgn, at), game.record,
                                     self._engine_ids, ids[game.job.index])
                except DuplicateGameError:
                    stored.append(False)
                    continue
                stored.append(True)
                if at is not None:
                    at += game.pgn_size
        return stored

    def _hold(self, session: Session) -> None:
        """Refresh the lease in `session`'s transaction: LeaseLostError (the transaction then
        rolls back whole) when another runner took the tournament over."""
        if self.owner is not None:
            from runner.store.lease import hold

            hold(session, self.tournament_id, self.owner)

    def heartbeat(self) -> bool:
        """Refresh the run's lease; False when another runner took it over."""
        if self.owner is None:
            return True
        fast = self.fast_writes()
        if fast is not None:
            with fast.transaction():
                return fast.heartbeat(self.tournament_id, self.owner)
        from runner.store.lease import heartbeat

        with self.db.session() as session:
            return heartbeat(session, self.tournament_id, self.owner)

    def close_tournament(self, status: TournamentStatus, decision: str | None,
                         book_state: dict[str, Any] | None, reason: str | None = None) -> None:
        """End the run: games left running back to replay, the openings' cursor, the status,
        why the run failed (`reason`, None when it did not), and the lease given up; none of
        it (LeaseLostError) when the tournament is another runner's now."""
        # Kept for `runner report` and `runner list` (the service notes it too): a run
        # stopped because an engine never moved has no score to show.
        why = None if reason is None else " ".join(reason.split())[:_REASON_CHARS]
        fast = self.fast_writes()
        if fast is not None:
            with fast.transaction():
                if self.owner is not None:
                    fast.hold(self.tournament_id, self.owner)
                at = {"row_tournament": self.tournament_id}
                if status is not TournamentStatus.FINISHED:
                    fast.run("reset_unfinished", at)
                if book_state is not None:
                    fast.run("save_book_state", {**at, "book_state": book_state})
                fast.run("finish", {**at, **finish_values(status, decision)})
                fast.run("set_reason", {**at, "reason": why})
                if self.owner is not None:
                    fast.release(self.tournament_id, self.owner)
            return
        from runner.store.lease import release
        from runner.store.origin import set_reason
        from runner.store.recording import finish_tournament, reset_unfinished, save_book_state

        with self.db.session() as session:
            self._hold(session)
            if status is not TournamentStatus.FINISHED:
                reset_unfinished(session, self.tournament_id)
            if book_state is not None:
                save_book_state(session, self.tournament_id, book_state)
            finish_tournament(session, self.tournament_id, status=status,
                              sprt_decision=decision)
            set_reason(session, self.tournament_id, why)
            if self.owner is not None:
                release(session, self.tournament_id, self.owner)

    # -- the PGN file's bookkeeping --------------------------------------------------------------

    def pgn_games(self, ids: Iterable[int] | None = None) -> Iterator[PgnGame]:
        """The played games that belong in the PGN file (or those of them in `ids`), in file
        order; streamed, one session held while they are read."""
        fast = self.fast_writes() if ids is None else None
        if fast is not None:
            with fast.transaction():
                for row in fast.rows("pgn_games", {"row_tournament": self.tournament_id}):
                    if row["pgn"] is not None:
                        yield PgnGame(row["id"], row["pgn"], row["pgn_offset"])
            return
        from runner.store.resume import pgn_games

        with self.db.session() as session:
            yield from pgn_games(session, self.tournament_id, ids)

    def set_pgn_offsets(self, offsets: Mapping[int, int]) -> None:
        """Record, under the lease, where games are about to be written in the PGN file
        (game id -> byte offset)."""
        fast = self.fast_writes()
        if fast is not None:
            with fast.transaction():
                if self.owner is not None:
                    fast.hold(self.tournament_id, self.owner)
                for game_id, offset in offsets.items():
                    fast.run("set_pgn_offset", {"row_id": game_id, "pgn_offset": offset})
            return
        from runner.store.resume import set_pgn_offsets

        with self.db.session() as session:
            self._hold(session)
            set_pgn_offsets(session, offsets)
