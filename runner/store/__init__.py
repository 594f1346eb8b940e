"""The results database: models, opening and migrating, recording games, streaming reads.

Nothing outside this package writes SQL. See `db` (URLs, engines, alembic), `models` (the
schema), `recording` and `fast` (the runner's writes, through SQLAlchemy or sqlite3), `rows`
(the values both write) and `queries` (reports, exports, resume); `store` is the `Store`
object, the one module of this package the rooms above it import.

The names below load their modules when first asked for. The rooms above the store take from
here only the store object and the light records (`records`, `quick_list`: no SQLAlchemy),
never the functions that work in a session (a test holds them to it); those stay here for the
tests and scripts that build databases directly.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from runner.store.db import (
        DEFAULT_URL,
        ENV_VAR,
        Database,
        open_database,
        resolve_url,
        upgrade,
    )
    from runner.store.queries import (
        GameFilter,
        StoredGame,
        find_tournament,
        finished_job_keys,
        stream_games,
        tournaments,
    )
    from runner.store.quick import quick_list
    from runner.store.reads import TournamentProgress
    from runner.store.recording import (
        create_tournament,
        engine_ids,
        finish_tournament,
        mark_running,
        record_game,
        reset_unfinished,
    )
    from runner.store.records import (
        DuplicateGameError,
        EngineRowValues,
        GameStatus,
        JobKey,
        Placement,
        PlayedRow,
        StoredTournament,
        TournamentStatus,
        never_moved,
    )
    from runner.store.store import NamedTournament, Store

_HOMES = {
    "runner.store.db": ("DEFAULT_URL", "ENV_VAR", "Database", "open_database", "resolve_url",
                        "upgrade"),
    "runner.store.queries": ("GameFilter", "StoredGame", "find_tournament", "finished_job_keys",
                             "stream_games", "tournaments"),
    "runner.store.quick": ("quick_list",),
    # It imports the game record (and the rules, protocol and PGN layers below it), which the
    # commands that only read do not need.
    "runner.store.recording": ("create_tournament", "engine_ids", "finish_tournament",
                               "mark_running", "record_game", "reset_unfinished"),
    "runner.store.reads": ("TournamentProgress",),
    "runner.store.records": ("DuplicateGameError", "EngineRowValues", "GameStatus", "JobKey",
                             "Placement", "PlayedRow", "StoredTournament", "TournamentStatus",
                             "never_moved"),
    "runner.store.store": ("NamedTournament", "Store"),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}
"""Where each name of the package is defined: imported when first asked for, so that
importing one light module of the package (`runner.store.records`, `runner.store.quick`)
loads no SQLAlchemy (``runner list`` starts without it, issue 30)."""


def __getattr__(name: str) -> Any:
    """The package's names, each loaded from its module when first asked for."""
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

__all__ = [
    "DEFAULT_URL",
    "ENV_VAR",
    "Database",
    "DuplicateGameError",
    "EngineRowValues",
    "GameFilter",
    "GameStatus",
    "JobKey",
    "NamedTournament",
    "Placement",
    "PlayedRow",
    "Store",
    "StoredGame",
    "StoredTournament",
    "TournamentProgress",
    "TournamentStatus",
    "create_tournament",
    "engine_ids",
    "find_tournament",
    "finish_tournament",
    "finished_job_keys",
    "mark_running",
    "never_moved",
    "open_database",
    "quick_list",
    "record_game",
    "reset_unfinished",
    "resolve_url",
    "stream_games",
    "tournaments",
    "upgrade",
]
