"""Opening a results database: URL resolution, engine set-up, and schema creation or upgrade.

The URL comes from, in order: an explicit ``--db URL``, the ``RUNNER_DB`` environment variable,
then ``sqlite:///runner.db`` in the working directory. A bare file path is taken as a SQLite
file. SQLite connections run in WAL mode with foreign keys enforced; any other SQLAlchemy URL
(``postgresql+psycopg://...``) is used as given.

Opening brings the schema to the newest revision, paying for alembic only when there is
migrating to do. A database already at `SCHEMA_REVISION` is opened as it is. A database with
no tables at all (a new file, a new PostgreSQL database) is built the way alembic's cookbook
builds an up-to-date database from scratch: the tables are created from the models' metadata
and the head revision is stamped in ``alembic_version``, in one transaction, without importing
alembic (importing it and running every migration cost the first ``runner match`` on a new
file about 0.13 s of CPU). Anything else (tables but no stamp, an older revision) goes
through alembic's upgrade. A test keeps the two ways' schemas equal on SQLite and PostgreSQL.

Migrations are found next to the source tree (``<repo>/migrations``, editable installs and
checkouts) or, for a normal ``pip install``, in the copy the wheel ships as data files under
``<prefix>/share/cecp-runner/migrations``.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import sysconfig
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, cast

from sqlalchemy import (
    Column,
    Engine,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    create_engine,
    event,
    insert,
    inspect,
    select,
    text,
)
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError
from sqlalchemy.orm import Session, sessionmaker

from runner.store import schema
from runner.store.guard import FileWatch
from runner.store.models import Base
from runner.store.schema import LOCK_TIMEOUT_MS, SCHEMA_REVISION, migration_lock
from runner.store.urls import database_failure, redact, safe_url, scrub_credentials

__all__ = [
    "checked_url",
    "DEFAULT_URL",
    "ENV_VAR",
    "SCHEMA_REVISION",
    "Database",
    "MigrationsNotFoundError",
    "UnknownRevisionError",
    "alembic_config",
    "create_db_engine",
    "create_if_empty",
    "current_revision",
    "database_failure",
    "file_watch",
    "head_revision",
    "migrations_dir",
    "open_database",
    "resolve_url",
    "redact",
    "safe_url",
    "scrub_credentials",
    "sqlite_pragmas",
    "upgrade",
]

DEFAULT_URL = "sqlite:///runner.db"
ENV_VAR = "RUNNER_DB"
IDLE_IN_TRANSACTION_MS = 20_000
"""PostgreSQL ends a session left idle this long inside a transaction that writes under a
lease (runner.store.lease): a runner paused (^Z, a suspended host) in the middle of such a
write would otherwise keep its locks, the lease row's among them, for as long as it sleeps,
and the runner taking over would wait for them in vain. Less than `LOCK_TIMEOUT_MS`, so the
taker's wait outlasts it; those transactions run their statements back to back. Reads are
left alone: an export streaming to a slow pipe may idle as long as it likes."""
_MIGRATION_LOCK_KEY = 0x72756E6E6572  # "runner": PostgreSQL advisory lock serialising upgrades
_DISTRIBUTION = "cecp-runner"
_MARKER = "cecp-runner migrations"
"""A string every genuine ``migrations/env.py`` of ours contains."""
_VERSION_TABLE = Table(
    "alembic_version", MetaData(),
    Column("version_num", String(32), nullable=False),
    PrimaryKeyConstraint("version_num", name="alembic_version_pkc"),
)
"""Alembic's version table, defined as alembic itself defines it (its default
``version_table_impl``), so that a database stamped here is one alembic recognises."""


class MigrationsNotFoundError(FileNotFoundError):
    """The alembic scripts are in neither the source tree nor the installed data files."""


class UnknownRevisionError(RuntimeError):
    """The database's schema is at a revision none of this runner's migrations knows (a newer
    runner wrote it): nothing is migrated nor written."""

    def __init__(self, revision: str) -> None:
        from runner import __version__

        self.revision = revision
        super().__init__(
            f"its schema is at revision {revision}, which this runner (cecp-runner "
            f"{__version__}, schema {SCHEMA_REVISION}) does not know: a newer runner wrote "
            "it. Nothing was changed; use that runner's version (pip install -U cecp-runner) "
            "or another database")


def _known_revision(revision: str) -> bool:
    """Whether one of the migrations is `revision` (alembic loaded: only a database at another
    revision than `SCHEMA_REVISION` comes here)."""
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    try:
        return ScriptDirectory.from_config(alembic_config()).get_revision(revision) is not None
    except CommandError:
        return False


def resolve_url(url: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The database URL to use: `url`, else ``RUNNER_DB`` in `env` (default os.environ), else
    ``./runner.db``. A value without ``://`` is a SQLite file path."""
    environ = os.environ if env is None else env
    chosen = url or environ.get(ENV_VAR) or DEFAULT_URL
    if "://" not in chosen:
        chosen = f"sqlite:///{Path(chosen).expanduser()}"
    make_url(chosen)  # raises ArgumentError on nonsense, before anything is opened
    return chosen


def _is_sqlite(url: str) -> bool:
    """Whether a URL names a SQLite database."""
    return make_url(url).get_backend_name() == "sqlite"


def sqlite_pragmas() -> list[str]:
    """The settings every SQLite connection of the store runs first, in order, with this
    module's `LOCK_TIMEOUT_MS` (`runner.store.schema.sqlite_pragmas`)."""
    return schema.sqlite_pragmas(LOCK_TIMEOUT_MS)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    """Per-connection SQLite settings: WAL journal, foreign keys, a patient busy handler."""
    cursor = dbapi_connection.cursor()
    try:
        # The busy timeout first: switching to WAL needs a lock another process may hold.
        for pragma in sqlite_pragmas():
            if "journal_mode" in pragma:
                _switch_to_wal(cursor)
            else:
                cursor.execute(pragma)
    finally:
        cursor.close()


def _switch_to_wal(cursor: Any) -> None:
    """Put the database in WAL mode. Two connections switching a new database at the same
    instant: SQLite fails one at once with "database is locked", without waiting for the
    busy timeout, so that one tries again (the other's switch done, it is a no-op)."""
    from runner.store.quick import retry_when_locked  # only SQLite connections come here

    retry_when_locked(cursor, "PRAGMA journal_mode=WAL", LOCK_TIMEOUT_MS / 1000)


def _postgresql_settings(dbapi_connection: Any, _record: Any) -> None:
    """Per-connection PostgreSQL settings: give up on a lock held longer than the timeout
    (the default waits for ever) instead of hanging the run."""
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"SET lock_timeout = {int(LOCK_TIMEOUT_MS)}")
    finally:
        cursor.close()
    dbapi_connection.commit()


def file_watch(url: str) -> FileWatch | None:
    """A watch on the SQLite file `url` names (None for any other database: PostgreSQL, in
    memory, a URI), for `create_db_engine` and the writer's own connection to share."""
    if not _is_sqlite(url):
        return None
    database = make_url(url).database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return FileWatch(Path(database))


def _watch(engine: Engine, watch: FileWatch) -> None:
    """Refuse every commit once the SQLite file is no longer the one opened (deleted or
    replaced by another: `runner.store.guard`), saving what it holds."""

    def connected(_dbapi_connection: Any, record: Any) -> None:
        record.info["runner_file"] = watch.connected()

    def committing(connection: Connection) -> None:
        raw = connection.connection.dbapi_connection
        if raw is not None:  # pysqlite's connection: a sqlite3.Connection
            watch.check(cast("sqlite3.Connection", raw), connection.info.get("runner_file"))

    event.listen(engine, "connect", connected)
    event.listen(engine, "commit", committing)


def create_db_engine(url: str, *, watch: FileWatch | None = None, **kwargs: Any) -> Engine:
    """A SQLAlchemy engine for `url`, with SQLite tuned for one writer and many readers;
    with `watch` (from `file_watch`), its commits check that the file is still there."""
    if _is_sqlite(url):
        database = make_url(url).database
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, **kwargs)
        event.listen(engine, "connect", _sqlite_pragmas)
        if watch is not None:
            _watch(engine, watch)
        return engine
    engine = create_engine(url, pool_pre_ping=True, **kwargs)
    if engine.dialect.name == "postgresql":
        event.listen(engine, "connect", _postgresql_settings)
    return engine


def migrations_dir() -> Path:
    """Where the alembic environment (env.py, versions/) lives for this installation."""
    source = Path(__file__).resolve().parents[2] / "migrations"
    if _is_ours(source):
        return source
    for candidate in _installed_candidates():
        if _is_ours(candidate):
            return candidate
    raise MigrationsNotFoundError(
        f"cannot find the database migrations: looked in {source} and in the data files of "
        f"the installed {_DISTRIBUTION} distribution")


def _is_ours(directory: Path) -> bool:
    """Whether `directory` holds this project's alembic environment."""
    env = directory / "env.py"
    try:
        return (directory / "versions").is_dir() and _MARKER in env.read_text(encoding="utf-8")
    except OSError:
        return False


def _installed_candidates() -> Iterator[Path]:
    """Possible homes of the migrations shipped as wheel data files."""
    try:
        files = metadata.distribution(_DISTRIBUTION).files or []
    except metadata.PackageNotFoundError:
        files = []
    for item in files:
        parts = item.parts
        if parts[-2:] == ("migrations", "env.py") and "cecp-runner" in parts:
            yield Path(str(item.locate())).resolve().parent
    for base in (sysconfig.get_path("data"), sys.prefix):
        yield Path(base) / "share" / _DISTRIBUTION / "migrations"


def alembic_config(url: str | None = None, connection: Connection | None = None) -> Any:
    """An alembic Config built in code (no alembic.ini needed), for a URL or a connection."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    if url is not None:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema of `engine`'s database up to `revision` (default: the newest).

    Two processes opening a fresh database at once must not both create its tables: the
    upgrade runs under a lock (an advisory lock on PostgreSQL, an flock on the SQLite file's
    directory) and alembic, reading the revision inside it, finds the work already done.
    """
    from alembic import command

    with _migration_lock(engine), engine.begin() as connection:
        _advisory_lock(connection)
        command.upgrade(alembic_config(connection=connection), revision)


def create_if_empty(engine: Engine) -> bool:
    """Create the newest schema in a database without any table, without alembic: the tables
    from the models, then ``alembic_version`` holding `SCHEMA_REVISION` (alembic's recipe for
    a new database: create all, then stamp head). True when the database is at
    `SCHEMA_REVISION` afterwards (created here, or by another process meanwhile); False when
    it holds tables but is not at that revision, which is alembic's upgrade's work.

    The check runs under the same locks as `upgrade`, in the transaction that creates, so of
    two processes creating one database at once one creates it and the other finds it done.
    """
    with _migration_lock(engine), engine.begin() as connection:
        if connection.dialect.name == "sqlite":
            # pysqlite runs DDL outside any transaction unless one is begun explicitly; an
            # immediate one also takes the write lock before the check.
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        _advisory_lock(connection)
        tables = inspect(connection).get_table_names()
        if tables:
            return (_VERSION_TABLE.name in tables
                    and _read_revision(connection) == SCHEMA_REVISION)
        Base.metadata.create_all(connection, checkfirst=False)
        _VERSION_TABLE.create(connection, checkfirst=False)
        connection.execute(insert(_VERSION_TABLE).values(version_num=SCHEMA_REVISION))
    return True


def _advisory_lock(connection: Connection) -> None:
    """On PostgreSQL, wait for the transaction-scoped advisory lock serialising schema work
    (the SQLite file's lock is `_migration_lock`)."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                           {"key": _MIGRATION_LOCK_KEY})


@contextmanager
def _migration_lock(engine: Engine) -> Iterator[None]:
    """For a SQLite file, hold an exclusive flock on its directory (not on the database file
    itself: closing another descriptor of that file would drop SQLite's own POSIX locks)."""
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    if not database or database == ":memory:" or database.startswith("file:"):
        yield
        return
    with migration_lock(Path(database)):
        yield


def _stored_revision(engine: Engine) -> str | None:
    """The revision recorded in ``alembic_version``, read with a plain query (no alembic);
    None when the table is missing or holds anything but a single revision."""
    try:
        with engine.connect() as connection:
            return _read_revision(connection)
    except DBAPIError:
        return None


def _read_revision(connection: Connection) -> str | None:
    """The single revision in ``alembic_version`` (None: no row, or several); raises when
    the table is missing."""
    rows = connection.execute(select(_VERSION_TABLE.c.version_num)).scalars().all()
    return rows[0] if len(rows) == 1 else None


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at (None for an empty database)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str | None:
    """The newest revision the migrations provide."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


@dataclass
class Database:
    """An open results database: its engine and a session factory."""

    url: str
    engine: Engine
    sessions: sessionmaker[Session]
    watch: FileWatch | None = None
    """The SQLite file's watch (`runner.store.guard`), None for other databases."""

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session whose transaction commits on success and rolls back on error."""
        with self.sessions.begin() as session:
            yield session

    def close(self) -> None:
        """Release every pooled connection."""
        self.engine.dispose()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def open_database(url: str | None = None, *, env: Mapping[str, str] | None = None,
                  migrate: bool = True, **engine_kwargs: Any) -> Database:
    """Open the database that `url`/``RUNNER_DB``/default names, by default bringing its
    schema to `SCHEMA_REVISION`: created without alembic when it has no tables, upgraded by
    alembic when it is behind."""
    resolved = resolve_url(url, env)
    watch = file_watch(resolved)
    engine = create_db_engine(resolved, watch=watch, **engine_kwargs)
    if migrate and (stored := _stored_revision(engine)) != SCHEMA_REVISION:
        if stored is not None and not _known_revision(stored):
            engine.dispose()
            raise UnknownRevisionError(stored)
        if not create_if_empty(engine):
            upgrade(engine)
    return Database(resolved, engine, sessionmaker(engine, expire_on_commit=False), watch)


def checked_url(value: str, where: str) -> tuple[str, Path | None]:
    """A ``scheme://`` value parsed by SQLAlchemy, its database kind loadable: the URL and,
    for a SQLite file, its path. ValueError names `where` the value came from, its password
    hidden."""
    shown = redact(value)
    try:
        url = make_url(value)
    except (ArgumentError, ValueError) as exc:
        raise ValueError(f"{where} {shown!r} is not a valid database URL: "
                           f"{redact(str(exc))}") from None
    try:
        url.get_dialect()
    except NoSuchModuleError:
        raise ValueError(f"{where} {shown!r}: unknown database kind {url.drivername!r} "
                           "(sqlite:///FILE, or postgresql+psycopg://... with the [postgres] "
                           "extra)") from None
    except ImportError as exc:
        raise ValueError(f"{where} {shown!r}: the driver for {url.drivername!r} is not "
                           f"installed ({exc})") from None
    try:  # the driver module itself: SQLAlchemy imports it only when connecting
        url.get_dialect().import_dbapi()
    except ImportError as exc:
        if url.drivername == "postgresql+psycopg":
            raise ValueError(f"{where} {shown!r} needs the postgres extra ({exc.name} is "
                               "missing): pip install 'cecp-runner[postgres]'") from None
        raise ValueError(f"{where} {shown!r}: the driver for {url.drivername!r} is not "
                           f"installed ({exc.name} is missing); the runner stores games in "
                           "sqlite:///FILE or postgresql+psycopg://... (the [postgres] extra)"
                           ) from None
    if url.get_backend_name() != "sqlite":
        return value, None
    if url.host or url.port or url.username:
        raise ValueError(f"{where} {shown!r}: a SQLite URL names a file after three slashes "
                           "(sqlite:///relative.db, sqlite:////absolute/path.db)")
    database = url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return value, None
    return value, Path(database).expanduser()
