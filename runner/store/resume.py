"""Finding the tournament a run continues, updating its stored configuration, re-planning its
games after a forced change, and the PGN-file bookkeeping a resume checks."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, delete, null, select, update
from sqlalchemy.orm import Session, aliased

from runner.store.models import EngineRow, GameRow, GameStatus, TournamentRow, TournamentStatus
from runner.store.records import PgnGame, Placement, PlayedRow
from runner.store.urls import scrub_credentials

if TYPE_CHECKING:  # an annotation: reading a stored tournament loads no game record or rules
    from runner.store.records import EngineRowValues

__all__ = [
    "PgnGame",
    "Placement",
    "PlayedRow",
    "latest_named",
    "pgn_games",
    "played_rows",
    "replace_config",
    "replan_games",
    "reopen",
    "set_pgn_offsets",
    "stored_config",
    "sync_engines",
]

_PLAYED = (GameStatus.DONE, GameStatus.EXCLUDED)


_TOURNAMENT_COLUMNS = (TournamentRow.id, TournamentRow.name, TournamentRow.origin,
                       TournamentRow.status, TournamentRow.fingerprint, TournamentRow.config,
                       TournamentRow.total_games)
TOURNAMENT = select(*_TOURNAMENT_COLUMNS).where(TournamentRow.id == bindparam("row_tournament"))
"""A tournament as a run's preparation reads it (`runner.store.records.StoredTournament`)."""
NAMED = (select(*_TOURNAMENT_COLUMNS)
         .where(TournamentRow.name == bindparam("row_name"),
                TournamentRow.origin == bindparam("row_origin"))
         .order_by(TournamentRow.id.desc()).limit(1))
"""The newest tournament of a name that an origin owns, read as `TOURNAMENT`."""
NAMED_HERE = (select(*_TOURNAMENT_COLUMNS)
              .where(TournamentRow.name == bindparam("row_name"), TournamentRow.origin.is_(None))
              .order_by(TournamentRow.id.desc()).limit(1))
"""`NAMED` for the command line's tournaments (no origin)."""


def latest_named(session: Session, name: str, origin: str | None = None) -> Any:
    """The newest tournament called `name` that `origin` owns (None: the command line's), if
    any, with the columns of `TOURNAMENT`: a run from the command line never adopts a
    tournament the service queued."""
    if origin is None:
        return session.execute(NAMED_HERE, {"row_name": name}).one_or_none()
    return session.execute(NAMED, {"row_name": name, "row_origin": origin}).one_or_none()


def stored_config(session: Session, tournament_id: int) -> dict[str, Any] | None:
    """The configuration a tournament was stored with (JSON data), or None if there is no such
    tournament."""
    config = session.scalar(select(TournamentRow.config).where(TournamentRow.id == tournament_id))
    return None if config is None else dict(config)


def replace_config(session: Session, tournament_id: int, *, config: dict[str, Any],
                   fingerprint: str, total_games: int) -> None:
    """Store a changed configuration on a tournament (a forced resume), without credentials."""
    session.execute(update(TournamentRow).where(TournamentRow.id == tournament_id)
                    .values(config=scrub_credentials(config), fingerprint=fingerprint,
                            total_games=total_games))


REOPEN = (update(TournamentRow).where(TournamentRow.id == bindparam("row_tournament"))
          .values(status=TournamentStatus.RUNNING, finished_at=null()))
"""An interrupted tournament running again."""


def reopen(session: Session, tournament_id: int) -> None:
    """Mark an interrupted tournament as running again."""
    session.connection().execute(REOPEN, {"row_tournament": tournament_id})


# -- a forced change of configuration ------------------------------------------------------------


def sync_engines(session: Session, tournament_id: int,
                 engines: Sequence[EngineRowValues]) -> list[str]:
    """Make the tournament's engine rows match `engines`: new names are inserted, known ones
    updated; rows of engines no longer configured stay (their games refer to them). Returns
    the names added."""
    rows = {row.name: row for row in session.scalars(
        select(EngineRow).where(EngineRow.tournament_id == tournament_id))}
    added = []
    for entry in engines:
        values = {"command": list(entry.command), "protocol": entry.protocol,
                  "options": dict(entry.options or {}) or None}
        row = rows.get(entry.name)
        if row is None:
            session.add(EngineRow(tournament_id=tournament_id, name=entry.name, **values))
            added.append(entry.name)
        else:
            for key, value in values.items():
                setattr(row, key, value)
    session.flush()
    return added


def played_rows(session: Session, tournament_id: int) -> list[PlayedRow]:
    """Every played game of a tournament, counted ones first, each group in schedule order."""
    white, black = aliased(EngineRow), aliased(EngineRow)
    rows = session.execute(
        select(GameRow.id, GameRow.job_index, GameRow.round, white.name, black.name,
               GameRow.status)
        .join(white, GameRow.white_id == white.id).join(black, GameRow.black_id == black.id)
        .where(GameRow.tournament_id == tournament_id, GameRow.status.in_(_PLAYED))
        .order_by(GameRow.status != GameStatus.DONE, GameRow.job_index, GameRow.id))
    return [PlayedRow(*row) for row in rows]


def replan_games(session: Session, tournament_id: int,
                 placements: Mapping[int, Placement | None]) -> tuple[int, int]:
    """Move played games (by id) to their new place in the schedule, or out of it (None: kept,
    marked excluded, never counted). Rows of games not played (running, to replay) go: the
    new schedule plays them again where they belong. Returns (counted, excluded)."""
    session.execute(delete(GameRow).where(GameRow.tournament_id == tournament_id,
                                          GameRow.status.not_in(_PLAYED)))
    current = {row.id: row for row in session.execute(
        select(GameRow.id, GameRow.job_index, GameRow.round, GameRow.pair_index,
               GameRow.game_in_pair, GameRow.opening_index, GameRow.status)
        .where(GameRow.tournament_id == tournament_id))}
    moving = {}
    for game_id, place in placements.items():
        row = current[game_id]
        now = (Placement(row.job_index, row.round, row.pair_index, row.game_in_pair,
                         row.opening_index) if row.status is GameStatus.DONE else None)
        if now != place:
            moving[game_id] = place
    # Out of the way first (a negative index no schedule uses), then into place: the
    # unique (tournament, job index) key must hold after every statement.
    for game_id in moving:
        session.execute(update(GameRow).where(GameRow.id == game_id)
                        .values(job_index=-game_id))
    for game_id, place in moving.items():
        values: dict[str, Any] = ({"status": GameStatus.EXCLUDED} if place is None else
                                  {"status": GameStatus.DONE, **place._asdict()})
        session.execute(update(GameRow).where(GameRow.id == game_id).values(**values))
    excluded = sum(1 for place in placements.values() if place is None)
    return len(placements) - excluded, excluded


# -- the --pgnout file -----------------------------------------------------------------------


def _pgn_query(tournament: Any) -> Any:
    return (select(GameRow.id, GameRow.pgn, GameRow.pgn_offset)
            # Two comparisons, not IN: a list is no parameter sqlite3 takes (`runner.store.lite`).
            .where(GameRow.tournament_id == tournament,
                   (GameRow.status == GameStatus.DONE) | (GameRow.status == GameStatus.EXCLUDED),
                   GameRow.pgn.is_not(None),
                   GameRow.pgn_offset.is_(None) | (GameRow.pgn_offset >= 0))
            .order_by(GameRow.pgn_offset.is_(None), GameRow.pgn_offset, GameRow.job_index,
                      GameRow.id))


PGN_GAMES = _pgn_query(bindparam("row_tournament"))
"""The played games of a tournament that belong in its PGN file, in file order."""
SET_PGN_OFFSET = update(GameRow).where(GameRow.id == bindparam("row_id")).values(
    pgn_offset=bindparam("pgn_offset"))
"""Where a game is about to be written in the PGN file."""


def pgn_games(session: Session, tournament_id: int, ids: Iterable[int] | None = None, *,
              batch: int = 500) -> Iterator[PgnGame]:
    """The played games of a tournament that belong in its PGN file (or those of them in `ids`),
    in file order (games never written last, in schedule order); streamed. Games written by a
    runner that kept no offsets (-1) are left out: their place in the file is unknown."""
    query = _pgn_query(tournament_id).execution_options(yield_per=batch)
    if ids is not None:  # a few hundred at a time (SQLite binds each as a parameter)
        query = query.where(GameRow.id.in_(list(ids)))
    for game_id, pgn, offset in session.execute(query):
        if pgn is not None:
            yield PgnGame(game_id, pgn, offset)


def set_pgn_offsets(session: Session, offsets: Mapping[int, int]) -> None:
    """Record where games are about to be written in the PGN file (game id -> byte offset)."""
    connection = session.connection()
    for game_id, offset in offsets.items():
        connection.execute(SET_PGN_OFFSET, {"row_id": game_id, "pgn_offset": offset})
