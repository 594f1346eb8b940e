"""Reading stored tournaments: the list, and PGN export with filters.

The checks users rely on are made here once, for the command line and the service alike:
an export names a tournament that exists (the newest by default) and an ``--engine`` it has
(a typo used to export 0 games and report success).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from runner.store import GameFilter, Store, TournamentProgress
from runner.text import shown

if TYPE_CHECKING:  # annotations only: listing tournaments loads neither the rules nor games
    from runner.game.termination import GameTermination
    from runner.rules import Result

__all__ = ["ExportError", "export_target", "pgn_games", "tournament_list"]


class ExportError(LookupError):
    """What an export asks for is not there (no tournament, no such engine in it)."""


def tournament_list(store: Store) -> list[TournamentProgress]:
    """Every tournament, oldest first, with its progress (a tournament nobody runs shows as
    interrupted, with no game running)."""
    return store.tournaments()


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
    where = GameFilter(tournament_id=tournament_id, engine=engine, result=result,
                       termination=termination)
    for game in store.games(where):
        if game.pgn:
            yield game.pgn.rstrip("\n") + "\n\n"
