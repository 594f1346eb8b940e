"""SPSA tuning runs as the store keeps them: one row a run (its checked plan), one row a
played iteration (flips, both sides' values, the pair's result, theta after it), written in
one transaction each so that a run stopped anywhere continues from its last stored iteration."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from runner.store.db import Database
from runner.store.models import TuneIterationRow, TuneRow

__all__ = ["PlanChanged", "SubmittedTune", "TuneIteration", "TuneRecord", "Tunes"]


class PlanChanged(ValueError):
    """A tuning run of this name exists with another plan (the key and both values named)."""


@dataclass(frozen=True)
class TuneRecord:
    """A stored tuning run."""

    id: int
    name: str
    plan: Mapping[str, Any]


@dataclass(frozen=True)
class SubmittedTune:
    """A run a service took: the table it checked, where it plays, whether an admin
    stopped it."""

    id: int
    name: str
    submitted: Mapping[str, Any]
    placement: str | None
    stopped: bool


@dataclass(frozen=True)
class TuneIteration:
    """One stored iteration: ``k`` from 1, per parameter its flip, both sides' integers and
    theta after the update; the plus side's wins minus losses; the pair's tournament."""

    k: int
    flips: tuple[int, ...]
    plus: tuple[int, ...]
    minus: tuple[int, ...]
    result: int
    theta: tuple[float, ...]
    tournament_id: int | None


def _iteration(row: TuneIterationRow) -> TuneIteration:
    """The frozen record of a row."""
    return TuneIteration(row.k, tuple(row.flips), tuple(row.plus), tuple(row.minus),
                         row.result, tuple(float(t) for t in row.theta), row.tournament_id)


class Tunes:
    """The tuning runs of one database (a session per call, as the `Store` does)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def open(self, name: str, plan: Mapping[str, Any]) -> TuneRecord:
        """The run named `name`, made with `plan` when there is none; PlanChanged when one
        exists with another plan (continuing it would mix two plans' iterations)."""
        with self._db.session() as session:
            row = session.scalar(select(TuneRow).where(TuneRow.name == name))
            if row is None:
                row = TuneRow(name=name, plan=dict(plan))
                session.add(row)
                session.flush()
            else:
                for key in sorted(set(row.plan) | set(plan)):
                    if row.plan.get(key) != plan.get(key):
                        raise PlanChanged(
                            f"tuning run {name!r}: {key} is {plan.get(key)!r} in the file but "
                            f"{row.plan.get(key)!r} in the stored run (give it another name)")
            return TuneRecord(row.id, row.name, dict(row.plan))

    def find(self, name: str) -> TuneRecord | None:
        """The run named `name`, if stored."""
        with self._db.session() as session:
            row = session.scalar(select(TuneRow).where(TuneRow.name == name))
            return None if row is None else TuneRecord(row.id, row.name, dict(row.plan))

    def all(self) -> list[TuneRecord]:
        """Every stored run, oldest first."""
        with self._db.session() as session:
            rows = session.scalars(select(TuneRow).order_by(TuneRow.id))
            return [TuneRecord(r.id, r.name, dict(r.plan)) for r in rows]

    def get(self, tune_id: int) -> TuneRecord | None:
        """The run whose id is `tune_id`, if stored."""
        with self._db.session() as session:
            row = session.get(TuneRow, tune_id)
            return None if row is None else TuneRecord(row.id, row.name, dict(row.plan))

    def of_tournament(self, tournament_id: int) -> TuneRecord | None:
        """The run one of whose iterations played the tournament `tournament_id`, if any."""
        with self._db.session() as session:
            row = session.scalar(select(TuneRow).join(
                TuneIterationRow, TuneIterationRow.tune_id == TuneRow.id).where(
                TuneIterationRow.tournament_id == tournament_id))
            return None if row is None else TuneRecord(row.id, row.name, dict(row.plan))

    def submit(self, tune_id: int, submitted: Mapping[str, Any], placement: str | None) -> None:
        """Keep the table a service checked the run from and where it plays (a run
        submitted again takes the newer); it is not stopped."""
        with self._db.session() as session:
            row = session.get(TuneRow, tune_id)
            if row is None:
                raise LookupError(f"no tuning run {tune_id}")
            row.submitted, row.placement, row.stopped = dict(submitted), placement, False

    def set_stopped(self, tune_id: int, stopped: bool) -> None:
        """Note that an admin stopped the run (a restarted service leaves it), or resumed it."""
        with self._db.session() as session:
            row = session.get(TuneRow, tune_id)
            if row is not None:
                row.stopped = stopped

    def submitted(self, tune_id: int | None = None) -> list[SubmittedTune]:
        """The runs a service took (only `tune_id`'s when given), oldest first."""
        with self._db.session() as session:
            query = select(TuneRow).order_by(TuneRow.id)
            if tune_id is not None:
                query = query.where(TuneRow.id == tune_id)
            # Filtered here: a JSON column may hold SQL NULL or JSON null for "none".
            return [SubmittedTune(r.id, r.name, dict(r.submitted), r.placement, r.stopped)
                    for r in session.scalars(query) if r.submitted]

    def iterations(self, tune_id: int) -> list[TuneIteration]:
        """The run's stored iterations, in order."""
        with self._db.session() as session:
            rows = session.scalars(select(TuneIterationRow).where(
                TuneIterationRow.tune_id == tune_id).order_by(TuneIterationRow.k))
            return [_iteration(r) for r in rows]

    def record(self, tune_id: int, played: TuneIteration) -> None:
        """Store one played iteration (a second record of the same ``k`` is refused by the
        database: an iteration is applied once)."""
        with self._db.session() as session:
            session.add(TuneIterationRow(
                tune_id=tune_id, k=played.k, flips=list(played.flips), plus=list(played.plus),
                minus=list(played.minus), result=played.result, theta=list(played.theta),
                tournament_id=played.tournament_id))
