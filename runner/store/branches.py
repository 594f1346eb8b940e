"""The service's branch tests as the store keeps them: one row a test, read back as frozen
records, changed one field set at a time."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from runner.store.db import Database
from runner.store.models import BranchTestRow

__all__ = ["BRANCH_TEST_STATES", "BranchTestRecord", "BranchTests"]

BRANCH_TEST_STATES = ("approval", "pending", "building", "running", "paused", "finished",
                      "failed", "stopped")
"""Where a test stands: waiting for an admin's approval (a submitter's, on a service started
with --approval), waiting its turn, its sides being built, a stage playing, paused by
an admin, every stage played (or the chain ended by a failed SPRT), a build or bench that
stopped it, or stopped by an admin."""

_CHANGEABLE = ("priority", "share", "state", "stage", "tournaments", "message", "results",
               "builds")


@dataclass(frozen=True)
class BranchTestRecord:
    """One stored branch test."""

    id: int
    name: str
    recipe: str
    base_ref: str
    base_sha: str
    dev_ref: str
    dev_sha: str
    spec: Mapping[str, Any]
    priority: int
    share: float
    state: str
    stage: int
    tournaments: tuple[int, ...]
    message: str | None
    created_at: datetime
    updated_at: datetime
    author: str | None = None
    """The name of the token that submitted it (None: the service's own token)."""
    results: tuple[Mapping[str, Any], ...] = ()
    """Each ended stage's figures, in order (runner.service.stages.StageResult as JSON)."""
    builds: tuple[Mapping[str, Any], ...] = ()
    """Each build of a side on a machine (runner.build.benches.MachineBuild as JSON)."""


def _record(row: BranchTestRow) -> BranchTestRecord:
    """The frozen record of a row."""
    return BranchTestRecord(
        id=row.id, name=row.name, recipe=row.recipe, base_ref=row.base_ref,
        base_sha=row.base_sha, dev_ref=row.dev_ref, dev_sha=row.dev_sha, spec=dict(row.spec),
        priority=row.priority, share=row.share, state=row.state, stage=row.stage,
        tournaments=tuple(int(t) for t in row.tournaments or ()), message=row.message,
        created_at=row.created_at, updated_at=row.updated_at, author=row.author,
        results=tuple(dict(r) for r in row.results or ()),
        builds=tuple(dict(b) for b in row.builds or ()))


class BranchTests:
    """The branch tests of one database (a session per call, as the `Store` does)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add(self, *, name: str, recipe: str, base: tuple[str, str], dev: tuple[str, str],
            spec: Mapping[str, Any], priority: int, share: float,
            author: str | None = None) -> int:
        """Store a new pending test; its id."""
        with self._db.session() as session:
            row = BranchTestRow(name=name, recipe=recipe, base_ref=base[0], base_sha=base[1],
                                dev_ref=dev[0], dev_sha=dev[1], spec=dict(spec),
                                priority=priority, share=share, state="pending", stage=0,
                                tournaments=[], author=author, results=[], builds=[])
            session.add(row)
            session.flush()
            return row.id

    def get(self, test_id: int) -> BranchTestRecord | None:
        """One test, or None."""
        with self._db.session() as session:
            row = session.get(BranchTestRow, test_id)
            return None if row is None else _record(row)

    def all(self) -> list[BranchTestRecord]:
        """Every test, newest first."""
        with self._db.session() as session:
            rows = session.scalars(select(BranchTestRow).order_by(BranchTestRow.id.desc()))
            return [_record(row) for row in rows]

    def update(self, test_id: int, **changes: Any) -> BranchTestRecord:
        """Change some of a test's fields (its state, stage, priority...); the new record."""
        unknown = set(changes) - set(_CHANGEABLE)
        if unknown:
            raise ValueError(f"not a changeable field of a branch test: {sorted(unknown)}")
        if "state" in changes and changes["state"] not in BRANCH_TEST_STATES:
            raise ValueError(f"not a branch test state: {changes['state']!r}")
        with self._db.session() as session:
            row = session.get(BranchTestRow, test_id)
            if row is None:
                raise LookupError(f"no branch test {test_id}")
            for key, value in changes.items():
                if key in ("tournaments", "results", "builds"):
                    value = [dict(v) if isinstance(v, Mapping) else v for v in value]
                setattr(row, key, value)
            row.updated_at = datetime.now(UTC)
            session.flush()
            return _record(row)
