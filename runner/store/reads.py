"""What a read of the store answers in: a tournament's progress, stored games and their moves,
and the filter that picks games.

The commands that read (``runner list``, ``games``, ``export``, the report, the service) build
these records whether the rows came through SQLAlchemy (`queries`) or from the compiled
statements `runner.store.quick` keeps. A run on a new tournament reads no game back (a
resumed one reads its played games once, for its scoreboard, and imports this module then),
so its start-up does not build these classes (issue 38: kept apart from
`runner.store.records`, which every run imports). Like that module, this one imports nothing but
the standard library and `runner.store.records`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from runner.store.records import GameStatus, Holder, TournamentStatus, enums

if TYPE_CHECKING:
    from runner.game.record import GameTermination
    from runner.rules import Result

__all__ = ["GameFilter", "StoredGame", "StoredMove", "TournamentProgress", "progress",
           "shown_status", "stored_game"]


@dataclass(frozen=True)
class GameFilter:
    """Which games to read; None means any. `engine` matches either color."""

    tournament_id: int | None = None
    engine: str | None = None
    result: Result | None = None
    termination: GameTermination | None = None
    status: GameStatus | None = GameStatus.DONE


@dataclass(frozen=True)
class StoredMove:
    """One stored ply of a game."""

    ply: int
    san: str
    uci: str
    time_ms: int | None
    depth: int | None
    score_cp: int | None
    mate: int | None
    nodes: int | None


@dataclass(frozen=True)
class StoredGame:
    """A game as stored, with its engines' names."""

    id: int
    tournament_id: int
    job_index: int
    round: int
    pair_index: int
    game_in_pair: int
    white: str
    black: str
    opening_index: int
    opening_fen: str | None
    opening_moves: str | None
    status: GameStatus
    result: Result | None
    """None for a game not played to its end (running, or to be played again)."""
    termination: GameTermination | None
    """None for an unfinished game, or a kind this version of the runner does not know."""
    reason: str | None
    plies: int | None
    started_at: datetime | None
    ended_at: datetime | None
    pgn: str | None
    white_stderr: str | None = None
    """White's standard error in the game (bounded), kept after a crash, stall or time loss."""
    black_stderr: str | None = None
    """Black's, as `white_stderr`."""


def stored_game(values: dict[str, Any]) -> StoredGame:
    """A game from the columns of `_games_query`, its result and termination read."""
    results, terminations = enums()
    values["result"] = results.get(values["result"])
    values["termination"] = terminations.get(values["termination"])
    return StoredGame(**values)


@dataclass(frozen=True)
class TournamentProgress:
    """A tournament with how far it has got."""

    id: int
    name: str
    status: str
    """As stored, except that a "running" tournament whose runner is gone shows as
    "interrupted"."""
    fingerprint: str
    total_games: int
    done: int
    running: int
    """Games being played: 0 unless the tournament shows as running."""
    created_at: datetime
    finished_at: datetime | None
    sprt_decision: str | None


def shown_status(tournament_id: int, status: TournamentStatus,
                  holders: dict[int, Holder]) -> str:
    """The status to show: a tournament marked running whose runner is gone (no lease, or a
    stale one: the runner was killed) is interrupted, whatever the row still says."""
    if status is TournamentStatus.RUNNING:
        found = holders.get(tournament_id)
        if found is None or found.stale():
            return TournamentStatus.INTERRUPTED.value
    return status.value


def progress(row: Any, done: int, running: int,
             holders: dict[int, Holder]) -> TournamentProgress:
    """A progress record from a tournament row (its id, name, status as a TournamentStatus,
    fingerprint, total_games, created_at, finished_at, sprt_decision) and its counts."""
    status = shown_status(row.id, row.status, holders)
    # Rows a killed runner left marked running are replayed on resume: no game of a
    # tournament nobody runs is being played.
    playing = int(running) if status == TournamentStatus.RUNNING.value else 0
    return TournamentProgress(
        id=row.id, name=row.name, status=status,
        fingerprint=row.fingerprint,
        total_games=row.total_games, done=int(done), running=playing,
        created_at=row.created_at, finished_at=row.finished_at,
        sprt_decision=row.sprt_decision,
    )
