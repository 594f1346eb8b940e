"""Tournaments keep why their last run failed (an engine that would not start, a database
error), so that the API and the page say it after a restart too, not just "interrupted".

Revision ID: e2b7c9a41f03
Revises: c41e8a6f2d17
Create Date: 2026-11-25 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "e2b7c9a41f03"
down_revision: str | None = "c41e8a6f2d17"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the nullable ``tournaments.reason`` column."""
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(sa.Column("reason", sa.Text(), nullable=True))


def downgrade() -> None:
    """Drop ``tournaments.reason``."""
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("reason")
