"""Reading stored tournaments: the list, and export (PGN, or training samples) with filters.

The checks users rely on are made here once, for the command line and the service alike:
an export names a tournament that exists (the newest by default) and an ``--engine`` it has
(a typo used to export 0 games and report success).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from runner.store import TournamentProgress, never_moved
from runner.text import shown

if TYPE_CHECKING:  # annotations only: listing tournaments loads neither the rules nor games
    from runner.game.termination import GameTermination
    from runner.rules import Result
    from runner.store import Store

__all__ = ["ExportError", "export_target", "never_moved", "pgn_games", "quick_tournament_list",
           "remember_list", "sample_lines", "tournament_list"]


class ExportError(LookupError):
    """What an export asks for is not there (no tournament, no such engine in it)."""


def tournament_list(store: Store) -> list[TournamentProgress]:
    """Every tournament, oldest first, with its progress (a tournament nobody runs shows as
    interrupted, with no game running)."""
    return store.tournaments()


def quick_tournament_list(db_file: Path, cache: Path) -> tuple[list[TournamentProgress],
                                                              dict[int, str]] | None:
    """`tournament_list` and the failed runs' reasons (`Store.failures`) of the SQLite file
    `db_file`, read without SQLAlchemy with the statements `remember_list` wrote to `cache`;
    None when there are none for this version or they cannot answer (take the store's way,
    then `remember_list`)."""
    from runner.store import quick_list

    return quick_list(db_file, cache)


def remember_list(store: Store, cache: Path) -> None:
    """Keep in `cache` what `quick_tournament_list` needs to list `store` next time (nothing
    for a database other than SQLite)."""
    store.remember_list(cache)


def export_target(store: Store, tournament_id: int | None, engine: str | None) -> int:
    """The tournament to export (the newest by default), checked to exist and to have
    `engine`; ExportError saying what is missing."""
    if tournament_id is None:
        found = store.tournaments()
        if not found:
            raise ExportError(f"no tournament in {store.shown_url}")
        tournament_id = found[-1].id
    info = store.info(tournament_id)
    if info is None:
        raise ExportError(f"no tournament {tournament_id} in {store.shown_url} "
                          "(see 'runner list')")
    if engine is not None and engine not in info.engines:
        raise ExportError(f"--engine {engine!r}: no engine of that name in tournament "
                          f"{tournament_id} (its engines: {', '.join(map(shown, info.engines))})")
    return tournament_id


def pgn_games(store: Store, tournament_id: int, *, engine: str | None = None,
              result: Result | None = None,
              termination: GameTermination | None = None) -> Iterator[str]:
    """The PGN text of each stored game that matches the filters, one blank line after each,
    in schedule order; streamed."""
    from runner.store.store import GameFilter

    where = GameFilter(tournament_id=tournament_id, engine=engine, result=result,
                       termination=termination)
    for game in store.games(where):
        if game.pgn:
            yield game.pgn.rstrip("\n") + "\n\n"


def sample_lines(store: Store, tournament_id: int, *, every: int = 1, skip_check: bool = False,
                 skip_captures: bool = False, engine: str | None = None,
                 result: Result | None = None,
                 termination: GameTermination | None = None) -> Iterator[str]:
    """Training samples (runner.report.samples: ``FEN,score,result``, one line each) of the
    stored games that match the filters, in schedule order; streamed game by game. The
    sample filters are `SampleFilter`'s."""
    from runner.report.samples import SampleFilter, lines_of
    from runner.store.store import GameFilter

    choose = SampleFilter(every, skip_check, skip_captures)
    config = store.stored_config(tournament_id) or {}
    chess960 = config.get("variant") == "fischerandom"
    where = GameFilter(tournament_id=tournament_id, engine=engine, result=result,
                       termination=termination)
    games = ((game.opening_fen, game.opening_moves, game.result, store.game_moves(game.id))
             for game in store.games(where))
    for line in lines_of(games, chess960, choose):
        yield line + "\n"
