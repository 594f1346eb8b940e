"""Which tournaments the service owns: submitted over HTTP, resumed when the service starts."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from runner.store.models import TournamentRow, TournamentStatus
from runner.store.records import SERVICE, never_moved

__all__ = ["SERVICE", "failures", "mark_origin", "never_moved", "owned", "set_reason",
           "set_status", "unfinished_owned"]



def mark_origin(session: Session, tournament_id: int, origin: str = SERVICE) -> None:
    """Note where a tournament came from."""
    session.execute(update(TournamentRow).where(TournamentRow.id == tournament_id)
                    .values(origin=origin))


def owned(session: Session, tournament_id: int, origin: str = SERVICE) -> bool:
    """Whether the tournament came from `origin`."""
    row = session.get(TournamentRow, tournament_id)
    return row is not None and row.origin == origin


def unfinished_owned(session: Session, origin: str = SERVICE) -> list[tuple[int, dict[str, Any]]]:
    """Tournaments of `origin` that a start of the service resumes, oldest first, with their
    stored configurations: running or interrupted (not stopped on request, not finished)."""
    rows = session.execute(
        select(TournamentRow.id, TournamentRow.config)
        .where(TournamentRow.origin == origin,
               TournamentRow.status.in_([TournamentStatus.RUNNING,
                                         TournamentStatus.INTERRUPTED]))
        .order_by(TournamentRow.id))
    return [(row.id, row.config) for row in rows]


def set_status(session: Session, tournament_id: int, status: TournamentStatus) -> None:
    """Set a tournament's status (a stop on request, say)."""
    session.execute(update(TournamentRow).where(TournamentRow.id == tournament_id)
                    .values(status=status))


SET_REASON = update(TournamentRow).where(TournamentRow.id == bindparam("row_tournament")).values(
    reason=bindparam("reason"))
"""Why a tournament's run failed (NULL: it did not)."""


def set_reason(session: Session, tournament_id: int, reason: str | None) -> None:
    """Note why the tournament's run failed (None: it did not, or it runs again)."""
    session.connection().execute(SET_REASON, {"row_tournament": tournament_id, "reason": reason})


def failures_query() -> Any:
    """The tournaments whose last run failed (id, reason)."""
    return select(TournamentRow.id, TournamentRow.reason).where(TournamentRow.reason.is_not(None))


def failures(session: Session) -> dict[int, str]:
    """The tournaments whose last run failed, with why."""
    return {row.id: row.reason for row in session.execute(failures_query())}
