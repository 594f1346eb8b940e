"""Writing to the results database: tournaments, their engines, and finished games.

The tournament runner (the only writer) calls these with the game loop's own `GameRecord`
(and its PGN text) and a `JobKey` (where the game sits in the schedule, as plain values).
Each function works inside the caller's session; `record_game` is meant to be the whole of
one transaction, so a game and its moves are stored together or not at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    JSON,
    Boolean,
    Connection,
    Enum,
    Float,
    String,
    Table,
    TextClause,
    bindparam,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.orm import Session

from runner.game.record import GameRecord
from runner.store.fast import WriteStatements
from runner.store.models import (
    EngineRow,
    GameRow,
    GameStatus,
    MoveRow,
    TournamentRow,
    TournamentStatus,
    UtcDateTime,
    column_kinds,
)
from runner.store.records import DuplicateGameError, EngineRowValues, JobKey
from runner.store.rows import (
    DONE_KEYS,
    ENGINE_KEYS,
    MOVE_KEYS,
    RUNNING_KEYS,
    SCHEDULE_KEYS,
    TOURNAMENT_KEYS,
    done_values,
    engine_values,
    finish_values,
    move_values,
    running_values,
    schedule_values,
    tournament_values,
)
from runner.store.schema import SCHEMA_REVISION

__all__ = [
    "DuplicateGameError",
    "EngineRowValues",
    "JobKey",
    "create_tournament",
    "engine_ids",
    "finish_tournament",
    "insert_moves",
    "mark_running",
    "record_game",
    "reset_unfinished",
    "save_book_state",
]


def create_tournament(
    session: Session, *, name: str, config: dict[str, Any], fingerprint: str,
    engines: Sequence[EngineRowValues], total_games: int, book_state: dict[str, Any] | None = None,
    origin: str | None = None,
) -> TournamentRow:
    """Insert a tournament and its engines; returns the row (with its id assigned). The
    configuration is stored without credentials (`scrub_credentials`); `origin` says who owns
    it (None: the command line), set in the same transaction so no other runner ever sees
    the row without it."""
    connection = session.connection()
    key = connection.execute(INSERT_TOURNAMENT, tournament_values(
        name=name, config=config, fingerprint=fingerprint, total_games=total_games,
        book_state=book_state, origin=origin)).inserted_primary_key
    assert key is not None  # an INSERT of one row always reports its key
    tournament_id = int(key[0])
    for engine in engines:
        connection.execute(INSERT_ENGINE, engine_values(tournament_id, engine))
    row = session.get(TournamentRow, tournament_id)
    assert row is not None
    return row


_TOURNAMENTS = cast(Table, TournamentRow.__table__)
INSERT_TOURNAMENT = insert(_TOURNAMENTS)
"""A new tournament's row (`runner.store.rows.TOURNAMENT_KEYS`)."""
INSERT_ENGINE = insert(cast(Table, EngineRow.__table__))
"""An engine's row (`runner.store.rows.ENGINE_KEYS`)."""
SAVE_BOOK_STATE = update(_TOURNAMENTS).where(_TOURNAMENTS.c.id == bindparam("row_tournament"))
"""The openings' cursor (``book_state``) of a tournament."""
FINISH = update(_TOURNAMENTS).where(_TOURNAMENTS.c.id == bindparam("row_tournament")).values(
    status=bindparam("status", type_=_TOURNAMENTS.c.status.type),
    # Kept as they are when not given (an interrupted run has no end; no decision yet).
    finished_at=func.coalesce(bindparam("finished_at", type_=UtcDateTime()),
                              _TOURNAMENTS.c.finished_at),
    sprt_decision=func.coalesce(bindparam("sprt_decision", type_=String(16)),
                                _TOURNAMENTS.c.sprt_decision),
)
"""A tournament closed (or marked interrupted), with its end and SPRT decision if any."""


_GAMES = cast(Table, GameRow.__table__)
_MOVES = cast(Table, MoveRow.__table__)


# The writer's statements, built once: building one (columns compared, parameters bound) cost
# the writer thread more than executing it through SQLAlchemy's compiled cache. The SET
# clauses of the updates are the columns named in each call's parameters.
_FIND_GAME = select(_GAMES.c.id, _GAMES.c.status).where(
    _GAMES.c.tournament_id == bindparam("row_tournament"),
    _GAMES.c.job_index == bindparam("row_job"),
).with_for_update()
_INSERT_GAME = insert(_GAMES)
_UPDATE_GAME = update(_GAMES).where(_GAMES.c.id == bindparam("row_id"))
_UPDATE_UNPLAYED = update(_GAMES).where(
    _GAMES.c.id == bindparam("row_id"), _GAMES.c.tournament_id == bindparam("row_tournament"),
    _GAMES.c.job_index == bindparam("row_job"), _GAMES.c.status != GameStatus.DONE,
)
_INSERT_MOVES = insert(_MOVES)


def _unnest_moves() -> TextClause:
    """PostgreSQL's insert of many moves in one statement: one array a column, unnested.

    The executemany of `_INSERT_MOVES` is one prepared execution a move in psycopg's
    pipeline, each with its parameters adapted in Python (a batch of uploaded games is many
    hundreds); the arrays are adapted once a column."""
    from sqlalchemy.dialects import postgresql

    dialect = postgresql.dialect()
    quote = dialect.identifier_preparer.quote
    columns = [column for column in _MOVES.columns if column.name in MOVE_KEYS]
    arrays = ", ".join(f"CAST(:{column.name} AS {column.type.compile(dialect=dialect)}[])"
                       for column in columns)
    return text(f"INSERT INTO {quote(_MOVES.name)} "
                f"({', '.join(quote(column.name) for column in columns)}) "
                f"SELECT * FROM unnest({arrays})")


_UNNEST_MOVES = _unnest_moves()


def insert_moves(connection: Connection, moves: Sequence[Mapping[str, Any]]) -> None:
    """Insert `moves` (rows of `move_values`) in the caller's transaction: on PostgreSQL
    as one statement of a column's values each, elsewhere as one executemany."""
    if not moves:
        return
    if connection.dialect.name == "postgresql":
        connection.execute(_UNNEST_MOVES, {key: [move[key] for move in moves]
                                           for key in MOVE_KEYS})
    else:
        connection.execute(_INSERT_MOVES, list(moves))
_ENGINE_IDS = select(EngineRow.name, EngineRow.id).where(
    EngineRow.tournament_id == bindparam("row_tournament"))


def compile_writes(session: Session, key: str) -> WriteStatements | None:
    """The writer's statements compiled for `session`'s SQLite database with named
    parameters, for `runner.store.fast` (None: not SQLite)."""
    from runner.store import lease
    from runner.store.origin import SET_REASON
    from runner.store.queries import FINISHED_JOBS, played_games
    from runner.store.resume import NAMED, NAMED_HERE, PGN_GAMES, REOPEN, SET_PGN_OFFSET, TOURNAMENT

    dialect = session.get_bind().dialect
    if dialect.name != "sqlite":
        return None
    named = type(dialect)(paramstyle="named")  # type: ignore[call-arg]
    where = ["row_id", "row_tournament", "row_job"]
    plan: dict[str, tuple[Any, list[str] | None]] = {
        "heartbeat": (lease._heartbeat_statement("sqlite"), None),
        "engine_ids": (_ENGINE_IDS, None),
        "find_game": (_FIND_GAME, None),
        "insert_running": (_INSERT_GAME, [*SCHEDULE_KEYS, *RUNNING_KEYS]),
        "insert_done": (_INSERT_GAME, [*SCHEDULE_KEYS, *DONE_KEYS]),
        "update_running": (_UPDATE_GAME, [*RUNNING_KEYS, "row_id"]),
        "update_done": (_UPDATE_GAME, [*DONE_KEYS, "row_id"]),
        "update_unplayed": (_UPDATE_UNPLAYED, [*DONE_KEYS, *where]),
        "insert_moves": (_INSERT_MOVES, list(MOVE_KEYS)),
        # A run's preparation and close (`runner.store.lite`).
        "tournament": (TOURNAMENT, None),
        "named": (NAMED, None),
        "named_here": (NAMED_HERE, None),
        "insert_tournament": (INSERT_TOURNAMENT, list(TOURNAMENT_KEYS)),
        "insert_engine": (INSERT_ENGINE, list(ENGINE_KEYS)),
        "lease_find": (lease.find_statement("sqlite", lock=True), None),
        "lease_insert": (lease.insert_statement("sqlite"), ["tournament_id", *lease.LEASE_KEYS]),
        "lease_update": (lease.update_statement("sqlite"), list(lease.LEASE_KEYS)),
        "release": (lease.RELEASE, None),
        "reopen": (REOPEN, None),
        "reset_unfinished": (RESET_UNFINISHED, None),
        "finished_jobs": (FINISHED_JOBS, None),
        "played_games": (played_games(), None),
        "save_book_state": (SAVE_BOOK_STATE, ["book_state"]),
        "finish": (FINISH, None),
        "set_reason": (SET_REASON, None),
        "pgn_games": (PGN_GAMES, None),
        "set_pgn_offset": (SET_PGN_OFFSET, None),
    }
    statements: dict[str, str] = {}
    kinds: dict[str, dict[str, str]] = {}
    constants: dict[str, dict[str, Any]] = {}
    columns: dict[str, dict[str, str]] = {}
    for name, (statement, keys) in plan.items():
        compiled = statement.compile(dialect=named, column_keys=keys)
        statements[name] = str(compiled)
        kinds[name] = {}
        constants[name] = {}
        if getattr(statement, "is_select", False):
            columns[name] = column_kinds(statement)
        for param, bind in compiled.binds.items():
            if param not in compiled.params:
                continue  # an internal alias of a parameter listed under its own name
            processor = bind.type.dialect_impl(dialect).bind_processor(dialect)
            value = compiled.params[param]
            if bind.value is not None and not bind.required and bind.callable is None:
                constants[name][param] = value if processor is None else processor(value)
            elif isinstance(bind.type, UtcDateTime):
                kinds[name][param] = "utc"
            elif isinstance(bind.type, Enum):
                kinds[name][param] = "enum"
            elif isinstance(bind.type, Boolean):
                kinds[name][param] = "bool"  # SQLite stores 0 or 1 (moves.ponder_hit)
            elif isinstance(bind.type, JSON):
                kinds[name][param] = "json"
            elif isinstance(bind.type, Float):
                kinds[name][param] = "float"  # leases.timeout_seconds
            elif processor is not None:
                return None  # a type this module does not convert: keep SQLAlchemy's way
    return WriteStatements(key=key, revision=SCHEMA_REVISION, statements=statements,
                           kinds=kinds, constants=constants, columns=columns)


def engine_ids(session: Session, tournament_id: int) -> dict[str, int]:
    """Engine ids of a tournament by name (a writer may keep them for the whole run)."""
    rows = session.connection().execute(_ENGINE_IDS, {"row_tournament": tournament_id})
    return {name: ident for name, ident in rows}


def _game_values(session: Session, tournament_id: int, job: JobKey,
                 ids: Mapping[str, int] | None) -> dict[str, Any]:
    """The schedule columns of a game row for `job`."""
    if ids is None or any(name not in ids for name in job.engines):
        ids = engine_ids(session, tournament_id)
    missing = [name for name in job.engines if name not in ids]
    if missing:
        raise ValueError(f"tournament {tournament_id} has no engine named {missing[0]!r}")
    return schedule_values(tournament_id, job, ids)


def _stored(session: Session, tournament_id: int, job: JobKey) -> int | None:
    """The id of the job's stored row, if any (locked for update where the database can);
    DuplicateGameError when that row is already a played game."""
    found = session.connection().execute(
        _FIND_GAME, {"row_tournament": tournament_id, "row_job": job.index}).one_or_none()
    if found is None:
        return None
    if found.status is GameStatus.DONE:
        raise DuplicateGameError(f"game {job.index} of tournament {tournament_id} is already "
                                 "played")
    return int(found.id)


def _write_game(session: Session, tournament_id: int, job: JobKey, values: dict[str, Any],
                ids: Mapping[str, int] | None) -> int:
    """Insert or update the job's row with `values`; its id.

    Plain statements on the table, not the ORM's unit of work: the writer thread runs one of
    these per game start and per game end, and the ORM path cost it about 1.5 ms each.
    """
    game_id = _stored(session, tournament_id, job)
    connection = session.connection()
    if game_id is None:
        inserted = connection.execute(
            _INSERT_GAME, {**_game_values(session, tournament_id, job, ids), **values})
        key = inserted.inserted_primary_key
        assert key is not None  # an INSERT of one row always reports its key
        return int(key[0])
    connection.execute(_UPDATE_GAME, {"row_id": game_id, **values})
    return game_id


def _update_unplayed(session: Session, tournament_id: int, job: JobKey, game_id: int,
                     values: dict[str, Any]) -> bool:
    """Update the job's row `game_id` unless it is already a played game; whether it did.

    The condition on the status makes the check and the write one statement, so it is as
    safe against a second writer as the locking read `_write_game` makes first."""
    updated = session.connection().execute(_UPDATE_UNPLAYED, {
        "row_id": game_id, "row_tournament": tournament_id, "row_job": job.index, **values})
    return int(getattr(updated, "rowcount", 0) or 0) == 1


def mark_running(session: Session, tournament_id: int, job: JobKey,
                 started_at: datetime | None = None, *,
                 engine_ids: Mapping[str, int] | None = None) -> int:
    """Note that `job` has started (a row in ``running`` state); refuses a finished job.

    Returns the game's id. `engine_ids` (from `engine_ids`) saves looking them up each time.
    """
    return _write_game(session, tournament_id, job, running_values(started_at), engine_ids)


def record_game(session: Session, tournament_id: int, job: JobKey, record: GameRecord, *,
                pgn: str | None = None, engine_ids: Mapping[str, int] | None = None,
                pgn_offset: int | None = None, game_id: int | None = None) -> int:
    """Store a finished game with all its moves (commit the session right after); its id.

    Every ply of the record is stored, the book moves first. Raises DuplicateGameError when
    the job was already stored as played; the unique (tournament, job index) key also stops
    two writers racing on one job. `pgn_offset` is where the caller is about to write the
    text in its PGN file (see `runner.store.resume.pgn_games`). `game_id` is the id
    `mark_running` returned for the job, when the caller kept it: its row is then updated
    in one statement, without looking it up first.
    """
    values = done_values(record, pgn, pgn_offset)
    if game_id is None or not _update_unplayed(session, tournament_id, job, game_id, values):
        game_id = _write_game(session, tournament_id, job, values, engine_ids)
    if record.moves:
        insert_moves(session.connection(), move_values(game_id, record))
    return game_id


RESET_UNFINISHED = update(_GAMES).where(
    _GAMES.c.tournament_id == bindparam("row_tournament"),
    _GAMES.c.status == GameStatus.RUNNING).values(status=GameStatus.REPLAY)
"""Games left running by an interrupted run, to be played again."""


def reset_unfinished(session: Session, tournament_id: int) -> int:
    """Mark games left ``running`` by an interrupted run as ``replay``; returns how many."""
    result = session.connection().execute(RESET_UNFINISHED, {"row_tournament": tournament_id})
    return int(getattr(result, "rowcount", 0) or 0)


def save_book_state(session: Session, tournament_id: int, state: dict[str, Any]) -> None:
    """Remember where the openings cursor is (plain data from ``CursorState.to_dict``)."""
    session.connection().execute(SAVE_BOOK_STATE, {"row_tournament": tournament_id,
                                                   "book_state": state})


def finish_tournament(session: Session, tournament_id: int, *,
                      status: TournamentStatus = TournamentStatus.FINISHED,
                      sprt_decision: str | None = None) -> None:
    """Close a tournament (or mark it interrupted) with its SPRT decision, if any."""
    session.connection().execute(FINISH, {"row_tournament": tournament_id,
                                          **finish_values(status, sprt_decision)})
