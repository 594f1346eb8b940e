"""The stored DDL of a new SQLite database (runner/store/sqlite_schema.sql) is what the
migrations build: the same ``sqlite_master``, stamped with alembic's head.

After a new migration: ``python -m tests.test_schema_script --write`` writes the script again.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from runner.store.db import create_db_engine, head_revision, upgrade
from runner.store.schema import SCHEMA_REVISION, SCRIPT, create_from_script, script_revision


def _master(path: Path) -> list[tuple[str, str, str, str]]:
    """Every schema object of the SQLite file `path` with its SQL, in creation order."""
    connection = sqlite3.connect(path)
    try:
        return connection.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL "
            "AND name NOT LIKE 'sqlite_%' ORDER BY rowid").fetchall()
    finally:
        connection.close()


def _migrated(path: Path) -> Path:
    """A new SQLite file at `path` brought to the head by alembic's migrations, one by one."""
    engine = create_db_engine(f"sqlite:///{path}")
    try:
        upgrade(engine)
    finally:
        engine.dispose()
    return path


def script_text(path: Path) -> str:
    """The schema script of the database the migrations built at `path`."""
    rows = _master(path)
    body = "".join(f"-- {kind} {name}\n{sql};\n" for kind, name, _table, sql in rows)
    return f"-- revision: {head_revision()}\n{body}"


def _scripted(path: Path) -> Path:
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        assert create_from_script(connection, SCRIPT.read_text(encoding="utf-8"))
    finally:
        connection.close()
    return path


def test_the_script_builds_what_the_migrations_build(tmp_path: Path) -> None:
    migrated = _migrated(tmp_path / "migrated.db")
    scripted = _scripted(tmp_path / "scripted.db")
    assert _master(scripted) == _master(migrated)
    assert SCRIPT.read_text(encoding="utf-8") == script_text(migrated), (
        "runner/store/sqlite_schema.sql is stale: python -m tests.test_schema_script --write")
    stamped = sqlite3.connect(scripted).execute("SELECT version_num FROM alembic_version")
    assert stamped.fetchall() == [(head_revision(),)] == [(SCHEMA_REVISION,)]
    assert script_revision(SCRIPT.read_text(encoding="utf-8")) == SCHEMA_REVISION


def test_a_database_with_tables_is_left_to_alembic(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
        connection.execute("INSERT INTO alembic_version VALUES ('0000older')")
        assert not create_from_script(connection, SCRIPT.read_text(encoding="utf-8"))
        assert connection.execute("SELECT count(*) FROM sqlite_master").fetchone() == (1,)
        # A script of another revision creates nothing either.
        empty = sqlite3.connect(tmp_path / "empty.db", isolation_level=None)
        assert not create_from_script(empty, "-- revision: 0000older\nCREATE TABLE x (y);\n")
        assert empty.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)
        empty.close()
    finally:
        connection.close()


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m tests.test_schema_script --write")
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        SCRIPT.write_text(script_text(_migrated(Path(scratch) / "migrated.db")),
                          encoding="utf-8")
    print(f"wrote {SCRIPT}")
