"""The store object: the results database as the layers above the store see it.

A `Store` owns its database (engine and session factory) and opens a session per question,
so that the application layer, the CLI and the service ask questions (`tournaments`,
`stored_config`, `games`...) and never handle sessions, ORM rows or queries. Answers are the
frozen records of `runner.store.queries`; games stream, one session held while they are read.

A run asks it for the rest: `preparing` (finding, continuing or creating its tournament in
one transaction under the find-or-create lock), `take_lease`, and `tournament`, the
`TournamentStore` its writer stores games through (which of the two ways of writing a game,
SQLAlchemy's or the standard library's sqlite3, is the store's private choice). A report
reads through `report_rows`.

On a SQLite file at this version's schema the store is opened without SQLAlchemy
(`runner.store.lite`): a run's preparation, lease, games and close go by sqlite3 with the
statements compiled once from their one definition, and SQLAlchemy's engine is made only
when a question needs it (a report, a forced change). This module imports no SQLAlchemy at
its top: what a failing database raises is `database_errors()`.

This module is all the rooms above the store import of it but for the package's light records
(contracts in pyproject.toml hold them to it), so the records, errors and names they need are
exported from here too.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.store.opened import NO_LITE, OpenedDatabase
from runner.store.records import (
    LEASE_TIMEOUT,
    SERVICE,
    DuplicateGameError,
    EngineRowValues,
    FinishedGame,
    JobKey,
    LeaseHeldError,
    LeaseLostError,
    Placement,
    PlayedRow,
    StoredTournament,
    TournamentStatus,
    forget,
    heartbeat_interval,
    never_moved,
    new_owner,
)
from runner.store.schema import SCHEMA_REVISION
from runner.store.urls import redact, safe_url

if TYPE_CHECKING:
    from sqlalchemy.exc import SQLAlchemyError as StoreError

    from runner.store.branches import BranchTestRecord, BranchTests
    from runner.store.db import Database
    from runner.store.fleet import (
        PLACEMENTS,
        Fleet,
        FleetBatchRecord,
        FleetGameRecord,
        FleetWorkerRecord,
    )
    from runner.store.preparing import Preparation
    from runner.store.queries import PlayedGame, ReportRows, SearchTotals, TournamentInfo
    from runner.store.quick import ListReads
    from runner.store.reads import GameFilter, StoredGame, StoredMove, TournamentProgress
    from runner.store.tokens import ROLES, TokenRecord, Tokens
    from runner.store.tunes import PlanChanged, SubmittedTune, TuneIteration, TuneRecord, Tunes
    from runner.store.writing import TournamentStore

    DATABASE_ERRORS: tuple[type[Exception], ...]

__all__ = ["DATABASE_ERRORS", "LEASE_TIMEOUT", "PLACEMENTS", "ROLES", "SERVICE",
           "BranchTestRecord", "BranchTests", "Fleet", "FleetBatchRecord", "FleetGameRecord",
           "FleetWorkerRecord",
           "PlanChanged", "SubmittedTune", "TokenRecord", "Tokens", "TuneIteration", "TuneRecord",
           "Tunes",
           "Database", "DuplicateGameError",
           "EngineRowValues", "FinishedGame", "GameFilter", "JobKey", "LeaseHeldError", "LeaseLostError",
           "NamedTournament", "Placement", "PlayedGame", "PlayedRow", "Preparation",
           "ReportRows", "SchemaMismatch", "SearchTotals", "Store", "StoreError", "StoredGame",
           "StoredMove",
           "StoredTournament", "TournamentInfo", "TournamentProgress", "TournamentStatus",
           "TournamentStore", "database_errors", "forget", "heartbeat_interval", "never_moved",
           "new_owner"]


_LAZY = {
    # SQLAlchemy's side of the store: a run on a SQLite file never loads it (issue 38: it was
    # about 40% of a run's start-up), the other commands load it on first use.
    "runner.store.db": ("Database",),
    "runner.store.queries": ("PlayedGame", "ReportRows", "SearchTotals", "TournamentInfo"),
    # What reads answer in (a tournament's progress, stored games and moves): a run reads no
    # game back, and these four dataclasses were built by its start-up for nothing.
    "runner.store.reads": ("GameFilter", "StoredGame", "StoredMove", "TournamentProgress"),
    # A run's preparation and writes import the game record (and the rules below it), which
    # the commands that only read do not need (``runner list``).
    "runner.store.preparing": ("Preparation",),
    "runner.store.writing": ("TournamentStore",),
    # The service's tables: neither a run nor a read asks for them (their dataclasses and
    # queries were about 3% of a run's start-up CPU).
    "runner.store.branches": ("BranchTestRecord", "BranchTests"),
    "runner.store.fleet": ("PLACEMENTS", "Fleet", "FleetBatchRecord", "FleetGameRecord",
                           "FleetWorkerRecord"),
    "runner.store.tokens": ("ROLES", "TokenRecord", "Tokens"),
    "runner.store.tunes": ("PlanChanged", "SubmittedTune", "TuneIteration", "TuneRecord",
                           "Tunes"),
}
_LAZY_HOME = {name: module for module, names in _LAZY.items() for name in names}
"""Where each name loaded on first use lives (see `__getattr__`)."""


def __getattr__(name: str) -> Any:
    """The names of `_LAZY`, each loaded from its module when first asked for, and the
    SQLAlchemy errors (`StoreError`, `DATABASE_ERRORS`)."""
    if name in ("StoreError", "DATABASE_ERRORS"):
        from sqlalchemy.exc import SQLAlchemyError

        value: Any = SQLAlchemyError if name == "StoreError" else (SQLAlchemyError,
                                                                    sqlite3.Error)
        globals()[name] = value
        return value
    module = _LAZY_HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


# StoreError: what a question to the database raises when the database cannot answer it
# (unreachable, locked, not a runner database): SQLAlchemy's error, named here so that the
# layers above catch it without importing SQLAlchemy. DATABASE_ERRORS: it and sqlite3's.
# Both load SQLAlchemy when asked for; a run asks `database_errors()` instead.


def database_errors(*also: type[Exception]) -> tuple[type[Exception], ...]:
    """What a failing database raises to a run, and `also`, for an ``except`` clause
    (evaluated when an exception is being handled): sqlite3's errors, and SQLAlchemy's once
    it is loaded (an error of a module never imported cannot be in flight)."""
    if "sqlalchemy" not in sys.modules:
        return (sqlite3.Error, *also)
    from sqlalchemy.exc import SQLAlchemyError

    return (SQLAlchemyError, sqlite3.Error, *also)


class SchemaMismatch(Exception):
    """A database opened as it is (never migrated) whose schema is not this version's."""

    def __init__(self, revision: str | None, expected: str) -> None:
        super().__init__(f"schema at revision {revision}, not {expected}")
        self.revision = revision
        """The revision the database is at (None: no schema)."""
        self.expected = expected
        """The revision this version reads and writes."""


@dataclass(frozen=True)
class NamedTournament:
    """The newest tournament of a name, as a start decides whether to continue it."""

    id: int
    finished: bool
    fingerprint: str
    total_games: int


class Store(OpenedDatabase):
    """The results database behind one object: it owns its sessions, answers in records."""

    @classmethod
    def of(cls, store: Store | Database) -> Store:
        """`store` itself, or the store over an open database (tests and scripts open one
        with `runner.store.open_database`)."""
        return store if isinstance(store, Store) else cls(store)

    @classmethod
    def open(cls, url: str, *, migrate: bool = True) -> Store:
        """Open the database at `url`, migrated to this version's schema unless `migrate` is
        False (a reader in another process of a database already opened)."""
        if migrate:
            from runner.store.lite import LiteDatabase

            lite = LiteDatabase.open(url)
            if lite is not None:
                return cls(lite=lite)
        from runner.store.db import open_database

        return cls(open_database(url, migrate=migrate))

    @classmethod
    def open_read_only(cls, url: str) -> Store:
        """Open `url` as it is, for a database that cannot be written (nothing is migrated):
        SchemaMismatch when its schema is not this version's, the driver's error when it
        cannot be read (not a database, a corrupt file)."""
        store = cls.open(url, migrate=False)  # connects only when first used
        try:
            revision = store.revision()
        except Exception:
            store.close()
            raise
        if revision != SCHEMA_REVISION:
            store.close()
            raise SchemaMismatch(revision, SCHEMA_REVISION)
        return store

    @staticmethod
    def has_schema(url: str) -> bool:
        """Whether the database at `url` holds a runner schema, asked without creating or
        migrating anything (SQLAlchemyError when it cannot be reached)."""
        from sqlalchemy import inspect

        from runner.store.db import create_db_engine

        engine = create_db_engine(url)
        try:
            return inspect(engine).has_table("alembic_version")
        finally:
            engine.dispose()

    @staticmethod
    def redact(text: str) -> str:
        """`text` with the password of every database URL (``scheme://user:password@``) in it
        replaced by ***: for error messages, which quote URLs."""
        return redact(text)

    @staticmethod
    def checked_url(value: str, where: str) -> tuple[str, Path | None]:
        """A database URL checked before anything is opened (its syntax, its driver): the
        URL and its SQLite file, if any; ValueError naming `where` otherwise."""
        from runner.store.db import checked_url

        return checked_url(value, where)

    @staticmethod
    def safe_url(url: str) -> str:
        """A database URL fit to print: its password, if any, replaced by ***."""
        return safe_url(url)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- tournaments -----------------------------------------------------------------------------

    def list_reads(self) -> ListReads | None:
        """What `runner.store.quick` needs to list this database's tournaments without
        SQLAlchemy: the statements of `tournaments` and `failures`, compiled for it with their
        values written in, and which of their columns hold stored times or statuses (None:
        not a SQLite database, or the store's sources cannot be read to key them)."""
        from runner.store.models import column_kinds
        from runner.store.queries import list_statements
        from runner.store.quick import ListReads, cache_key

        key = cache_key()
        with self.db.session() as session:
            dialect = session.get_bind().dialect
            if key is None or dialect.name != "sqlite":
                return None
            statements = list_statements(session)
        sql: dict[str, str] = {}
        columns: dict[str, dict[str, str]] = {}
        for name, statement in statements.items():
            sql[name] = str(statement.compile(dialect=dialect,
                                              compile_kwargs={"literal_binds": True}))
            columns[name] = column_kinds(statement)
        return ListReads(key=key, revision=SCHEMA_REVISION, statements=sql, columns=columns)

    def remember_list(self, cache: Path) -> None:
        """Keep in `cache` what `runner.store.quick_list` needs to list this database next
        time without SQLAlchemy (nothing for a database other than SQLite)."""
        from runner.store.quick import save

        reads = self.list_reads()
        if reads is not None:
            save(cache, reads)

    def tournaments(self) -> list[TournamentProgress]:
        """Every tournament, oldest first, with its progress."""
        from runner.store.queries import tournaments

        with self.db.session() as session:
            return tournaments(session)

    def progress(self, tournament_id: int) -> TournamentProgress | None:
        """One tournament's progress (None: no such tournament)."""
        from runner.store.queries import find_tournament

        with self.db.session() as session:
            return find_tournament(session, tournament_id=tournament_id)

    def info(self, tournament_id: int) -> TournamentInfo | None:
        """A tournament's settings, engines and game counts (None: no such tournament)."""
        from runner.store.queries import tournament_info

        with self.db.session() as session:
            return tournament_info(session, tournament_id)

    def newest_named(self, name: str, origin: str | None = None) -> NamedTournament | None:
        """The newest tournament called `name` that `origin` owns (None: the command line)."""
        found = self._lite_preparation(lambda prep: prep.newest_named(name, origin))
        if found is not NO_LITE:
            stored: StoredTournament | None = found  # type: ignore[assignment]
            return None if stored is None else NamedTournament(
                stored.id, stored.status is TournamentStatus.FINISHED, stored.fingerprint,
                stored.total_games)
        from runner.store.resume import latest_named

        with self.db.session() as session:
            row = latest_named(session, name, origin)
            if row is None:
                return None
            return NamedTournament(row.id, row.status is TournamentStatus.FINISHED,
                                   row.fingerprint, row.total_games)

    def stored_config(self, tournament_id: int) -> dict[str, Any] | None:
        """The configuration a tournament was stored with (None: no such tournament)."""
        from runner.store.resume import stored_config

        with self.db.session() as session:
            return stored_config(session, tournament_id)

    def newest(self) -> TournamentProgress | None:
        """The newest tournament's progress (None: the database holds none)."""
        from runner.store.queries import find_tournament

        with self.db.session() as session:
            return find_tournament(session)

    # -- a run -----------------------------------------------------------------------------------

    @contextmanager
    def report_rows(self) -> Iterator[ReportRows]:
        """A report's reads (the tournament, its engines and counts, its played games in the
        order they ended), all in one transaction."""
        from runner.store.queries import ReportRows

        with self.db.session() as session:
            yield ReportRows(session)

    # -- games -----------------------------------------------------------------------------------

    def games(self, where: GameFilter | None = None) -> Iterator[StoredGame]:
        """Games matching `where`, in schedule order, streamed (one session while read)."""
        from runner.store.queries import stream_games

        with self.db.session() as session:
            yield from stream_games(session, where)

    def game(self, tournament_id: int, index: int) -> StoredGame | None:
        """The tournament's finished game at schedule place `index` (None: no such game); a
        pass over its finished games, as no read finds one game by its place."""
        from runner.store.queries import stream_games
        from runner.store.reads import GameFilter

        with self.db.session() as session:
            for game in stream_games(session, GameFilter(tournament_id=tournament_id)):
                if game.job_index == index:
                    return game
        return None

    def game_moves(self, game_id: int) -> list[StoredMove]:
        """The moves of one stored game (`StoredGame.id`), in order."""
        from runner.store.queries import game_moves

        with self.db.session() as session:
            return game_moves(session, game_id)

    # -- the service's tournaments ---------------------------------------------------------------

    def owned(self, tournament_id: int, origin: str) -> bool:
        """Whether the tournament came from `origin`."""
        from runner.store.origin import owned

        with self.db.session() as session:
            return owned(session, tournament_id, origin)

    def unfinished_owned(self, origin: str) -> list[tuple[int, dict[str, Any]]]:
        """`origin`'s running or interrupted tournaments with their stored configurations."""
        from runner.store.origin import unfinished_owned

        with self.db.session() as session:
            return unfinished_owned(session, origin)

    def failures(self) -> dict[int, str]:
        """The tournaments whose last run failed, with why."""
        from runner.store.origin import failures

        with self.db.session() as session:
            return failures(session)

    def set_stopped(self, tournament_id: int) -> None:
        """Mark a tournament stopped on request (a service start does not resume it)."""
        from runner.store.origin import set_status

        with self.db.session() as session:
            set_status(session, tournament_id, TournamentStatus.STOPPED)

    @property
    def tokens(self) -> Tokens:
        """The service's tokens in this database."""
        from runner.store.tokens import Tokens

        return Tokens(self.db)

    @property
    def tunes(self) -> Tunes:
        """The SPSA tuning runs in this database."""
        from runner.store.tunes import Tunes

        return Tunes(self.db)

    @property
    def fleet(self) -> Fleet:
        """The remote workers, their batches and the tournaments' placements."""
        from runner.store.fleet import Fleet

        return Fleet(self.db)

    @property
    def branch_tests(self) -> BranchTests:
        """The service's branch tests in this database."""
        from runner.store.branches import BranchTests

        return BranchTests(self.db)

    def set_reason(self, tournament_id: int, reason: str | None) -> None:
        """Note why the tournament's run failed (None: it did not, or it runs again)."""
        from runner.store.origin import set_reason

        with self.db.session() as session:
            set_reason(session, tournament_id, reason)
