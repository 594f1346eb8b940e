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
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from runner.game.record import GameRecord
from runner.store import JobKey, TournamentStatus
from runner.store.store import FinishedGame, Store

if TYPE_CHECKING:
    from runner.store.store import Database

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

    def __init__(self, store: Store | Database, tournament_id: int, pgnout: Path | None,
                 owner: str | None = None, *, statements: Path | None = None,
                 fast: bool | None = None) -> None:
        """`owner`: the run's lease owner id, which every write proves it still holds (None:
        a write outside any run); `statements` and `fast`: see `TournamentStore`."""
        self.rows = Store.of(store).tournament(tournament_id, owner, statements=statements,
                                               fast=fast)
        """The tournament's rows as this run writes them (the store chooses how)."""
        self.tournament_id = tournament_id
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="runner-writer")
        self.pgnout = pgnout
        self._pgn_fd: int | None = None
        self._marks: list[tuple[JobKey, asyncio.Future[None]]] = []
        """Games to mark running, taken together by the next `_mark_pending` on the thread."""
        self._marks_lock = threading.Lock()

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

    def mark_soon(self, job: JobKey) -> asyncio.Future[None]:
        """Queue marking `job` running; the games queued while the thread is busy are marked
        together in one transaction (a fleet's batch of jobs starts at once). The future
        fails with DuplicateGameError when the job is played already, or with the error
        that failed the transaction. Ordered like `submit`: a mark queued before a store is
        written before it."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        future.add_done_callback(lambda done: done.cancelled() or done.exception())
        with self._marks_lock:
            first = not self._marks
            self._marks.append((job, future))
        if first:
            self.pool.submit(self._mark_pending, loop)
        return future

    def close(self) -> None:
        """Finish pending writes and close the PGN file."""
        self.pool.shutdown(wait=True)
        self.rows.close()
        if self._pgn_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._pgn_fd)
            self._pgn_fd = None

    # ----------------------------------------------------------------- on the writer thread

    def fast_writes(self) -> object | None:
        """The sqlite3 connection the store writes this run's games through, set up on the
        first call (None: SQLAlchemy's way); for comparing the two ways."""
        return self.rows.fast_writes()

    def mark_running(self, job: JobKey) -> None:
        """Note in the database that `job` is being played."""
        self.rows.mark_running(job)

    def _mark_pending(self, loop: asyncio.AbstractEventLoop) -> None:
        """Mark every queued game running in one transaction; tell each future its outcome."""
        with self._marks_lock:
            taken, self._marks = self._marks, []
        if not taken:
            return
        try:
            outcomes: list[BaseException | None] = list(
                self.rows.mark_running_many([job for job, _ in taken]))
        except Exception as exc:
            outcomes = [exc] * len(taken)
        for (_job, future), outcome in zip(taken, outcomes, strict=True):
            loop.call_soon_threadsafe(_settle, future, outcome)

    def store_many(self, games: list[tuple[JobKey, GameRecord, str]]) -> list[bool]:
        """Store finished games in one transaction (`TournamentStore.record_games`), then
        write the stored ones to the PGN file in their order; for each, whether it was
        stored (False: played already). PgnFileError as `store`."""
        texts = [pgn_file_text(pgn) for _job, _record, pgn in games] \
            if self.pgnout is not None else [b""] * len(games)
        finished = [FinishedGame(job, record, pgn, len(text))
                    for (job, record, pgn), text in zip(games, texts, strict=True)]
        start = self._pgn_end()
        stored = self.rows.record_games(finished, start)
        for game, text, offset in zip(finished, texts, self.rows.pgn_offsets(finished, stored, start),
                                      strict=True):
            if offset is not None:
                self._append(text, offset, f"game {game.job.index + 1}")
        return stored

    def store(self, job: JobKey, record: GameRecord, pgn: str) -> None:
        """Store a finished game with the offset it goes to in the PGN file, then write it there
        (PgnFileError when that fails: the game stays stored, a resume writes it)."""
        offset = self._pgn_end()
        self.rows.record_game(job, record, pgn, offset)
        if offset is not None:
            self._append(pgn_file_text(pgn), offset, f"game {job.index + 1}")

    def heartbeat(self) -> bool:
        """Refresh the run's lease; False when another runner took it over."""
        return self.rows.heartbeat()

    def close_tournament(self, status: TournamentStatus, decision: str | None,
                         book_state: dict[str, Any] | None, reason: str | None = None) -> None:
        """End the run in the database (`TournamentStore.close_tournament`): LeaseLostError,
        and nothing written, when the tournament is another runner's now."""
        self.rows.close_tournament(status, decision, book_state, reason)

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
        texts = [(game.id, pgn_file_text(game.pgn)) for game in self.rows.pgn_games(ids)]
        offsets = {}
        for game_id, data in texts:
            offsets[game_id] = end
            end += len(data)
        self.rows.set_pgn_offsets(offsets)
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
        with contextlib.ExitStack() as stack:
            size = 0
            if handle is not None:
                stack.enter_context(handle)
                size = os.fstat(handle.fileno()).st_size
            for game in self.rows.pgn_games():
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


def _settle(future: asyncio.Future[None], outcome: BaseException | None) -> None:
    """Give a queued write's future its outcome (on the event loop's thread)."""
    if future.done():
        return
    if outcome is None:
        future.set_result(None)
    else:
        future.set_exception(outcome)


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
