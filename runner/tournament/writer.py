"""The single writer: every database write of a run and the ``--pgnout`` file, on one thread.

A game is stored in one transaction the moment it ends without blocking the event loop (a
commit would otherwise stall the clocks of the games still running). Writes run in the
order they are queued, so the row marking a game running is written before the game itself,
and a game reaches the PGN file only once it is in the database.

The PGN file always holds the tournament's played games: each game is stored with the byte
offset it is about to be written at, then written whole in one ``write``; a failed write is
cut off again at once and stops the run. A run starts by checking the file against the
database (`repair_pgn`): a torn tail is cut, and games stored but not in the file (a runner
killed between the commit and the write, a file deleted or rotated) are appended.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from runner.game.record import GameRecord
from runner.store import (
    Database,
    TournamentStatus,
    engine_ids,
    finish_tournament,
    mark_running,
    record_game,
    reset_unfinished,
)
from runner.store.fast import (
    FastWrites,
    cache_key,
    default_cache,
    done_values,
    enabled,
    load,
    save,
)
from runner.store.lease import heartbeat, hold, release
from runner.store.origin import set_reason
from runner.store.recording import JobKey, save_book_state
from runner.store.resume import pgn_games, set_pgn_offsets

__all__ = ["GameWriter", "PgnFileError", "pgn_file_text"]

_T = TypeVar("_T")
_CHUNK = 1 << 16
"""Bytes read at a time while checking the PGN file."""
_BATCH = 500
"""Missing games rewritten per transaction (a whole file to rebuild is not held in memory)."""


class PgnFileError(RuntimeError):
    """The ``--pgnout`` file cannot be written (disk full, no permission...): the run stops."""


def pgn_file_text(pgn: str) -> bytes:
    """A game's text as it stands in the PGN file: ending in one blank line."""
    return (pgn if pgn.endswith("\n\n") else pgn.rstrip("\n") + "\n\n").encode("utf-8")


class GameWriter:
    """Owns the writer thread of one run of one tournament."""

    _write = staticmethod(os.write)
    """How bytes reach the PGN file (a test makes it fail as a full disk would)."""

    def __init__(self, db: Database, tournament_id: int, pgnout: Path | None,
                 owner: str | None = None, *, statements: Path | None = None,
                 fast: bool | None = None) -> None:
        self.db = db
        self.tournament_id = tournament_id
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="runner-writer")
        self.pgnout = pgnout
        self.owner = owner
        """The run's lease owner id: heartbeats refresh it, closing the tournament releases it."""
        self._pgn_fd: int | None = None
        self._engine_ids: dict[str, int] | None = None  # fetched once, on the writer thread
        self._game_ids: dict[int, int] = {}  # job index -> row id of the games marked running
        self.statements = default_cache() if statements is None else statements
        """Where the compiled statements of `runner.store.fast` are kept."""
        self._fast: FastWrites | None = None
        self._fast_wanted = enabled() if fast is None else fast
        """Whether the per-game writes may go by sqlite3 (`runner.store.fast`); None (the
        default): unless ``RUNNER_SQLALCHEMY=1``. Settled on the first write."""

    # ----------------------------------------------------------------- from the event loop

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

    def close(self) -> None:
        """Finish pending writes and close the PGN file."""
        self.pool.shutdown(wait=True)
        if self._fast is not None:
            self._fast.close()
        if self._pgn_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._pgn_fd)
            self._pgn_fd = None

    # ----------------------------------------------------------------- on the writer thread

    def fast_writes(self) -> FastWrites | None:
        """The per-game writes by sqlite3 (`runner.store.fast`), set up on the first call:
        None for a database other than a SQLite file, when ``RUNNER_SQLALCHEMY=1``, or when
        the statements cannot be compiled (SQLAlchemy's way then)."""
        if not self._fast_wanted:
            return self._fast
        self._fast_wanted = False
        db_file = FastWrites.database_file(self.db.url)
        key = cache_key()
        if db_file is None or key is None:
            return None
        statements = None if self.statements is None else load(self.statements, key)
        if statements is None:
            from runner.store.recording import compile_writes

            with self.db.session() as session:
                statements = compile_writes(session, key)
            if statements is None:
                return None
            if self.statements is not None:
                save(self.statements, statements)
        from runner.store.db import sqlite_pragmas  # loaded already: the store opened with it

        fast = FastWrites(db_file, statements, sqlite_pragmas(), self.db.watch)
        try:
            with fast.transaction():  # the schema checked once, the connection set up
                pass
        except Exception:  # anything unexpected: SQLAlchemy's way, which says what is wrong
            fast.close()
            return None
        self._fast = fast
        return fast

    def mark_running(self, job: JobKey) -> None:
        """Note in the database that `job` is being played."""
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
        with self.db.session() as session:
            self._hold(session)
            if self._engine_ids is None:
                self._engine_ids = engine_ids(session, self.tournament_id)
            self._game_ids[job.index] = mark_running(session, self.tournament_id, job,
                                                     engine_ids=self._engine_ids)

    def store(self, job: JobKey, record: GameRecord, pgn: str) -> None:
        """Store a finished game with the offset it goes to in the PGN file, then write it there
        (PgnFileError when that fails: the game stays stored, a resume writes it)."""
        offset = self._pgn_end()
        fast = self.fast_writes()
        if fast is not None:
            values = done_values(record, pgn, offset)
            with fast.transaction():
                if self.owner is not None:  # first: the game is stored only under the lease
                    fast.hold(self.tournament_id, self.owner)
                fast.record_game(self.tournament_id, job, values, record, self._engine_ids,
                                 self._game_ids.pop(job.index, None))
        else:
            with self.db.session() as session:
                self._hold(session)  # first: the game is stored only under the lease
                record_game(session, self.tournament_id, job, record, pgn=pgn,
                            engine_ids=self._engine_ids, pgn_offset=offset,
                            game_id=self._game_ids.pop(job.index, None))
        if offset is not None:
            self._append(pgn_file_text(pgn), offset, f"game {job.index + 1}")

    def _hold(self, session: Session) -> None:
        """Refresh the lease in `session`'s transaction: LeaseLostError (the transaction then
        rolls back whole) when another runner took the tournament over."""
        if self.owner is not None:
            hold(session, self.tournament_id, self.owner)

    def heartbeat(self) -> bool:
        """Refresh the run's lease; False when another runner took it over."""
        if self.owner is None:
            return True
        fast = self.fast_writes()
        if fast is not None:
            with fast.transaction():
                return fast.heartbeat(self.tournament_id, self.owner)
        with self.db.session() as session:
            return heartbeat(session, self.tournament_id, self.owner)

    def close_tournament(self, status: TournamentStatus, decision: str | None,
                         book_state: dict[str, Any] | None, reason: str | None = None) -> None:
        """End the run in the database: games left running back to replay, cursor, status,
        why the run failed (`reason`, None when it did not), and the lease given up; none of
        it (LeaseLostError) when the tournament is another runner's now."""
        with self.db.session() as session:
            self._hold(session)
            if status is not TournamentStatus.FINISHED:
                reset_unfinished(session, self.tournament_id)
            if book_state is not None:
                save_book_state(session, self.tournament_id, book_state)
            finish_tournament(session, self.tournament_id, status=status,
                              sprt_decision=decision)
            # Kept for `runner report` and `runner list` (the service notes it too): a run
            # stopped because an engine never moved has no score to show.
            set_reason(session, self.tournament_id,
                       None if reason is None else " ".join(reason.split())[:500])
            if self.owner is not None:
                release(session, self.tournament_id, self.owner)

    # ----------------------------------------------------------------- the PGN file

    def _pgn_end(self) -> int | None:
        """Where the next game goes in the PGN file (its size); None without a file."""
        if self.pgnout is None:
            return None
        if self._pgn_fd is None:
            self._open_pgn()
        assert self._pgn_fd is not None
        return os.fstat(self._pgn_fd).st_size

    def _open_pgn(self) -> None:
        assert self.pgnout is not None
        try:
            self.pgnout.parent.mkdir(parents=True, exist_ok=True)
            self._pgn_fd = os.open(self.pgnout, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        except OSError as exc:
            raise PgnFileError(f"cannot open the PGN file {self.pgnout}: "
                               f"{exc.strerror or exc}") from exc

    def _append(self, data: bytes, offset: int, what: str) -> None:
        """Write one game whole at the end of the file (`offset`); on failure cut the file back
        to `offset`, so no torn game stays behind, and raise PgnFileError."""
        assert self._pgn_fd is not None
        view = memoryview(data)
        try:
            while view:
                view = view[self._write(self._pgn_fd, view):]
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self._pgn_fd, offset)
            raise PgnFileError(f"cannot write {what} to the PGN file {self.pgnout}: "
                               f"{exc.strerror or exc} (the game is stored; the next run "
                               "writes it)") from exc

    def repair_pgn(self) -> int:
        """Make the PGN file hold exactly the tournament's played games (see the module's
        docstring); returns how many games were (re)written."""
        if self.pgnout is None:
            return 0
        cut, missing = self._check_pgn()
        if cut is not None:
            try:
                os.truncate(self.pgnout, cut)
            except OSError as exc:
                raise PgnFileError(f"cannot cut the torn game at the end of the PGN file "
                                   f"{self.pgnout}: {exc.strerror or exc}") from exc
        for start in range(0, len(missing), _BATCH):  # a deleted file: every game, in batches
            self._rewrite(missing[start:start + _BATCH])
        return len(missing)

    def _rewrite(self, ids: list[int]) -> None:
        """Append stored games the file lacks: their offsets first, as for a new game."""
        end = self._pgn_end()
        assert end is not None
        with self.db.session() as session:
            texts = [(game.id, pgn_file_text(game.pgn))
                     for game in pgn_games(session, self.tournament_id, ids)]
        offsets = {}
        for game_id, data in texts:
            offsets[game_id] = end
            end += len(data)
        with self.db.session() as session:
            self._hold(session)
            set_pgn_offsets(session, offsets)
        for game_id, data in texts:
            self._append(data, offsets[game_id], "a stored game")

    def _check_pgn(self) -> tuple[int | None, list[int]]:
        """Compare the file with the stored games: where to cut a torn tail (None: nowhere)
        and the ids of the games the file lacks."""
        assert self.pgnout is not None
        missing: list[int] = []
        cut: int | None = None
        try:
            handle = open(self.pgnout, "rb")  # noqa: SIM115
        except FileNotFoundError:
            handle = None
        except OSError as exc:
            raise PgnFileError(f"cannot read the PGN file {self.pgnout}: "
                               f"{exc.strerror or exc}") from exc
        with contextlib.ExitStack() as stack, self.db.session() as session:
            size = 0
            if handle is not None:
                stack.enter_context(handle)
                size = os.fstat(handle.fileno()).st_size
            for game in pgn_games(session, self.tournament_id):
                data = pgn_file_text(game.pgn)
                if game.offset is None or handle is None or game.offset >= size:
                    missing.append(game.id)
                    continue
                handle.seek(game.offset)
                found = _read(handle, len(data))
                if found == data:
                    continue
                missing.append(game.id)
                if game.offset + len(found) == size and data.startswith(found):
                    cut = game.offset  # a game cut short at the end of the file
        return cut, missing


def _read(handle: Any, count: int) -> bytes:
    """Up to `count` bytes from a binary file, in chunks."""
    parts = []
    while count > 0:
        chunk = handle.read(min(count, _CHUNK))
        if not chunk:
            break
        parts.append(chunk)
        count -= len(chunk)
    return b"".join(parts)
