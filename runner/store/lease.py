"""Tournament leases: at most one process writes a tournament at a time.

A run takes the lease (a row naming its owner, pid and host) before it writes anything,
refreshes its heartbeat now and then and deletes the row when it ends. A second runner
finding a live lease is refused; a lease whose owner is gone is stale, and the next runner
takes it over. Gone means: a dead pid on the checker's own host (a live one there wins,
however old its heartbeat, unless the process is stopped, ^Z or SIGSTOP, for longer than its
timeout), or, elsewhere, no heartbeat for the timeout the holder declared.

Ages are measured by the database's clock, never by the hosts': every heartbeat writes the
database's ``now`` and every staleness test reads the age the database computes, so a host
whose clock is off cannot take over a live runner (nor keep a dead one's lease alive).

The lease fences the writer: every write of a run (a game stored, the tournament closed)
first refreshes the lease row with a conditional UPDATE on its owner, in the same
transaction. A runner that lost its lease (paused past its timeout and taken over) finds no
row to update, and its writes roll back whole (`LeaseLostError`).
"""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import (
    ColumnElement,
    Table,
    Update,
    bindparam,
    delete,
    extract,
    func,
    insert,
    literal,
    select,
    text,
    update,
)
from sqlalchemy.orm import Session

from runner.store.db import IDLE_IN_TRANSACTION_MS
from runner.store.models import LeaseRow
from runner.store.records import (
    HEARTBEAT_SECONDS,
    LEASE_TIMEOUT,
    LIVE,
    Holder,
    LeaseHeldError,
    LeaseLostError,
    forget,
    heartbeat_interval,
    holder,
    lease_values,
    new_owner,
)

__all__ = [
    "HEARTBEAT_SECONDS",
    "LEASE_TIMEOUT",
    "Holder",
    "LeaseHeldError",
    "LeaseLostError",
    "acquire",
    "check_free",
    "forget",
    "heartbeat",
    "heartbeat_interval",
    "hold",
    "holders",
    "lock_tournaments",
    "new_owner",
    "release",
]

_CREATE_LOCK_KEY = 0x72756E6E6572 + 1
"""PostgreSQL advisory lock serialising find-or-create of tournaments (next to the
migrations' key in db.py)."""



def _dialect(session: Session) -> str:
    return session.get_bind().dialect.name


def _now_in(dialect: str) -> ColumnElement[Any]:
    """The database's current time, as an expression the heartbeat column stores."""
    if dialect == "sqlite":  # the format SQLAlchemy itself stores, to the ms
        return func.strftime("%Y-%m-%d %H:%M:%f", "now")
    return func.now()


_LEASES = cast(Table, LeaseRow.__table__)
_HEARTBEATS: dict[str, Update] = {}
"""The heartbeat's UPDATE per dialect, built once: every game's start and end runs it (the
fence), and building it each time cost more than running it."""
_NO_IDLING = text(f"SET LOCAL idle_in_transaction_session_timeout = {int(IDLE_IN_TRANSACTION_MS)}")


def _heartbeat_statement(dialect: str) -> Update:
    statement = _HEARTBEATS.get(dialect)
    if statement is None:
        statement = _HEARTBEATS[dialect] = update(_LEASES).where(
            _LEASES.c.tournament_id == bindparam("lease_tournament"),
            _LEASES.c.owner == bindparam("lease_owner"),
        ).values(heartbeat_at=_now_in(dialect))
    return statement


def _no_idling(session: Session) -> None:
    """On PostgreSQL, have the server end this transaction if its client goes idle in it for
    `IDLE_IN_TRANSACTION_MS` (a paused runner must not keep the locks it took)."""
    connection = session.connection()
    if connection.dialect.name == "postgresql":
        connection.execute(_NO_IDLING)


def _holders(dialect: str) -> Any:
    """Every lease with its age by the database's clock (tournament_id, owner, pid, host, age,
    timeout_seconds)."""
    if dialect == "sqlite":
        age = (func.julianday("now") - func.julianday(LeaseRow.heartbeat_at)) * literal(86400.0)
    else:
        age = extract("epoch", func.clock_timestamp() - LeaseRow.heartbeat_at)
    return select(LeaseRow.tournament_id, LeaseRow.owner, LeaseRow.pid, LeaseRow.host,
                  age.label("age"), LeaseRow.timeout_seconds)


def holders_query(session: Session) -> Any:
    """Every lease with its age by the database's clock (tournament_id, owner, pid, host, age,
    timeout_seconds)."""
    return _holders(_dialect(session))


def find_statement(dialect: str, *, lock: bool = False) -> Any:
    """One tournament's lease holder (``lease_tournament``), with `lock` locked for the
    transaction where the database can."""
    statement = _holders(dialect).where(LeaseRow.tournament_id == bindparam("lease_tournament"))
    return statement.with_for_update() if lock else statement


def insert_statement(dialect: str) -> Any:
    """A new lease row: `LEASE_KEYS` and ``tournament_id`` bound, its times the database's."""
    return insert(LeaseRow).values(acquired_at=_now_in(dialect), heartbeat_at=_now_in(dialect))


def update_statement(dialect: str) -> Any:
    """A lease taken over (``lease_tournament``): `LEASE_KEYS` bound, its times the
    database's."""
    return update(LeaseRow).where(LeaseRow.tournament_id == bindparam("lease_tournament")).values(
        acquired_at=_now_in(dialect), heartbeat_at=_now_in(dialect))


LEASE_KEYS = ("owner", "pid", "host", "timeout_seconds")
"""The columns a lease is taken with (`insert_statement`, `update_statement`)."""
RELEASE = delete(LeaseRow).where(LeaseRow.tournament_id == bindparam("lease_tournament"),
                                 LeaseRow.owner == bindparam("lease_owner"))
"""Giving a lease up, if ``lease_owner`` still holds it."""


def _find(session: Session, tournament_id: int, *, lock: bool = False) -> Holder | None:
    connection = session.connection()
    row = connection.execute(find_statement(connection.dialect.name, lock=lock),
                             {"lease_tournament": tournament_id}).one_or_none()
    return None if row is None else holder(row)


def lock_tournaments(session: Session) -> None:
    """Begin the session's transaction holding the lock that makes find-or-create of a
    tournament atomic: of two runners of one configuration started together, the second
    waits, then finds the first's tournament and lease (SQLite: the database's write lock;
    PostgreSQL: a transaction-scoped advisory lock)."""
    connection = session.connection()
    if connection.dialect.name == "sqlite":
        # pysqlite begins lazily, at the first write: begun here, the write lock is taken
        # before anything is read.
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    elif connection.dialect.name == "postgresql":
        _no_idling(session)
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                           {"key": _CREATE_LOCK_KEY})


def check_free(session: Session, tournament_id: int, owner: str) -> Holder | None:
    """LeaseHeldError when a live process other than `owner` holds the lease; else the stale
    holder being replaced (None when there was none)."""
    holder = _find(session, tournament_id)
    if holder is None or holder.owner == owner:
        return None
    if not holder.stale():
        raise LeaseHeldError(tournament_id, holder)
    return holder


def acquire(session: Session, tournament_id: int, owner: str,
            timeout: float | None = None) -> Holder | None:
    """Take the lease for `owner` (this process), declaring `timeout` seconds (default
    `LEASE_TIMEOUT`) as the silence after which another host may take it over; returns the
    stale holder taken over, if any.

    LeaseHeldError when a live process holds it. Two runners inserting at once collide on
    the primary key: the loser gets an IntegrityError and, trying again, sees the winner.
    """
    _no_idling(session)
    previous = _find(session, tournament_id, lock=True)
    connection = session.connection()
    dialect = connection.dialect.name
    values = lease_values(owner, timeout)
    if previous is None:
        connection.execute(insert_statement(dialect), {"tournament_id": tournament_id, **values})
        LIVE.add(owner)
        return None
    if previous.owner != owner and not previous.stale():
        raise LeaseHeldError(tournament_id, previous)
    connection.execute(update_statement(dialect), {"lease_tournament": tournament_id, **values})
    LIVE.add(owner)
    return None if previous.owner == owner else previous


def heartbeat(session: Session, tournament_id: int, owner: str) -> bool:
    """Refresh the lease; False when `owner` no longer holds it (it was taken over). The
    row stays locked (PostgreSQL) or the database write-locked (SQLite) until the session
    commits, so what the transaction writes next is written under the lease."""
    _no_idling(session)
    connection = session.connection()
    result = connection.execute(_heartbeat_statement(connection.dialect.name),
                                {"lease_tournament": tournament_id, "lease_owner": owner})
    return bool(getattr(result, "rowcount", 0))


def hold(session: Session, tournament_id: int, owner: str) -> None:
    """Prove, in the session's transaction, that `owner` still holds the lease (refreshing
    it); LeaseLostError when it does not: the caller's transaction must then roll back."""
    if not heartbeat(session, tournament_id, owner):
        raise LeaseLostError(tournament_id)


def release(session: Session, tournament_id: int, owner: str) -> None:
    """Give the lease up (only if `owner` still holds it)."""
    forget(owner)
    session.connection().execute(RELEASE, {"lease_tournament": tournament_id,
                                           "lease_owner": owner})


def holders(session: Session) -> dict[int, Holder]:
    """Every lease, by tournament id."""
    return {row.tournament_id: holder(row) for row in session.execute(holders_query(session))}
