"""The writer's per-game statements on a SQLite store, run by the standard library's sqlite3.

A run's writer thread stores a game's start and end under the lease (issue 30: about 2.2 ms
of CPU a game through SQLAlchemy's session and connection layers). The statements stay
defined once, in `runner.store.recording` and `runner.store.lease`; `compile_writes` there
turns them into SQLite text with named parameters, with what each parameter holds (a stored
time, a status) and the constants the statements carry, and this module keeps that in a
cache file keyed like `runner.store.quick`'s (the store's sources and SQLAlchemy's version).
`FastWrites` then runs them with sqlite3 on its own connection: every value from a game is
a bound parameter, never SQL text.

The rows are the ones SQLAlchemy writes: the values come from the same functions
(`runner.store.rows`) and are converted as SQLAlchemy's SQLite types convert them
(`_stored`). ``RUNNER_SQLALCHEMY=1`` in the environment takes SQLAlchemy's way for every
write (a test compares the two ways' rows). Which way a run's writes take is the store's
choice (`runner.store.writing`); this module imports nothing of SQLAlchemy's way.
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from runner.store.guard import FileWatch
from runner.store.quick import cache_key as _sources_key
from runner.store.quick import read_cache, retry_when_locked, write_cache
from runner.store.records import (
    DuplicateGameError,
    GameStatus,
    JobKey,
    LeaseLostError,
    TournamentStatus,
    forget,
)
from runner.store.rows import MOVE_KEYS, move_rows, running_values, schedule_values
from runner.store.schema import ENV_VAR, enabled, sqlite_file

if TYPE_CHECKING:
    from runner.game.record import GameRecord

__all__ = ["ENV_VAR", "FastWrites", "WriteStatements", "by_position", "cache_key",
           "default_cache", "enabled", "load", "save"]

_FORMAT = 3
"""The layout of the cache file (bumped when `WriteStatements` changes; 2: no pragmas; 3: a
run's preparation and close, read columns)."""
_EXTRA_SOURCES = ("fast.py", "lite.py", "recording.py", "resume.py", "rows.py", "schema.py",
                  "urls.py")
"""The modules shaping the writer's statements beyond those `runner.store.quick` keys on."""


def default_cache(env: Mapping[str, str] | None = None) -> Path | None:
    """Where the compiled statements are kept (``$XDG_CACHE_HOME/cecp-runner``, else
    ``~/.cache/cecp-runner``; None: no home directory)."""
    home = (os.environ if env is None else env).get("XDG_CACHE_HOME")
    try:
        base = Path(home) if home else Path.home() / ".cache"
    except RuntimeError:
        return None
    return base / "cecp-runner" / "writer-statements.json"


def cache_key() -> str | None:
    """`runner.store.quick.cache_key` with this module and the recording module added."""
    key = _sources_key()
    if key is None:
        return None
    digest = hashlib.sha256(f"{key}:{_FORMAT}".encode())
    here = Path(__file__).parent
    try:
        for name in _EXTRA_SOURCES:
            digest.update((here / name).read_bytes())
    except OSError:
        return None
    return digest.hexdigest()


@dataclass(frozen=True)
class WriteStatements:
    """The writer's statements compiled for SQLite, and how to bind their parameters."""

    key: str
    """`cache_key` when they were compiled."""
    revision: str
    """The schema revision they were compiled for."""
    statements: dict[str, str]
    """SQL by name (see `runner.store.recording.compile_writes`)."""
    kinds: dict[str, dict[str, str]]
    """By statement, the parameters that are converted before binding: "utc" (a time),
    "enum" (a status stored as its value), "bool" (stored as 0 or 1), "json" (stored as
    its JSON text, None as null) or "float"."""
    constants: dict[str, dict[str, Any]]
    """By statement, the parameters the statement itself carries (a status compared with,
    strftime's format), already converted."""
    columns: dict[str, dict[str, str]] = field(default_factory=dict)
    """By query, the columns read converted: "utc" (a stored time), "json", or the name of
    the enum a status is (`GameStatus`, `TournamentStatus`), by column label."""


def load(path: Path, key: str) -> WriteStatements | None:
    """The statements cached at `path` for `key` (None: no file, another key, unreadable)."""
    data = read_cache(path)
    try:
        statements = WriteStatements(**data) if data is not None else None
    except TypeError:
        return None
    return statements if statements is not None and statements.key == key else None


def save(path: Path, statements: WriteStatements) -> None:
    """Write the cache whole (a temporary file renamed); failing to is not an error."""
    write_cache(path, asdict(statements))


def _time(value: datetime) -> str:
    """A time as SQLAlchemy's SQLite DATETIME stores it: UTC, no zone, to the microsecond."""
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return (f"{value.year:04d}-{value.month:02d}-{value.day:02d} {value.hour:02d}:"
            f"{value.minute:02d}:{value.second:02d}.{value.microsecond:06d}")


def _stored(value: Any, kind: str | None) -> Any:
    """`value` as the column of `kind` binds it."""
    if kind == "json":  # None too: SQLAlchemy's JSON stores it as the JSON text null
        return json.dumps(value)
    if value is None or kind is None:
        return value
    if kind == "utc":
        return _time(value)
    if kind == "enum" and isinstance(value, enum.Enum):
        return value.value
    if kind == "bool":
        return int(bool(value))
    if kind == "float":
        return float(value)
    return value


_PARAMETER = re.compile(r":(\w+)")


def by_position(sql: str, keys: Sequence[str]) -> tuple[str, list[int]] | None:
    """`sql` with its named parameters (``:name``) as ``?``, and for each, in order, the index
    of its name in `keys`; None when a name is not in `keys` or the text has a quote (a
    colon in a literal is not a parameter)."""
    if "'" in sql or '"' in sql:
        return None
    names = _PARAMETER.findall(sql)
    if not names or any(name not in keys for name in names):
        return None
    return _PARAMETER.sub("?", sql), [keys.index(name) for name in names]


def _read(value: Any, kind: str) -> Any:
    """A stored value of a column of `kind` (`WriteStatements.columns`) as SQLAlchemy reads
    it."""
    if value is None:
        return None
    if kind == "utc":
        return datetime.fromisoformat(value).replace(tzinfo=UTC)
    if kind == "json":
        return json.loads(value)
    if kind == "TournamentStatus":
        return TournamentStatus(value)
    if kind == "GameStatus":
        return GameStatus(value)
    return value


class FastWrites:
    """The writer's statements on its own sqlite3 connection (one thread uses it)."""

    def __init__(self, db_file: Path, statements: WriteStatements, pragmas: Sequence[str],
                 watch: FileWatch | None = None) -> None:
        """`pragmas`: the settings the connection runs first, as the store's own connections
        do (`runner.store.db.sqlite_pragmas`: the busy timeout among them). They are taken
        as they are now, not from the cache: a setting is not a statement of the schema.
        `watch`: the store's watch on the file (`runner.store.guard`), checked before each
        commit (a new one of this file's when not given)."""
        self.db_file = db_file
        self.statements = statements
        self.pragmas = tuple(pragmas)
        self.watch = watch or FileWatch(db_file)
        self._connection: sqlite3.Connection | None = None
        self._opened: tuple[int, int] | None = None
        # The moves' insert by position, worked out on a game's first moves (`_insert_moves`).
        self._moves_insert: tuple[str, list[int], list[tuple[int, str]]] | None = None

    @staticmethod
    def database_file(url: str) -> Path | None:
        """The file a ``sqlite:///`` URL names (`runner.store.schema.sqlite_file`)."""
        return sqlite_file(url)

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            uri = f"file:{quote(str(self.db_file.resolve()))}?mode=rw"
            # Autocommit mode: transactions are begun and ended here, explicitly.
            connection = sqlite3.connect(uri, uri=True, isolation_level=None,
                                         check_same_thread=False)
            self._opened = self.watch.connected()
            try:
                for pragma in self.pragmas:
                    # 30 s: as long as the store's busy timeout (runner.store.db.LOCK_TIMEOUT_MS).
                    retry_when_locked(connection, pragma, 30.0)
                revision = connection.execute("SELECT version_num FROM alembic_version")
                if revision.fetchall() != [(self.statements.revision,)]:
                    raise sqlite3.DatabaseError("the schema is not at the compiled revision")
            except BaseException:
                connection.close()
                raise
            self._connection = connection
        return self._connection

    def close(self) -> None:
        """Close the connection (the next write opens it again)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    @contextmanager
    def transaction(self, *, immediate: bool = False) -> Iterator[None]:
        """One transaction: committed when the block ends, rolled back whole when it raises;
        `immediate` takes the database's write lock at once (before anything is read)."""
        connection = self._connect()
        connection.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
        try:
            yield
        except BaseException:
            if connection.in_transaction:  # SQLite may have rolled back already (disk full)
                connection.execute("ROLLBACK")
            raise
        self.watch.check(connection, self._opened)  # not into a file deleted meanwhile
        connection.execute("COMMIT")

    def run(self, name: str, values: Mapping[str, Any]) -> sqlite3.Cursor:
        """Run the statement `name` with `values` converted as its columns store them."""
        return self._run(name, values)

    def rows(self, name: str, values: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """The rows of the query `name` by column label, read as `WriteStatements.columns`
        says (times in UTC, JSON decoded, statuses as their enums)."""
        cursor = self._run(name, values)
        labels = [entry[0] for entry in cursor.description]
        kinds = self.statements.columns.get(name, {})
        for found in cursor:
            row = dict(zip(labels, found, strict=True))
            for label, kind in kinds.items():
                row[label] = _read(row[label], kind)
            yield row

    def _run(self, name: str, values: Mapping[str, Any]) -> sqlite3.Cursor:
        kinds = self.statements.kinds.get(name, {})
        bound = {key: _stored(value, kinds.get(key)) for key, value in values.items()}
        bound.update(self.statements.constants.get(name, {}))
        return self._connect().execute(self.statements.statements[name], bound)

    # -- what the writer does in a transaction ----------------------------------------------------

    def heartbeat(self, tournament_id: int, owner: str) -> bool:
        """Refresh the lease (`runner.store.lease.heartbeat`); False when taken over."""
        cursor = self._run("heartbeat", {"lease_tournament": tournament_id,
                                         "lease_owner": owner})
        return cursor.rowcount > 0

    def release(self, tournament_id: int, owner: str) -> None:
        """`runner.store.lease.release`: the lease given up (only if `owner` still holds it)."""
        forget(owner)
        self._run("release", {"lease_tournament": tournament_id, "lease_owner": owner})

    def hold(self, tournament_id: int, owner: str) -> None:
        """`runner.store.lease.hold`: LeaseLostError when `owner` no longer holds the lease."""
        if not self.heartbeat(tournament_id, owner):
            raise LeaseLostError(tournament_id)

    def engine_ids(self, tournament_id: int) -> dict[str, int]:
        """`runner.store.recording.engine_ids`."""
        rows = self._run("engine_ids", {"row_tournament": tournament_id}).fetchall()
        return {name: ident for name, ident in rows}

    def _write_game(self, tournament_id: int, job: JobKey, values: dict[str, Any],
                    ids: Mapping[str, int] | None, done: bool) -> int:
        """`runner.store.recording._write_game`: insert or update the job's row."""
        found = self._run("find_game", {"row_tournament": tournament_id,
                                        "row_job": job.index}).fetchone()
        which = "done" if done else "running"
        if found is None:
            if ids is None or any(name not in ids for name in job.engines):
                ids = self.engine_ids(tournament_id)
            missing = [name for name in job.engines if name not in ids]
            if missing:
                raise ValueError(f"tournament {tournament_id} has no engine named "
                                 f"{missing[0]!r}")
            cursor = self._run(f"insert_{which}",
                               {**schedule_values(tournament_id, job, ids), **values})
            assert cursor.lastrowid is not None
            return int(cursor.lastrowid)
        if found[1] == GameStatus.DONE.value:
            raise DuplicateGameError(f"game {job.index} of tournament {tournament_id} is "
                                     "already played")
        self._run(f"update_{which}", {"row_id": found[0], **values})
        return int(found[0])

    def mark_running(self, tournament_id: int, job: JobKey,
                     engine_ids: Mapping[str, int] | None) -> int:
        """`runner.store.recording.mark_running`."""
        return self._write_game(tournament_id, job, running_values(), engine_ids, False)

    def record_game(self, tournament_id: int, job: JobKey, values: dict[str, Any],
                    moves: GameRecord, engine_ids: Mapping[str, int] | None,
                    game_id: int | None) -> int:
        """`runner.store.recording.record_game` with the row's `values` (`done_values`)."""
        if game_id is not None:
            updated = self._run("update_unplayed", {
                "row_id": game_id, "row_tournament": tournament_id, "row_job": job.index,
                **values})
            if updated.rowcount != 1:
                game_id = None
        if game_id is None:
            game_id = self._write_game(tournament_id, job, values, engine_ids, True)
        rows = move_rows(game_id, moves)
        if rows:
            self._insert_moves(rows)
        return game_id

    def _insert_moves(self, rows: list[list[Any]]) -> None:
        """Insert a game's moves (rows of `move_rows`), bound by position when the statement
        allows it (about a third less CPU than binding each row's dict by name), else by
        name. A move's columns are plain numbers and text: only the columns that have a kind
        (ponder_hit, stored as 0 or 1) are converted, in the rows made for this call."""
        kinds = self.statements.kinds.get("insert_moves", {})
        sql = self.statements.statements["insert_moves"]
        plan = self._moves_insert
        if plan is None:
            found = by_position(sql, MOVE_KEYS)
            if found is None:
                plan = ("", [], [])
            else:
                text, order = found
                names = [MOVE_KEYS[index] for index in order]
                plan = (text, order, [(names.index(key), kind) for key, kind in kinds.items()
                                      if key in names])
            self._moves_insert = plan
        text, order, converted = plan
        if not text:  # by name, the statement's way
            named = [dict(zip(MOVE_KEYS, row, strict=True)) for row in rows]
            by_name = [(key, kind) for key, kind in kinds.items() if key in MOVE_KEYS]
            for values in named if by_name else ():
                for key, kind in by_name:
                    values[key] = _stored(values[key], kind)
            self._connect().executemany(sql, named)
            return
        if order != list(range(len(MOVE_KEYS))):
            rows = [[row[index] for index in order] for row in rows]
        for row in rows if converted else ():
            for index, kind in converted:
                row[index] = _stored(row[index], kind)
        self._connect().executemany(text, rows)

