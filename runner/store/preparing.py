"""A run's preparation: finding, continuing or creating its tournament, in one transaction.

`Store.preparing` begins the transaction under the find-or-create lock
(`runner.store.lease.lock_tournaments`) and hands out a `Preparation`: what a run asks of the
database before its first game (which tournament it continues, whether its lease is free, the
changed configuration and re-planned games of a forced resume, the games already played),
answered in records, never ORM rows. Whatever it writes commits together when the block ends,
or not at all.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from runner.store.lease import acquire, check_free
from runner.store.models import TournamentRow
from runner.store.queries import GameFilter, StoredGame, finished_job_keys, stream_games
from runner.store.recording import EngineRowValues, create_tournament, reset_unfinished
from runner.store.records import Placement, PlayedRow, StoredTournament
from runner.store.resume import (
    latest_named,
    played_rows,
    reopen,
    replace_config,
    replan_games,
    sync_engines,
)

__all__ = ["Preparation"]


def _stored(row: TournamentRow) -> StoredTournament:
    return StoredTournament(id=row.id, name=row.name, origin=row.origin, status=row.status,
                            fingerprint=row.fingerprint, config=dict(row.config),
                            total_games=row.total_games)


class Preparation:
    """The questions and writes of a run's preparation, in the transaction it was given."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def tournament(self, tournament_id: int) -> StoredTournament | None:
        """The tournament of that id (None: no such tournament)."""
        row = self._session.get(TournamentRow, tournament_id)
        return None if row is None else _stored(row)

    def newest_named(self, name: str, origin: str | None) -> StoredTournament | None:
        """The newest tournament called `name` that `origin` owns (None: the command line)."""
        row = latest_named(self._session, name, origin)
        return None if row is None else _stored(row)

    def create(self, *, name: str, config: dict[str, Any], fingerprint: str,
               engines: Sequence[EngineRowValues], total_games: int,
               origin: str | None) -> int:
        """A new tournament with its engines (configuration stored without credentials); its
        id."""
        return create_tournament(self._session, name=name, config=config,
                                 fingerprint=fingerprint, engines=engines,
                                 total_games=total_games, origin=origin).id

    # -- the lease ---------------------------------------------------------------------------

    def take_lease(self, tournament_id: int, owner: str, timeout: float) -> None:
        """Hold the tournament's lease for `owner` (LeaseHeldError: a live runner has it)."""
        acquire(self._session, tournament_id, owner, timeout)

    def check_free(self, tournament_id: int, owner: str) -> None:
        """LeaseHeldError when a live runner other than `owner` holds the lease."""
        check_free(self._session, tournament_id, owner)

    # -- continuing ----------------------------------------------------------------------------

    def reopen(self, tournament_id: int) -> int:
        """Mark the tournament running again and its games left running to be played again;
        how many such games there were."""
        reopen(self._session, tournament_id)
        return reset_unfinished(self._session, tournament_id)

    def replace_config(self, tournament_id: int, *, config: dict[str, Any], fingerprint: str,
                       total_games: int, engines: Sequence[EngineRowValues]) -> None:
        """Store a changed configuration (a forced resume): its settings, without
        credentials, and its engines (rows of engines no longer configured stay)."""
        replace_config(self._session, tournament_id, config=config, fingerprint=fingerprint,
                       total_games=total_games)
        sync_engines(self._session, tournament_id, engines)

    def played_rows(self, tournament_id: int) -> list[PlayedRow]:
        """Every played game, counted ones first, each group in schedule order."""
        return played_rows(self._session, tournament_id)

    def replan(self, tournament_id: int,
               placements: Mapping[int, Placement | None]) -> tuple[int, int]:
        """Move played games to their place in a new schedule, or out of it (None); the
        unplayed rows go. Returns (counted, excluded)."""
        return replan_games(self._session, tournament_id, placements)

    def finished_job_keys(self, tournament_id: int) -> set[int]:
        """The schedule indexes of the games stored as played."""
        return finished_job_keys(self._session, tournament_id)

    def games(self, tournament_id: int) -> Iterator[StoredGame]:
        """The tournament's played games in schedule order, streamed."""
        return stream_games(self._session, GameFilter(tournament_id=tournament_id))
