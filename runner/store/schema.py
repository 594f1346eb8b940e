"""The schema's version and a new SQLite file's schema, without SQLAlchemy or alembic.

`SCHEMA_REVISION` is the newest migration's revision (`runner.store.db` re-exports it).
A run on a SQLite file starts without SQLAlchemy (issue 38: importing it was about 40% of a
run's start-up), so a new file's schema is built here from ``sqlite_schema.sql``: the
``CREATE`` statements of ``sqlite_master`` of a database the migrations built, in their order,
with the revision they were taken at. tests/test_schema_script.py proves it (a database made
each way has the same ``sqlite_master`` and the revision alembic's head) and writes it again
(``python -m tests.test_schema_script --write``) after a new migration. A database at an
older revision is still upgraded by alembic (`runner.store.db.upgrade`).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

__all__ = ["ENV_VAR", "LOCK_TIMEOUT_MS", "SCHEMA_REVISION", "SCRIPT", "create_from_script", "enabled",
           "migration_lock", "script_revision", "sqlite_file", "sqlite_pragmas", "stored_revision"]

SCHEMA_REVISION = "e5b7c3d9a184"
"""The newest migration's revision (a test keeps it equal to alembic's head). A database
already there is opened as it is, and an empty one is created from the models (or, on a
SQLite file, from `SCRIPT`) and stamped with it, both without loading alembic (a fresh
database through alembic costs a command about 0.13 s of CPU more): a new migration must
move this constant with it, and write `SCRIPT` again."""
LOCK_TIMEOUT_MS = 30_000
"""How long a statement waits for a lock another connection holds before failing (SQLite's
busy timeout, PostgreSQL's ``lock_timeout``); the failure then ends the run with its cause."""
ENV_VAR = "RUNNER_SQLALCHEMY"
"""Set to 1: every statement goes through SQLAlchemy, as before `runner.store.fast` and
`runner.store.lite` (for comparing)."""
SCRIPT = Path(__file__).with_name("sqlite_schema.sql")
"""The DDL of a new SQLite database at `script_revision`."""
_REVISION_LINE = "-- revision: "


def sqlite_pragmas(lock_ms: float = LOCK_TIMEOUT_MS) -> list[str]:
    """The settings every SQLite connection of the store runs first, in order (the journal
    mode tried again while another connection switches it: `runner.store.quick`), with a
    busy timeout of `lock_ms`."""
    return [f"PRAGMA busy_timeout={int(lock_ms)}", "PRAGMA foreign_keys=ON",
            "PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL"]


def enabled(env: Mapping[str, str] | None = None) -> bool:
    """Whether the store may take sqlite3's way (not when ``RUNNER_SQLALCHEMY=1``)."""
    return (os.environ if env is None else env).get(ENV_VAR, "") in ("", "0")


def sqlite_file(url: str) -> Path | None:
    """The file a ``sqlite:///`` URL names; None for any other database (PostgreSQL, in
    memory, a URI with options), which keeps SQLAlchemy's way."""
    for prefix in ("sqlite:///", "sqlite+pysqlite:///"):
        if url.startswith(prefix):
            path = url[len(prefix):]
            if path and path != ":memory:" and "?" not in path and not path.startswith("file:"):
                return Path(path).expanduser()
    return None


def script_revision(text: str) -> str | None:
    """The revision a schema script was taken at (its first line), None when it says none."""
    first = text.split("\n", 1)[0]
    return first[len(_REVISION_LINE):].strip() if first.startswith(_REVISION_LINE) else None


def stored_revision(connection: sqlite3.Connection) -> str | None:
    """The single revision in ``alembic_version`` (None: no such table, no row, several)."""
    try:
        rows = connection.execute("SELECT version_num FROM alembic_version").fetchall()
    except sqlite3.OperationalError:
        return None
    return str(rows[0][0]) if len(rows) == 1 else None


@contextmanager
def migration_lock(database: Path) -> Iterator[None]:
    """An exclusive flock on the SQLite file's directory, serialising schema work between
    processes (not on the file itself: closing another descriptor of the file would drop
    SQLite's own POSIX locks)."""
    try:
        directory: int | None = os.open(database.expanduser().resolve().parent, os.O_RDONLY)
    except OSError:  # an unreadable directory: opening the database will say what is wrong
        directory = None
    try:
        if directory is not None:
            fcntl.flock(directory, fcntl.LOCK_EX)
        yield
    finally:
        if directory is not None:
            os.close(directory)  # releases the lock


def create_from_script(connection: sqlite3.Connection, script: str) -> bool:
    """In `connection` (autocommit mode, its pragmas run), create the schema of `script` and
    stamp its revision when the database holds no table: True when the database is at
    `SCHEMA_REVISION` afterwards (made here, or found so), False when it holds tables at
    another revision (alembic's upgrade's work) or the script is not this version's. The
    caller holds `migration_lock`; the check and the creation are one immediate transaction,
    so of two processes one creates and the other finds it done."""
    if script_revision(script) != SCHEMA_REVISION:
        return False
    statements = [part.strip() for part in script.split(";\n") if part.strip()]
    connection.execute("BEGIN IMMEDIATE")
    try:
        tables = connection.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]
        if tables:
            connection.execute("ROLLBACK")
            return stored_revision(connection) == SCHEMA_REVISION
        for statement in statements:
            lines = [line for line in statement.splitlines() if not line.startswith("--")]
            if lines:
                connection.execute("\n".join(lines))
        connection.execute("INSERT INTO alembic_version (version_num) VALUES (?)",
                           (SCHEMA_REVISION,))
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
    return True
