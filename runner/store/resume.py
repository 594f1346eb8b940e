"""Finding the tournament a run continues, and updating its stored configuration."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from runner.store.models import TournamentRow, TournamentStatus

__all__ = ["latest_named", "replace_config", "reopen", "stored_config"]


def latest_named(session: Session, name: str) -> TournamentRow | None:
    """The newest tournament called `name`, if any."""
    return session.scalars(
        select(TournamentRow).where(TournamentRow.name == name)
        .order_by(TournamentRow.id.desc()).limit(1)
    ).one_or_none()


def stored_config(session: Session, tournament_id: int) -> dict[str, Any] | None:
    """The configuration a tournament was stored with (JSON data), or None if there is no such
    tournament."""
    config = session.scalar(select(TournamentRow.config).where(TournamentRow.id == tournament_id))
    return None if config is None else dict(config)


def replace_config(session: Session, tournament_id: int, *, config: dict[str, Any],
                   fingerprint: str, total_games: int) -> None:
    """Store a changed configuration on a tournament (a forced resume)."""
    session.execute(update(TournamentRow).where(TournamentRow.id == tournament_id)
                    .values(config=config, fingerprint=fingerprint, total_games=total_games))


def reopen(session: Session, tournament_id: int) -> None:
    """Mark an interrupted tournament as running again."""
    session.execute(update(TournamentRow).where(TournamentRow.id == tournament_id)
                    .values(status=TournamentStatus.RUNNING, finished_at=None))
