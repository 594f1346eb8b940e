"""A run on a SQLite file without SQLAlchemy: the file opened, its schema checked or created,
and the run's preparation, all by the standard library's sqlite3 (issue 38).

`LiteDatabase.open` takes a ``sqlite:///FILE`` URL: a file at `SCHEMA_REVISION` is opened as
it is, a new one (no table) gets the schema of ``sqlite_schema.sql`` (`runner.store.schema`),
anything else (an older revision, a foreign file) is left to SQLAlchemy and alembic (None).
`LitePreparation` answers a run's preparation (`runner.store.preparing.Preparation`'s
questions) with the statements `runner.store.recording.compile_writes` compiled from their
one definition, run on a `FastWrites` connection; the rare forced change of a configuration
(re-planning played games) raises `NeedsSession`, and the store does the whole preparation
again through SQLAlchemy.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar

from runner.store.guard import FileWatch
from runner.store.quick import retry_when_locked
from runner.store.records import (
    LIVE,
    EngineRowValues,
    Holder,
    LeaseHeldError,
    Placement,
    PlayedRow,
    StoredTournament,
    holder,
    lease_values,
)
from runner.store.schema import (
    LOCK_TIMEOUT_MS,
    SCHEMA_REVISION,
    SCRIPT,
    create_from_script,
    enabled,
    migration_lock,
    sqlite_file,
    sqlite_pragmas,
    stored_revision,
)

if TYPE_CHECKING:
    from runner.store.db import Database
    from runner.store.fast import FastWrites, WriteStatements
    from runner.store.reads import StoredGame

__all__ = ["LiteDatabase", "LitePreparation", "NeedsSession", "compiled_statements", "prepared"]

_T = TypeVar("_T")


class NeedsSession(Exception):
    """A preparation needs what only SQLAlchemy's way does (a forced change of configuration):
    the sqlite3 transaction is rolled back and the preparation done again that way."""


class LiteDatabase:
    """A SQLite file at this version's schema, as a run opens it without SQLAlchemy."""

    def __init__(self, url: str, path: Path) -> None:
        self.url = url
        """The database URL."""
        self.path = path
        """The SQLite file."""
        self.watch = FileWatch(path)
        """The file's watch (`runner.store.guard`), shared with the store's other ways."""

    @classmethod
    def open(cls, url: str) -> LiteDatabase | None:
        """The file `url` names, its schema created if it has none; None when it cannot be
        opened this way (not a SQLite file, ``RUNNER_SQLALCHEMY=1``, another revision, a
        file that is no database: SQLAlchemy's way then says or does what is needed)."""
        path = sqlite_file(url)
        if path is None or not enabled():
            return None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(path, isolation_level=None)
        except (OSError, sqlite3.Error):
            return None
        try:
            for pragma in sqlite_pragmas():
                retry_when_locked(connection, pragma, LOCK_TIMEOUT_MS / 1000)
            if stored_revision(connection) == SCHEMA_REVISION:
                return cls(url, path)
            with migration_lock(path):
                created = create_from_script(connection, SCRIPT.read_text(encoding="utf-8"))
            return cls(url, path) if created else None
        except (OSError, sqlite3.Error):
            return None
        finally:
            connection.close()


def compiled_statements(database: Callable[[], Database],
                        cache: Path | None = None) -> WriteStatements | None:
    """The statements of `runner.store.fast` and of this module compiled for SQLite, from
    the cache at `cache` (None: the user's cache directory) when it holds this version's,
    else compiled in a session of `database()` (SQLAlchemy loaded: once per installed
    version) and cached; None: they cannot be compiled."""
    from runner.store.fast import cache_key, default_cache, load, save

    key = cache_key()
    if key is None:
        return None
    cache = default_cache() if cache is None else cache
    found = None if cache is None else load(cache, key)
    if found is None:
        from runner.store.recording import compile_writes

        with database().session() as session:
            found = compile_writes(session, key)
        if found is not None and cache is not None:
            save(cache, found)
    return found


def prepared(lite: LiteDatabase, statements: WriteStatements, pragmas: Sequence[str],
             work: Callable[[LitePreparation], _T], *, immediate: bool = False) -> _T:
    """`work`'s answer, given a `LitePreparation` in one sqlite3 transaction on `lite`'s file
    (with `immediate`, under the database's write lock from its start): committed when it
    returns, rolled back whole when it raises."""
    from runner.store.fast import FastWrites

    writes = FastWrites(lite.path, statements, pragmas, lite.watch)
    try:
        with writes.transaction(immediate=immediate):
            return work(LitePreparation(writes))
    finally:
        writes.close()


class LitePreparation:
    """`runner.store.preparing.Preparation` on sqlite3, in the transaction `writes` holds."""

    def __init__(self, writes: FastWrites) -> None:
        self._writes = writes

    def _tournament(self, name: str, values: Mapping[str, Any]) -> StoredTournament | None:
        for row in self._writes.rows(name, values):
            return StoredTournament(id=row["id"], name=row["name"], origin=row["origin"],
                                    status=row["status"], fingerprint=row["fingerprint"],
                                    config=dict(row["config"]), total_games=row["total_games"])
        return None

    def tournament(self, tournament_id: int) -> StoredTournament | None:
        """The tournament of that id (None: no such tournament)."""
        return self._tournament("tournament", {"row_tournament": tournament_id})

    def newest_named(self, name: str, origin: str | None) -> StoredTournament | None:
        """The newest tournament called `name` that `origin` owns (None: the command line)."""
        if origin is None:
            return self._tournament("named_here", {"row_name": name})
        return self._tournament("named", {"row_name": name, "row_origin": origin})

    def create(self, *, name: str, config: dict[str, Any], fingerprint: str,
               engines: Sequence[EngineRowValues], total_games: int,
               origin: str | None) -> int:
        """A new tournament with its engines (configuration stored without credentials); its
        id."""
        from runner.store.rows import engine_values, tournament_values  # the rules: a run's

        cursor = self._writes.run("insert_tournament", tournament_values(
            name=name, config=config, fingerprint=fingerprint, total_games=total_games,
            origin=origin))
        assert cursor.lastrowid is not None
        tournament_id = int(cursor.lastrowid)
        for engine in engines:
            self._writes.run("insert_engine", engine_values(tournament_id, engine))
        return tournament_id

    # -- the lease ---------------------------------------------------------------------------

    def _holder(self, tournament_id: int) -> Holder | None:
        for row in self._writes.rows("lease_find", {"lease_tournament": tournament_id}):
            return holder(SimpleNamespace(**row))
        return None

    def take_lease(self, tournament_id: int, owner: str, timeout: float) -> None:
        """Hold the tournament's lease for `owner` (LeaseHeldError: a live runner has it), as
        `runner.store.lease.acquire` does."""
        previous = self._holder(tournament_id)
        if previous is not None and previous.owner != owner and not previous.stale():
            raise LeaseHeldError(tournament_id, previous)
        values = lease_values(owner, timeout)
        if previous is None:
            self._writes.run("lease_insert", {"tournament_id": tournament_id, **values})
        else:
            self._writes.run("lease_update", {"lease_tournament": tournament_id, **values})
        LIVE.add(owner)

    def check_free(self, tournament_id: int, owner: str) -> None:
        """LeaseHeldError when a live runner other than `owner` holds the lease."""
        previous = self._holder(tournament_id)
        if previous is not None and previous.owner != owner and not previous.stale():
            raise LeaseHeldError(tournament_id, previous)

    # -- continuing ----------------------------------------------------------------------------

    def reopen(self, tournament_id: int) -> int:
        """Mark the tournament running again and its games left running to be played again;
        how many such games there were."""
        self._writes.run("reopen", {"row_tournament": tournament_id})
        return self._writes.run("reset_unfinished", {"row_tournament": tournament_id}).rowcount

    def replace_config(self, tournament_id: int, *, config: dict[str, Any], fingerprint: str,
                       total_games: int, engines: Sequence[EngineRowValues]) -> None:
        """A forced change: SQLAlchemy's way (`NeedsSession`)."""
        raise NeedsSession

    def played_rows(self, tournament_id: int) -> list[PlayedRow]:
        """A forced change's question: SQLAlchemy's way (`NeedsSession`)."""
        raise NeedsSession

    def replan(self, tournament_id: int,
               placements: Mapping[int, Placement | None]) -> tuple[int, int]:
        """A forced change's re-planning: SQLAlchemy's way (`NeedsSession`)."""
        raise NeedsSession

    def finished_job_keys(self, tournament_id: int) -> set[int]:
        """The schedule indexes of the games stored as played."""
        return {row["job_index"]
                for row in self._writes.rows("finished_jobs", {"row_tournament": tournament_id})}

    def games(self, tournament_id: int) -> Iterator[StoredGame]:
        """The tournament's played games in schedule order, streamed."""
        for row in self._writes.rows("played_games", {"row_tournament": tournament_id}):
            # Imported with the first game read back (a resumed run's scoreboard): a new
            # tournament has none, and its start-up need not build the read records.
            from runner.store.reads import stored_game

            yield stored_game(row)

