"""The values of a game's rows, as both ways of writing them set them.

A run's writer stores a game's start and end either through SQLAlchemy
(`runner.store.recording`) or, on a SQLite file, through the standard library's sqlite3
(`runner.store.fast`); the columns and their values are defined once, here, so the two ways
write the same rows (a test compares them). Only the standard library, the rules' results and
the store's records are imported: neither way of writing depends on the other for its values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from runner.rules import Result
from runner.store.records import (
    EngineRowValues,
    FinishedGame,
    GameStatus,
    JobKey,
    TournamentStatus,
)
from runner.store.urls import scrub_credentials

if TYPE_CHECKING:
    from runner.game.record import GameRecord

__all__ = ["DONE_KEYS", "ENGINE_KEYS", "MOVE_KEYS", "RUNNING_KEYS", "SCHEDULE_KEYS",
           "TOURNAMENT_KEYS", "done_values", "engine_values", "finish_values", "move_rows",
           "move_values", "pgn_offsets", "running_values", "schedule_values",
           "tournament_values"]

_RESULTS = frozenset(Result)


def running_values(started_at: datetime | None = None) -> dict[str, Any]:
    """The columns `mark_running` sets."""
    return {"status": GameStatus.RUNNING, "started_at": started_at or datetime.now(UTC)}


def done_values(record: GameRecord, pgn: str | None,
                pgn_offset: int | None) -> dict[str, Any]:
    """The columns `record_game` sets; ValueError for a result PGN does not know."""
    if record.result not in _RESULTS:
        raise ValueError(f"unknown game result {record.result!r}")
    return {
        "status": GameStatus.DONE, "result": record.result,
        "termination": record.termination.value, "reason": record.reason or None,
        "plies": len(record.moves), "started_at": record.started_at,
        "ended_at": record.ended_at, "opening_fen": record.spec.start_fen,
        "opening_moves": " ".join(record.opening_moves) or None, "pgn": pgn,
        "pgn_offset": pgn_offset,
        "worker": record.worker,
        "white_stderr": record.stderr[0] or None, "black_stderr": record.stderr[1] or None,
    }


def move_rows(game_id: int, record: GameRecord) -> list[list[Any]]:
    """One row of ``moves`` per ply of the record, the book moves first: its values in
    `MOVE_KEYS` order (a list, not a dict: the sqlite3 way binds it by position, which costs
    it about a third less than binding a dict by name, a game's hundred rows at a time)."""
    return [
        [game_id, ply, m.san, m.uci, None if m.time is None else round(m.time * 1000),
         m.depth, m.score_cp, m.mate, m.nodes, m.seldepth,
         None if asked is None else round(asked * 1000),
         None if m.time_left is None else round(m.time_left * 1000), m.ponder_hit]
        for ply, (m, asked) in enumerate(zip(record.moves, record.clocks_asked(), strict=True),
                                         start=1)
    ]


def move_values(game_id: int, record: GameRecord) -> list[dict[str, Any]]:
    """One row of ``moves`` per ply of the record, the book moves first, by column name."""
    return [dict(zip(MOVE_KEYS, row, strict=True)) for row in move_rows(game_id, record)]


def schedule_values(tournament_id: int, job: JobKey, ids: Mapping[str, int]) -> dict[str, Any]:
    """The schedule columns of a game row for `job` (`ids` holding both engines)."""
    return {
        "tournament_id": tournament_id, "job_index": job.index, "round": job.round,
        "pair_index": job.pair, "game_in_pair": job.game_in_pair,
        "white_id": ids[job.white], "black_id": ids[job.black],
        "opening_index": job.opening_index,
    }


RUNNING_KEYS = tuple(running_values())
"""The columns a game's start sets (the statements are compiled for them)."""
DONE_KEYS = ("status", "result", "termination", "reason", "plies", "started_at", "ended_at",
             "opening_fen", "opening_moves", "pgn", "pgn_offset", "worker", "white_stderr",
             "black_stderr")
"""The columns a game's end sets, as `done_values` names them."""
SCHEDULE_KEYS = ("tournament_id", "job_index", "round", "pair_index", "game_in_pair",
                 "white_id", "black_id", "opening_index")
"""The columns `schedule_values` names."""
MOVE_KEYS = ("game_id", "ply", "san", "uci", "time_ms", "depth", "score_cp", "mate", "nodes",
             "seldepth", "clock_ms", "time_left_ms", "ponder_hit")
"""The columns `move_values` names."""


def tournament_values(*, name: str, config: Mapping[str, Any], fingerprint: str,
                      total_games: int, book_state: dict[str, Any] | None = None,
                      origin: str | None = None) -> dict[str, Any]:
    """The columns of a new tournament's row: running, its configuration stored without
    credentials (`scrub_credentials`)."""
    return {"name": name, "config": scrub_credentials(config), "fingerprint": fingerprint,
            "total_games": total_games, "status": TournamentStatus.RUNNING,
            "created_at": datetime.now(UTC), "book_state": book_state, "origin": origin}


TOURNAMENT_KEYS = tuple(tournament_values(name="", config={}, fingerprint="", total_games=0))
"""The columns `tournament_values` sets."""


def engine_values(tournament_id: int, engine: EngineRowValues) -> dict[str, Any]:
    """The columns of an engine's row in a tournament."""
    return {"tournament_id": tournament_id, "name": engine.name,
            "command": list(engine.command), "protocol": engine.protocol,
            "options": dict(engine.options or {}) or None}


ENGINE_KEYS = ("tournament_id", "name", "command", "protocol", "options")
"""The columns `engine_values` sets."""


def finish_values(status: TournamentStatus, sprt_decision: str | None) -> dict[str, Any]:
    """The parameters of `FINISH`: the end's time only for a finished tournament."""
    return {"status": status, "sprt_decision": sprt_decision,
            "finished_at": datetime.now(UTC) if status is TournamentStatus.FINISHED else None}


def pgn_offsets(games: Sequence[FinishedGame], stored: Sequence[bool],
                start: int | None) -> list[int | None]:
    """Where each stored game's text goes in the PGN file, one after another from `start`
    (None for every game without a file, and for a game not stored)."""
    offsets: list[int | None] = []
    at = start
    for game, kept in zip(games, stored, strict=True):
        if at is None or not kept:
            offsets.append(None)
            continue
        offsets.append(at)
        at += game.pgn_size
    return offsets
