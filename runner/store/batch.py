"""Several finished games (or games starting) written in one transaction: the batch write.

A run's writer stores each game as it ends, one transaction each. When games arrive faster
than that (remote workers uploading many a second), a transaction per game makes each wait
for the ones before it: the lease proved, the rows written, the commit, once per game. Here
the games waiting together go in one transaction: the lease proved once, the batch's rows
looked up in one query, the finished rows updated and their moves inserted as one
``executemany`` each, one commit. A game already played (stored by a runner before this one,
or twice in the batch) is left out and reported as such; it does not sink the others. When
the lease is lost, nothing of the batch is written (`LeaseLostError`).

The rows written are the ones `runner.store.recording` writes for a single game
(`runner.store.rows` makes them), so a game stored in a batch reads back the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Table, bindparam, insert, select
from sqlalchemy.orm import Session

from runner.store.models import GameRow, GameStatus
from runner.store.recording import _UPDATE_GAME, _write_game, insert_moves
from runner.store.recording import engine_ids as recorded_engine_ids
from runner.store.records import DuplicateGameError, FinishedGame, JobKey
from runner.store.rows import (
    done_values,
    move_values,
    pgn_offsets,
    running_values,
    schedule_values,
)

__all__ = ["FinishedGame", "mark_running_many", "pgn_offsets", "playable", "record_games"]

_GAMES: Table = GameRow.__table__  # type: ignore[assignment]
_FIND_GAMES = select(_GAMES.c.id, _GAMES.c.job_index, _GAMES.c.status).where(
    _GAMES.c.tournament_id == bindparam("row_tournament"),
    _GAMES.c.job_index.in_(bindparam("row_jobs", expanding=True)),
).with_for_update()
_INSERT_RUNNING = insert(_GAMES).returning(_GAMES.c.job_index, _GAMES.c.id)


def playable(session: Session, tournament_id: int,
             jobs: Sequence[JobKey]) -> tuple[list[bool], dict[int, int]]:
    """For each job, whether it may still be stored (not played already, not earlier in
    `jobs`), and the row id of each job that has a row (locked for update where the database
    can): one query for the whole batch."""
    found = session.connection().execute(_FIND_GAMES, {
        "row_tournament": tournament_id, "row_jobs": sorted({job.index for job in jobs})})
    rows: dict[int, int] = {}
    played: set[int] = set()
    for row_id, job_index, status in found:
        rows[int(job_index)] = int(row_id)
        if status is GameStatus.DONE:
            played.add(int(job_index))
    free: list[bool] = []
    for job in jobs:
        free.append(job.index not in played)
        played.add(job.index)  # a second copy in the batch is a duplicate
    return free, rows


def record_games(session: Session, tournament_id: int, games: Sequence[FinishedGame],
                 offsets: Sequence[int | None], free: Sequence[bool], rows: Mapping[int, int],
                 engine_ids: Mapping[str, int] | None) -> None:
    """Store the games marked `free` (`playable`) with their moves, each with its PGN
    `offsets` entry; within the caller's transaction."""
    updates: list[dict[str, Any]] = []
    moves: list[dict[str, Any]] = []
    for game, offset, kept in zip(games, offsets, free, strict=True):
        if not kept:
            continue
        values = done_values(game.record, game.pgn, offset)
        game_id = rows.get(game.job.index)
        if game_id is None:  # no row marked running (rare): inserted on its own
            game_id = _write_game(session, tournament_id, game.job, values, engine_ids)
        else:
            updates.append({"row_id": game_id, **values})
        moves.extend(move_values(game_id, game.record))
    connection = session.connection()
    # Each update names the same columns (`done_values`), so one executemany carries them.
    if updates:
        connection.execute(_UPDATE_GAME, updates)
    insert_moves(connection, moves)  # on PostgreSQL one statement for the batch's moves


def mark_running_many(session: Session, tournament_id: int, jobs: Sequence[JobKey],
                      engine_ids: Mapping[str, int] | None) -> list[int | DuplicateGameError]:
    """`runner.store.recording.mark_running` for each job, in the caller's transaction: its
    row id, or DuplicateGameError (nothing written for it) when it is played already. The
    rows are looked up in one query, the new ones inserted in one statement and the others
    updated in one ``executemany``."""
    free, rows = playable(session, tournament_id, jobs)
    running = running_values()
    ids = engine_ids
    if ids is None or any(name not in ids for job in jobs for name in job.engines):
        ids = recorded_engine_ids(session, tournament_id)
    new: dict[int, dict[str, Any]] = {}
    updates: list[dict[str, Any]] = []
    for job, kept in zip(jobs, free, strict=True):
        if not kept:
            continue
        if job.index in rows:
            updates.append({"row_id": rows[job.index], **running})
            continue
        missing = [name for name in job.engines if name not in ids]
        if missing:
            raise ValueError(f"tournament {tournament_id} has no engine named {missing[0]!r}")
        new[job.index] = {**schedule_values(tournament_id, job, ids), **running}
    connection = session.connection()
    if updates:
        connection.execute(_UPDATE_GAME, updates)
    inserted = dict(rows)
    if new:
        for job_index, row_id in connection.execute(_INSERT_RUNNING, list(new.values())):
            inserted[int(job_index)] = int(row_id)
    return [inserted[job.index] if kept else DuplicateGameError(
                f"game {job.index} of tournament {tournament_id} is already played")
            for job, kept in zip(jobs, free, strict=True)]
