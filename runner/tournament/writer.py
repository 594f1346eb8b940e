"""The single writer: every database write of a run and the ``--pgnout`` file, on one thread.

A game is stored in one transaction the moment it ends without blocking the event loop (a
commit would otherwise stall the clocks of the games still running). Writes run in the
order they are queued, so the row marking a game running is written before the game itself,
and a game reaches the PGN file only once it is in the database.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TextIO, TypeVar

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
from runner.store.recording import JobKey, save_book_state

__all__ = ["GameWriter"]

_T = TypeVar("_T")


class GameWriter:
    """Owns the writer thread of one run of one tournament."""

    def __init__(self, db: Database, tournament_id: int, pgnout: Path | None) -> None:
        self.db = db
        self.tournament_id = tournament_id
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="runner-writer")
        self.pgnout = pgnout
        self._pgn_file: TextIO | None = None
        self._engine_ids: dict[str, int] | None = None  # fetched once, on the writer thread

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
        if self._pgn_file is not None:
            self._pgn_file.close()
            self._pgn_file = None

    # ----------------------------------------------------------------- on the writer thread

    def mark_running(self, job: JobKey) -> None:
        """Note in the database that `job` is being played."""
        with self.db.session() as session:
            if self._engine_ids is None:
                self._engine_ids = engine_ids(session, self.tournament_id)
            mark_running(session, self.tournament_id, job, engine_ids=self._engine_ids)

    def store(self, job: JobKey, record: GameRecord, pgn: str) -> None:
        """Store a finished game, then append it to the PGN file."""
        with self.db.session() as session:
            record_game(session, self.tournament_id, job, record, pgn=pgn,
                        engine_ids=self._engine_ids)
        # The PGN file follows the database: a game is in the file only once it is stored.
        self.append_pgn(pgn)

    def append_pgn(self, text: str) -> None:
        """Append one game to the ``--pgnout`` file (opened on first use), flushed at once."""
        if self.pgnout is None:
            return
        if self._pgn_file is None:
            self.pgnout.parent.mkdir(parents=True, exist_ok=True)
            self._pgn_file = open(self.pgnout, "a", encoding="utf-8")  # noqa: SIM115
        self._pgn_file.write(text if text.endswith("\n\n") else text.rstrip("\n") + "\n\n")
        self._pgn_file.flush()

    def close_tournament(self, status: TournamentStatus, decision: str | None,
                         book_state: dict[str, Any] | None) -> None:
        """End the run in the database: games left running back to replay, cursor, status."""
        with self.db.session() as session:
            if status is not TournamentStatus.FINISHED:
                reset_unfinished(session, self.tournament_id)
            if book_state is not None:
                save_book_state(session, self.tournament_id, book_state)
            finish_tournament(session, self.tournament_id, status=status,
                              sprt_decision=decision)
