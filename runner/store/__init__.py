"""The results database: models, opening and migrating, recording games, streaming reads.

Nothing outside this package writes SQL. See `db` (URLs, engines, alembic), `models` (the
schema), `recording` (the runner's writes) and `queries` (reports, exports, resume); `store`
is the `Store` object, the one module of this package the CLI and the service import.
"""

from typing import TYPE_CHECKING, Any

from runner.store.db import DEFAULT_URL, ENV_VAR, Database, open_database, resolve_url, upgrade
from runner.store.models import GameStatus, TournamentStatus
from runner.store.queries import (
    GameFilter,
    StoredGame,
    TournamentProgress,
    find_tournament,
    finished_job_keys,
    stream_games,
    tournaments,
)
from runner.store.store import NamedTournament, Store

if TYPE_CHECKING:
    from runner.store.recording import (
        DuplicateGameError,
        EngineRowValues,
        create_tournament,
        engine_ids,
        finish_tournament,
        mark_running,
        record_game,
        reset_unfinished,
    )

_RECORDING = frozenset({
    "DuplicateGameError", "EngineRowValues", "create_tournament", "engine_ids",
    "finish_tournament", "mark_running", "record_game", "reset_unfinished"})
"""The names of `recording`, imported on first use: it imports the game record (and the rules,
protocol and PGN layers below it), which the commands that only read do not need."""


def __getattr__(name: str) -> Any:
    """`recording`'s names, loaded when first asked for."""
    if name in _RECORDING:
        from runner.store import recording

        return getattr(recording, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "DEFAULT_URL",
    "ENV_VAR",
    "Database",
    "DuplicateGameError",
    "EngineRowValues",
    "GameFilter",
    "GameStatus",
    "NamedTournament",
    "Store",
    "StoredGame",
    "TournamentProgress",
    "TournamentStatus",
    "create_tournament",
    "engine_ids",
    "find_tournament",
    "finish_tournament",
    "finished_job_keys",
    "mark_running",
    "open_database",
    "record_game",
    "reset_unfinished",
    "resolve_url",
    "stream_games",
    "tournaments",
    "upgrade",
]
