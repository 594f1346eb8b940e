"""The results database: models, opening and migrating, recording games, streaming reads.

Nothing outside this package writes SQL. See `db` (URLs, engines, alembic), `models` (the
schema), `recording` (the runner's writes) and `queries` (reports, exports, resume).
"""

from runner.store.db import DEFAULT_URL, ENV_VAR, Database, open_database, resolve_url, upgrade
from runner.store.models import GameStatus, TournamentStatus
from runner.store.queries import (
    GameFilter,
    PairCounts,
    StoredGame,
    TournamentProgress,
    find_tournament,
    finished_job_keys,
    pair_counts,
    stream_games,
    tournaments,
)
from runner.store.recording import (
    DuplicateGameError,
    EngineRowValues,
    FinishedGame,
    MoveRecord,
    create_tournament,
    engine_ids,
    finish_tournament,
    mark_running,
    record_game,
    reset_unfinished,
)

__all__ = [
    "DEFAULT_URL",
    "ENV_VAR",
    "Database",
    "DuplicateGameError",
    "EngineRowValues",
    "FinishedGame",
    "GameFilter",
    "GameStatus",
    "MoveRecord",
    "PairCounts",
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
    "pair_counts",
    "record_game",
    "reset_unfinished",
    "resolve_url",
    "stream_games",
    "tournaments",
    "upgrade",
]
