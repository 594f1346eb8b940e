"""Remote workers as the store keeps them: the machines registered, the batches leased to
them, and where a service's tournament plays. One session per call, as the `Store` does."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, func, insert, select, update

from runner.store.db import Database
from runner.store.models import FleetBatchRow, FleetGameRow, FleetWorkerRow, PlacementRow

__all__ = ["BATCH_STATES", "PLACEMENTS", "Fleet", "FleetBatchRecord", "FleetGameRecord",
           "FleetWorkerRecord"]

PLACEMENTS = ("host", "cluster", "workers")
"""Where a submission's games may be played: this host, the Dask cluster, remote workers."""
BATCH_STATES = ("leased", "ended", "expired", "refused", "lost")
"""A batch out with its worker, ended by it, taken back at its deadline, taken back for a
game the referee refused, or out when the service stopped."""


@dataclass(frozen=True)
class FleetWorkerRecord:
    """One registered worker."""

    id: int
    name: str
    principal: str | None
    info: Mapping[str, Any]
    registered_at: datetime
    last_seen: datetime
    games: int
    flag: str | None
    blocked: bool


@dataclass(frozen=True)
class FleetBatchRecord:
    """One batch leased to a worker."""

    id: int
    tournament_id: int
    worker_id: int
    games: tuple[int, ...]
    state: str
    leased_at: datetime
    deadline: datetime


@dataclass(frozen=True)
class FleetGameRecord:
    """One counted game of a remote worker: which, in which batch, at which clock factor."""

    tournament_id: int
    job_index: int
    worker_id: int
    batch_id: int
    factor: float
    factor_source: str | None = None
    """Which bench the factor came from: ``machine``, ``bench:NAME``, both joined by ``+``,
    or ``none`` (None: a game stored before the source was kept)."""
_FLEET_GAMES = cast(Table, FleetGameRow.__table__)
_FLEET_WORKERS = cast(Table, FleetWorkerRow.__table__)


def _worker(row: FleetWorkerRow) -> FleetWorkerRecord:
    return FleetWorkerRecord(id=row.id, name=row.name, principal=row.principal,
                             info=dict(row.info), registered_at=row.registered_at,
                             last_seen=row.last_seen, games=row.games, flag=row.flag,
                             blocked=row.blocked)


def _batch(row: FleetBatchRow) -> FleetBatchRecord:
    return FleetBatchRecord(id=row.id, tournament_id=row.tournament_id, worker_id=row.worker_id,
                            games=tuple(int(g) for g in row.games or ()), state=row.state,
                            leased_at=row.leased_at, deadline=row.deadline)


class Fleet:
    """The workers, batches and placements of one database."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # ----------------------------------------------------------------- workers

    def register(self, name: str, principal: str | None, info: Mapping[str, Any]) -> int:
        """Store a newly joined worker; its id."""
        with self._db.session() as session:
            row = FleetWorkerRow(name=name, principal=principal, info=dict(info), games=0,
                                 blocked=False)
            session.add(row)
            session.flush()
            return row.id

    def worker(self, worker_id: int) -> FleetWorkerRecord | None:
        """One worker, or None."""
        with self._db.session() as session:
            row = session.get(FleetWorkerRow, worker_id)
            return None if row is None else _worker(row)

    def workers(self) -> list[FleetWorkerRecord]:
        """Every worker, in the order they registered."""
        with self._db.session() as session:
            return [_worker(row) for row in
                    session.scalars(select(FleetWorkerRow).order_by(FleetWorkerRow.id))]

    def seen(self, worker_id: int, *, counted: int = 0) -> None:
        """The worker was heard from now (and `counted` more of its games were stored)."""
        with self._db.session() as session:
            session.execute(update(FleetWorkerRow).where(FleetWorkerRow.id == worker_id).values(
                last_seen=datetime.now(UTC), games=FleetWorkerRow.games + counted))

    def counted_many(self, games: Sequence[FleetGameRecord]) -> None:
        """Workers' games stored and counted, in one transaction: each noted with its batch
        and factor, each worker's games that many more, heard from now; a game noted again
        replaces its row. Core statements, no ORM object per game: the uploads of a busy
        fleet are noted together, a few statements whatever their number."""
        if not games:
            return
        latest = {(g.tournament_id, g.job_index): g for g in games}
        per_worker = Counter(g.worker_id for g in latest.values())
        now = datetime.now(UTC)
        with self._db.session() as session:
            for tournament_id in {key[0] for key in latest}:
                session.execute(delete(FleetGameRow).where(
                    FleetGameRow.tournament_id == tournament_id,
                    FleetGameRow.job_index.in_([i for t, i in latest if t == tournament_id])))
            session.execute(insert(_FLEET_GAMES), [
                {"tournament_id": g.tournament_id, "job_index": g.job_index,
                 "worker_id": g.worker_id, "batch_id": g.batch_id, "factor": g.factor,
                 "factor_source": g.factor_source}
                for g in latest.values()])
            # One statement for every worker (executemany: one round trip on PostgreSQL's
            # pipeline, not one per worker).
            session.execute(
                update(_FLEET_WORKERS).where(_FLEET_WORKERS.c.id == bindparam("worker"))
                .values(last_seen=now, games=_FLEET_WORKERS.c.games + bindparam("more")),
                [{"worker": worker, "more": count}
                 for worker, count in sorted(per_worker.items())])

    def games(self, tournament_id: int | None = None) -> list[FleetGameRecord]:
        """The counted games of remote workers (of one tournament), in schedule order."""
        with self._db.session() as session:
            query = select(FleetGameRow)
            if tournament_id is not None:
                query = query.where(FleetGameRow.tournament_id == tournament_id)
            rows = session.scalars(query.order_by(FleetGameRow.tournament_id,
                                                  FleetGameRow.job_index))
            return [FleetGameRecord(r.tournament_id, r.job_index, r.worker_id, r.batch_id,
                                    r.factor, r.factor_source) for r in rows]

    def newest(self) -> int | None:
        """The newest tournament any remote worker played a counted game of (None: none)."""
        with self._db.session() as session:
            found = session.scalar(select(func.max(FleetGameRow.tournament_id)))
            return None if found is None else int(found)

    def batch_counts(self) -> dict[int, int]:
        """Batches leased to each worker so far, by worker id."""
        with self._db.session() as session:
            rows = session.execute(select(FleetBatchRow.worker_id, func.count())
                                   .group_by(FleetBatchRow.worker_id))
            return {int(worker): int(count) for worker, count in rows}

    def flag(self, worker_id: int, reason: str | None) -> None:
        """Flag the worker with why (None: clear the flag)."""
        with self._db.session() as session:
            session.execute(update(FleetWorkerRow).where(FleetWorkerRow.id == worker_id)
                            .values(flag=reason))

    def block(self, worker_id: int, blocked: bool) -> None:
        """Block the worker (it gets no more work) or unblock it."""
        with self._db.session() as session:
            session.execute(update(FleetWorkerRow).where(FleetWorkerRow.id == worker_id)
                            .values(blocked=blocked))

    # ----------------------------------------------------------------- batches

    def lease(self, tournament_id: int, worker_id: int, games: Sequence[int],
              deadline: datetime) -> int:
        """Store a batch of `games` leased to the worker until `deadline`; its id."""
        with self._db.session() as session:
            row = FleetBatchRow(tournament_id=tournament_id, worker_id=worker_id,
                                games=list(games), state="leased", deadline=deadline)
            session.add(row)
            session.flush()
            return row.id

    def batch(self, batch_id: int) -> FleetBatchRecord | None:
        """One batch, or None."""
        with self._db.session() as session:
            row = session.get(FleetBatchRow, batch_id)
            return None if row is None else _batch(row)

    def batches(self, tournament_id: int) -> list[FleetBatchRecord]:
        """The batches of a tournament, oldest first."""
        with self._db.session() as session:
            rows = session.scalars(select(FleetBatchRow).where(
                FleetBatchRow.tournament_id == tournament_id).order_by(FleetBatchRow.id))
            return [_batch(row) for row in rows]

    def set_batch(self, batch_id: int, *, state: str | None = None,
                  deadline: datetime | None = None) -> None:
        """Change a batch's state or deadline."""
        if state is not None and state not in BATCH_STATES:
            raise ValueError(f"not a batch state: {state!r}")
        values: dict[str, Any] = {}
        if state is not None:
            values["state"] = state
        if deadline is not None:
            values["deadline"] = deadline
        if values:
            with self._db.session() as session:
                session.execute(update(FleetBatchRow).where(FleetBatchRow.id == batch_id)
                                .values(**values))

    def lose_open(self, tournament_id: int) -> int:
        """Mark the tournament's batches still leased as lost (a new run hands its games out
        afresh); how many."""
        with self._db.session() as session:
            done = session.execute(update(FleetBatchRow).where(
                FleetBatchRow.tournament_id == tournament_id,
                FleetBatchRow.state == "leased").values(state="lost"))
            return int(getattr(done, "rowcount", 0) or 0)

    # ----------------------------------------------------------------- placements

    def place(self, tournament_id: int, placement: str) -> None:
        """Note where the tournament plays (`PLACEMENTS`)."""
        if placement not in PLACEMENTS:
            raise ValueError(f"not a placement: {placement!r}")
        with self._db.session() as session:
            row = session.get(PlacementRow, tournament_id)
            if row is None:
                session.add(PlacementRow(tournament_id=tournament_id, placement=placement))
            else:
                row.placement = placement

    def placement(self, tournament_id: int) -> str | None:
        """Where the tournament's submission placed it (None: it said nothing)."""
        with self._db.session() as session:
            row = session.get(PlacementRow, tournament_id)
            return None if row is None else row.placement
