"""Tournament leases: at most one process runs a tournament at a time.

A run takes the lease (a row naming its owner, pid and host) before it writes anything,
refreshes its heartbeat every `HEARTBEAT_SECONDS` and deletes the row when it ends. A second
runner finding a live lease is refused; a lease whose owner is gone (a dead pid on this host,
or no heartbeat for `LEASE_TIMEOUT`) is stale, and the next runner takes it over. Plain rows
work the same on SQLite and PostgreSQL; a heartbeat is one UPDATE of one row.
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from runner.store.models import LeaseRow

__all__ = [
    "HEARTBEAT_SECONDS",
    "LEASE_TIMEOUT",
    "Holder",
    "LeaseHeldError",
    "acquire",
    "check_free",
    "forget",
    "heartbeat",
    "holders",
    "new_owner",
    "release",
]

HEARTBEAT_SECONDS = 10.0
"""How often a running tournament refreshes its lease."""
LEASE_TIMEOUT = timedelta(seconds=60)
"""A lease not refreshed for this long is stale, whoever holds it (another host included)."""

_LIVE: set[str] = set()
"""Owners whose run is going on in this process: a lease of this process's pid with another
owner was left by a run that ended without giving it up (its database failing)."""


@dataclass(frozen=True)
class Holder:
    """Who holds a tournament's lease, and when it was last heard of."""

    owner: str
    pid: int
    host: str
    heartbeat_at: datetime

    def stale(self, now: datetime | None = None) -> bool:
        """Whether the holder is gone: no heartbeat for `LEASE_TIMEOUT`, or (on this host)
        its process no longer exists."""
        now = now or datetime.now(UTC)
        if now - self.heartbeat_at > LEASE_TIMEOUT:
            return True
        if self.host != socket.gethostname():
            return False
        if self.pid == os.getpid():
            return self.owner not in _LIVE
        return not _alive(self.pid)

    def describe(self, now: datetime | None = None) -> str:
        """``pid 123 on host h (last heartbeat 4 s ago)``."""
        age = ((now or datetime.now(UTC)) - self.heartbeat_at).total_seconds()
        return f"pid {self.pid} on host {self.host} (last heartbeat {max(0.0, age):.0f} s ago)"


class LeaseHeldError(RuntimeError):
    """Another live process runs the tournament."""

    def __init__(self, tournament_id: int, holder: Holder) -> None:
        super().__init__(f"tournament {tournament_id} is being run by {holder.describe()}")
        self.tournament_id = tournament_id
        self.holder = holder


def _alive(pid: int) -> bool:
    """Whether a process with this id exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def new_owner() -> str:
    """A fresh owner id for one run."""
    return uuid.uuid4().hex


def _holder(row: LeaseRow) -> Holder:
    return Holder(row.owner, row.pid, row.host, row.heartbeat_at)


def check_free(session: Session, tournament_id: int, owner: str) -> Holder | None:
    """LeaseHeldError when a live process other than `owner` holds the lease; else the stale
    holder being replaced (None when there was none)."""
    row = session.get(LeaseRow, tournament_id)
    if row is None or row.owner == owner:
        return None
    holder = _holder(row)
    if not holder.stale():
        raise LeaseHeldError(tournament_id, holder)
    return holder


def acquire(session: Session, tournament_id: int, owner: str) -> Holder | None:
    """Take the lease for `owner` (this process); returns the stale holder taken over, if any.

    LeaseHeldError when a live process holds it. Two runners inserting at once collide on
    the primary key: the loser gets an IntegrityError and, trying again, sees the winner.
    """
    row = session.get(LeaseRow, tournament_id, with_for_update=True)
    now = datetime.now(UTC)
    values = {"owner": owner, "pid": os.getpid(), "host": socket.gethostname(),
              "acquired_at": now, "heartbeat_at": now}
    if row is None:
        session.add(LeaseRow(tournament_id=tournament_id, **values))
        session.flush()
        _LIVE.add(owner)
        return None
    previous = _holder(row)
    if row.owner != owner and not previous.stale(now):
        raise LeaseHeldError(tournament_id, previous)
    for key, value in values.items():
        setattr(row, key, value)
    session.flush()
    _LIVE.add(owner)
    return None if previous.owner == owner else previous


def heartbeat(session: Session, tournament_id: int, owner: str) -> bool:
    """Refresh the lease; False when `owner` no longer holds it (it was taken over)."""
    result = session.execute(update(LeaseRow).where(
        LeaseRow.tournament_id == tournament_id, LeaseRow.owner == owner,
    ).values(heartbeat_at=datetime.now(UTC)))
    return bool(getattr(result, "rowcount", 0))


def forget(owner: str) -> None:
    """Note that `owner`'s run in this process is over, whether or not its lease row could be
    deleted (a row left behind is then stale)."""
    _LIVE.discard(owner)


def release(session: Session, tournament_id: int, owner: str) -> None:
    """Give the lease up (only if `owner` still holds it)."""
    forget(owner)
    session.execute(delete(LeaseRow).where(LeaseRow.tournament_id == tournament_id,
                                           LeaseRow.owner == owner))


def holders(session: Session) -> dict[int, Holder]:
    """Every lease, by tournament id."""
    return {row.tournament_id: _holder(row) for row in session.scalars(select(LeaseRow))}
