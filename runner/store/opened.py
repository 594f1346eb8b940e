"""The database a store opened, by SQLAlchemy or by sqlite3, and a run's questions to it.

`OpenedDatabase` is the part of `runner.store.store.Store` that knows which way the database
was opened: over a SQLite file at this version's schema, without SQLAlchemy
(`runner.store.lite`), its engine made only when a question needs it; elsewhere, SQLAlchemy's
engine and sessions (`runner.store.db`). A run's preparation, lease and writes take the
sqlite3 way when there is one; everything else asks `db`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from runner.store.urls import database_failure, safe_url

if TYPE_CHECKING:
    from runner.store.db import Database
    from runner.store.fast import WriteStatements
    from runner.store.guard import FileWatch
    from runner.store.lite import LiteDatabase, LitePreparation
    from runner.store.preparing import Preparation
    from runner.store.writing import TournamentStore

__all__ = ["NO_LITE", "OpenedDatabase"]

_T = TypeVar("_T")
NO_LITE = object()
"""A question the store's sqlite3 way cannot answer (not a SQLite file opened so)."""


class OpenedDatabase:
    """A results database opened one of two ways, and a run's questions to it."""

    def __init__(self, db: Database | None = None, *, lite: LiteDatabase | None = None) -> None:
        """Over an open database `db`, or over a SQLite file `lite` opened without
        SQLAlchemy (whose engine is made when a question first needs it)."""
        if db is None and lite is None:
            raise ValueError("a store needs a database")
        self._db = db
        self._lite = lite

    @property
    def db(self) -> Database:
        """The open database (the store's own modules work in its sessions); over a file
        opened without SQLAlchemy, its engine is made on first use (its schema is current)."""
        if self._db is None:
            from runner.store.db import open_database

            assert self._lite is not None
            self._db = open_database(self._lite.url, migrate=False)
        return self._db

    def pragmas(self) -> list[str]:
        """The settings the store's SQLite connections run first (`runner.store.db`'s when
        SQLAlchemy's way opened the database)."""
        if self._lite is None:
            from runner.store.db import sqlite_pragmas

            return sqlite_pragmas()
        from runner.store.schema import sqlite_pragmas as lite_pragmas

        return lite_pragmas()

    @property
    def watch(self) -> FileWatch | None:
        """The SQLite file's watch (`runner.store.guard`; None: not a file)."""
        return self._lite.watch if self._lite is not None else self.db.watch

    @property
    def url(self) -> str:
        """The database URL (with its password: for opening, never for showing)."""
        return self._lite.url if self._lite is not None else self.db.url

    @property
    def shown_url(self) -> str:
        """The database URL fit to print (its password hidden)."""
        return safe_url(self.url)

    @property
    def shared_by_processes(self) -> bool:
        """Whether another process opening this URL sees the same data (not SQLite in
        memory)."""
        if self._lite is not None:
            return True
        from sqlalchemy.engine import make_url

        try:
            parsed = make_url(self.db.url)
        except Exception:
            return False
        if not parsed.drivername.startswith("sqlite"):
            return True
        database = parsed.database or ""
        return database not in ("", ":memory:") and "mode=memory" not in self.db.url

    def failure(self, exc: BaseException) -> str:
        """One line naming the database (password hidden) and what went wrong with it (one
        of `DATABASE_ERRORS`): the driver's message, not SQLAlchemy's statement dump."""
        return database_failure(self.url, exc)

    def revision(self) -> str | None:
        """The schema revision the database is at (None: no schema yet)."""
        from runner.store.db import current_revision

        return current_revision(self.db.engine)

    def close(self) -> None:
        """Release every pooled connection."""
        if self._db is not None:
            self._db.close()

    @contextmanager
    def preparing(self) -> Iterator[Preparation]:
        """One transaction under the find-or-create lock, for a run to find, continue or
        create its tournament (and take its lease): of two runners of one configuration
        started together, the second waits, then finds the first's tournament and lease.
        Committed when the block ends, rolled back whole when it raises."""
        from runner.store.lease import lock_tournaments
        from runner.store.preparing import Preparation

        with self.db.session() as session:
            lock_tournaments(session)
            yield Preparation(session)

    def prepare(self, work: Callable[[Preparation], _T]) -> _T:
        """`work`'s answer, given a `Preparation` in one transaction under the find-or-create
        lock (`preparing`): committed when it returns, rolled back whole when it raises. On a
        SQLite file the transaction is sqlite3's (`runner.store.lite`); a preparation needing
        SQLAlchemy's way (a forced change) is rolled back and done again in a session, so
        `work` must change nothing outside the transaction before it asks for that."""
        from runner.store.lite import NeedsSession

        try:
            # LitePreparation answers Preparation's questions (the same names and records).
            done = self._lite_preparation(work, immediate=True)  # type: ignore[arg-type]
        except NeedsSession:
            done = NO_LITE
        if done is not NO_LITE:
            return done  # type: ignore[return-value]
        with self.preparing() as prep:
            return work(prep)

    def take_lease(self, tournament_id: int, owner: str, timeout: float) -> None:
        """Hold the tournament's lease for `owner` (LeaseHeldError: a live runner has it;
        two runners racing for it collide on its key, and one of them gets the driver's
        error)."""
        taken = self._lite_preparation(lambda prep: prep.take_lease(tournament_id, owner,
                                                                    timeout))
        if taken is not NO_LITE:
            return
        from runner.store.lease import acquire

        with self.db.session() as session:
            acquire(session, tournament_id, owner, timeout)

    def statements(self, cache: Path | None = None) -> WriteStatements | None:
        """The store's statements compiled for its SQLite file (`runner.store.fast`), from
        the cache at `cache` (None: the user's cache directory), else compiled now (SQLAlchemy
        loaded once) and cached; None: they cannot be compiled (SQLAlchemy's way then)."""
        from runner.store.lite import compiled_statements

        return compiled_statements(lambda: self.db, cache)

    def _lite_preparation(self, work: Callable[[LitePreparation], _T], *,
                          immediate: bool = False) -> _T | object:
        """`work` in one sqlite3 transaction (`runner.store.lite.prepared`) when the store is
        a SQLite file opened so; `NO_LITE` when it is not, or its statements cannot be had."""
        statements = None if self._lite is None else self.statements()
        if self._lite is None or statements is None:
            return NO_LITE
        from runner.store.lite import prepared

        return prepared(self._lite, statements, self.pragmas(), work, immediate=immediate)

    def tournament(self, tournament_id: int, owner: str | None = None, *,
                   statements: Path | None = None, fast: bool | None = None) -> TournamentStore:
        """The writes of a run of `tournament_id` under `owner`'s lease (None: outside any
        run); see `TournamentStore` for `statements` and `fast`."""
        from runner.store.writing import TournamentStore

        return TournamentStore(self, tournament_id, owner, statements=statements, fast=fast)

