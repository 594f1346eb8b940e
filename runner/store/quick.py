"""``runner list`` without SQLAlchemy: the store's own statements, compiled once, run by sqlite3.

Importing SQLAlchemy (and its ORM, and the models) is most of what listing a SQLite database
cost (issue 30: 0.42 s of a command asked to start in 0.15 s). The statements stay defined once,
in `runner.store.queries` (`list_statements`); the first ``runner list`` of a database compiles
them for SQLite with their values written in (`Store.list_reads`), and this module keeps that
text in a cache file, with what the rows' columns hold (a stored time, a status). The next
``runner list`` reads the cache, opens the file read-only with the standard library's sqlite3
and builds the very records the store answers in (`runner.store.records`).

The cache is keyed by the sources of the store's modules and SQLAlchemy's version, so a
changed statement or schema is compiled again; a database at another schema revision, a read
that fails, or anything unexpected answers None and the caller takes the store's usual way,
with its migrations and its messages.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from importlib.util import find_spec
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from runner.store.records import GameStatus, TournamentStatus, holder, utc

if TYPE_CHECKING:
    from runner.store.reads import TournamentProgress

__all__ = ["ListReads", "cache_key", "load", "quick_list", "read_cache", "read_list",
           "retry_when_locked", "save", "write_cache"]

_SOURCES = ("db.py", "lease.py", "models.py", "origin.py", "queries.py", "quick.py",
            "reads.py", "records.py", "store.py")
"""The modules whose code shapes the statements and their rows (this one included)."""
_ENUMS = {kind.__name__: kind for kind in (GameStatus, TournamentStatus)}
_FORMAT = 1
"""The layout of the cache file (bumped when `ListReads` changes)."""


@dataclass(frozen=True)
class ListReads:
    """The compiled statements of a tournament list, and how to read their columns."""

    key: str
    """`cache_key` when they were compiled."""
    revision: str
    """The schema revision they were compiled for."""
    statements: dict[str, str]
    """SQL by name: holders, progress, failures (`runner.store.queries.list_statements`)."""
    columns: dict[str, dict[str, str]]
    """By statement, what a column holds when it is not read as it is: "utc" (a stored time)
    or an enum's name (`GameStatus`, `TournamentStatus`), by column label."""


def cache_key() -> str | None:
    """A digest of the store's sources and SQLAlchemy's version (None: one cannot be read)."""
    digest = hashlib.sha256(f"{_FORMAT}".encode())
    here = Path(__file__).parent
    try:
        for name in _SOURCES:
            digest.update((here / name).read_bytes())
        spec = find_spec("sqlalchemy")
        origin = Path(spec.origin) if spec is not None and spec.origin else None
        if origin is None:
            return None
        stat = origin.stat()
        digest.update(f"{origin}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    except (OSError, ValueError, ImportError):
        return None
    return digest.hexdigest()


def load(path: Path, key: str) -> ListReads | None:
    """The statements cached at `path` when they were compiled for `key` (None: no such file,
    another key, or a file this version does not read)."""
    data = read_cache(path)
    try:
        reads = ListReads(**data) if data is not None else None
    except TypeError:
        return None
    return reads if reads is not None and reads.key == key else None


def save(path: Path, reads: ListReads) -> None:
    """Write `reads` to `path` whole (a temporary file renamed): two commands writing at once
    leave one complete file. A cache that cannot be written is not an error: the next list
    compiles again."""
    write_cache(path, asdict(reads))


def read_cache(path: Path) -> dict[str, Any] | None:
    """The JSON object of a cache file (None: no such file, or not a JSON object)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_cache(path: Path, data: dict[str, Any]) -> None:
    """Write a cache file whole (a temporary file renamed), so that two commands writing at
    once leave one complete file; a cache that cannot be written is not an error."""
    import tempfile  # here: only a command that compiles writes

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent,
                                         prefix=path.name, suffix=".tmp", delete=False) as out:
            json.dump(data, out)
        os.replace(out.name, path)
    except OSError:
        return


def _rows(connection: sqlite3.Connection, reads: ListReads,
          name: str) -> list[tuple[Any, list[Any]]]:
    """Each row of the statement `name`: its labelled columns as attributes (as SQLAlchemy's
    rows have them, read as `reads.columns` says), and all its values in order."""
    columns = reads.columns.get(name, {})
    cursor = connection.execute(reads.statements[name])
    labels = [entry[0] for entry in cursor.description]
    found = []
    for values in cursor.fetchall():
        named = {}
        for label, value in zip(labels, values, strict=True):
            kind = columns.get(label)
            if value is not None and kind == "utc":
                value = utc(datetime.fromisoformat(value))
            elif value is not None and kind in _ENUMS:
                value = _ENUMS[kind](value)
            named[label] = value
        found.append((SimpleNamespace(**named), list(values)))
    return found


def read_list(db_file: Path, reads: ListReads) -> tuple[list[TournamentProgress],
                                                         dict[int, str]] | None:
    """Every tournament of the SQLite file `db_file` with its progress, oldest first, and the
    tournaments whose last run failed with why: what `Store.tournaments` and `Store.failures`
    answer. None when the database is not at `reads.revision` or cannot be read so."""
    # Here, not at the top: a run imports this module for `retry_when_locked` and the
    # statement cache, and never lists tournaments.
    from runner.store.reads import progress

    uri = f"file:{quote(str(db_file.resolve()))}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True)
        try:
            connection.execute("BEGIN")  # one snapshot for the three reads
            revisions = connection.execute("SELECT version_num FROM alembic_version").fetchall()
            if revisions != [(reads.revision,)]:
                return None
            holders = {row.tournament_id: holder(row)
                       for row, _ in _rows(connection, reads, "holders")}
            listed = [progress(row, values[-2], values[-1], holders)
                      for row, values in _rows(connection, reads, "progress")]
            failed = {row.id: row.reason
                      for row, _ in _rows(connection, reads, "failures")}
        finally:
            connection.close()
    except (sqlite3.Error, ValueError, KeyError, AttributeError, TypeError):
        return None
    return listed, failed


def quick_list(db_file: Path, cache: Path) -> tuple[list[TournamentProgress],
                                                     dict[int, str]] | None:
    """`read_list` of the SQLite file `db_file` with the statements `Store.remember_list`
    kept in `cache` for this version; None when there are none or they cannot answer (the
    caller then takes the store's way)."""
    key = cache_key()
    reads = None if key is None else load(cache, key)
    return None if reads is None else read_list(db_file, reads)


def retry_when_locked(cursor: sqlite3.Connection | sqlite3.Cursor, sql: str,
                      timeout: float) -> None:
    """Run `sql`; "database is locked" at once (two connections switching a new database to
    WAL at the same instant: SQLite fails one without waiting for the busy timeout) is tried
    again for up to `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            cursor.execute(sql)
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)
